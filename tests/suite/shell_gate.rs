//! The shell gate end to end: auto mode through `-p` against a loopback
//! model service (a trusted read-only command runs with its record line, a
//! dangerous and an ambiguous one are denied with their codes), the judge's
//! isolated request and its one accepted answer, the bypass guard against a
//! temporary HOME, and `mino gate check` / `mino gate hook` with recorded
//! Claude Code events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Output, Stdio};

use crate::support::llm::{text, tool};
use crate::support::stream::{completed_status, records};
use crate::support::world::World;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;

const KEY: &str = "sk-test-key-never-logged";

/// A real, root- or user-owned, read-only executable on this machine.
fn trusted_ls() -> &'static str {
    ["/usr/bin/ls", "/bin/ls"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("ls at /usr/bin/ls or /bin/ls")
}

pub(super) fn digest(path: &str) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

async fn mino(world: &World, home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(args)
        .arg("--cd")
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("HOME", home)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(input.as_bytes()).await.unwrap();
        drop(pipe);
    }
    child.wait_with_output().await.unwrap()
}

pub(super) async fn print(world: &World, home: &Path, mode: &str) -> (Vec<Value>, String) {
    let out = mino(
        world,
        home,
        &[
            "-p",
            "Look around",
            "--output-format",
            "stream-json",
            "--mode",
            mode,
        ],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let events = records(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    (events, stderr)
}

/// The bash decisions, as (decision, code).
pub(super) fn bash_decisions(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["type"] == "decision" && e["tool"] == "bash")
        .map(|d| {
            (
                d["decision"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn trusted_settings(ls: &str) -> String {
    format!(
        "[shell_gate]\ntrusted_executables = [{{ path = \"{ls}\", sha256 = \"{}\" }}]\n",
        digest(ls)
    )
}

#[tokio::test]
async fn auto_runs_a_trusted_read_only_command_and_denies_the_rest_with_codes() {
    let ls = trusted_ls();
    let replies = vec![
        tool("bash", json!({"command": format!("{ls} -a")})),
        tool("bash", json!({"command": "rm -rf build"})),
        tool("bash", json!({"command": "ls -a"})),
        tool(
            "bash",
            json!({"command": format!("{ls} -a && touch pwned")}),
        ),
        text("done"),
    ];
    let world = World::with("openai-chat", replies, &trusted_settings(ls)).await;
    std::fs::create_dir(world.project.path().join("build")).unwrap();
    let home = TempDir::new().unwrap();
    let (events, stderr) = print(&world, home.path(), "auto").await;
    assert_eq!(
        bash_decisions(&events),
        vec![
            ("allow".into(), "".into()),
            ("deny".into(), "AMG_DENY_DANGEROUS".into()),
            ("deny".into(), "AMG_DENY_AMBIGUOUS".into()),
            ("deny".into(), "AMG_DENY_AMBIGUOUS".into()),
        ]
    );
    assert!(
        stderr.contains("[Tool: bash, allowed without confirmation in auto mode]"),
        "{stderr}"
    );
    assert!(stderr.contains("Shell gate: \"allow-final: "), "{stderr}");
    // The allowed listing ran and reached the model; nothing else ran.
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("notes.md"), "{}", bodies[1]);
    // The bash tool names the trusted executables, in every request.
    let named = format!("Trusted executables: {ls}. A read-only command that starts with one");
    assert!(bodies.iter().all(|b| b.contains(&named)), "{}", bodies[0]);
    assert!(world.project.path().join("build").exists());
    assert!(!world.project.path().join("pwned").exists());
}

#[tokio::test]
async fn a_changed_trusted_executable_is_denied_with_the_identity_code() {
    let ls = trusted_ls();
    let replies = vec![
        tool("bash", json!({"command": format!("{ls} -a")})),
        text("done"),
    ];
    let settings = format!(
        "[shell_gate]\ntrusted_executables = [{{ path = \"{ls}\", sha256 = \"{}\" }}]\n",
        "0".repeat(64)
    );
    let world = World::with("openai-chat", replies, &settings).await;
    let home = TempDir::new().unwrap();
    let (events, _) = print(&world, home.path(), "auto").await;
    assert_eq!(
        bash_decisions(&events),
        vec![("deny".into(), "AMG_DENY_IDENTITY_MISMATCH".into())]
    );
}

fn judge_settings() -> &'static str {
    "[shell_gate]\ngit = \"/usr/bin/git\"\n[shell_gate.judge]\nenabled = true\ntimeout_secs = 5\n"
}

#[tokio::test]
async fn the_judge_sees_only_enums_and_a_non_canonical_answer_fails_closed() {
    let command = "/usr/bin/git log --oneline -- secret-dir/plan.txt";
    let replies = vec![
        tool("bash", json!({"command": command})),
        text(r#"{"decision": "allow"}"#),
        text("done"),
    ];
    let world = World::with("openai-chat", replies, judge_settings()).await;
    // An inert repository: the judge is asked only where git may run.
    super::shell_gate_git::repository(world.project.path());
    let home = TempDir::new().unwrap();
    let (events, _) = print(&world, home.path(), "auto").await;
    assert_eq!(
        bash_decisions(&events),
        vec![("deny".into(), "AMG_DENY_JUDGE_INVALID_RESPONSE".into())]
    );
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    let judge: Value = serde_json::from_str(&bodies[1]).unwrap();
    let judge_text = judge.to_string();
    for leak in [
        "secret-dir",
        "plan.txt",
        "/usr/bin/git",
        "--oneline",
        "Look around",
        "call_",
    ] {
        assert!(
            !judge_text.contains(leak),
            "{leak} reached the judge: {judge_text}"
        );
    }
    // No tools, no history: one system message and one user message of enums.
    assert!(
        judge
            .get("tools")
            .is_none_or(|t| t.as_array().unwrap().is_empty()),
        "{judge_text}"
    );
    let messages = judge["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{judge_text}");
    let enums: Value = serde_json::from_str(messages[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        enums,
        json!({"shell": "bash", "operation": "log", "option_risk": "none",
               "argument_kinds": ["option", "separator", "path"]})
    );
}

#[tokio::test]
async fn the_judge_exact_allow_lets_an_eligible_request_run() {
    let replies = vec![
        tool("bash", json!({"command": "/usr/bin/git status --short"})),
        text(r#"{"decision":"allow"}"#),
        text("done"),
    ];
    let world = World::with("openai-chat", replies, judge_settings()).await;
    // An inert repository: the judge is asked only where git may run.
    super::shell_gate_git::repository(world.project.path());
    let home = TempDir::new().unwrap();
    let (events, stderr) = print(&world, home.path(), "auto").await;
    assert_eq!(bash_decisions(&events), vec![("allow".into(), "".into())]);
    assert!(stderr.contains("the judge allowed"), "{stderr}");
}

#[tokio::test]
async fn the_bypass_guard_rejects_rm_rf_home_and_lets_rm_rf_build_run() {
    let replies = vec![
        tool("bash", json!({"command": "rm -rf ~"})),
        tool("bash", json!({"command": "rm -rf build"})),
        text("done"),
    ];
    let world = World::with("openai-chat", replies, "").await;
    std::fs::create_dir(world.project.path().join("build")).unwrap();
    let home = TempDir::new().unwrap();
    std::fs::write(home.path().join("keep.txt"), "mine").unwrap();
    let (events, stderr) = print(&world, home.path(), "bypass").await;
    assert_eq!(
        bash_decisions(&events),
        vec![
            ("deny".into(), "AMG_DENY_CATASTROPHIC".into()),
            ("allow".into(), "".into()),
        ]
    );
    assert!(home.path().join("keep.txt").exists(), "{stderr}");
    assert!(!world.project.path().join("build").exists(), "{stderr}");
}

/// Wrappings the tokenizer calls malformed, or reads as one command, or
/// never reads as commands at all: each still meets the guard, and nothing
/// in the temporary HOME or the project is removed.
#[tokio::test]
async fn the_bypass_guard_sees_catastrophic_commands_in_any_wrapping() {
    let wrappings = [
        "case x in x) rm -rf ~;; esac",
        "case x in x) rm -rf ';' ~;; esac",
        "rm -rf / '",
        "{ rm -rf ~; }",
        "if true; then rm -rf ~; fi",
        "f() { rm -rf ~; }; f",
        "function f { rm -rf ~; }; f",
        "bash <<EOF\nrm -rf ~\nEOF",
        "echo 'rm -rf ~' | bash",
        "rm -rf {~,nothing}",
        "rm -rf ~/..//$(basename ~)",
        "case x in x) rm -rf ./*;; esac",
        "rm -rf ~ \r",
    ];
    // A turn makes at most 8 model requests: a few calls per run.
    for chunk in wrappings.chunks(5) {
        let mut replies: Vec<_> = chunk
            .iter()
            .map(|c| tool("bash", json!({ "command": c })))
            .collect();
        replies.push(text("done"));
        let world = World::with("openai-chat", replies, "").await;
        std::fs::write(world.project.path().join("keep.txt"), "project").unwrap();
        let home = TempDir::new().unwrap();
        std::fs::write(home.path().join("keep.txt"), "mine").unwrap();
        let (events, stderr) = print(&world, home.path(), "bypass").await;
        let decisions = bash_decisions(&events);
        assert_eq!(decisions.len(), chunk.len(), "{stderr}");
        for (command, decision) in chunk.iter().zip(&decisions) {
            assert_eq!(
                decision,
                &("deny".to_string(), "AMG_DENY_CATASTROPHIC".to_string()),
                "{command:?}: {stderr}"
            );
        }
        assert!(home.path().join("keep.txt").exists(), "{stderr}");
        assert!(world.project.path().join("keep.txt").exists(), "{stderr}");
    }
}

#[tokio::test]
async fn the_bypass_guard_can_be_turned_off_in_the_users_settings() {
    let replies = vec![
        tool("bash", json!({"command": "rm -rf ~/doomed"})),
        text("done"),
    ];
    let world = World::with(
        "openai-chat",
        replies,
        "[shell_gate]\nguard_bypass = false\n",
    )
    .await;
    let home = TempDir::new().unwrap();
    let (events, _) = print(&world, home.path(), "bypass").await;
    assert_eq!(bash_decisions(&events), vec![("allow".into(), "".into())]);
}

async fn hook(world: &World, event: &Value, extra: &[&str]) -> (String, i32) {
    let home = TempDir::new().unwrap();
    let mut args = vec!["gate", "hook", "--format", "claude-code"];
    args.extend_from_slice(extra);
    let out = mino(world, home.path(), &args, Some(&event.to_string())).await;
    (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        out.status.code().unwrap(),
    )
}

fn claude_event(cwd: &Path, tool: &str, command: &str) -> Value {
    json!({
        "session_id": "abc123",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command, "description": "a command"},
        "tool_use_id": "toolu_01"
    })
}

#[tokio::test]
async fn gate_hook_never_allows_what_could_hand_out_a_secret() {
    let ls = trusted_ls();
    let world = World::with("openai-chat", vec![], &trusted_settings(ls)).await;
    let cwd = world.project.path().to_path_buf();
    std::fs::write(cwd.join(".env"), "SECRET=hook-secret-value\n").unwrap();
    for command in [
        "/usr/bin/grep -r SECRET .".to_string(),
        "grep -rn SECRET".to_string(),
        "/usr/bin/cat /proc/self/environ".to_string(),
        "/usr/bin/cat /etc/hostname".to_string(),
        "cat .env".to_string(),
        "cat ../other/file".to_string(),
        format!("{ls} -R ."),
        "/usr/bin/git log -p".to_string(),
        "git show HEAD~1:.env".to_string(),
    ] {
        let (out, code) = hook(&world, &claude_event(&cwd, "Bash", &command), &[]).await;
        assert_eq!(code, 0, "{command}");
        assert!(!out.contains("\"allow\""), "{command}: {out}");
    }
    // A recursive reader over a directory that holds no protected path
    // is allowed; over one that holds one (or a link) it gets no decision.
    std::fs::create_dir_all(cwd.join("src/deep")).unwrap();
    std::fs::write(cwd.join("src/deep/a.rs"), "fn a() {}\n").unwrap();
    std::fs::create_dir_all(cwd.join("conf")).unwrap();
    std::fs::write(cwd.join("conf/.env.local"), "SECRET=x\n").unwrap();
    std::fs::create_dir_all(cwd.join("linked")).unwrap();
    std::os::unix::fs::symlink("/etc", cwd.join("linked/etc")).unwrap();
    let (out, _) = hook(
        &world,
        &claude_event(&cwd, "Bash", &format!("{ls} -R src")),
        &[],
    )
    .await;
    assert!(out.contains("\"allow\""), "{out}");
    for dir in ["conf", "linked", "."] {
        let command = format!("{ls} -R {dir}");
        let (out, _) = hook(&world, &claude_event(&cwd, "Bash", &command), &[]).await;
        assert!(!out.contains("\"allow\""), "{command}: {out}");
    }
    // The answer names the event it answers; another event gets none.
    let mut post = claude_event(&cwd, "Bash", &format!("{ls} -la"));
    post["hook_event_name"] = json!("PostToolUse");
    assert_eq!(hook(&world, &post, &[]).await, (String::new(), 0));
    let (out, _) = hook(
        &world,
        &claude_event(&cwd, "Bash", &format!("{ls} -la")),
        &[],
    )
    .await;
    assert!(out.contains("\"allow\""), "{out}");
}

#[tokio::test]
async fn gate_hook_answers_claude_code_events() {
    let ls = trusted_ls();
    let world = World::with("openai-chat", vec![], &trusted_settings(ls)).await;
    let cwd = world.project.path().to_path_buf();
    // Allowed.
    let (out, code) = hook(
        &world,
        &claude_event(&cwd, "Bash", &format!("{ls} -la")),
        &[],
    )
    .await;
    assert_eq!(code, 0);
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
    // Denied, with the code in the reason.
    let (out, code) = hook(&world, &claude_event(&cwd, "Bash", "rm -rf /"), &[]).await;
    assert_eq!(code, 0);
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("AMG_DENY_CATASTROPHIC")
    );
    // Ambiguous: no decision, unless asked to ask.
    let ambiguous = claude_event(&cwd, "Bash", "git status");
    assert_eq!(hook(&world, &ambiguous, &[]).await, (String::new(), 0));
    let (out, _) = hook(&world, &ambiguous, &["--unresolved", "ask"]).await;
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask");
    assert!(out.contains("AMG_DENY_AMBIGUOUS"), "{out}");
    // Another tool: no decision.
    let read = json!({"cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Read",
                      "tool_input": {"file_path": "/etc/passwd"}});
    assert_eq!(hook(&world, &read, &[]).await, (String::new(), 0));
    // Not an event: blocked, with a message.
    let home = TempDir::new().unwrap();
    let out = mino(
        &world,
        home.path(),
        &["gate", "hook", "--format", "claude-code"],
        Some("{"),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PreToolUse"));
}

#[tokio::test]
async fn gate_check_prints_one_canonical_object() {
    let ls = trusted_ls();
    let world = World::with("openai-chat", vec![], &trusted_settings(ls)).await;
    let home = TempDir::new().unwrap();
    let out = mino(
        &world,
        home.path(),
        &["gate", "check", "--", ls, "-la"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(r#"{"outcome":"allow-final","code":null,"reason":""#),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(r#""executable":"{ls}","operation":"ls"}}"#)),
        "{stdout}"
    );
    let out = mino(
        &world,
        home.path(),
        &["gate", "check", "--", "git", "status"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "unresolved-ineligible");
    assert_eq!(v["code"], "AMG_DENY_AMBIGUOUS");
    let out = mino(
        &world,
        home.path(),
        &[
            "gate",
            "check",
            "--shell",
            "powershell",
            "--",
            "Remove-Item",
            "-Recurse",
            "x",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "AMG_DENY_DANGEROUS");
    let out = mino(
        &world,
        home.path(),
        &["gate", "check", "--shell", "fish", "--", "ls"],
        None,
    )
    .await;
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["outcome"].as_str(), v["code"].as_str()),
        (Some("deny-final"), Some("AMG_DENY_UNKNOWN_SHELL"))
    );
}
