//! The demo's third scene end to end, on the release of the built binary in
//! a pseudo-terminal: after `/mode bypass`, "Run the tests and fix what
//! fails" makes five calls without a question (list_dir, search, bash, an
//! edit, bash again), each after its record line, and the tests pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tempfile::TempDir;

use crate::support::pty::Screen;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_the_tests_and_fixes_them_unasked_in_bypass() {
    let home = TempDir::new().unwrap();
    let temp = TempDir::new().unwrap();
    let home_path = home.path().to_str().unwrap();
    let temp_path = temp.path().to_str().unwrap();
    let env = [
        ("TERM", "xterm-256color"),
        ("AGENT_YOLO", ""),
        ("MINO_HOME", home_path),
        ("TMPDIR", temp_path),
    ];
    let mut screen = Screen::spawn(env!("CARGO_BIN_EXE_mino"), &["--demo"], temp.path(), &env);
    screen.wait_for_all(&["Use /mode to change it.", " MANUAL "]);
    screen.submit("/mode bypass");
    screen.wait_for("Switch to this mode? [y/N]");
    // The question's keys arm after a moment without keys.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    screen.send(b"y");
    screen.wait_for(" BYPASS ");
    screen.submit("Run the tests and fix what fails");
    let seen = screen.wait_for_all(&[
        "[Tool: edit_file, allowed without confirmation in bypass mode]",
        "[Tool: bash, allowed without confirmation in bypass mode]",
        "✓ edit_file calc.sh",
        "ok   add 2 3",
        "now passes all three tests",
        "Changed 1 file: calc.sh +1 -1",
        " idle",
    ]);
    assert!(
        !seen.contains("wants to run"),
        "nothing asks in bypass:\n{seen}"
    );
    // The calls, in order, from the session's record (the first ones have
    // scrolled out of view by now).
    let sessions = home.path().join("sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|text| text.contains("Run the tests"))
        .unwrap();
    let calls: Vec<&str> = [
        "\"list_dir\"",
        "\"search\"",
        "\"bash\"",
        "\"edit_file\"",
        "\"bash\"",
    ]
    .into_iter()
    .collect();
    let mut from = 0;
    for call in calls {
        let at = log[from..]
            .find(call)
            .unwrap_or_else(|| panic!("{call} missing after byte {from}:\n{log}"));
        from += at + call.len();
    }
    let project = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mino-demo-")
        })
        .unwrap()
        .join("notes-demo");
    let calc = std::fs::read_to_string(project.join("calc.sh")).unwrap();
    assert!(calc.contains("echo $(($1 + $2))"), "{calc}");
    screen.send(b"\x04");
    assert_eq!(screen.wait_exit().0, 0);
}
