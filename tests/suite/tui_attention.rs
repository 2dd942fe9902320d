//! A question that waits calls the person, end to end: the built binary on
//! the full screen in a pseudo-terminal. With the terminal unfocused (focus
//! reporting), the question's opening rings the bell and sets the title
//! `mino: waiting for you`; answering puts the title back; in a focused
//! terminal the call comes only after the question has waited; `[ui]
//! notify = "off"` sends nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::llm::{Reply, text, tool};
use crate::support::pty::Screen;
use crate::support::world::World;
use serde_json::json;

const ARMED: &str = "keys armed";
const TITLE: &str = "\x1b]2;mino: waiting for you\x07";
const FOCUS_OUT: &[u8] = b"\x1b[O";

fn replies() -> Vec<Reply> {
    vec![
        tool("bash", json!({"command": "touch x.txt"})),
        text("done"),
    ]
}

fn output(screen: &Screen) -> String {
    String::from_utf8_lossy(&screen.pty.bytes_from(0)).into_owned()
}

/// Waits until mino has written `needle`.
fn wait_output(screen: &mut Screen, needle: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !output(screen).contains(needle) {
        if std::time::Instant::now() > deadline {
            panic!(
                "mino never wrote {needle:?}; the screen:\n{}",
                screen.text()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfocused_terminal_is_called_when_a_question_opens() {
    let world = World::with("openai-chat", replies(), "").await;
    let mut screen = world.full_screen_in(world.project.path(), &[], &[("TERM_PROGRAM", "test")]);
    assert!(
        output(&screen).contains("\x1b[?1004h"),
        "focus reporting is on"
    );
    screen.send(FOCUS_OUT);
    screen.submit("make a file");
    screen.wait_for("bash wants to run a command");
    wait_output(&mut screen, &format!("{TITLE}\x07"));
    screen.wait_for(ARMED);
    screen.esc();
    screen.wait_for("done");
    wait_output(&mut screen, "\x1b]2;mino\x07\x1b[23;2t");
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focused_terminal_is_called_only_after_the_question_waited() {
    let world = World::with("openai-chat", replies(), "").await;
    let mut screen = world.full_screen_in(world.project.path(), &[], &[("TERM_PROGRAM", "test")]);
    screen.submit("make a file");
    screen.wait_for_all(&["bash wants to run a command", ARMED]);
    assert!(!output(&screen).contains(TITLE), "not at once");
    wait_output(&mut screen, TITLE);
    screen.esc();
    screen.wait_for("done");
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_off_sends_nothing() {
    let world = World::with("openai-chat", replies(), "\n[ui]\nnotify = \"off\"\n").await;
    let mut screen = world.full_screen_in(world.project.path(), &[], &[("TERM_PROGRAM", "test")]);
    screen.send(FOCUS_OUT);
    screen.submit("make a file");
    screen.wait_for_all(&["bash wants to run a command", ARMED]);
    // Well past the wait a focused terminal would have had.
    std::thread::sleep(std::time::Duration::from_secs(6));
    screen.esc();
    screen.wait_for("done");
    screen.submit("/quit");
    let (code, bytes) = screen.wait_exit();
    assert_eq!(code, 0);
    let out = String::from_utf8_lossy(&bytes);
    assert!(!out.contains("waiting for you\x07"), "no title");
    assert!(!out.contains("\x1b]9;"), "no notification");
}
