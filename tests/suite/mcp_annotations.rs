//! Tool annotations are the server's claims, end to end with the reference
//! `server-filesystem` (whose `write_file` says `destructiveHint: true` and
//! `read_text_file` says `readOnlyHint: true`): a destructive tool asks in
//! accept-edits even where a saved rule allows it; a read-only claim runs
//! without asking only when the user's settings trust that server's
//! annotations.

use crate::support::llm::{text, tool};
use crate::support::stream::decisions;
use crate::support::world::World;
use serde_json::json;

use super::mcp::{filesystem, results};

fn calls() -> Vec<crate::support::llm::Reply> {
    vec![
        tool("mcp_files_read_text_file", json!({"path": "notes.md"})),
        tool(
            "mcp_files_write_file",
            json!({"path": "written.txt", "content": "from the model"}),
        ),
        tool("mcp_files_create_directory", json!({"path": "made"})),
        text("done"),
    ]
}

fn decided(events: &[serde_json::Value]) -> Vec<(String, String)> {
    decisions(events)
        .into_iter()
        .map(|(tool, decision, code)| (tool, format!("{decision} {code}").trim().to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_tool_asks_in_accept_edits_whatever_a_rule_allows() {
    let world = World::mcp(calls(), |root| {
        format!(
            "{}[[rules]]\ntool = \"mcp_files_*\"\ndecision = \"allow\"\n",
            filesystem("files", root, "trust_annotations = true")
        )
    })
    .await;
    let (events, stderr, _) = world.mcp_print("go", &["--mode", "accept-edits"]).await;
    let decided = decided(&events);
    assert_eq!(decided.len(), 3, "{decided:?}\n{stderr}");
    assert_eq!(decided[0].0, "mcp_files_read_text_file");
    assert!(decided[0].1.starts_with("allow"), "{decided:?}");
    assert_eq!(
        decided[1],
        (
            "mcp_files_write_file".to_string(),
            "deny MINO_DENY_NOBODY_TO_ASK".to_string()
        ),
        "the destructive claim asks, and -p cannot: {stderr}"
    );
    assert!(decided[2].1.starts_with("allow"), "{decided:?}");
    assert!(
        stderr.contains(
            "[Tool: mcp_files_read_text_file, allowed without confirmation in accept-edits mode]"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("[Tool: mcp_files_create_directory, allowed by rule 1"),
        "{stderr}"
    );
    assert!(!world.project.path().join("written.txt").exists());
    assert!(world.project.path().join("made").is_dir());
    assert!(results(&events)[0].1.contains("Relase notes"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_claim_loosens_nothing_unless_the_user_trusts_it() {
    let world = World::mcp(calls(), |root| filesystem("files", root, "")).await;
    let (events, stderr, _) = world.mcp_print("go", &["--mode", "accept-edits"]).await;
    let decided = decided(&events);
    assert_eq!(decided.len(), 3, "{decided:?}\n{stderr}");
    for (tool, decision) in &decided {
        assert_eq!(decision, "deny MINO_DENY_NOBODY_TO_ASK", "{tool}: {stderr}");
    }
    assert!(!world.project.path().join("made").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_for_a_destructive_tool_says_it_is_the_servers_claim() {
    let world = World::mcp(
        vec![
            tool(
                "mcp_files_write_file",
                json!({"path": "written.txt", "content": "from the model"}),
            ),
            text("written"),
        ],
        |root| filesystem("files", root, "trust_annotations = true"),
    )
    .await;
    let mut pty = world.line_mode(&["--mode", "accept-edits"]);
    pty.expect("MCP server files started");
    pty.send_line("write a file");
    let question = pty.expect("Approve this operation? [y/N]");
    for field in [
        "[Tool: mcp_files_write_file]",
        "Server: \"files\"",
        "Server claims: \"destructive (asks in every mode but bypass)\"",
    ] {
        assert!(question.contains(field), "{field} missing from {question}");
    }
    pty.send_line("y");
    pty.expect("written");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("written.txt")).unwrap(),
        "from the model"
    );
}
