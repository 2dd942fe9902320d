//! `/rewind` on the full screen, end to end: the built binary in bypass in
//! a pseudo-terminal against a loopback model service, a turn that edits
//! `notes.md` and deletes `src` and most of `.git` through bash and writes
//! `new.txt`; then Esc twice on the empty input opens the picker, and code
//! and conversation go back: `src` and `.git` byte for byte (real git
//! checks them), `new.txt` gone, a file changed outside mino kept and
//! listed, the prompt back in the input and the session file's rewind
//! record appended; a new run resuming the session offers it again.

use std::time::Duration;

use serde_json::json;

use super::checkpoints::{git, prepared, session_lines, the_turn, tree};
use super::sandbox::KEY;
use crate::support::full_screen::{FIRST_FRAME, env};
use crate::support::pty::Screen;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_twice_rewinds_code_and_conversation_and_keeps_a_file_changed_outside_mino() {
    let b = prepared(the_turn()).await;
    let project = b.project();
    let before = tree(&project);
    let home = b.home().to_str().unwrap().to_string();
    let mino_home = b.mino_home().to_str().unwrap().to_string();
    let project_dir = project.to_str().unwrap().to_string();
    let vars = env(&[
        ("HOME", &home),
        ("MINO_HOME", &mino_home),
        ("OPENAI_API_KEY", KEY),
    ]);
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--yolo", "--cd", &project_dir],
        &project,
        &vars,
    );
    screen.wait_for(FIRST_FRAME);
    screen.submit("do it");
    screen.wait_for_all(&["Changed by bash", "done"]);
    screen.wait_until("the turn to end", |s| {
        crate::support::full_screen::status_bar(s).contains("idle")
    });
    assert!(!project.join("src").exists());
    assert!(project.join("new.txt").exists());
    // What bash changed is one Ctrl+O away: the diffs of the files.
    screen.wait_for("(Ctrl+O shows the diffs)");
    screen.send(b"\x0f");
    let diffs = screen.wait_for_all(&["-fn c() {}", "+two"]);
    assert!(!diffs.contains("(Ctrl+O shows the diffs)"), "{diffs}");
    screen.send(b"\x0f");
    screen.wait_for("(Ctrl+O shows the diffs)");
    // Something other than mino changes a file the turn changed.
    std::fs::write(project.join("notes.md"), "mine\n").unwrap();

    // /rewind typed: the picker lists the prompt with what its turn changed.
    screen.submit("/rewind");
    let shown = screen.wait_for("Rewind to before a prompt");
    assert!(shown.contains("1. do it"), "{shown}");
    assert!(shown.contains("1. do it  11 file(s): "), "{shown}");
    screen.esc();
    screen.wait_until("the picker to close", |s| {
        !s.contains("Rewind to before a prompt")
    });

    // Esc twice on the empty input opens it too.
    std::thread::sleep(Duration::from_millis(150));
    screen.esc();
    std::thread::sleep(Duration::from_millis(150));
    screen.esc();
    screen.wait_for("Rewind to before a prompt");
    screen.send(b"\r");
    let dialog = screen.wait_for_all(&[
        "Restore code and conversation",
        "Restore code only",
        "[ ] keep    notes.md",
        "Esc back",
    ]);
    assert!(dialog.contains("Restore conversation only"), "{dialog}");
    assert!(dialog.contains("Restore code only"), "{dialog}");
    assert!(dialog.contains("file(s): new.txt"), "{dialog}");
    assert!(dialog.contains("[ ] keep    notes.md"), "{dialog}");
    // Code and conversation, notes.md not confirmed.
    screen.send(b"\r");
    let done = screen.wait_for("Rewound to before prompt 1");
    assert!(done.contains("kept as they are"), "{done}");
    // The prompt is back in the input box.
    let input = screen.wait_until("the prompt in the input", |s| {
        s.lines().any(|l| l.starts_with('│') && l.contains("do it"))
    });
    assert!(!input.contains("Changed by bash"), "{input}");

    assert_eq!(
        std::fs::read_to_string(project.join("notes.md")).unwrap(),
        "mine\n"
    );
    assert!(!project.join("new.txt").exists());
    let mut now = tree(&project);
    let mut then = before.clone();
    now.retain(|(p, _)| p != "notes.md");
    then.retain(|(p, _)| p != "notes.md");
    assert_eq!(now, then, "src and .git are not as they were");
    let log = git(&project, &b.home(), &["log", "--oneline"]);
    assert_eq!(log.lines().count(), 2, "{log}");
    git(&project, &b.home(), &["fsck", "--strict"]);
    // Ctrl+U empties the input before /quit.
    screen.send(b"\x15");
    crate::support::full_screen::quit(&mut screen);

    let dir = b.mino_home().join("sessions");
    let id = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .next()
        .unwrap();
    let lines = session_lines(&b, &id);
    assert_eq!(
        *lines.last().unwrap(),
        json!({"type": "rewind", "to": 1, "code": true, "conversation": true})
    );

    // A new run resuming the session offers the same prompt from its file.
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--yolo", "--cd", &project_dir, "--resume", &id],
        &project,
        &vars,
    );
    screen.wait_for(FIRST_FRAME);
    screen.submit("/rewind");
    let shown = screen.wait_for_all(&["Rewind to before a prompt", "Esc close"]);
    assert!(shown.contains("1. do it  "), "{shown}");
    screen.send(b"\r");
    screen.wait_for("Restore conversation only");
    screen.esc();
    screen.wait_until("the dialog to go back to the picker", |s| {
        s.contains("Rewind to before a prompt") && !s.contains("Restore conversation only")
    });
    screen.esc();
    screen.wait_until("the picker to close", |s| {
        !s.contains("Rewind to before a prompt")
    });
    crate::support::full_screen::quit(&mut screen);
}
