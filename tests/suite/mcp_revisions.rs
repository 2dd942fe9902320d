//! The MCP revisions: mino speaks 2026-07-28 (`server/discover`) first and
//! falls back to `initialize` at 2025-11-25 for a server that does not know
//! it. Against real servers: one on the official Python SDK (pinned in
//! `tests/mcp/requirements.txt`), which speaks 2026-07-28, and the
//! reference `server-everything` (2025-11-25, whose SDK answers
//! `server/discover` "method not found"). Under 2026-07-28 a server's
//! question comes back as an `input_required` result: it opens the same
//! dialog as elicitation, is declined through `-p`, and is answered by
//! sending the call again; what the person types never reaches the model.

use std::path::{Path, PathBuf};

use crate::support::llm::{text, tool};
use crate::support::pty::Pty;
use crate::support::world::World;
use serde_json::json;

use super::mcp::{everything, results};
use super::mcp_questions::full_screen;

/// The Python SDK's interpreter that `scripts/test-deps` installs; a clear
/// failure when it has not run.
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".test-deps/pymcp/bin/python");
    assert!(
        python.is_file(),
        "the Python MCP SDK is not installed in {}: run scripts/test-deps (it needs python3), or scripts/test",
        python.display()
    );
    python
}

/// `[mcp.servers.NAME]` for `tests/mcp/modern-server.py`.
fn modern(name: &str, extra: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/modern-server.py");
    format!(
        "[mcp.servers.{name}]\ncommand = {:?}\nargs = [{:?}]\n{extra}\n",
        python().display().to_string(),
        script.display().to_string(),
    )
}

/// Waits until each of `servers` said it started, in whatever order.
fn expect_started(pty: &mut Pty, servers: &[&str]) {
    for _ in servers {
        pty.expect(" started: ");
    }
    let all = pty.all();
    for server in servers {
        assert!(
            all.contains(&format!("MCP server {server} started: ")),
            "{all}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_current_revision_is_spoken_where_known_and_the_earlier_one_elsewhere() {
    let world = World::mcp(
        vec![
            tool("mcp_modern_echo", json!({"text": "one"})),
            tool("mcp_everything_echo", json!({"message": "two"})),
            text("done"),
        ],
        |_| format!("{}{}", modern("modern", ""), everything("everything", "")),
    )
    .await;
    let mut pty = world.line_mode(&["--yolo"]);
    expect_started(&mut pty, &["modern", "everything"]);
    pty.send_line("/mcp");
    let listing = pty.expect("mcp_modern_paint");
    for said in [
        "modern: running (MCP 2026-07-28)",
        "everything: running (MCP 2025-11-25)",
    ] {
        assert!(listing.contains(said), "{said}: {listing}");
    }
    pty.send_line("echo twice");
    pty.expect("done");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("echo: one (revision 2026-07-28)"),
        "{}",
        bodies[1]
    );
    assert!(bodies[2].contains("Echo: two"), "{}", bodies[2]);
}

/// Through `-p` nobody can answer: the `input_required` question is
/// declined as elicitation is (`mcp_questions.rs`), and the server is told
/// so in the retried call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_required_question_through_p_is_declined() {
    let world = World::mcp(
        vec![tool("mcp_modern_paint", json!({})), text("done")],
        |_| modern("modern", ""),
    )
    .await;
    let (events, stderr, out) = world.mcp_print("paint", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(results.len(), 1, "{results:?}\n{stderr}");
    assert!(
        results[0]
            .1
            .starts_with("not painted: decline (revision 2026-07-28)"),
        "{results:?}"
    );
    assert!(
        stderr.contains("the MCP server modern asked a question; declined"),
        "{stderr}"
    );
}

/// On the full screen the `input_required` question opens the dialog;
/// the answer goes back in the retried call, and the model reads the
/// result with the answer hidden.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_required_question_is_answered_in_the_dialog_and_the_call_retried() {
    let world = World::mcp(
        vec![tool("mcp_modern_paint", json!({})), text("painted it")],
        |_| modern("modern", ""),
    )
    .await;
    let mut screen = full_screen(&world, &["--yolo"]);
    screen.wait_for("MCP 1/1");
    screen.submit("paint the wall");
    screen.wait_for_all(&[
        "The MCP server modern asks",
        "Which colour should the wall be?",
        "The colour to paint with (text)",
        "keys armed",
    ]);
    screen.send("ultramarine-deep".as_bytes());
    screen.wait_for("ultramarine-deep▏");
    screen.send(b"\r");
    screen.wait_for_all(&["Answered the MCP server modern's question", "painted it"]);
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
    let bodies = world.llm.bodies();
    assert!(
        bodies[1]
            .contains("painted [an answer typed for this server, not shown] (revision 2026-07-28)"),
        "{}",
        bodies[1]
    );
    for body in &bodies {
        assert!(!body.contains("ultramarine"), "{body}");
    }
    assert!(
        !world.home_text().contains("ultramarine"),
        "the session record"
    );
}
