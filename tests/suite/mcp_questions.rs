//! A server's questions (MCP elicitation), end to end with the reference
//! `server-everything` and its `trigger-elicitation-request` tool (which it
//! offers only to a client that declares it can be asked): answered in the
//! full screen's dialog in a pseudo-terminal, declined through `-p`, and
//! declined for a server marked `ask`; what the person types goes to the
//! server, never to the model or the session record.

use crate::support::llm::{text, tool};
use serde_json::json;

use super::mcp::{KEY, everything, fake, results};
use crate::support::pty::Screen;
use crate::support::world::World;

const ASK: &str = "mcp_everything_trigger-elicitation-request";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_through_p_is_declined_and_said() {
    let world = World::mcp(vec![tool(ASK, json!({})), text("done")], |_| {
        everything("everything", "")
    })
    .await;
    let (events, stderr, out) = world.mcp_print("ask me", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(
        results.len(),
        1,
        "the tool is offered: {results:?}\n{stderr}"
    );
    assert!(
        results[0]
            .1
            .contains("User declined to provide the requested information"),
        "{results:?}"
    );
    assert!(
        stderr.contains("the MCP server everything asked a question; declined"),
        "{stderr}"
    );
}

/// The full screen for `world`, in bypass so the tool itself runs unasked.
pub(super) fn full_screen(world: &World, extra: &[&str]) -> Screen {
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut args = vec!["--cd", project.as_str()];
    args.extend_from_slice(extra);
    Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &args,
        world.project.path(),
        &[
            ("TERM", "xterm-256color"),
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", KEY),
            ("AGENT_YOLO", ""),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_answered_in_the_dialog_and_the_answer_never_reaches_the_model() {
    let world = World::mcp(
        vec![tool(ASK, json!({})), text("thanks for answering")],
        |_| everything("everything", ""),
    )
    .await;
    let mut screen = full_screen(&world, &["--yolo"]);
    screen.wait_for("MCP 1/1");
    screen.submit("ask me");
    let shown = screen.wait_for_all(&[
        "The MCP server everything asks",
        "Please provide inputs for the following fields:",
        "▸ String *: ▏",
        "Your full, legal name (text)",
        "keys armed",
    ]);
    assert!(shown.contains("Enter sends"), "{shown}");
    // The required field empty: refused, and the dialog stays.
    screen.send(b"\r");
    screen.wait_for("String: required");
    screen.send("Ada Lovelace-Byron".as_bytes());
    screen.wait_for("▸ String *: Ada Lovelace-Byron▏");
    screen.send(b"\r");
    screen.wait_for_all(&[
        "Answered the MCP server everything's question",
        "thanks for answering",
    ]);
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("User provided the requested information"),
        "{}",
        bodies[1]
    );
    assert!(
        bodies[1].contains("[an answer typed for this server, not shown]"),
        "{}",
        bodies[1]
    );
    for body in &bodies {
        assert!(!body.contains("Lovelace"), "{body}");
    }
    assert!(
        !world.home_text().contains("Lovelace"),
        "the session record"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_declined_with_ctrl_d_and_one_of_a_server_marked_ask_is_never_shown() {
    let world = World::mcp(
        vec![
            tool(ASK, json!({})),
            tool("mcp_careful_trigger-elicitation-request", json!({})),
            text("done"),
        ],
        |_| {
            format!(
                "{}{}",
                everything("everything", ""),
                everything("careful", "trust = \"ask\"")
            )
        },
    )
    .await;
    let mut screen = full_screen(&world, &["--yolo"]);
    screen.wait_for("MCP 2/2");
    screen.submit("ask twice");
    screen.wait_for_all(&["The MCP server everything asks", "keys armed"]);
    screen.send(b"\x04");
    screen.wait_for("Declined the MCP server everything's question.");
    // The call to the server marked ask is put to the person; its question is not.
    screen.wait_for_all(&["wants to call careful", "keys armed"]);
    screen.send(b"y");
    screen.wait_for("done");
    let text = screen.text();
    assert!(!text.contains("The MCP server careful asks"), "{text}");
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("User declined"), "{}", bodies[1]);
    assert!(bodies[2].contains("User declined"), "{}", bodies[2]);
}

/// A question out of the blue (no call of that server running) is declined
/// unseen; of two asked at once, the second is declined while the first is
/// open, and Esc cancels the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asks_only_during_its_call_and_one_question_at_a_time() {
    let world = World::mcp(vec![tool("mcp_fake_ask", json!({})), text("done")], |_| {
        fake("fake", "asks", "")
    })
    .await;
    let mut screen = full_screen(&world, &["--yolo"]);
    screen.wait_for("MCP 1/1");
    screen.submit("ask");
    let shown = screen.wait_for_all(&["The MCP server fake asks", "Question ", "keys armed"]);
    assert!(!shown.contains("more waiting"), "{shown}");
    // Whichever of the two came first is open; the other was declined.
    let (open, other) = if shown.contains("Question first") {
        ("first", "second")
    } else {
        ("second", "first")
    };
    screen.esc();
    screen.wait_for_all(&["Cancelled the MCP server fake's question.", "done"]);
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
    let bodies = world.llm.bodies();
    for said in [
        "unprompted=decline".to_string(),
        format!("{open}=cancel"),
        format!("{other}=decline"),
    ] {
        assert!(bodies[1].contains(&said), "{said}: {}", bodies[1]);
    }
}
