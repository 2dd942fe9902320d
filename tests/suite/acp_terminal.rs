//! A bash call drawn in the editor's own terminal view (the client's
//! `_meta.terminal_output` convention), driven by the official TypeScript
//! SDK client: the command runs in mino's sandbox and the client is asked
//! to run nothing; a client without the convention gets text.

use serde_json::json;

use crate::support::llm::{text, tool};
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_call_is_drawn_in_the_clients_terminal_and_runs_in_minos_sandbox() {
    let replies = || {
        vec![
            tool(
                "bash",
                json!({"command": "echo hi; echo there > made.txt; exit 3"}),
            ),
            text("ran"),
        ]
    };
    let world = World::with("openai-chat", replies(), "").await;
    let run = world
        .client(
            json!([world.new_session(), {"setMode": "bypass"}, {"prompt": "go"}]),
            json!({"capabilities": {"terminal": true, "_meta": {"terminal_output": true}}}),
        )
        .await;
    let call = run.updates("tool_call")[0];
    let id = call["toolCallId"].as_str().unwrap();
    assert_eq!(call["kind"], "execute");
    assert_eq!(
        call["content"],
        json!([{"type": "terminal", "terminalId": id}]),
        "{call}"
    );
    assert_eq!(call["_meta"]["terminal_info"]["terminal_id"], id);
    let updates = run.updates("tool_call_update");
    let output = updates
        .iter()
        .find(|u| u["_meta"]["terminal_output"].is_object())
        .unwrap_or_else(|| panic!("no terminal output: {updates:#?}"));
    let data = output["_meta"]["terminal_output"]["data"].as_str().unwrap();
    assert!(
        data.contains("Exit code: 3") && data.contains("hi"),
        "{data}"
    );
    let end = updates.last().unwrap();
    assert_eq!(end["_meta"]["terminal_exit"]["exit_code"], 3, "{end}");
    assert_eq!(
        end["content"],
        json!([{"type": "terminal", "terminalId": id}])
    );
    // mino ran it (its file is here); the client was asked to run nothing.
    assert!(world.project.path().join("made.txt").is_file());
    assert!(
        run.log.iter().all(|e| !e["event"]
            .as_str()
            .unwrap_or_default()
            .starts_with("terminal")),
        "{:#?}",
        run.log
    );
    // A client without the convention gets the output as text.
    let plain = World::with("openai-chat", replies(), "").await;
    let run = plain
        .client(
            json!([plain.new_session(), {"setMode": "bypass"}, {"prompt": "go"}]),
            json!({"capabilities": {"terminal": true}}),
        )
        .await;
    let call = run.updates("tool_call")[0];
    assert!(
        call["_meta"].is_null() && call["content"].is_null(),
        "{call}"
    );
    let updates = run.updates("tool_call_update");
    let end = updates.last().unwrap();
    assert_eq!(end["content"][0]["type"], "content", "{end}");
}
