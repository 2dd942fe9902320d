//! The bash tool against real processes in a temporary project directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use mino::policy::{CallKind, ToolKey};
use mino::secrets::{HeldSecrets, Secrets};
use mino::tools::bash::{Bash, NOT_A_SANDBOX};
use mino::tools::{
    Field, FieldKind, FieldRole, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome,
    ToolStatus,
};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

/// Taken shared by every test that runs processes, and exclusively by the
/// one that measures resident memory.
static EXCLUSIVE: RwLock<()> = RwLock::const_new(());

/// Bound on any single run, only to keep a broken test from hanging.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn project() -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let cx = ToolContext::new(Project::new(dir.path()).unwrap());
    (dir, cx)
}

fn prepare(cx: &ToolContext, args: Value) -> Box<dyn PreparedCall> {
    match Bash.prepare(&args, cx) {
        Ok(call) => call,
        Err(e) => panic!("prepare failed: {e}"),
    }
}

async fn run_with(cx: &ToolContext, args: Value) -> ToolOutcome {
    let call = prepare(cx, args);
    tokio::time::timeout(HANG_GUARD, call.run(CancellationToken::new()))
        .await
        .expect("the tool hung")
}

async fn run(cx: &ToolContext, command: &str) -> ToolOutcome {
    run_with(cx, json!({ "command": command })).await
}

fn invalid(cx: &ToolContext, args: Value) -> String {
    match Bash.prepare(&args, cx) {
        Err(ToolError::InvalidArguments { tool, message }) => {
            assert_eq!(tool, "bash");
            message
        }
        Err(other) => panic!("expected invalid arguments, got {other:?}"),
        Ok(_) => panic!("expected invalid arguments for {args}"),
    }
}

/// Waits until `path` holds a pid.
async fn read_pid(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no pid in {}", path.display());
}

/// Alive unless gone or a zombie waiting for init.
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesized command name.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

/// Waits (generously) until `pid` is gone.
async fn assert_dies(pid: i32, what: &str) {
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} (pid {pid}) is still alive");
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn spec_names_the_tool_and_its_arguments() {
    let spec = Bash.spec();
    assert_eq!(spec.name, "bash");
    assert_eq!(spec.parameters["required"], json!(["command"]));
    assert_eq!(spec.parameters["properties"]["command"]["type"], "string");
    assert_eq!(
        spec.parameters["properties"]["timeout_secs"]["type"],
        "integer"
    );
}

#[test]
fn prepare_states_the_facts_and_fields_and_runs_nothing() {
    let (dir, cx) = project();
    let call = prepare(&cx, json!({ "command": "touch ran" }));
    assert_eq!(call.facts().tool, ToolKey::new("bash"));
    assert_eq!(call.facts().kind, CallKind::Shell);
    assert!(call.facts().targets.is_empty());
    let root = cx.project.root().to_string_lossy().into_owned();
    assert_eq!(
        call.fields(),
        vec![
            Field::text("Command", "touch ran").with_role(FieldRole::Command),
            Field::text("Working directory", root).with_role(FieldRole::Place),
            Field::text("Sandbox", "no sandbox; runs with your account permissions")
                .with_role(FieldRole::Place),
            Field::warning(NOT_A_SANDBOX),
        ]
    );
    assert_eq!(call.fields()[3].kind, FieldKind::Warning);
    assert_eq!(
        NOT_A_SANDBOX,
        "Runs with your account permissions; this is not a sandbox."
    );
    drop(call);
    assert!(!dir.path().join("ran").exists(), "prepare ran the command");
}

#[tokio::test]
async fn captures_stdout_and_stderr_with_the_exit_code() {
    let (_dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(&cx, "echo to-stdout; echo to-stderr >&2").await;
    assert_eq!(out.status, ToolStatus::Completed);
    assert!(out.output.starts_with("Exit code: 0\n"), "{}", out.output);
    assert!(out.output.contains("to-stdout\n"), "{}", out.output);
    assert!(out.output.contains("to-stderr\n"), "{}", out.output);
}

#[tokio::test]
async fn interleaves_stdout_and_stderr_in_arrival_order() {
    let (_dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(
        &cx,
        "echo one; sleep 0.5; echo two >&2; sleep 0.5; echo three",
    )
    .await;
    assert_eq!(out.output, "Exit code: 0\none\ntwo\nthree\n");
}

#[tokio::test]
async fn reports_exit_codes_and_signals() {
    let (_dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(&cx, "echo failing; exit 3").await;
    assert_eq!(out.status, ToolStatus::Completed);
    assert_eq!(out.output, "Exit code: 3\nfailing\n");

    let out = run(&cx, "true").await;
    assert_eq!(out.output, "Exit code: 0\n(no output)");

    let out = run(&cx, "kill -KILL $$").await;
    assert!(
        out.output.starts_with("Killed by signal 9 (SIGKILL)\n"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn runs_in_the_project_directory_with_stdin_empty() {
    let (_dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(&cx, "pwd; cat; echo end").await;
    let root = cx.project.root().display().to_string();
    assert_eq!(out.output, format!("Exit code: 0\n{root}\nend\n"));
}

#[tokio::test]
async fn hidden_variables_are_absent_in_the_child() {
    let (_dir, mut cx) = project();
    let _shared = EXCLUSIVE.read().await;
    // Two variables this test process certainly has (no `set_var`: the
    // crate forbids unsafe code).
    let present: Vec<String> = ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "HOME", "PATH"]
        .into_iter()
        .filter(|name| std::env::var_os(name).is_some())
        .map(str::to_string)
        .collect();
    assert!(present.len() >= 2, "need two variables, have {present:?}");
    let (hidden, kept) = (&present[0], &present[1]);
    cx.hidden_env = vec![hidden.clone(), "MINO_TEST_NOT_SET".to_string()];
    let check = |name: &str| {
        format!(
            "if [ -n \"${{{name}+x}}\" ]; then echo {name}=present; else echo {name}=absent; fi"
        )
    };
    let out = run(&cx, &format!("{}; {}", check(hidden), check(kept))).await;
    assert_eq!(
        out.output,
        format!("Exit code: 0\n{hidden}=absent\n{kept}=present\n")
    );
}

#[tokio::test]
async fn timeout_kills_a_child_ignoring_sigterm_and_its_grandchild() {
    let (dir, mut cx) = project();
    let _shared = EXCLUSIVE.read().await;
    cx.bash_timeout = Duration::from_secs(1);
    let command = "trap '' TERM; echo $$ > main.pid; \
                   (trap '' TERM; sleep 30; echo late) & echo $! > grandchild.pid; \
                   echo started; wait; sleep 30";
    let out = run(&cx, command).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(
        out.output
            .starts_with("Timed out after 1 s; the command's process group was killed.\n"),
        "{}",
        out.output
    );
    assert!(out.output.contains("started"), "{}", out.output);
    assert!(!out.output.contains("late"), "{}", out.output);
    let main = read_pid(&dir.path().join("main.pid")).await;
    let grandchild = read_pid(&dir.path().join("grandchild.pid")).await;
    assert_dies(main, "the main process").await;
    assert_dies(grandchild, "the grandchild").await;
}

#[tokio::test]
async fn timeout_secs_only_shortens_the_configured_timeout() {
    let (_dir, mut cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run_with(&cx, json!({ "command": "sleep 30", "timeout_secs": 1 })).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(
        out.output.starts_with("Timed out after 1 s"),
        "{}",
        out.output
    );

    cx.bash_timeout = Duration::from_secs(1);
    let out = run_with(&cx, json!({ "command": "sleep 30", "timeout_secs": 600 })).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(
        out.output.starts_with("Timed out after 1 s"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn cancel_interrupts_promptly_and_kills_the_group() {
    let (dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let call = prepare(
        &cx,
        json!({ "command": "echo $$ > main.pid; sleep 30 & echo $! > background.pid; echo waiting; wait" }),
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn(call.run(cancel.clone()));
    let main = read_pid(&dir.path().join("main.pid")).await;
    let background = read_pid(&dir.path().join("background.pid")).await;
    cancel.cancel();
    let out = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("cancel was not prompt")
        .unwrap();
    assert_eq!(out.status, ToolStatus::Interrupted);
    assert!(
        out.output
            .starts_with("Interrupted by the user; the command's process group was killed.\n"),
        "{}",
        out.output
    );
    assert_dies(main, "the main process").await;
    assert_dies(background, "the background job").await;
}

#[tokio::test]
async fn cancelled_before_start_runs_nothing() {
    let (dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let call = prepare(&cx, json!({ "command": "touch ran" }));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = call.run(cancel).await;
    assert_eq!(out.status, ToolStatus::Interrupted);
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn a_background_job_does_not_hang_the_tool_and_is_killed() {
    let (dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(&cx, "sleep 100 & echo $! > background.pid; echo started").await;
    assert_eq!(out.status, ToolStatus::Completed);
    assert_eq!(out.output, "Exit code: 0\nstarted\n");
    let background = read_pid(&dir.path().join("background.pid")).await;
    assert_dies(background, "the background job").await;
}

/// Environment variable under which `huge_output_is_kept_to_the_limit_in_bounded_memory`
/// measures; without it the test runs itself again, alone, in a child process.
const ALONE_ENV: &str = "MINO_BASH_TEST_ALONE";

#[tokio::test]
async fn huge_output_is_kept_to_the_limit_in_bounded_memory() {
    if std::env::var_os(ALONE_ENV).is_none() {
        // Every suite shares this process: only a process of its own keeps
        // other tests' allocations out of the measurement.
        let name = crate::support::test_name(
            module_path!(),
            "huge_output_is_kept_to_the_limit_in_bounded_memory",
        );
        let output = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &name, "--nocapture", "--test-threads=1"])
            .env(ALONE_ENV, "1")
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("1 passed"), "{stdout}");
        return;
    }
    let (_dir, mut cx) = project();
    // Alone, so no other test's threads or processes move the measurement.
    let _alone = EXCLUSIVE.write().await;
    // Generous: only so a loaded machine cannot turn this into a timeout.
    cx.bash_timeout = Duration::from_secs(300);
    let before = rss_kib();
    let out = tokio::time::timeout(
        Duration::from_secs(400),
        prepare(
            &cx,
            json!({ "command": "head -c 400000000 /dev/zero | tr '\\0' a; echo; echo end" }),
        )
        .run(CancellationToken::new()),
    )
    .await
    .expect("the tool hung");
    let after = rss_kib();
    assert_eq!(out.status, ToolStatus::Completed);
    let limit = cx.bash_output_limit;
    let total = 400_000_000 + "\nend\n".len();
    let marker = format!(
        "\n[... {} bytes of output left out; the first and last bytes are kept ...]\n",
        total - limit
    );
    let expected_head = format!("Exit code: 0\n{}", "a".repeat(limit / 2));
    assert!(out.output.starts_with(&expected_head));
    assert!(out.output.contains(&marker), "no marker");
    assert!(out.output.ends_with("aaaa\nend\n"));
    assert_eq!(
        out.output.len(),
        "Exit code: 0\n".len() + limit + marker.len()
    );
    assert!(
        after.saturating_sub(before) < 8 * 1024,
        "resident memory grew from {before} KiB to {after} KiB"
    );
}

#[tokio::test]
async fn live_output_shows_what_arrived_while_the_command_runs_and_stays_bounded() {
    let _shared = EXCLUSIVE.read().await;
    let (dir, cx) = project();
    let call = prepare(
        &cx,
        json!({ "command": "echo first; until [ -e go ]; do sleep 0.02; done; \
                head -c 1000000 /dev/zero | tr '\\0' b; echo; echo last" }),
    );
    let mut live = call
        .live_output()
        .expect("bash shows its output while it runs");
    let run = tokio::spawn(call.run(CancellationToken::new()));
    tokio::time::timeout(HANG_GUARD, async {
        // The first line is there while the command cannot have ended.
        assert!(live.changed().await);
        assert_eq!(live.text(&Secrets::new()), "first\n");
        std::fs::write(dir.path().join("go"), "").unwrap();
        let mut longest = 0;
        while live.changed().await {
            longest = longest.max(live.text(&Secrets::new()).len());
        }
        assert!(
            longest <= cx.bash_output_limit + 100,
            "{longest} bytes shown at once"
        );
    })
    .await
    .expect("the tool hung");
    let out = run.await.unwrap();
    assert_eq!(out.status, ToolStatus::Completed);
    assert!(
        out.output.ends_with("bbb\nlast\n"),
        "{}",
        &out.output[out.output.len() - 40..]
    );
    assert!(out.output.starts_with("Exit code: 0\nfirst\nbbb"));
}

#[tokio::test]
async fn a_secret_the_output_limit_cuts_through_leaves_no_piece_in_the_result() {
    let _shared = EXCLUSIVE.read().await;
    let (_dir, mut cx) = project();
    let mut secrets = Secrets::new();
    secrets.add("TOKEN", "MARKER-SECRET-5b8e");
    cx.secrets = HeldSecrets::ready(secrets);
    cx.bash_output_limit = 64;
    // The first 32 bytes end inside the value, the last 32 start inside
    // its second copy; redaction sees neither whole.
    let a = "a".repeat(22);
    let z = "z".repeat(24);
    let out = run(
        &cx,
        &format!(
            "v=MARKER-SEC; w=RET-5b8e; printf '%s' {a} \"$v\" \"$w\" 0123456789 \"$v\" \"$w\" {z}"
        ),
    )
    .await;
    assert_eq!(out.status, ToolStatus::Completed);
    assert!(
        !out.output.contains("MARKER-SEC") && !out.output.contains("RET-5b8e"),
        "{}",
        out.output
    );
    assert!(
        out.output.contains(&format!("Exit code: 0\n{a}\n[... ")),
        "{}",
        out.output
    );
    assert!(out.output.ends_with(&format!("]\n{z}")), "{}", out.output);
}

#[tokio::test]
async fn endless_output_stops_at_the_timeout_and_stays_bounded() {
    let (_dir, mut cx) = project();
    let _shared = EXCLUSIVE.read().await;
    cx.bash_timeout = Duration::from_secs(1);
    cx.bash_output_limit = 1000;
    let out = run(&cx, "yes").await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(
        out.output.starts_with("Timed out after 1 s"),
        "{}",
        out.output
    );
    assert!(out.output.contains("bytes of output left out"));
    assert!(out.output.len() < 1300, "{}", out.output.len());
}

#[tokio::test]
async fn small_limit_keeps_the_first_and_last_halves() {
    let (_dir, mut cx) = project();
    let _shared = EXCLUSIVE.read().await;
    cx.bash_output_limit = 100;
    // 1000 digits: 0123456789 repeated, then a newline from the last echo.
    let out = run(&cx, "for i in $(seq 100); do printf 0123456789; done; echo").await;
    let digits = "0123456789".repeat(100);
    let expected = format!(
        "Exit code: 0\n{}\n[... 901 bytes of output left out; the first and last bytes are kept ...]\n{}\n",
        &digits[..50],
        &digits[1000 - 49..]
    );
    assert_eq!(out.output, expected);
}

#[tokio::test]
async fn non_utf8_output_is_shown_lossily() {
    let (_dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    let out = run(&cx, "printf 'ok \\377\\376 done'").await;
    assert_eq!(out.status, ToolStatus::Completed);
    assert_eq!(out.output, "Exit code: 0\nok \u{FFFD}\u{FFFD} done");
}

#[test]
fn invalid_arguments_name_the_field_and_what_is_accepted() {
    let (_dir, cx) = project();
    let message = invalid(&cx, json!({}));
    assert!(message.contains("`command` is missing"), "{message}");
    let message = invalid(&cx, json!({ "command": 42 }));
    assert!(message.contains("`command` must be a string"), "{message}");
    let message = invalid(&cx, json!({ "command": "  \n" }));
    assert!(message.contains("`command` is empty"), "{message}");
    let message = invalid(&cx, json!({ "command": "echo a\u{0}b" }));
    assert!(message.contains("`command` contains a NUL"), "{message}");
    let message = invalid(&cx, json!({ "command": "x".repeat(64 * 1024 + 1) }));
    assert!(
        message.contains("`command` is 65537 bytes long; at most 65536 bytes"),
        "{message}"
    );
    for bad in [json!(0), json!(-1), json!(1.5), json!("10")] {
        let message = invalid(&cx, json!({ "command": "true", "timeout_secs": bad }));
        assert!(
            message.contains("`timeout_secs` must be a positive whole number"),
            "{message}"
        );
        assert!(message.contains("configured 30 s"), "{message}");
    }
    let message = invalid(&cx, json!({ "command": "true", "cwd": "/" }));
    assert!(message.contains("unknown field `cwd`"), "{message}");
    assert!(
        message.contains("`command`, `timeout_secs`, `sandbox`, `reason` and `background`"),
        "{message}"
    );
    let message = invalid(&cx, json!({ "command": "true", "background": "yes" }));
    assert!(
        message.contains("`background` must be a boolean") && message.contains("not a string"),
        "{message}"
    );
    let message = invalid(&cx, json!({ "command": "true", "sandbox": false }));
    assert!(
        message.contains("`sandbox: false` needs a `reason`"),
        "{message}"
    );
    let message = invalid(&cx, json!({ "command": "true", "sandbox": "no" }));
    assert!(message.contains("`sandbox` must be a boolean"), "{message}");
    let message = invalid(&cx, json!("echo hi"));
    assert!(message.contains("JSON object"), "{message}");
    let message = invalid(&cx, json!({ "command": null }));
    assert!(message.contains("`command` is missing"), "{message}");
    for bad in [json!(""), json!(7)] {
        let message = invalid(
            &cx,
            json!({ "command": "true", "sandbox": false, "reason": bad }),
        );
        assert!(
            message.contains("`reason` must be a non-empty string"),
            "{message}"
        );
    }
    // Null stands for a field left out.
    let nulls = json!({ "command": "true", "timeout_secs": null, "sandbox": null, "reason": null });
    assert!(Bash.prepare(&nulls, &cx).is_ok());

    // At the limit is fine.
    let at_limit = format!("#{}", "x".repeat(64 * 1024 - 1));
    assert!(Bash.prepare(&json!({ "command": at_limit }), &cx).is_ok());
}

#[tokio::test]
async fn a_process_that_left_the_group_cannot_hang_the_tool() {
    let (dir, cx) = project();
    let _shared = EXCLUSIVE.read().await;
    // `setsid` puts the sleep in a session (and group) of its own; it keeps
    // the pipes open, so the tool stops reading after its grace.
    // The command waits until the escape has happened.
    let out = run(
        &cx,
        "setsid sh -c 'echo $$ > escaped.pid; exec sleep 20' & \
         while [ ! -s escaped.pid ]; do sleep 0.05; done; echo started",
    )
    .await;
    let escaped = read_pid(&dir.path().join("escaped.pid")).await;
    let _ = std::process::Command::new("kill")
        .arg(escaped.to_string())
        .status();
    assert_eq!(out.status, ToolStatus::Completed);
    assert_eq!(
        out.output,
        "Exit code: 0\nstarted\n[Stopped reading: a process outside the command's process \
         group still holds its output open.]"
    );
}
