//! A bash call's output in the editor's own terminal view, for a client
//! that says it shows one (`clientCapabilities._meta.terminal_output`, the
//! convention Zed's display-only terminals follow). The command still runs
//! in mino's sandbox, decided by mino: the client runs nothing (no
//! `terminal/create`, which would have the client execute the command);
//! it only draws what mino sends. The call carries a terminal content
//! block and `_meta.terminal_info`; while it runs its last lines come as
//! text beside it; its output goes out once as `_meta.terminal_output`,
//! then the call ends with `_meta.terminal_exit` and the exit code its
//! result states. Pure conversions, and the two sends of a call's end.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, Terminal, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::session::update;
use super::wire;

/// Whether the client draws a terminal from mino's output.
pub fn offered(meta: Option<&Meta>) -> bool {
    meta.and_then(|m| m.get("terminal_output"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Whether `tool`'s calls are shown in a terminal.
pub fn shows(tool: &str) -> bool {
    tool == "bash"
}

fn meta(key: &str, value: Value) -> Meta {
    let mut meta = Meta::new();
    meta.insert(key.to_string(), value);
    meta
}

fn block(call_id: &str) -> ToolCallContent {
    ToolCallContent::Terminal(Terminal::new(call_id.to_string()))
}

/// A bash call as the editor first sees it: with its terminal.
pub fn call(call: ToolCall, call_id: &str, cwd: &std::path::Path) -> ToolCall {
    call.content(vec![block(call_id)]).meta(meta(
        "terminal_info",
        json!({"terminal_id": call_id, "cwd": cwd}),
    ))
}

/// What a running call printed so far: its terminal, and its last lines
/// beside it (the terminal gets the whole output at the end).
pub fn live(call_id: &str, output: String) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new().content(vec![block(call_id), wire::text_content(output)])
}

/// The exit code a bash result states on its first line.
fn exit_code(output: &str) -> Option<i64> {
    output
        .lines()
        .next()?
        .strip_prefix("Exit code: ")?
        .trim()
        .parse()
        .ok()
}

/// A call that ran ends: its output into the terminal, then its status
/// with the terminal and how the command ended.
pub fn finish(
    cx: &ConnectionTo<Client>,
    session: &str,
    call_id: &str,
    status: ToolCallStatus,
    output: &str,
) {
    let data = ToolCallUpdate::new(call_id.to_string(), ToolCallUpdateFields::new()).meta(meta(
        "terminal_output",
        json!({"terminal_id": call_id, "data": output}),
    ));
    update(cx, session, SessionUpdate::ToolCallUpdate(data));
    let end = ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(vec![block(call_id)]),
    )
    .meta(meta(
        "terminal_exit",
        json!({"terminal_id": call_id, "exit_code": exit_code(output), "signal": null}),
    ));
    update(cx, session, SessionUpdate::ToolCallUpdate(end));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_client_that_says_so_gets_a_terminal() {
        assert!(!offered(None));
        assert!(!offered(Some(&meta("terminal_output", json!("yes")))));
        assert!(offered(Some(&meta("terminal_output", json!(true)))));
    }

    #[test]
    fn the_exit_code_comes_from_the_results_first_line() {
        assert_eq!(exit_code("Exit code: 2\nboom"), Some(2));
        assert_eq!(exit_code("Killed by signal 9 (SIGKILL)\n"), None);
        assert_eq!(exit_code("Blocked by policy: ..."), None);
    }
}
