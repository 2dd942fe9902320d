//! `mino policy check` on a real project: the same settings, facts and
//! decision as a live call, printed as one JSON object.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tempfile::TempDir;

struct Setup {
    home: TempDir,
    project: TempDir,
}

fn setup() -> Setup {
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    let p = project.path();
    std::fs::write(p.join("notes.md"), "# notes\n").unwrap();
    std::fs::write(p.join(".env"), "SECRET=1\n").unwrap();
    std::fs::create_dir(p.join(".git")).unwrap();
    std::fs::write(p.join(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(".git", p.join("docs")).unwrap();
    std::fs::hard_link(p.join(".env"), p.join("innocent.txt")).unwrap();
    Setup { home, project }
}

fn run(s: &Setup, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["policy", "check"])
        .args(args)
        .arg("--cd")
        .arg(s.project.path())
        .env("MINO_HOME", s.home.path())
        .env_remove("AGENT_YOLO")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn check(s: &Setup, args: &[&str]) -> Value {
    let (code, stdout, stderr) = run(s, args);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(stdout.trim()).unwrap()
}

fn short(v: &Value) -> (String, bool, Value) {
    (
        v["decision"].as_str().unwrap().to_string(),
        v["unasked"].as_bool().unwrap(),
        v["code"].clone(),
    )
}

#[test]
fn checks_follow_the_table_and_the_filesystem() {
    let s = setup();
    type Case<'a> = (&'a [&'a str], (&'a str, bool, Value));
    let cases: Vec<Case> = vec![
        (
            &["--mode", "bypass", "--tool", "read_file", "--path", ".env"],
            ("deny", false, json!("MINO_DENY_PROTECTED_PATH")),
        ),
        (
            &[
                "--mode",
                "manual",
                "--tool",
                "read_file",
                "--path",
                ".Git/config",
            ],
            ("deny", false, json!("MINO_DENY_PROTECTED_PATH")),
        ),
        (
            &[
                "--mode",
                "bypass",
                "--tool",
                "read_file",
                "--path",
                "docs/config",
            ],
            ("deny", false, json!("MINO_DENY_SYMBOLIC_LINK")),
        ),
        (
            &[
                "--mode",
                "bypass",
                "--tool",
                "read_file",
                "--path",
                "innocent.txt",
            ],
            ("deny", false, json!("MINO_DENY_HARD_LINK")),
        ),
        (
            &[
                "--mode",
                "bypass",
                "--tool",
                "write_file",
                "--path",
                "../escape.txt",
            ],
            ("deny", false, json!("MINO_DENY_OUTSIDE_PROJECT")),
        ),
        (
            &[
                "--mode",
                "manual",
                "--tool",
                "read_file",
                "--path",
                "notes.md",
            ],
            ("allow", false, Value::Null),
        ),
        (
            &[
                "--mode",
                "manual",
                "--tool",
                "edit_file",
                "--path",
                "notes.md",
            ],
            ("ask", false, Value::Null),
        ),
        (
            &[
                "--mode",
                "accept-edits",
                "--tool",
                "edit_file",
                "--path",
                "notes.md",
            ],
            ("allow", true, Value::Null),
        ),
        (
            &[
                "--mode",
                "accept-edits",
                "--tool",
                "bash",
                "--command",
                "ls",
            ],
            ("ask", false, Value::Null),
        ),
        (
            &["--mode", "yolo", "--tool", "bash", "--command", "ls"],
            ("allow", true, Value::Null),
        ),
        (
            &[
                "--mode",
                "auto",
                "--tool",
                "fetch_content",
                "--url",
                "https://example.com/",
            ],
            ("ask", false, Value::Null),
        ),
    ];
    for (args, (decision, unasked, code)) in cases {
        let got = check(&s, args);
        assert_eq!(
            short(&got),
            (decision.to_string(), unasked, code),
            "{args:?}: {got}"
        );
    }
    let protected = check(
        &s,
        &["--mode", "bypass", "--tool", "read_file", "--path", ".env"],
    );
    assert_eq!(
        protected["reason"],
        "Blocked by policy: .env is a protected path; file tools never read or write it. Do not retry or work around this with another tool."
    );
    // The check never touched the protected file.
    assert_eq!(
        std::fs::read_to_string(s.project.path().join(".env")).unwrap(),
        "SECRET=1\n"
    );
}

#[test]
fn plan_mode_runs_reads_refuses_writes_and_bash_and_asks_fetches() {
    let s = setup();
    let plan_reason = "Plan mode: only reads run now; present a plan instead. Do not retry or work around this with another tool.";
    let read = check(
        &s,
        &[
            "--mode",
            "plan",
            "--tool",
            "read_file",
            "--path",
            "notes.md",
        ],
    );
    assert_eq!(short(&read), ("allow".into(), false, Value::Null), "{read}");
    for args in [
        &[
            "--mode",
            "plan",
            "--tool",
            "write_file",
            "--path",
            "new.txt",
        ][..],
        &[
            "--mode",
            "plan",
            "--tool",
            "edit_file",
            "--path",
            "notes.md",
        ][..],
        &["--mode", "plan", "--tool", "bash", "--command", "ls"][..],
        &["--mode", "plan", "--tool", "bash", "--command", "rm -rf x"][..],
    ] {
        let got = check(&s, args);
        assert_eq!(got["decision"], "deny", "{args:?}: {got}");
        assert_eq!(got["code"], "MINO_DENY_PLAN_MODE", "{args:?}: {got}");
        assert_eq!(got["reason"], plan_reason, "{args:?}: {got}");
    }
    let fetch = check(
        &s,
        &[
            "--mode",
            "plan",
            "--tool",
            "fetch_content",
            "--url",
            "https://example.com/",
        ],
    );
    assert_eq!(fetch["decision"], "ask", "{fetch}");
    // A protected path keeps its own reason.
    let protected = check(
        &s,
        &["--mode", "plan", "--tool", "write_file", "--path", ".env"],
    );
    assert_eq!(protected["code"], "MINO_DENY_PROTECTED_PATH", "{protected}");
}

#[test]
fn user_patterns_and_tool_switches_apply() {
    let s = setup();
    std::fs::write(
        s.home.path().join("config.toml"),
        "[protected]\npatterns = [\"*.sqlite\"]\n",
    )
    .unwrap();
    std::fs::create_dir(s.project.path().join(".mino")).unwrap();
    std::fs::write(
        s.project.path().join(".mino/config.toml"),
        "[tools]\nbash = false\n",
    )
    .unwrap();
    let got = check(
        &s,
        &[
            "--mode",
            "bypass",
            "--tool",
            "write_file",
            "--path",
            "data/app.SQLite",
        ],
    );
    assert_eq!(got["code"], "MINO_DENY_PROTECTED_PATH");
    let (code, _, stderr) = run(
        &s,
        &["--mode", "bypass", "--tool", "bash", "--command", "ls"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("\"bash\" does not exist"), "{stderr}");
}

#[test]
fn a_project_file_that_loosens_is_refused_naming_file_and_key() {
    let s = setup();
    let dir = s.project.path().join(".mino");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "# tries to loosen\ndefault_mode = \"bypass\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(
        &s,
        &[
            "--mode",
            "manual",
            "--tool",
            "read_file",
            "--path",
            "notes.md",
        ],
    );
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    let file = Path::new(".mino").join("config.toml");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(stderr.contains(":2:"), "names the line: {stderr}");
    assert!(stderr.contains("default_mode"), "{stderr}");
    assert!(stderr.contains("only tighten"), "{stderr}");
}

#[test]
fn bad_arguments_are_errors_that_say_what_is_accepted() {
    let s = setup();
    let (code, _, stderr) = run(&s, &["--mode", "sideways", "--tool", "bash"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("accepted: plan, manual, accept-edits, auto, bypass"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&s, &["--mode", "manual", "--tool", "read_file"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--path is required"), "{stderr}");
    let got = check(
        &s,
        &[
            "--mode",
            "manual",
            "--tool",
            "read_file",
            "--path",
            &"x/".repeat(2100),
        ],
    );
    assert_eq!(got["decision"], "error", "{got}");
    assert!(got["reason"].as_str().unwrap().contains("4096"), "{got}");
}

#[test]
fn a_log_filter_that_does_not_parse_is_said_and_the_check_still_runs() {
    let s = setup();
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["policy", "check", "--mode", "manual", "--tool", "read_file"])
        .args(["--path", "notes.md", "--cd"])
        .arg(s.project.path())
        .env("MINO_HOME", s.home.path())
        .env("MINO_LOG", "mino=loud")
        .env_remove("AGENT_YOLO")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("mino: logging is off: MINO_LOG=\"mino=loud\" is not a log filter"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "allow");
}

/// In auto mode a bash check runs the shell gate, as a live call does: a
/// trusted read-only command is allowed, a dangerous one denied with its
/// code, an ambiguous one asks; in bypass the guard asks about a
/// catastrophic command. The gate's line is part of the answer.
#[test]
fn a_bash_check_in_auto_mode_runs_the_shell_gate() {
    let s = setup();
    let ls = ["/usr/bin/ls", "/bin/ls"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap();
    std::fs::write(
        s.home.path().join("config.toml"),
        format!("[shell_gate]\ntrusted_executables = [{{ path = \"{ls}\" }}]\n"),
    )
    .unwrap();
    let listing = format!("{ls} -a");
    for (args, want) in [
        (
            vec!["--mode", "auto", "--tool", "bash", "--command", &listing],
            ("allow", true, Value::Null),
        ),
        (
            vec![
                "--mode",
                "auto",
                "--tool",
                "bash",
                "--command",
                "rm -rf build",
            ],
            ("deny", false, json!("AMG_DENY_DANGEROUS")),
        ),
        (
            vec!["--mode", "auto", "--tool", "bash", "--command", "ls -a"],
            ("ask", false, Value::Null),
        ),
        (
            vec![
                "--mode",
                "bypass",
                "--tool",
                "bash",
                "--command",
                "case x in x) rm -rf ~;; esac",
            ],
            ("ask", false, Value::Null),
        ),
        (
            vec![
                "--mode",
                "bypass",
                "--tool",
                "bash",
                "--command",
                "rm -rf build",
            ],
            ("allow", true, Value::Null),
        ),
    ] {
        let v = check(&s, &args);
        assert_eq!(
            short(&v),
            (want.0.to_string(), want.1, want.2),
            "{args:?}: {v}"
        );
        if args[1] == "auto" {
            assert!(v["gate"].as_str().is_some_and(|g| !g.is_empty()), "{v}");
        }
    }
    let v = check(
        &s,
        &["--mode", "auto", "--tool", "bash", "--command", "ls -a"],
    );
    assert!(
        v["gate"].as_str().unwrap().contains("AMG_DENY_AMBIGUOUS"),
        "{v}"
    );
}
