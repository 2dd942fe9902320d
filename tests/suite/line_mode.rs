//! The interactive line front end in a pseudo-terminal: the session
//! commands and modes of the seed's section 3, and the four answers with
//! what each session (and the run) remembers of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::llm::{Reply, text, tool};
use crate::support::pty::Pty;
use crate::support::world::World;
use serde_json::json;

/// How this file (and others) run the binary in line mode in a test world.
pub(super) trait Line: Sized {
    async fn new(replies: Vec<Reply>) -> Self;
    fn start(&self) -> Pty;
}

impl Line for World {
    async fn new(replies: Vec<Reply>) -> Self {
        World::with("openai-chat", replies, "").await
    }

    fn start(&self) -> Pty {
        let home = self.home.path().to_str().unwrap().to_string();
        let project = self.project.path().to_str().unwrap().to_string();
        Pty::spawn(
            env!("CARGO_BIN_EXE_mino"),
            &["--line", "--cd", &project],
            self.project.path(),
            &[
                ("MINO_HOME", &home),
                ("OPENAI_API_KEY", "test"),
                ("AGENT_YOLO", ""),
            ],
        )
    }
}

fn session_id(banner: &str) -> String {
    let at = banner.rfind("Session: ").unwrap() + "Session: ".len();
    banner[at..at + 32].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_commands_keep_each_sessions_own_mode() {
    let world = World::new(vec![]).await;
    let mut pty = world.start();
    let banner = pty.expect("Permission mode: manual. Use /mode to change it.");
    let first = session_id(&banner);

    // A refused loosening keeps manual.
    pty.send_line("/mode bypass");
    pty.expect("bypass mode runs every call without asking");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("n");
    pty.expect("Permission mode for this session unchanged: manual.");

    // An accepted one changes it, and /clear keeps it.
    pty.send_line("/mode accept-edits");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("y");
    pty.expect("Permission mode for this session: accept-edits.");
    pty.send_line("/clear");
    pty.expect("and its mode (accept-edits) are kept");
    pty.send_line("/mode");
    pty.expect("Permission mode: accept-edits.");

    // /new starts in manual.
    pty.send_line("/new");
    let banner = pty.expect("Use /mode to change it.");
    assert!(banner.contains("Permission mode: manual."), "{banner}");
    let second = session_id(&banner);
    assert_ne!(first, second);

    // Tightening never asks.
    pty.send_line("/mode auto");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("yes");
    pty.expect("Permission mode for this session: auto.");
    // Nothing is trusted yet: auto mode offers the read-only tools, once.
    pty.expect("Trust these read-only tools");
    pty.send_line("n");
    pty.expect("Nothing was saved");
    pty.send_line("/mode manual");
    let said = pty.expect("Permission mode for this session: manual.");
    assert!(!said.contains("Switch to this mode"), "{said}");

    // /resume brings back that session's own mode.
    pty.send_line(&format!("/resume {first}"));
    let banner = pty.expect("Use /mode to change it.");
    assert!(banner.contains(&format!("Session: {first}")), "{banner}");
    assert!(
        banner.contains("Permission mode: accept-edits."),
        "{banner}"
    );
    pty.send_line(&format!("/resume {second}"));
    let banner = pty.expect("Use /mode to change it.");
    assert!(banner.contains("Permission mode: manual."), "{banner}");

    // Unknown names and extra words are errors that change nothing.
    pty.send_line("/mode sudo");
    pty.expect("unknown permission mode \"sudo\"");
    pty.send_line("/mode bypass now");
    pty.expect("takes no arguments; got \"now\"");
    pty.send_line("/new please");
    pty.expect("/new takes no arguments");
    pty.send_line("/frobnicate");
    pty.expect("unknown command /frobnicate");
    pty.send_line("/mode");
    pty.expect("Permission mode: manual.");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    assert!(
        world.llm.bodies().is_empty(),
        "commands never reach the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_answers_and_what_they_remember() {
    let world = World::new(vec![
        // Turn 1: allow once.
        tool("bash", json!({"command": "echo one >> log.txt"})),
        text("one done"),
        // Turn 2: allow for the session; the second bash runs unasked.
        tool("bash", json!({"command": "echo two >> log.txt"})),
        tool("bash", json!({"command": "echo three >> log.txt"})),
        text("two and three done"),
        // Turn 3: never for write_file; the retry is denied without a question.
        tool("write_file", json!({"path": "x.txt", "content": "x"})),
        tool("write_file", json!({"path": "y.txt", "content": "y"})),
        text("writes refused"),
        // Turn 4, in a new session: "never" still holds, "allow for session" does not.
        tool("write_file", json!({"path": "z.txt", "content": "z"})),
        tool("bash", json!({"command": "echo four >> log.txt"})),
        text("end"),
    ])
    .await;
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");

    pty.send_line("first");
    pty.expect("Command: \"echo one >> log.txt\"");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("y");
    pty.expect("Allowed bash once.");
    pty.expect("one done");

    pty.send_line("second");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("a");
    pty.expect("Allowed bash for this session.");
    let record = pty.expect("two and three done");
    assert!(
        record.contains("[Tool: bash, allowed for this session]"),
        "{record}"
    );
    assert!(
        record.contains("Command: \"echo three >> log.txt\""),
        "{record}"
    );
    assert!(!record.contains("Approve this operation"), "{record}");

    pty.send_line("third");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("v");
    pty.expect("write_file will not be allowed again while mino runs.");
    let denied = pty.expect("writes refused");
    assert!(
        denied.contains("The user chose never to allow write_file"),
        "{denied}"
    );
    assert!(!denied.contains("Approve this operation"), "{denied}");

    pty.send_line("/new");
    pty.expect("Permission mode: manual.");
    pty.send_line("fourth");
    let denied = pty.expect("Approve this operation? [y/N]");
    assert!(
        denied.contains("The user chose never to allow write_file"),
        "{denied}"
    );
    assert!(
        denied.contains("Command: \"echo four >> log.txt\""),
        "bash asks again: {denied}"
    );
    pty.send_line("n");
    pty.expect("The user did not approve this command.");
    pty.expect("end");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);

    let log = std::fs::read_to_string(world.project.path().join("log.txt")).unwrap();
    assert_eq!(log, "one\ntwo\nthree\n");
    for name in ["x.txt", "y.txt", "z.txt"] {
        assert!(!world.project.path().join(name).exists(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_a_running_command_at_once() {
    let world = World::new(vec![
        tool(
            "bash",
            // The command's own pid is its namespace's; the sleep is found
            // by its unique argument instead.
            json!({"command": "echo started > pid.txt; sleep 30.4247; echo late > late.txt"}),
        ),
        text("going on"),
        text("after the interrupt"),
    ])
    .await;
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("/mode bypass");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("y");
    pty.expect("Permission mode for this session: bypass.");
    pty.send_line("sleep please");
    pty.expect("[Tool: bash, allowed without confirmation in bypass mode]");
    let pid_file = world.project.path().join("pid.txt");
    let started = std::time::Instant::now();
    while !pid_file.exists() && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(pid_file.exists(), "the command did not start");
    pty.send_raw(b"\x03");
    pty.expect("[Tool result: interrupted]");
    pty.expect("Interrupted.");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the interrupt did not wait for the command"
    );
    let running: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("sleep 30.4247"))
        .collect();
    assert!(
        running.is_empty(),
        "the command's process is gone: {running:?}"
    );
    // The next turn goes on normally; the cut call is in history as interrupted.
    pty.send_line("go on");
    pty.expect("going on");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    assert!(!world.project.path().join("late.txt").exists());
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("Interrupted by the user"),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_lists_id_start_first_prompt_and_size() {
    let world = World::new(vec![text("hello there")]).await;
    let mut pty = world.start();
    let banner = pty.expect("Use /mode to change it.");
    let id = session_id(&banner);
    pty.send_line("what is in notes.md?");
    pty.expect("hello there");
    pty.send_line("/sessions");
    let listing = pty.expect("what is in notes.md?");
    let line = listing
        .lines()
        .find(|l| l.contains(&id))
        .expect("the session is listed");
    assert!(line.contains("bytes"), "{line}");
    // The start as the full screen shows it too: `2026-10-26 14:03` (UTC).
    let start = line.split("  ").nth(1).unwrap_or_default();
    let shape: String = start
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "9999-99-99 99:99", "{line}");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_streaming_answer_at_once() {
    let world = World::new(vec![]).await;
    let script = world.home.path().join("slow.json");
    let long = "word ".repeat(400);
    std::fs::write(
        &script,
        serde_json::to_string(&json!({"responses": [
            {"text": format!("BEGIN {long} END"), "chunk_chars": 10, "delay_ms": 20},
            {"text": "after the interrupt"}
        ]}))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(
        world.home.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"scripted\"\nmodel = \"slow\"\nscript = \"{}\"\n",
            script.display()
        ),
    )
    .unwrap();
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("talk");
    pty.expect("BEGIN");
    pty.send_raw(b"\x03");
    pty.expect("Interrupted.");
    pty.send_line("go on");
    pty.expect("after the interrupt");
    // The rest of the answer (about 4 s of it) never arrived.
    assert!(!pty.all().contains(" END"), "{}", pty.all());
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    // The cut answer is in the session, marked as interrupted.
    let sessions = world.home.path().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(file).unwrap();
    assert!(log.contains("[interrupted by the user]"), "{log}");
}

/// The bypass question's words about bash in line mode, with `sandbox`
/// added to the settings.
async fn bypass_question(sandbox: &str) -> String {
    let world = World::with("openai-chat", vec![], sandbox).await;
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("/mode bypass");
    let said = pty.expect("Switch to this mode? [y/N]");
    pty.send_line("n");
    pty.expect("unchanged: manual.");
    said
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_question_says_bash_runs_in_the_sandbox_where_it_does() {
    let said = bypass_question("").await;
    assert!(
        said.contains("Bash commands in the sandbox (project writable, secrets masked, network via proxy; a command asked to run outside it still asks)"),
        "{said}"
    );
    assert!(!said.contains("account permissions"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_question_says_bash_runs_with_the_users_permissions_without_a_sandbox() {
    let said = bypass_question("[sandbox]\nenabled = false\n").await;
    assert!(
        said.contains("Bash commands with your account permissions (no sandbox)"),
        "{said}"
    );
    assert!(!said.contains("in the sandbox"), "{said}");
}

/// A command the bypass guard stops may change what nothing restores: its
/// question offers once or reject only, an `a` typed anyway rejects it,
/// and nothing is remembered, so the same command asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_guard_offers_only_once_or_reject() {
    let world = World::new(vec![
        tool("bash", json!({"command": "rm -rf ~"})),
        tool("bash", json!({"command": "rm -rf ~"})),
        text("end"),
    ])
    .await;
    let home = tempfile::TempDir::new().unwrap();
    std::fs::write(home.path().join("keep.txt"), "mine").unwrap();
    let mino_home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut pty = Pty::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--line", "--cd", &project],
        world.project.path(),
        &[
            ("MINO_HOME", &mino_home),
            ("HOME", home.path().to_str().unwrap()),
            ("OPENAI_API_KEY", "test"),
            ("AGENT_YOLO", ""),
        ],
    );
    pty.expect("Use /mode to change it.");
    pty.send_line("/mode bypass");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("y");
    pty.expect("Permission mode for this session: bypass.");
    pty.send_line("clean up");
    let asked = pty.expect("reject and tell the model NOTE)");
    assert!(asked.contains("Command: \"rm -rf ~\""), "{asked}");
    assert!(!asked.contains("a: allow"), "{asked}");
    assert!(!asked.contains("v: never"), "{asked}");
    assert!(!asked.contains("deny-final"), "a question: {asked}");
    assert!(asked.contains("allowed once or not at all"), "{asked}");
    pty.send_line("a");
    pty.expect("The user did not approve this command.");
    let again = pty.expect("reject and tell the model NOTE)");
    assert!(
        again.contains("Command: \"rm -rf ~\""),
        "asks again: {again}"
    );
    pty.send_line("n");
    pty.expect("end");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    assert!(home.path().join("keep.txt").exists());
}
