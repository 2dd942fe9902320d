//! The `lsp` tool end to end against real language servers installed by
//! the project's scripts at pinned versions (python-lsp-server by
//! scripts/test-deps, typescript-language-server by scripts/node-deps):
//! the built binary against a loopback model that calls the tool, the
//! server started inside the sandbox on first use, definition, references
//! and hover on a small project, a result in a protected file left out, a
//! rename across two files (asked in manual with both diffs in the dialog,
//! applied in accept-edits, refused whole when one file is protected, not
//! applied when a file changed after inspection), diagnostics after an
//! edit that breaks a file, and the server stopped when mino exits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::llm::{Llm, Reply, offered_tools, text, tool};
use crate::support::stream::{decisions, outputs, records};

const UTIL: &str = "def greet(name):\n    return \"hello \" + name\n";
const APP: &str = "from util import greet\n\nprint(greet(\"world\"))\nprint(greet(\"again\"))\n";

/// The python-lsp-server scripts/test-deps installed.
fn pylsp_env() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".test-deps/pylsp");
    assert!(
        venv.join("bin/pylsp").is_file(),
        "python-lsp-server is missing: run scripts/test-deps"
    );
    venv
}

/// The directories the server's programs live in, for the sandbox's
/// `toolchains`: the virtual environment and the Python it was made from.
fn toolchains(venv: &Path) -> Vec<String> {
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import sys, os; print(os.path.realpath(sys.base_prefix))",
        ])
        .output()
        .unwrap();
    let base = String::from_utf8(out.stdout).unwrap().trim().to_string();
    vec![venv.to_string_lossy().into_owned(), base]
}

/// A home, a Python project and a model service.
struct Fixture {
    root: TempDir,
    llm: Llm,
    venv: PathBuf,
}

impl Fixture {
    async fn new(replies: Vec<Reply>, extra: &str) -> Self {
        let root = tempfile::Builder::new()
            .prefix("lsp-e2e")
            .tempdir_in(super::sandbox::outside_tmp())
            .unwrap();
        let llm = Llm::start("openai-chat", replies).await;
        let f = Self {
            root,
            llm,
            venv: pylsp_env(),
        };
        std::fs::create_dir_all(f.home()).unwrap();
        std::fs::create_dir_all(f.project()).unwrap();
        std::fs::write(f.project().join("util.py"), UTIL).unwrap();
        std::fs::write(f.project().join("app.py"), APP).unwrap();
        f.settings(extra);
        f
    }

    fn settings(&self, extra: &str) {
        std::fs::create_dir_all(self.mino_home()).unwrap();
        let toolchains: Vec<String> = toolchains(&self.venv)
            .iter()
            .map(|t| format!("{t:?}"))
            .collect();
        std::fs::write(
            self.mino_home().join("config.toml"),
            format!(
                "[model]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key_env = \"OPENAI_API_KEY\"\nrequest_timeout_secs = 30\nmax_retries = 0\n[sandbox]\ntoolchains = [{}]\n{extra}",
                self.llm.base_url(),
                toolchains.join(", ")
            ),
        )
        .unwrap();
    }

    async fn with_replies(mut self, replies: Vec<Reply>, extra: &str) -> Self {
        self.llm = Llm::start("openai-chat", replies).await;
        self.settings(extra);
        self
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn mino_home(&self) -> PathBuf {
        self.home().join(".config/mino")
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn path_var(&self) -> String {
        format!(
            "{}:{}",
            self.venv.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(args)
            .arg("--cd")
            .arg(self.project())
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("MINO_HOME", self.mino_home())
            .env("OPENAI_API_KEY", "test")
            .env("PATH", self.path_var())
            .env_remove("AGENT_YOLO")
            .stdin(Stdio::null());
        command
    }

    /// One `-p` turn in `mode`: the events and the process's output.
    async fn turn(&self, mode: &str, prompt: &str) -> (Vec<Value>, Output) {
        let mut command = self.command(&[
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--mode",
            mode,
        ]);
        let out = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(
            out.status.code().is_some(),
            "mino was killed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (records(&out.stdout), out)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.project().join(name)).unwrap()
    }
}

fn lsp(args: Value) -> Reply {
    tool("lsp", args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definition_references_and_hover_on_a_python_project_never_ask() {
    let f = Fixture::new(
        vec![
            lsp(json!({"action": "definition", "path": "app.py", "line": 3, "symbol": "greet"})),
            lsp(json!({"action": "references", "path": "util.py", "line": 1, "symbol": "greet"})),
            lsp(json!({"action": "hover", "path": "app.py", "line": 3, "symbol": "greet"})),
            lsp(json!({"action": "symbols", "path": "util.py"})),
            lsp(json!({"action": "diagnostics", "path": "app.py"})),
            lsp(json!({"action": "diagnostics"})),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = f.turn("manual", "where is greet").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        6,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (tool, decision, _) in decisions(&events) {
        assert_eq!((tool.as_str(), decision.as_str()), ("lsp", "allow"));
    }
    assert!(
        results[0].starts_with("lsp: started pylsp\n"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("util.py:1: def greet(name):"),
        "{}",
        results[0]
    );
    // Started once for the run: the later calls do not say it again.
    assert!(!results[1].contains("lsp: started"), "{}", results[1]);
    for line in [
        "util.py:1: def greet(name):",
        "app.py:1: from util import greet",
        "app.py:3: print(greet(\"world\"))",
        "app.py:4: print(greet(\"again\"))",
    ] {
        assert!(results[1].contains(line), "{line}: {}", results[1]);
    }
    assert!(results[2].contains("greet(name)"), "{}", results[2]);
    assert!(
        results[3].contains("function greet util.py:1:"),
        "{}",
        results[3]
    );
    assert_eq!(results[4], "pylsp: no errors or warnings in app.py.");
    assert_eq!(
        results[5],
        "No diagnostics in the files the language servers have open."
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check(f: &Fixture, mode: &str, action: &str, path: &str) -> Value {
    let out = f
        .command(&[
            "policy", "check", "--mode", mode, "--tool", "lsp", "--action", action, "--path", path,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_never_asks_and_rename_is_decided_like_an_edit_through_policy_check() {
    let f = Fixture::new(vec![], "").await;
    let rows = [
        ("plan", "deny", false),
        ("manual", "ask", false),
        ("accept-edits", "allow", true),
        ("auto", "allow", true),
        ("bypass", "allow", true),
    ];
    for (mode, decision, unasked) in rows {
        let rename = check(&f, mode, "rename", "app.py");
        assert_eq!(rename["decision"], decision, "{mode}: {rename}");
        assert_eq!(rename["unasked"], unasked, "{mode}: {rename}");
        for action in [
            "definition",
            "references",
            "hover",
            "symbols",
            "diagnostics",
        ] {
            let read = check(&f, mode, action, "app.py");
            assert_eq!(
                (read["decision"].as_str(), read["unasked"].as_bool()),
                (Some("allow"), Some(false)),
                "{mode} {action}: {read}"
            );
        }
        // A protected file is refused in every mode, read or rename.
        for action in ["hover", "rename"] {
            let refused = check(&f, mode, action, ".env");
            assert_eq!(refused["decision"], "deny", "{mode} {action}: {refused}");
            assert_eq!(refused["code"], "MINO_DENY_PROTECTED_PATH", "{refused}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_false_removes_the_tool_from_what_the_model_is_offered() {
    let f = Fixture::new(vec![text("ok"), text("ok")], "").await;
    let offered = |f: &Fixture| offered_tools(&f.llm.bodies()[0]);
    let (_, out) = f.turn("manual", "hi").await;
    assert!(out.status.success(), "{out:?}");
    assert!(offered(&f).contains(&"lsp".to_string()));
    let f = f
        .with_replies(vec![text("ok")], "[tools]\nlsp = false\n")
        .await;
    let (_, out) = f.turn("manual", "hi").await;
    assert!(out.status.success(), "{out:?}");
    assert!(
        !offered(&f).contains(&"lsp".to_string()),
        "{:?}",
        offered(&f)
    );
}

fn rename_greet() -> Reply {
    lsp(
        json!({"action": "rename", "path": "util.py", "line": 1, "symbol": "greet", "new_name": "welcome"}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_across_two_files_runs_shown_in_accept_edits() {
    let f = Fixture::new(vec![rename_greet(), text("renamed")], "").await;
    let (events, out) = f.turn("accept-edits", "rename greet").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        1,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        results[0].contains("Renamed greet to welcome in 2 files: app.py, util.py."),
        "{}",
        results[0]
    );
    // The edits end with the server's word on the files it changed.
    assert!(
        results[0].contains("pylsp: no errors or warnings in util.py."),
        "{}",
        results[0]
    );
    assert_eq!(f.read("util.py"), UTIL.replace("greet", "welcome"));
    assert_eq!(f.read("app.py"), APP.replace("greet", "welcome"));
    let shown: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "decision" && e["tool"] == "lsp")
        .collect();
    assert_eq!(shown.len(), 1, "{events:?}");
    assert_eq!(shown[0]["decision"], "allow", "{}", shown[0]);
    assert_eq!(shown[0]["unasked"], true, "{}", shown[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_an_edit_that_breaks_a_file_unless_turned_off() {
    let broken = "    return \"hello \" + nam\n";
    let edit = tool(
        "edit_file",
        json!({"path": "util.py", "old_string": "    return \"hello \" + name\n", "new_string": broken}),
    );
    let f = Fixture::new(vec![edit.clone(), text("edited")], "").await;
    let (events, out) = f.turn("accept-edits", "break it").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        1,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        results[0].starts_with("Edited util.py at line 2"),
        "{}",
        results[0]
    );
    assert!(results[0].contains("lsp: started pylsp"), "{}", results[0]);
    assert!(
        results[0].contains(
            "pylsp: 1 error and 0 warnings in util.py:\nutil.py:2: error: undefined name 'nam'"
        ),
        "{}",
        results[0]
    );

    std::fs::write(f.project().join("util.py"), UTIL).unwrap();
    let f = f
        .with_replies(
            vec![edit, text("edited")],
            "[lsp]\ndiagnostics_after_edit = false\n",
        )
        .await;
    let (events, _) = f.turn("accept-edits", "break it").await;
    let results = outputs(&events);
    assert!(
        results[0].starts_with("Edited util.py at line 2"),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("pylsp"), "{}", results[0]);
}

/// The processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if line.contains(marker) {
            found.push(format!("{}: {line}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_is_stopped_when_mino_exits() {
    let f = Fixture::new(vec![], "").await;
    let log = f.project().join("server-of-this-test.log");
    let marker = log.to_string_lossy().into_owned();
    let f = f
        .with_replies(
            vec![
                lsp(json!({"action": "hover", "path": "app.py", "line": 3, "symbol": "greet"})),
                text("done"),
            ],
            &format!("[lsp.pylsp]\nargs = [\"--log-file\", {marker:?}]\n"),
        )
        .await;
    let (events, out) = f.turn("manual", "hover").await;
    let results = outputs(&events);
    assert!(
        results[0].contains("lsp: started pylsp"),
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The server was there (it wrote its log) and is gone now that mino
    // has exited: wait for that state (its guard ends it).
    assert!(log.exists(), "the server never started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

const TS_UTIL: &str =
    "export function greet(name: string): string {\n  return \"hello \" + name;\n}\n";
const TS_APP: &str = "import { greet } from \"./util\";\n\nconsole.log(greet(\"world\"));\n";
const TS_SECRET: &str =
    "import { greet } from \"./util\";\nexport const token = greet(\"TOKEN\");\n";

/// A TypeScript project whose program includes `.env.ts` (protected by
/// the `.env.*` pattern), with typescript-language-server from
/// scripts/node-deps. The sandbox is off here: inside it the server would
/// see `.env.ts` masked (empty) and never point into it; mino must leave
/// such results out on its own.
async fn typescript(replies: Vec<Reply>) -> Fixture {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/node_modules/.bin");
    assert!(
        bin.join("typescript-language-server").exists(),
        "typescript-language-server is missing: run scripts/node-deps"
    );
    let f = Fixture::new(replies, "").await;
    f.settings(&format!(
        "[lsp.typescript-language-server]\ncommand = {:?}\n",
        bin.join("typescript-language-server").to_string_lossy()
    ));
    // The settings above end the [sandbox] table: turn it off after them.
    let config = f.mino_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("[sandbox]\n", "[sandbox]\nenabled = false\n"),
    )
    .unwrap();
    for (name, text) in [
        ("util.ts", TS_UTIL),
        ("app.ts", TS_APP),
        (".env.ts", TS_SECRET),
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}, \"files\": [\"util.ts\", \"app.ts\", \".env.ts\"]}\n",
        ),
    ] {
        std::fs::write(f.project().join(name), text).unwrap();
    }
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_in_a_protected_file_are_left_out_and_said_so() {
    let f = typescript(vec![
        lsp(json!({"action": "definition", "path": "app.ts", "line": 3, "symbol": "greet"})),
        lsp(json!({"action": "references", "path": "util.ts", "line": 1, "symbol": "greet"})),
        lsp(json!({"action": "symbols", "query": "greet"})),
        text("done"),
    ])
    .await;
    let (events, out) = f.turn("manual", "where is greet used").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        3,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        results[2].contains("function greet util.ts:1: export function greet"),
        "{}",
        results[2]
    );
    assert!(
        results[0].starts_with("lsp: started typescript-language-server\n"),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("util.ts:1: export function greet(name: string): string {"),
        "{}",
        results[0]
    );
    let references = &results[1];
    assert!(
        references.contains("app.ts:3: console.log(greet(\"world\"));"),
        "{references}"
    );
    assert!(
        references.contains("2 results in a protected file left out."),
        "{references}"
    );
    assert!(!references.contains(".env"), "{references}");
    assert!(
        !f.llm.bodies().join("\n").contains("TOKEN"),
        "the protected file's text reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_that_would_touch_a_protected_file_is_refused_whole() {
    let f = typescript(vec![
        lsp(json!({"action": "rename", "path": "util.ts", "line": 1, "symbol": "greet", "new_name": "welcome"})),
        text("refused"),
    ])
    .await;
    let (events, out) = f.turn("bypass", "rename greet").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        1,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        results[0].contains(".env.ts is a protected path"),
        "{}",
        results[0]
    );
    assert_eq!(
        decisions(&events),
        vec![(
            "lsp".to_string(),
            "deny".to_string(),
            "MINO_DENY_PROTECTED_PATH".to_string()
        )]
    );
    for (name, text) in [
        ("util.ts", TS_UTIL),
        ("app.ts", TS_APP),
        (".env.ts", TS_SECRET),
    ] {
        assert_eq!(f.read(name), text, "{name} was changed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_asks_in_manual_with_both_diffs_and_writes_nothing_when_a_file_changed_since() {
    use crate::support::full_screen::{env, quit};
    use crate::support::pty::Screen;
    let f = Fixture::new(vec![rename_greet(), text("after the rename")], "").await;
    let (home, mino_home, project, path) = (
        f.home().to_string_lossy().into_owned(),
        f.mino_home().to_string_lossy().into_owned(),
        f.project().to_string_lossy().into_owned(),
        f.path_var(),
    );
    let vars = env(&[
        ("HOME", home.as_str()),
        ("MINO_HOME", mino_home.as_str()),
        ("PATH", path.as_str()),
    ]);
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", &project],
        &f.project(),
        &vars,
    );
    screen.wait_for(crate::support::full_screen::FIRST_FRAME);
    screen.submit("rename greet to welcome");
    let dialog = screen.wait_for_all(&[
        "lsp wants to rename in app.py, util.py",
        "+++ b/app.py",
        "+++ b/util.py",
        "+def welcome(name):",
        "+print(welcome(\"world\"))",
        "keys armed",
    ]);
    assert!(dialog.contains("-def greet(name):"), "{dialog}");
    // A file changes after inspection, before the answer: the rename
    // writes nothing, not even the file that did not change.
    let changed = format!("{APP}# changed meanwhile\n");
    std::fs::write(f.project().join("app.py"), &changed).unwrap();
    screen.send(b"y");
    screen.wait_for("Nothing was written: app.py changed since the rename was inspected");
    assert_eq!(f.read("util.py"), UTIL);
    assert_eq!(f.read("app.py"), changed);
    screen.wait_for("after the rename");
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_runs_inside_the_sandbox() {
    let f = Fixture::new(vec![], "").await;
    let start = "readlink /proc/self/ns/pid > seen-ns.txt; echo x > ../outside.txt; exec pylsp";
    let f = f
        .with_replies(
            vec![
                lsp(json!({"action": "hover", "path": "app.py", "line": 3, "symbol": "greet"})),
                text("done"),
            ],
            &format!("[lsp.pylsp]\ncommand = \"bash\"\nargs = [\"-c\", {start:?}]\n"),
        )
        .await;
    let (events, out) = f.turn("manual", "hover").await;
    let results = outputs(&events);
    assert!(
        results[0].contains("Hover for greet at app.py:3"),
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inside = std::fs::read_to_string(f.project().join("seen-ns.txt")).unwrap();
    let outside = std::fs::read_link("/proc/self/ns/pid").unwrap();
    assert_ne!(
        inside.trim(),
        outside.to_string_lossy(),
        "the server shares mino's PID namespace"
    );
    assert!(
        !f.root.path().join("outside.txt").exists(),
        "the server wrote outside the project"
    );
}

/// A language server that answers `initialize`, counts its starts in
/// `starts.txt` and dies at the first hover.
const CRASHING_SERVER: &str = r#"import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "starts.txt"), "a") as f:
    f.write("x")
def read():
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        name, value = line.split(b":", 1)
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))
def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    message = read()
    if message.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"hoverProvider": True}}})
    elif message.get("method") == "textDocument/hover":
        os._exit(3)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_is_started_again_once_then_unavailable() {
    // Three different calls: an identical one is answered from the first.
    let hover = |line: u64| {
        lsp(json!({"action": "hover", "path": "a.crash", "line": line, "symbol": "word"}))
    };
    let f = Fixture::new(vec![], "").await;
    std::fs::write(f.project().join("crashing_server.py"), CRASHING_SERVER).unwrap();
    std::fs::write(f.project().join("a.crash"), "word\nword\nword\n").unwrap();
    let python = f.venv.join("bin/python");
    let f = f
        .with_replies(
            vec![hover(1), hover(2), hover(3), text("done")],
            &format!(
                "[lsp.crashing]\ncommand = {:?}\nargs = [\"crashing_server.py\"]\nextensions = [\"crash\"]\n",
                python.to_string_lossy()
            ),
        )
        .await;
    let (events, out) = f.turn("manual", "hover thrice").await;
    let results = outputs(&events);
    assert_eq!(
        results.len(),
        3,
        "{results:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        results[0].contains("the language server stopped"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("the language server stopped"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains(
            "the language server crashing is unavailable: it stopped 2 times in this run"
        ),
        "{}",
        results[2]
    );
    assert_eq!(f.read("starts.txt"), "xx", "started once and again once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_is_stopped_when_mino_is_killed() {
    use crate::support::full_screen::env;
    use crate::support::pty::Screen;
    let f = Fixture::new(vec![], "").await;
    let log = f.project().join("server-of-a-killed-mino.log");
    let marker = log.to_string_lossy().into_owned();
    let f = f
        .with_replies(
            vec![
                lsp(json!({"action": "hover", "path": "app.py", "line": 3, "symbol": "greet"})),
                text("hovered it"),
            ],
            &format!("[lsp.pylsp]\nargs = [\"--log-file\", {marker:?}]\n"),
        )
        .await;
    let (home, mino_home, project, path) = (
        f.home().to_string_lossy().into_owned(),
        f.mino_home().to_string_lossy().into_owned(),
        f.project().to_string_lossy().into_owned(),
        f.path_var(),
    );
    let vars = env(&[
        ("HOME", home.as_str()),
        ("MINO_HOME", mino_home.as_str()),
        ("PATH", path.as_str()),
    ]);
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", &project],
        &f.project(),
        &vars,
    );
    screen.wait_for(crate::support::full_screen::FIRST_FRAME);
    screen.submit("hover greet");
    screen.wait_for("hovered it");
    assert!(
        !processes_with(&marker).is_empty(),
        "the server is not running"
    );
    let pid = i32::try_from(screen.pty.pid()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running after mino was killed: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
