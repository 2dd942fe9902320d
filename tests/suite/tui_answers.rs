//! What the full screen remembers of answers and what a rejection tells
//! the model, end to end: the built binary in a 120x40 pseudo-terminal
//! against the loopback model service. `/permissions` lists an "allow for
//! this session" and revokes it, so the tool's next call asks again; the
//! status bar marks an active grant; a rejection's note reaches the next
//! request body.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::{Reply, text, tool};
use crate::support::world::World;
use serde_json::json;

/// A question's border once its keys take answers.
const ARMED: &str = "keys armed";

async fn world(replies: Vec<Reply>) -> World {
    World::with("openai-chat", replies, "").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_revokes_a_grant_so_the_next_call_asks_again() {
    let world = world(vec![
        // Turn 1: allowed for the session; the next call runs unasked.
        tool("bash", json!({"command": "echo one >> log.txt"})),
        tool("bash", json!({"command": "echo two >> log.txt"})),
        text("first done"),
        // Turn 2, after the grant is revoked: asked again, and rejected.
        tool("bash", json!({"command": "echo three >> log.txt"})),
        text("second done"),
    ])
    .await;
    let mut screen = world.full_screen();
    let before = screen.text();
    assert!(!status_bar(&before).contains("+bash"), "{before}");

    screen.submit("first");
    screen.wait_for_all(&["Command: \"echo one >> log.txt\"", ARMED]);
    screen.send(b"a");
    screen.wait_for("Allow bash for the rest of this session? [y/N]");
    screen.send(b"y");
    screen.wait_for_all(&[
        "first done",
        "[Tool: bash, allowed for this session]",
        "✓ bash echo two >> log.txt",
    ]);
    // The status bar is the frame's last row: read it once it is drawn.
    screen.wait_until("the status bar to mark the grant", |s| {
        status_bar(s).contains("+bash")
    });

    screen.submit("/permissions");
    screen.wait_for_all(&[
        "Permissions: Enter revokes",
        "bash allowed for this session",
    ]);
    screen.send(b"\r");
    screen.wait_until("the revoked grant's mark to go", |s| {
        s.contains("Revoked: bash allowed for this session.") && !status_bar(s).contains("+bash")
    });

    screen.submit("second");
    screen.wait_for_all(&[
        "bash wants to run a command",
        "Command: \"echo three >> log.txt\"",
        ARMED,
    ]);
    screen.esc();
    screen.wait_for_all(&[
        "second done",
        "✗ bash echo three >> log.txt  Rejected this bash call.",
    ]);
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("log.txt")).unwrap(),
        "one\ntwo\n"
    );
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_note_reaches_the_next_request() {
    let world = world(vec![
        tool("bash", json!({"command": "touch made.txt"})),
        text("understood"),
    ])
    .await;
    let mut screen = world.full_screen();
    screen.submit("make a file");
    screen.wait_for_all(&["Command: \"touch made.txt\"", ARMED]);
    screen.send(b"n");
    screen.wait_for("Reject, with a note to the model");
    screen.send(b"use write_file instead\r");
    screen.wait_for_all(&[
        "Rejected this bash call with a note: use write_file instead",
        "understood",
    ]);
    assert!(
        !world.project.path().join("made.txt").exists(),
        "nothing ran"
    );
    quit(&mut screen);

    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(
        bodies[1].contains("The user rejected this call: use write_file instead"),
        "{}",
        bodies[1]
    );
    assert!(!bodies[0].contains("use write_file"));
}
