//! `@server:uri` in a prompt attaches that resource of the MCP server,
//! end to end with the reference `server-everything`: read as a call
//! decided like the server's tools (runs in bypass, cannot be asked for
//! through `-p` in manual, denied when it names a protected file), and its
//! text reaches the model.

use crate::support::llm::text;
use crate::support::stream::decisions;
use crate::support::world::World;

use super::mcp::{everything, results};

const DOC: &str = "demo://resource/static/document/architecture.md";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mentioned_resource_is_read_and_reaches_the_model() {
    let world = World::mcp(vec![text("read it")], |_| everything("everything", "")).await;
    let prompt = format!("summarise @everything:{DOC} please");
    let (events, stderr, out) = world.mcp_print(&prompt, &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(results.len(), 1, "{results:?}\n{stderr}");
    assert_eq!(results[0].0, "completed", "{results:?}");
    assert!(
        results[0].1.starts_with(&format!("[resource {DOC}]\n")),
        "{results:?}"
    );
    let bodies = world.llm.bodies();
    assert!(bodies[0].contains("Architecture"), "{}", bodies[0]);
    assert!(
        stderr.contains("[Tool: mcp-resource, allowed without confirmation in bypass mode]"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("Resource: \"{DOC}\"")), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mentioned_resource_is_decided_like_the_servers_tools() {
    let world = World::mcp(vec![text("no"), text("no")], |_| {
        everything("everything", "")
    })
    .await;
    let (events, stderr, _) = world
        .mcp_print(&format!("read @everything:{DOC}"), &[])
        .await;
    assert_eq!(
        decisions(&events),
        [(
            "mcp-resource".to_string(),
            "deny".to_string(),
            "MINO_DENY_NOBODY_TO_ASK".to_string()
        )],
        "{stderr}"
    );
    let (events, stderr, _) = world
        .mcp_print("read @everything:file:///srv/app/.env", &["--yolo"])
        .await;
    assert_eq!(
        decisions(&events),
        [(
            "mcp-resource".to_string(),
            "deny".to_string(),
            "MINO_DENY_PROTECTED_ARGUMENT".to_string()
        )],
        "{stderr}"
    );
}

/// The resource read is mino's own call for an `@server:uri` mention: a
/// model that names it itself is told there is no such tool, and nothing
/// is read, in bypass too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_cannot_call_the_resource_read_itself() {
    let call = crate::support::llm::tool(
        "mcp-resource",
        serde_json::json!({"server": "everything", "uri": DOC}),
    );
    let world = World::mcp(vec![call, text("done")], |_| everything("everything", "")).await;
    let (events, stderr, _) = world.mcp_print("read the architecture", &["--yolo"]).await;
    let results = results(&events);
    assert_eq!(results.len(), 1, "{results:?}\n{stderr}");
    assert_eq!(results[0].0, "error", "{results:?}");
    assert!(
        results[0]
            .1
            .contains("There is no tool named \"mcp-resource\""),
        "{results:?}"
    );
    let bodies = world.llm.bodies();
    assert!(!bodies[1].contains("Architecture"), "{}", bodies[1]);
}

/// `/SERVER:PROMPT` sends the server's prompt as the person's prompt (shown
/// first), with its arguments as `NAME=VALUE`; a missing required argument
/// or an unknown prompt is an error naming what is accepted, and nothing
/// reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_prompt_is_a_slash_command_whose_text_is_the_turn() {
    let world = World::mcp(vec![text("sunny"), text("no file")], |_| {
        everything("everything", "")
    })
    .await;
    std::fs::write(world.project.path().join("plan.md"), "PLAN-BODY-7f3\n").unwrap();
    let mut pty = world.line_mode(&["--yolo"]);
    pty.expect("Use /mode to change it.");
    pty.send_line("/everything:args-prompt state=Viken");
    pty.expect("the argument city is required; it takes city=VALUE [state=VALUE]");
    pty.send_line("/everything:no-such-prompt");
    pty.expect("has no prompt named \"no-such-prompt\"; its prompts: ");
    pty.expect("args-prompt");
    pty.send_line("/everything:args-prompt city=Oslo state=Viken");
    pty.expect("the MCP server everything's prompt is sent as yours:");
    pty.expect("What's weather in Oslo, Viken?");
    pty.expect("sunny");
    // A server's text is not the person's: an `@` in it attaches nothing.
    pty.send_line("/everything:args-prompt city=@plan.md");
    pty.expect("no file");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0, "{}", pty.all());
    assert!(!pty.all().contains("read_file"), "{}", pty.all());
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "only the sent prompts reached the model");
    assert!(bodies[1].contains("@plan.md") && !bodies[1].contains("PLAN-BODY-7f3"));
    assert!(
        bodies[0].contains("What's weather in Oslo, Viken?"),
        "{}",
        bodies[0]
    );
}
