//! Claude Code-format hooks that answer for someone: a PreToolUse hook's
//! `updatedInput` (the call is prepared and decided anew on it, so it can
//! never reach what the decision refuses) and a PermissionRequest hook
//! answering a question the person would be asked (and only then). The
//! script files under `tests/fixtures/claude_hooks/` are the ones Claude
//! Code would run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::hooks::{audited, logged, script, settings};
use crate::support::llm::{text, tool};
use crate::support::run::mino;
use crate::support::stream::{decisions, of_type, outputs, records, statuses};
use crate::support::world::{SECRET, World};

/// A hook's new input is what runs, and what the decision reads: a bash
/// command it rewrites runs as rewritten (a second hook sees the new
/// input; the model is told), and a read it turns towards `.env` is denied
/// as a protected path, never read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updated_input_is_prepared_and_decided_anew() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo original"})),
            tool("read_file", json!({"path": "notes.md"})),
            tool("bash", json!({"command": "echo leak"})),
            text("done"),
        ],
        "",
    )
    .await;
    let (log, after) = (
        world.home.path().join("rewrite.jsonl"),
        world.home.path().join("after.jsonl"),
    );
    settings(
        &world,
        &format!(
            "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = \"python3 {} {}\" }}, {{ type = \"command\", command = \"python3 {} {}\" }}]\n",
            script("rewrite_input.py").display(),
            log.display(),
            script("told.py").display(),
            after.display()
        ),
    );
    let out = mino(
        &world,
        &["-p", "go", "--output-format", "stream-json", "--yolo"],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = records(&out.stdout);
    assert_eq!(
        decisions(&events),
        [
            ("bash".into(), "allow".into(), String::new()),
            (
                "read_file".into(),
                "deny".into(),
                "MINO_DENY_PROTECTED_PATH".into()
            ),
            ("bash".into(), "allow".into(), String::new()),
        ],
        "{stderr}"
    );
    assert_eq!(statuses(&events), ["completed", "denied", "completed"]);
    assert!(!stderr.contains(SECRET), "{stderr}");
    // What runs is announced, after the model's call, under its id.
    let calls = of_type(&events, "tool_call");
    let bash: Vec<&str> = calls
        .iter()
        .filter(|c| c["tool"] == "bash")
        .map(|c| c["arguments"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(bash[..2], ["echo original", "echo rewritten"], "{calls:?}");
    assert_eq!(bash.len(), 4, "{calls:?}");
    let results = outputs(&events);
    assert!(results[0].contains("rewritten"), "{results:?}");
    assert!(!results[0].contains("original\n"), "{results:?}");
    let all = String::from_utf8_lossy(&out.stdout);
    assert!(!all.contains(SECRET), "the secret leaked: {all}");
    // The model is told what ran, and never sees the secret.
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("changed this call's input") && bodies[1].contains("echo rewritten"),
        "{}",
        bodies[1]
    );
    assert!(bodies.iter().all(|b| !b.contains(SECRET)));
    // The second hook saw the input the first one gave.
    let seen = logged(&after);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0]["tool_input"]["command"], "echo rewritten");
    assert!(
        seen[1]["tool_input"]["file_path"]
            .as_str()
            .unwrap()
            .ends_with("/.env"),
        "{seen:?}"
    );
    let key = "hooks.PreToolUse[0].hooks[0]".to_string();
    let verdicts = audited(&world, "PreToolUse");
    assert!(
        verdicts.contains(&(key.clone(), "updatedInput".to_string())),
        "{verdicts:?}"
    );
}

/// A PermissionRequest hook answers a question for the person: its allow
/// runs the call once without a question, its deny rejects it with the
/// message for the model, and no opinion puts the question to the person.
/// Where nobody can be asked (`-p`), it is never consulted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_hook_answers_only_questions_a_person_would_get() {
    use super::line_mode::Line;
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo allow-me"})),
            tool("bash", json!({"command": "echo deny-me"})),
            tool("bash", json!({"command": "echo ask-me"})),
            text("turn over"),
            tool("bash", json!({"command": "echo allow-me again"})),
            text("headless over"),
        ],
        "",
    )
    .await;
    let log = world.home.path().join("permission.jsonl");
    settings(
        &world,
        &format!(
            "[[hooks.PermissionRequest]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = \"python3 {} {}\" }}]\n",
            script("permission_request.py").display(),
            log.display()
        ),
    );
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("go");
    pty.expect("Command: \"echo ask-me\"");
    pty.expect("Approve this operation? [y/N]");
    let before = pty.all();
    assert!(
        before.contains("A PermissionRequest hook allowed bash once for you."),
        "{before}"
    );
    assert!(
        before.contains("A PermissionRequest hook rejected bash for you."),
        "{before}"
    );
    // Only the third call was put to the person.
    assert_eq!(
        before.matches("Approve this operation").count(),
        1,
        "{before}"
    );
    pty.send_line("y");
    pty.expect("turn over");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0, "{}", pty.all());

    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("allow-me"), "{}", bodies[1]);
    assert!(bodies[2].contains("not on Fridays"), "{}", bodies[2]);
    let seen = logged(&log);
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "PermissionRequest");
    assert_eq!(seen[0]["tool_name"], "Bash");
    assert_eq!(seen[0]["tool_input"]["command"], "echo allow-me");
    assert_eq!(seen[0]["permission_mode"], "default");
    let key = "hooks.PermissionRequest[0].hooks[0]".to_string();
    assert_eq!(
        audited(&world, "PermissionRequest"),
        [
            (key.clone(), "allow".to_string()),
            (key.clone(), "deny".to_string()),
            (key, "none".to_string())
        ]
    );

    // -p cannot ask: the call is rejected, the hook never consulted.
    let out = mino(
        &world,
        &["-p", "again", "--output-format", "stream-json"],
        None,
    )
    .await;
    let events = records(&out.stdout);
    assert_eq!(
        decisions(&events),
        [(
            "bash".into(),
            "deny".into(),
            "MINO_DENY_NOBODY_TO_ASK".into()
        )],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(logged(&log).len(), 3);
}

/// An interrupt does not wait for a PermissionRequest hook: the call is
/// not run, the hook's processes are stopped, and the next turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_does_not_wait_for_a_permission_request_hook() {
    use super::line_mode::Line;
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo never > ran.txt"})),
            text("next turn"),
        ],
        "",
    )
    .await;
    let started = world.project.path().join("hook-started");
    settings(
        &world,
        &format!(
            "[[hooks.PermissionRequest]]\nhooks = [{{ type = \"command\", command = \"touch '{}'; sleep 120.5131\", timeout = 300 }}]\n",
            started.display()
        ),
    );
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("go");
    let waited = std::time::Instant::now();
    while !started.exists() && waited.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(started.exists(), "the hook did not start: {}", pty.all());
    pty.send_raw(b"\x03");
    // Well before the hook's 120 s sleep would end.
    pty.expect("Interrupted.");
    pty.send_line("again");
    pty.expect("next turn");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0, "{}", pty.all());
    assert!(!world.project.path().join("ran.txt").exists());
    let sleeping = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains("120.5131"));
    assert!(!sleeping, "the hook's sleep outlived the interrupt");
}
