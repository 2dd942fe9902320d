//! Bash you can watch, end to end: the built binary on the full screen in
//! a pseudo-terminal against the loopback model service. A command that
//! prints, waits for a file the test writes, and prints again shows its
//! first line in its block before it ends, with the status bar counting;
//! Ctrl-C keeps the partial output on screen and in the result the model
//! gets; a secret printed in two pieces never reaches the terminal, not
//! even its first piece.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::{text, tool};
use crate::support::world::World;
use serde_json::json;

/// A command that prints `out-one`, waits until the project holds `go`,
/// then prints `out-two` (the words are built by printf, so the command
/// line the record shows does not hold them).
const PRINT_WAIT_PRINT: &str =
    "printf 'out-%s\\n' one; until [ -e go ]; do sleep 0.05; done; printf 'out-%s\\n' two";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_commands_output_shows_before_it_ends() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({ "command": PRINT_WAIT_PRINT })),
            text("all done"),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--yolo"], &[]);
    screen.submit("run it");
    let running = screen.wait_for("out-one");
    // It cannot have ended: it waits for a file nobody wrote yet.
    assert!(!world.project.path().join("go").exists());
    assert!(!running.contains("out-two"), "{running}");
    assert!(
        status_bar(&running).contains("running bash"),
        "{}",
        status_bar(&running)
    );
    // The status bar's clock moves while the command runs.
    screen.wait_until("the command's second second", |s| {
        let bar = status_bar(s);
        bar.contains("running bash") && bar.contains(" 0:01")
    });
    std::fs::write(world.project.path().join("go"), "").unwrap();
    let done = screen.wait_for_all(&["out-one", "out-two", "all done", " idle"]);
    assert!(done.contains("✓ bash printf"), "{done}");
    quit(&mut screen);
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("out-one\\nout-two"), "{}", bodies[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_keeps_the_partial_output_on_screen_and_in_the_result() {
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "bash",
                json!({ "command": "printf 'part-%s\\n' one; sleep 30.6161; printf 'part-%s\\n' two" }),
            ),
            text("going on"),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--yolo"], &[]);
    screen.submit("run it");
    screen.wait_for("part-one");
    screen.send(b"\x03");
    let after = screen.wait_for_all(&["(interrupted)", "Interrupted.", " idle"]);
    assert!(
        after.contains("part-one"),
        "the partial output stays:\n{after}"
    );
    assert!(!after.contains("part-two"), "{after}");
    screen.submit("go on");
    screen.wait_for("going on");
    quit(&mut screen);
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(
        bodies[1].contains("Interrupted by the user; the command's process group was killed.")
            && bodies[1].contains("part-one"),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_printed_in_two_pieces_never_shows_a_piece() {
    // The world's `.env` holds TOKEN=MARKER-SECRET-5b8e. The command
    // prints `MARKER-SEC` (built from two words), waits, then `RET-5b8e`;
    // neither piece is in its command line.
    let command = "a=MARKER; b=SEC; printf 'seen-%s\\n%s-%s' one \"$a\" \"$b\"; \
                   until [ -e go ]; do sleep 0.05; done; c=RET; printf '%s-5b8e\\nseen-%s\\n' \"$c\" two";
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({ "command": command })),
            text("all done"),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--yolo"], &[]);
    screen.submit("run it");
    // `seen-one` and the first piece come in one write.
    let running = screen.wait_for("seen-one");
    assert!(!running.contains("MARKER-SEC"), "{running}");
    std::fs::write(world.project.path().join("go"), "").unwrap();
    let done = screen.wait_for_all(&["seen-two", "all done", " idle"]);
    assert!(done.contains("[redacted: TOKEN]"), "{done}");
    let (code, bytes) = {
        screen.submit("/quit");
        screen.wait_exit()
    };
    assert_eq!(code, 0);
    let everything = String::from_utf8_lossy(&bytes);
    assert!(
        !everything.contains("MARKER-SEC") && !everything.contains("RET-5b8e"),
        "a piece of the secret reached the terminal"
    );
    let bodies = world.llm.bodies();
    assert!(!bodies[1].contains("MARKER-SEC"), "{}", bodies[1]);
}
