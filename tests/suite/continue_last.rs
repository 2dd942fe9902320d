//! `mino --continue` (`-c`): resumes the project's session written to last,
//! never another project's, and says so when the project has none.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use crate::support::llm::text;
use crate::support::run::mino_in;
use crate::support::world::World;

async fn print(world: &World, project: &Path, args: &[&str]) -> Output {
    mino_in(world, project, args, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_resumes_this_projects_last_session() {
    let world = World::with(
        "openai-chat",
        vec![text("one"), text("two"), text("elsewhere"), text("three")],
        "",
    )
    .await;
    let here = world.project.path();
    let other = tempfile::TempDir::new().unwrap();
    for (dir, prompt) in [
        (here, "PROMPT-FIRST"),
        (here, "PROMPT-SECOND"),
        (other.path(), "PROMPT-OTHER"),
    ] {
        let out = print(&world, dir, &["-p", prompt]).await;
        assert!(out.status.success(), "{out:?}");
        // Session files are told apart by when they were written last.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = print(&world, here, &["-c", "-p", "PROMPT-THIRD"]).await;
    assert!(out.status.success(), "{out:?}");
    let bodies = world.llm.bodies();
    let last = bodies.last().unwrap();
    assert!(last.contains("PROMPT-SECOND"), "{last}");
    assert!(last.contains("PROMPT-THIRD"), "{last}");
    assert!(!last.contains("PROMPT-FIRST"), "{last}");
    assert!(!last.contains("PROMPT-OTHER"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_without_a_session_here_says_so() {
    let world = World::with("openai-chat", vec![], "").await;
    let out = print(&world, world.project.path(), &["--continue", "-p", "x"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--continue: no saved session of"),
        "{stderr}"
    );
    assert!(world.llm.bodies().is_empty());
    let both = print(&world, world.project.path(), &["-c", "--resume", "x"]).await;
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}
