//! The input box end to end: the built binary on the full screen in a
//! pseudo-terminal against the loopback model service. `@` completion
//! offers project files and never a protected one, and an `@path` reaches
//! the model through a real `read_file` call; `!ls` runs as the user's own
//! command, is shown, never becomes a model request, and is part of the
//! conversation the next prompt sends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::llm::{Reply, text};
use crate::support::world::{SECRET, World};

async fn world(replies: Vec<Reply>) -> World {
    let world = World::with("openai-chat", replies, "").await;
    let project = world.project.path();
    std::fs::create_dir(project.join("src")).unwrap();
    std::fs::write(
        project.join("src/lib.rs"),
        "pub fn answer() -> u32 { 42 }\n",
    )
    .unwrap();
    std::fs::write(project.join("src/server.pem"), SECRET).unwrap();
    std::fs::write(project.join(".env.local"), SECRET).unwrap();
    world
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_completion_never_offers_a_protected_path_and_attaches_through_read_file() {
    let world = world(vec![text("It returns 42.")]).await;
    let mut screen = world.full_screen();
    // Everything the walk finds is offered; nothing protected, no link.
    screen.send(b"@");
    let popup = screen.wait_for_all(&["@notes.md", "@src/lib.rs", "Tab completes"]);
    for protected in ["@.env", "@.git", "@src/server.pem", "@docs"] {
        assert!(!popup.contains(protected), "{protected} offered:\n{popup}");
    }
    // Typing what a protected name starts with offers nothing of it.
    screen.send(b".e");
    let narrowed = screen.text();
    assert!(!narrowed.contains("@.env"), "{narrowed}");
    // Ctrl+U empties the line; Tab completes the one match.
    screen.send(b"\x15What does @li");
    screen.wait_for("@src/lib.rs");
    screen.send(b"\t");
    screen.wait_for("What does @src/lib.rs");
    screen.submit("return?");
    screen.wait_for_all(&["✓ read_file src/lib.rs", "It returns 42."]);
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1, "the attachment is not a model request");
    assert!(
        bodies[0].contains("pub fn answer() -> u32 { 42 }"),
        "{}",
        bodies[0]
    );
    assert!(!bodies[0].contains(SECRET));
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_at_path_to_a_protected_file_is_denied_like_any_read() {
    let world = world(vec![text("I cannot read it.")]).await;
    let mut screen = world.full_screen();
    screen.submit("Show me @.env");
    screen.wait_for_all(&["✗ read_file .env  (denied)", "I cannot read it."]);
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1);
    assert!(bodies[0].contains("is a protected path"), "{}", bodies[0]);
    assert!(!bodies[0].contains(SECRET), "{}", bodies[0]);
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_ls_runs_as_the_user_and_never_reaches_the_model() {
    let world = world(vec![text("ls listed notes.md and src.")]).await;
    let mut screen = world.full_screen();
    screen.submit("!ls");
    screen.wait_for_all(&["> !ls", "✓ bash ls", "notes.md"]);
    // Give a wrongly sent request every chance to arrive.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        world.llm.bodies().is_empty(),
        "!ls reached the model service: {:?}",
        world.llm.bodies()
    );
    // The next prompt carries what the user ran and saw.
    screen.submit("What did ls print?");
    screen.wait_for("ls listed notes.md and src.");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1);
    assert!(
        bodies[0].contains("I ran this shell command myself"),
        "{}",
        bodies[0]
    );
    assert!(bodies[0].contains("$ ls"));
    assert!(bodies[0].contains("notes.md"));
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_runs_in_the_sandbox_like_bash() {
    let world = world(Vec::new()).await;
    let mut screen = world.full_screen();
    // Secrets read as empty files inside the sandbox.
    screen.submit("!cat .env.local; echo END-$((6*7))");
    let shown = screen.wait_for("END-42");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(world.llm.bodies().is_empty());
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_kept_per_project_in_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let world = world(Vec::new()).await;
    let mut screen = world.full_screen();
    screen.submit("!echo kept-$((40+2))");
    screen.wait_for("kept-42");
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
    let dir = world.home.path().join("history");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(&files[0]).unwrap(),
        "\"!echo kept-$((40+2))\"\n\"/quit\"\n"
    );
    // The next run brings it back with Up.
    let mut screen = world.full_screen();
    screen.send(b"\x1b[A");
    screen.wait_for("/quit");
    screen.send(b"\x1b[A");
    screen.wait_for("│ !echo kept-$((40+2))");
    screen.send(b"\x15");
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}

/// `!command` goes through the turn machine like a bash call of the
/// model's: in plan mode (where the model's bash is refused) the person's
/// own command still runs without a question, what it changed is shown
/// and checkpointed (so `/rewind` can take it back), and the audit log
/// records its decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bang_is_decided_checkpointed_and_audited_like_a_bash_call() {
    let world = world(Vec::new()).await;
    let project = world.project.path().to_path_buf();
    let mut screen = world.full_screen_in(&project, &["--mode", "plan"], &[]);
    screen.submit("!echo made-by-hand > made.txt; echo done-$((6*7))");
    screen.wait_for_all(&["done-42", "Changed by bash: made.txt"]);
    assert!(world.llm.bodies().is_empty());
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "made-by-hand\n"
    );
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
    let audit = std::fs::read_to_string(world.home.path().join("audit.jsonl")).unwrap();
    let line = audit
        .lines()
        .find(|l| l.contains("made-by-hand") || l.contains("\"bash\""))
        .unwrap_or_else(|| panic!("no audit line for the command:\n{audit}"));
    assert!(line.contains("allow"), "{line}");
    let sessions = world.home.path().join("sessions");
    let log: String = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(log.contains("\"checkpoint\""), "{log}");
    assert!(log.contains("I ran this shell command myself"), "{log}");
}

/// A terminal without bracketed paste sends a paste as keys: a long line
/// of them, read in runs, goes in whole and in order, and the Enter after
/// it sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_line_sent_as_keys_reaches_the_model_whole() {
    let world = world(vec![text("Read all of it.")]).await;
    let mut screen = world.full_screen();
    let words = [
        "Why", "does", "é字", "ß?", "@notes", "/tmp", "!ok", "😀", "end.",
    ];
    let line: String = (0..8_000)
        .map(|i| words[i % words.len()])
        .collect::<Vec<_>>()
        .join(" ");
    assert!(line.chars().count() > 30_000);
    screen.submit(&line);
    screen.wait_for("Read all of it.");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1);
    let sent: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    let prompts: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(prompts, vec![line.as_str()]);
    screen.submit("/quit");
    assert_eq!(screen.wait_exit().0, 0);
}
