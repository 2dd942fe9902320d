//! A turn that stops at its limit says so, says how to go on, and keeps
//! what it did: "continue" in the same session picks it up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::support::llm::{text, tool};
use crate::support::run::mino;
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_at_its_request_limit_explains_and_continue_goes_on() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("list_dir", json!({"path": "."})),
            tool("read_file", json!({"path": "notes.md"})),
            text("FINISHED-AFTER-CONTINUE"),
        ],
        "\n[limits]\nturn_requests = 2\n",
    )
    .await;
    let first = mino(&world, &["-p", "look around"], None).await;
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("it reached its limit of 2 model requests"),
        "{stderr}"
    );
    assert!(stderr.contains("type \"continue\" to go on"), "{stderr}");
    assert!(stderr.contains("`[limits] turn_requests`"), "{stderr}");
    assert_eq!(world.llm.bodies().len(), 2);

    let second = mino(&world, &["-c", "-p", "continue"], None).await;
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains("FINISHED-AFTER-CONTINUE"), "{stdout}");
    let bodies = world.llm.bodies();
    let last = bodies.last().unwrap();
    // Both calls' results are still in the conversation.
    assert!(last.contains("Relase notes"), "{last}");
    assert!(last.contains("notes.md"), "{last}");
}
