//! `/diff` and `/init` end to end: the built binary on the full screen in a
//! pseudo-terminal against the loopback model service. `/diff` shows what
//! the session changed since its first prompt (an edit's lines, and a file
//! that holds a secret by a note, never its value), sends nothing to the
//! model and changes nothing; `/init` is a turn whose write of `AGENTS.md`
//! asks first, and a rejection writes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::quit;
use crate::support::llm::{text, tool};
use crate::support::world::{SECRET, World};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_the_sessions_changes_and_no_secret() {
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "edit_file",
                json!({"path": "notes.md", "old_string": "# Relase notes", "new_string": "# Release notes"}),
            ),
            // The secret is put together by printf: the command line never
            // holds it whole.
            tool(
                "bash",
                json!({"command": "printf 'TOKEN=%s%s\\n' MARKER-SE CRET-5b8e > leak.txt"}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--yolo"], &[]);
    screen.submit("/diff");
    screen.wait_for("this session has no prompt yet");
    screen.submit("fix the title");
    screen.wait_for_all(&["done", " idle"]);
    let requests = world.llm.bodies().len();
    let notes = std::fs::read_to_string(world.project.path().join("notes.md")).unwrap();
    screen.submit("/diff");
    screen.wait_for("Changed since this session's first prompt");
    let shown = screen.wait_until("the diff's lines", |s| {
        s.contains("+# Release notes") && s.contains("leak.txt")
    });
    assert!(shown.contains("-# Relase notes"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!shown.contains("CRET-5b8e\n"), "{shown}");
    quit(&mut screen);
    assert_eq!(world.llm.bodies().len(), requests, "/diff asks no model");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("notes.md")).unwrap(),
        notes,
        "/diff changes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_asks_before_it_writes_agents_md() {
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "write_file",
                json!({"path": "AGENTS.md", "content": "# Agents\n\nRun the tests.\n"}),
            ),
            text("I did not write it."),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--mode", "accept-edits"], &[]);
    screen.submit("/init");
    let asked = screen.wait_for("keys armed");
    assert!(asked.contains("AGENTS.md"), "{asked}");
    assert!(!world.project.path().join("AGENTS.md").exists());
    screen.send(b"\x1b");
    screen.wait_for_all(&["I did not write it.", " idle"]);
    quit(&mut screen);
    assert!(!world.project.path().join("AGENTS.md").exists());
    let first = &world.llm.bodies()[0];
    assert!(first.contains("Write an AGENTS.md file"), "{first}");
}
