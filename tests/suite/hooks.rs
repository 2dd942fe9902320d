//! Claude Code-format hooks (`[[hooks.EVENT]]`) run by the built binary
//! against the loopback model service: the script files under
//! `tests/fixtures/claude_hooks/` are the ones Claude Code would run, and
//! each test reads what they were given and what mino did with their
//! answers (the stream-json records, the requests the model received, the
//! audit log).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::llm::{text, tool};
use crate::support::run::mino;
use crate::support::stream::{decisions, outputs, records, statuses};
use crate::support::world::World;

/// A hook script of the fixtures.
pub(super) fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude_hooks")
        .join(name)
}

/// Appends `text` to the world's user settings.
pub(super) fn settings(world: &World, text: &str) {
    let file = world.home.path().join("config.toml");
    let mut settings = std::fs::read_to_string(&file).unwrap();
    settings.push('\n');
    settings.push_str(text);
    std::fs::write(&file, settings).unwrap();
}

/// The JSON lines a script logged (none when it never ran).
pub(super) fn logged(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The audit log's hook verdicts for `event`, as (hook, verdict).
pub(super) fn audited(world: &World, event: &str) -> Vec<(String, String)> {
    logged(&world.home.path().join("audit.jsonl"))
        .into_iter()
        .filter(|l| l["hook_event"] == event)
        .map(|l| {
            (
                l["hook"].as_str().unwrap().to_string(),
                l["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn canonical(path: &Path) -> String {
    path.canonicalize().unwrap().display().to_string()
}

/// A PreToolUse script blocks by exit 2 and denies by JSON (the call never
/// runs and the model reads the reason); its `allow` lets the decision go
/// on. It reads Claude Code's event: names, fields, absolute paths, the
/// session and the project, without mino's own variables.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_pre_tool_use_script_blocks_denies_and_leaves_the_rest_to_the_decision() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "rm -rf build"})),
            tool("read_file", json!({"path": "./docs/../notes.md"})),
            tool("bash", json!({"command": "echo hook-let-me-run"})),
            text("done"),
        ],
        "",
    )
    .await;
    let log = world.home.path().join("pre.jsonl");
    settings(
        &world,
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash|Read\"\nhooks = [{{ type = \"command\", command = \"python3 {} {}\", timeout = 20 }}]\n",
            script("pre_tool_use.py").display(),
            log.display()
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
            ("bash".into(), "deny".into(), "MINO_DENY_HOOK".into()),
            ("read_file".into(), "deny".into(), "MINO_DENY_HOOK".into()),
            ("bash".into(), "allow".into(), String::new()),
        ],
        "{stderr}"
    );
    let results = outputs(&events);
    assert!(results[0].contains("rm is not allowed here"), "{results:?}");
    assert!(results[1].contains("notes are private"), "{results:?}");
    assert!(results[2].contains("hook-let-me-run"), "{results:?}");
    assert_eq!(statuses(&events), ["denied", "denied", "completed"]);
    // The model read the reasons.
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("rm is not allowed here"),
        "{}",
        bodies[1]
    );

    let seen = logged(&log);
    assert_eq!(seen.len(), 3, "{seen:?}");
    let project = canonical(world.project.path());
    for event in &seen {
        assert_eq!(event["hook_event_name"], "PreToolUse");
        assert!(!event["session_id"].as_str().unwrap().is_empty());
        assert_eq!(event["session_id"], seen[0]["session_id"]);
        assert_eq!(event["cwd"], project.as_str());
        assert_eq!(event["_cwd"], project.as_str());
        assert_eq!(event["_project_dir"], project.as_str());
        assert_eq!(event["permission_mode"], "bypassPermissions");
        assert_eq!(event["_mino_vars"], json!([]), "{event}");
        assert!(event["tool_use_id"].is_string());
    }
    assert_eq!(seen[0]["tool_name"], "Bash");
    assert_eq!(seen[0]["tool_input"]["command"], "rm -rf build");
    assert_eq!(seen[1]["tool_name"], "Read");
    // The path mino resolved, not the model's spelling.
    assert_eq!(
        seen[1]["tool_input"],
        json!({"file_path": format!("{project}/notes.md")})
    );
    let key = "hooks.PreToolUse[0].hooks[0]".to_string();
    assert_eq!(
        audited(&world, "PreToolUse"),
        [
            (key.clone(), "deny".to_string()),
            (key.clone(), "deny".to_string()),
            (key, "allow".to_string())
        ]
    );
}

/// A hook's `allow` never loosens: where nobody can answer, a bash call
/// still asks and is refused. A matcher that does not select a tool does
/// not run for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_allows_never_skips_the_question_and_matchers_select() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo asked"})),
            tool("read_file", json!({"path": "notes.md"})),
            text("done"),
        ],
        "",
    )
    .await;
    let log = world.home.path().join("pre.jsonl");
    settings(
        &world,
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"bash\"\nhooks = [{{ type = \"command\", command = \"python3 {} {}\" }}]\n",
            script("pre_tool_use.py").display(),
            log.display()
        ),
    );
    let out = mino(
        &world,
        &["-p", "go", "--output-format", "stream-json"],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = records(&out.stdout);
    assert_eq!(
        decisions(&events),
        [
            (
                "bash".into(),
                "deny".into(),
                "MINO_DENY_NOBODY_TO_ASK".into()
            ),
            ("read_file".into(), "allow".into(), String::new()),
        ],
        "{stderr}"
    );
    let seen = logged(&log);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["tool_name"], "Bash");
    assert_eq!(seen[0]["permission_mode"], "default");
}

/// A hook that cannot run, exits with another status or runs past its
/// timeout denies: it fails closed. The old key still runs, with a warning
/// naming the file and the new key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_hooks_fail_closed_and_the_old_key_warns() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo one"})),
            tool("read_file", json!({"path": "notes.md"})),
            tool("list_dir", json!({"path": "."})),
            text("done"),
        ],
        "",
    )
    .await;
    let legacy = world.home.path().join("legacy-ran");
    let pid_file = world.home.path().join("sleeper.pid");
    settings(
        &world,
        &format!(
            "[hooks]\npre_tool_call = [\"/bin/sh\", \"-c\", \"touch '{}'\"]\n\
             [[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = \"sleep 600 & echo $! > '{}'; wait\", timeout = 1 }}]\n\
             [[hooks.PreToolUse]]\nmatcher = \"Read\"\nhooks = [{{ type = \"command\", command = \"/nonexistent/hook.py\" }}]\n\
             [[hooks.PreToolUse]]\nmatcher = \"LS\"\nhooks = [{{ type = \"command\", command = \"echo '{{broken'\" }}]\n",
            legacy.display(),
            pid_file.display()
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
    let codes: Vec<String> = decisions(&events).into_iter().map(|d| d.2).collect();
    assert_eq!(codes, ["MINO_DENY_HOOK"; 3], "{stderr}");
    let results = outputs(&events);
    assert!(
        results[0].contains("did not answer within 1 s"),
        "{results:?}"
    );
    assert!(results[1].contains("exited with status 127"), "{results:?}");
    assert!(results[2].contains("not a JSON object"), "{results:?}");
    assert!(legacy.exists());
    // What the hook left running died with it, though it was no child of
    // mino's: the hook's whole process group is killed at the timeout.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let alive = || {
        std::fs::read_to_string(&stat).is_ok_and(|s| {
            let state = s.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive() {
        assert!(std::time::Instant::now() < deadline, "the sleeper lives on");
        std::thread::yield_now();
    }
    let file = world.home.path().join("config.toml");
    let warning = stderr
        .lines()
        .find(|l| l.contains("hooks.pre_tool_call is deprecated"))
        .unwrap_or_else(|| panic!("no deprecation warning: {stderr}"));
    assert!(warning.contains(&file.display().to_string()), "{warning}");
    assert!(warning.contains("[[hooks.PreToolUse]]"), "{warning}");
    let verdicts: Vec<String> = audited(&world, "PreToolUse")
        .into_iter()
        .map(|(hook, verdict)| format!("{hook} {verdict}"))
        .collect();
    assert_eq!(
        verdicts,
        [
            "hooks.pre_tool_call none",
            "hooks.PreToolUse[0].hooks[0] deny",
            "hooks.pre_tool_call none",
            "hooks.PreToolUse[1].hooks[0] deny",
            "hooks.pre_tool_call none",
            "hooks.PreToolUse[2].hooks[0] deny",
        ]
    );
}

/// A PostToolUse script reads the call's result after redaction and adds
/// context for the model, redacted too; its "block" cannot undo the call,
/// whose result and decision stay as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_tool_use_script_sees_the_redacted_result_and_adds_redacted_context() {
    use crate::support::world::SECRET;
    let world = World::with(
        "openai-chat",
        vec![
            // The command prints the secret without spelling it.
            tool(
                "bash",
                json!({"command": format!("echo {}\"{}\" printed", &SECRET[..4], &SECRET[4..])}),
            ),
            tool("read_file", json!({"path": "notes.md"})),
            text("done"),
        ],
        "",
    )
    .await;
    let log = world.home.path().join("post.jsonl");
    settings(
        &world,
        &format!(
            "[[hooks.PostToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = \"python3 {} {}\" }}]\n",
            script("post_tool_use.py").display(),
            log.display()
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
    assert_eq!(statuses(&events), ["completed", "completed"], "{stderr}");
    let codes: Vec<String> = decisions(&events).into_iter().map(|d| d.1).collect();
    assert_eq!(codes, ["allow", "allow"]);
    let seen = logged(&log);
    assert_eq!(seen.len(), 1, "only the Bash call is told: {seen:?}");
    assert_eq!(seen[0]["hook_event_name"], "PostToolUse");
    assert_eq!(seen[0]["tool_name"], "Bash");
    let response = seen[0]["tool_response"].as_str().unwrap();
    assert!(response.contains("[redacted: TOKEN] printed"), "{response}");
    assert!(!response.contains(SECRET), "{response}");
    let results = outputs(&events);
    assert!(results[0].contains("post-hook-context"), "{results:?}");
    assert!(results[0].contains("post-hook-reason"), "{results:?}");
    assert!(!results[1].contains("post-hook"), "{results:?}");
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("post-hook-context"), "{}", bodies[1]);
    for text in bodies.iter().skip(1).chain(results.iter()) {
        assert!(!text.contains(SECRET), "{text}");
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
}

/// A UserPromptSubmit script blocks a prompt by exit 2 or a JSON decision
/// (the reason is shown, nothing reaches the model or the session) and
/// adds context to the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_submit_script_blocks_prompts_or_adds_context() {
    let world = World::with("openai-chat", vec![text("answered")], "").await;
    let log = world.home.path().join("prompt.jsonl");
    settings(
        &world,
        &format!(
            "[[hooks.UserPromptSubmit]]\nhooks = [{{ type = \"command\", command = \"python3 {} {}\", timeout = 20 }}]\n",
            script("user_prompt_submit.py").display(),
            log.display()
        ),
    );
    for (prompt, reason) in [
        (
            "say something forbidden",
            "prompts about forbidden things are blocked",
        ),
        ("a json-block prompt", "blocked by JSON"),
    ] {
        let out = mino(&world, &["-p", prompt], None).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "A UserPromptSubmit hook blocked this prompt; it was not sent: {reason}"
            )),
            "{stderr}"
        );
    }
    assert!(world.llm.bodies().is_empty());
    let sessions = world.home.path().join("sessions");
    for entry in std::fs::read_dir(&sessions).into_iter().flatten() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("forbidden"), "{text}");
    }

    let out = mino(&world, &["-p", "hello there"], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1);
    assert!(bodies[0].contains("hello there"), "{}", bodies[0]);
    assert!(
        bodies[0].contains("ticket PROJ-42 is the one in progress"),
        "{}",
        bodies[0]
    );
    let seen = logged(&log);
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2]["hook_event_name"], "UserPromptSubmit");
    assert_eq!(seen[2]["prompt"], "hello there");
    assert_eq!(seen[2]["cwd"], canonical(world.project.path()).as_str());
    let verdicts: Vec<String> = audited(&world, "UserPromptSubmit")
        .into_iter()
        .map(|(_, verdict)| verdict)
        .collect();
    assert_eq!(verdicts, ["block", "block", "pass"]);
}

/// SessionStart, PreCompact, Notification, Stop and SessionEnd scripts are
/// told, in a pseudo-terminal's line mode where a question can be asked; a
/// told hook that fails is a warning and blocks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn told_events_reach_their_scripts_and_failures_only_warn() {
    use super::line_mode::Line;
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": "echo asked"})),
            text("turn over"),
        ],
        "",
    )
    .await;
    let log = world.home.path().join("told.jsonl");
    let told = format!(
        "hooks = [{{ type = \"command\", command = \"python3 {} {}\" }}]",
        script("told.py").display(),
        log.display()
    );
    settings(
        &world,
        &format!(
            "[[hooks.SessionStart]]\nmatcher = \"startup\"\n{told}\n\
             [[hooks.SessionStart]]\nmatcher = \"resume\"\nhooks = [{{ type = \"command\", command = \"echo resumed >> '{}'\" }}]\n\
             [[hooks.PreCompact]]\nmatcher = \"manual\"\n{told}\n\
             [[hooks.Notification]]\n{told}\n\
             [[hooks.Stop]]\n{told}\n\
             [[hooks.Stop]]\nhooks = [{{ type = \"command\", command = \"echo stop-failed >&2; exit 3\" }}]\n\
             [[hooks.SessionEnd]]\n{told}\n",
            log.display()
        ),
    );
    let mut pty = world.start();
    pty.expect("Use /mode to change it.");
    pty.send_line("/compact");
    pty.expect("There is no earlier history to summarise.");
    pty.send_line("go");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("n");
    pty.expect("turn over");
    pty.expect("Stop hook: the hook hooks.Stop[1].hooks[0] exited with status 3: stop-failed");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0, "{}", pty.all());

    let seen = logged(&log);
    // Told hooks run on their own tasks and may finish in any order;
    // leaving waits for them all before the session's end is told.
    assert_eq!(seen.len(), 5, "{seen:?}");
    let event = |name: &str| {
        seen.iter()
            .find(|e| e["hook_event_name"] == name)
            .unwrap_or_else(|| panic!("{name} not told: {seen:?}"))
    };
    assert_eq!(event("SessionStart")["source"], "startup");
    assert_eq!(event("PreCompact")["trigger"], "manual");
    let notification = event("Notification");
    assert_eq!(notification["notification_type"], "permission_prompt");
    assert_eq!(
        notification["message"],
        "mino needs your permission to use bash"
    );
    assert_eq!(event("Stop")["stop_hook_active"], false);
    assert_eq!(seen[4]["hook_event_name"], "SessionEnd");
    assert_eq!(seen[4]["reason"], "exit");
    let session = &seen[0]["session_id"];
    assert!(seen.iter().all(|e| &e["session_id"] == session), "{seen:?}");
}
