//! Asked agents: `/ask-jan` and `mino --ask jan` start jan as a child
//! `mino acp`, and every call jan would gate is decided by the asking agent
//! under `jan/TOOL`: in its own front end's question, from its own session
//! memory, by its own mode or by the `[agents.jan]` entry's `yolo`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::llm::{Llm, Reply, text, tool};
use crate::support::pty::Pty;
use serde_json::json;
use tempfile::TempDir;

/// An asking agent whose settings name jan, and jan's own settings file;
/// each has its own loopback model service.
pub(super) struct Asking {
    home: TempDir,
    project: TempDir,
    own: Llm,
    pub(super) jan: Llm,
}

impl Asking {
    /// `entry` is appended to `[agents.jan]`.
    pub(super) async fn new(own: Vec<Reply>, jan: Vec<Reply>, entry: &str) -> Self {
        let own = Llm::start("openai-chat", own).await;
        let jan = Llm::start("openai-chat", jan).await;
        let home = TempDir::new().unwrap();
        let project = TempDir::new().unwrap();
        crate::support::world::injection_project(project.path());
        let model = |url: String| {
            format!(
                "[model]\nprovider = \"openai-chat\"\nbase_url = \"{url}\"\nmodel = \"test-model\"\nrequest_timeout_secs = 5\nmax_retries = 0\n"
            )
        };
        // jan's own file says yolo: it never decides here.
        std::fs::write(
            home.path().join("jan.toml"),
            format!("yolo = true\n{}", model(jan.base_url())),
        )
        .unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            format!(
                "{}\n[agents.jan]\nconfig = \"jan.toml\"\n{entry}",
                model(own.base_url())
            ),
        )
        .unwrap();
        Self {
            home,
            project,
            own,
            jan,
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("MINO_HOME", self.home.path().to_str().unwrap().to_string()),
            ("OPENAI_API_KEY", "test".to_string()),
            ("AGENT_YOLO", String::new()),
        ]
    }

    fn line(&self, extra: &[&str]) -> Pty {
        let project = self.project.path().to_str().unwrap().to_string();
        let mut args = vec!["--line", "--cd", &project];
        args.extend_from_slice(extra);
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Pty::spawn(env!("CARGO_BIN_EXE_mino"), &args, self.project.path(), &env)
    }

    /// mino on the full screen, once its first frame is up.
    fn full_screen(&self) -> crate::support::pty::Screen {
        use crate::support::full_screen::{FIRST_FRAME, env};
        let project = self.project.path().to_str().unwrap().to_string();
        let home = self.home.path().to_str().unwrap().to_string();
        let vars = env(&[("MINO_HOME", home.as_str())]);
        let mut screen = crate::support::pty::Screen::spawn(
            env!("CARGO_BIN_EXE_mino"),
            &["--cd", &project],
            self.project.path(),
            &vars,
        );
        screen.wait_for(FIRST_FRAME);
        screen
    }

    /// `mino --ask jan` with `question` on stdin: (status, stdout, stderr).
    pub(super) async fn ask(&self, extra: &[&str], question: &str) -> (i32, String, String) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(["--ask", "jan", "--cd"])
            .arg(self.project.path())
            .args(extra)
            .current_dir(self.project.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in self.env() {
            command.env(k, v);
        }
        let question = question.to_string();
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(question.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .await
        .unwrap()
    }

    pub(super) fn exists(&self, name: &str) -> bool {
        self.project.path().join(name).exists()
    }
}

pub(super) fn bash(command: &str) -> Reply {
    tool("bash", json!({"command": command}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jans_bash_is_asked_as_jan_bash_and_allowing_it_never_allows_the_askers_own_bash() {
    let asking = Asking::new(
        vec![bash("touch own.txt"), text("as you wish")],
        vec![
            bash("touch jan1.txt"),
            text("made one"),
            bash("touch jan2.txt"),
            text("made two"),
        ],
        "",
    )
    .await;
    let mut pty = asking.line(&[]);
    pty.expect("Permission mode: manual.");

    pty.send_line("/ask-jan make a file");
    pty.expect("[Asked jan] make a file");
    let question =
        pty.expect("Approve this operation? [y/N]  (a: allow jan/bash for this session, v: never");
    assert!(question.contains("[Tool: jan/bash]"), "{question}");
    assert!(question.contains("Asked agent: \"jan\""), "{question}");
    assert!(
        question.contains("Command: \"touch jan1.txt\""),
        "{question}"
    );
    pty.send_line("a");
    pty.expect("Allowed jan/bash for this session.");
    pty.expect("jan> made one");
    assert!(asking.exists("jan1.txt"));

    // jan asks again in a new child: the asking agent's memory answers.
    pty.send_line("/ask-jan another");
    let said = pty.expect("jan> made two");
    assert!(
        said.contains("[Tool: jan/bash, allowed for this session]"),
        "{said}"
    );
    assert!(!said.contains("Approve this operation"), "{said}");
    assert!(asking.exists("jan2.txt"));

    // The asker's own bash still asks.
    pty.send_line("now you");
    let question = pty.expect("Approve this operation? [y/N]");
    assert!(question.contains("[Tool: bash]"), "{question}");
    pty.send_line("n");
    pty.expect("as you wish");
    assert!(!asking.exists("own.txt"));
    pty.send_line("/quit");
    assert_eq!(asking.jan.bodies().len(), 4);
    assert_eq!(asking.own.bodies().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asker_in_bypass_allows_jans_calls_at_once() {
    let asking = Asking::new(vec![], vec![bash("touch jan.txt"), text("done it")], "").await;
    let (status, stdout, stderr) = asking.ask(&["--yolo"], "make a file\n").await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "done it\n");
    assert!(asking.exists("jan.txt"), "{stderr}");
    assert!(
        stderr.contains("[Tool: jan/bash, allowed without confirmation in bypass mode]"),
        "{stderr}"
    );
    assert!(!stderr.contains("nobody can answer"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bypass_guard_holds_for_jans_commands_as_for_the_askers_own() {
    let asking = Asking::new(
        vec![],
        vec![
            bash("rm -rf .git"),
            bash("rm -rf build"),
            text("tried both"),
        ],
        "",
    )
    .await;
    let git = asking.project.path().join(".git");
    std::fs::create_dir_all(git.join("refs")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(asking.project.path().join("build/out")).unwrap();
    let (status, stdout, stderr) = asking.ask(&["--yolo"], "clean up\n").await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "tried both\n");
    assert!(
        git.join("HEAD").exists(),
        "the guard let jan remove .git: {stderr}"
    );
    assert!(
        !asking.exists("build"),
        "an ordinary command still runs: {stderr}"
    );
    let bodies = asking.jan.bodies();
    assert!(
        bodies[1].contains("The user did not approve"),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_with_yolo_false_asks_even_when_the_asker_runs_in_bypass() {
    let asking = Asking::new(
        vec![],
        vec![bash("touch jan.txt"), text("not allowed, fine")],
        "yolo = false\n",
    )
    .await;
    let mut pty = asking.line(&["--yolo"]);
    pty.expect("Permission mode: bypass.");
    pty.send_line("/ask-jan make a file");
    let question = pty.expect("Approve this operation? [y/N]");
    assert!(question.contains("[Tool: jan/bash]"), "{question}");
    pty.send_line("n");
    pty.expect("jan> not allowed, fine");
    assert!(!asking.exists("jan.txt"));
    pty.send_line("/quit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_from_stdin_rejects_what_would_ask_and_says_so_once() {
    let asking = Asking::new(
        vec![],
        vec![
            Reply::Tools(vec![
                ("bash".into(), json!({"command": "touch a.txt"})),
                ("bash".into(), json!({"command": "touch b.txt"})),
            ]),
            text("both refused"),
        ],
        "",
    )
    .await;
    let (status, stdout, stderr) = asking.ask(&[], "make two files\n").await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "both refused\n");
    assert!(!asking.exists("a.txt") && !asking.exists("b.txt"));
    assert_eq!(stderr.matches("nobody can answer").count(), 1, "{stderr}");
    // jan's model learned both calls were refused.
    let bodies = asking.jan.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[1].matches("The user did not approve").count(),
        2,
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_agent_is_an_error_that_names_the_configured_ones() {
    let asking = Asking::new(vec![], vec![], "").await;
    let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
    command
        .args(["--ask", "bob", "--cd"])
        .arg(asking.project.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in asking.env() {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"hi\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("no asked agent named \"bob\"; configured in [agents]: jan"),
        "{stderr}"
    );
}

/// The audit log's `(tool, decision, code)` lines whose tool starts with
/// `prefix`, with the prefix removed.
fn audited(asking: &Asking, prefix: &str) -> Vec<(String, String, String)> {
    let log = std::fs::read_to_string(asking.home.path().join("audit.jsonl")).unwrap_or_default();
    log.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|v| {
            let tool = v["tool"].as_str()?.strip_prefix(prefix)?.to_string();
            (!tool.contains('/')).then(|| {
                (
                    tool,
                    v["decision"].as_str().unwrap_or_default().to_string(),
                    v["code"].as_str().unwrap_or_default().to_string(),
                )
            })
        })
        .collect()
}

impl Asking {
    /// `mino -p PROMPT` of the asker itself: (status, stdout, stderr).
    fn print(&self, extra: &[&str], prompt: &str) -> (i32, String, String) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(["-p", prompt, "--cd"])
            .arg(self.project.path())
            .args(extra)
            .current_dir(self.project.path())
            .stdin(Stdio::null());
        for (k, v) in self.env() {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn unsandboxed(command: &str) -> Reply {
    tool(
        "bash",
        json!({"command": command, "sandbox": false, "reason": "needs the home"}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jans_unsandboxed_bash_and_private_fetch_ask_in_bypass_and_are_rejected_through_ask() {
    let (url, hits) = page().await;
    let asking = Asking::new(
        vec![],
        vec![
            unsandboxed("touch outside.txt"),
            tool("fetch_content", json!({ "url": url })),
            text("both refused"),
        ],
        "",
    )
    .await;
    let (status, stdout, stderr) = asking.ask(&["--mode", "bypass"], "leave\n").await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "both refused\n");
    assert!(!asking.exists("outside.txt"), "{stderr}");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "jan's fetch reached the private address: {stderr}"
    );
    let decided = audited(&asking, "jan/");
    assert_eq!(
        decided,
        vec![
            (
                "bash".into(),
                "deny".into(),
                "MINO_DENY_NOBODY_TO_ASK".into()
            ),
            (
                "fetch_content".into(),
                "deny".into(),
                "MINO_DENY_NOBODY_TO_ASK".into()
            ),
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("allowed without confirmation"), "{stderr}");
    let bodies = asking.jan.bodies();
    assert_eq!(bodies.len(), 3);
    assert_eq!(
        bodies[2].matches("The user did not approve").count(),
        2,
        "{}",
        bodies[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowing_jans_gated_command_for_the_session_in_auto_mode_allows_that_command_only() {
    let asking = Asking::new(
        vec![],
        vec![
            bash("touch a.txt"),
            text("made a"),
            Reply::Tools(vec![
                ("bash".into(), json!({"command": "touch a.txt"})),
                ("bash".into(), json!({"command": "touch b.txt"})),
            ]),
            text("tried both"),
        ],
        "",
    )
    .await;
    let mut pty = asking.line(&["--mode", "auto"]);
    pty.expect("Permission mode: auto.");
    pty.send_line("/ask-jan make a");
    let question = pty.expect("Approve this operation? [y/N]");
    assert!(question.contains("[Tool: jan/bash]"), "{question}");
    pty.send_line("a");
    pty.expect("Allowed this exact jan/bash command line for this session.");
    pty.expect("jan> made a");
    assert!(asking.exists("a.txt"));

    pty.send_line("/ask-jan again and b");
    let question = pty.expect("Approve this operation? [y/N]");
    assert!(
        question.contains("[Tool: jan/bash, allowed for this session]"),
        "the same command runs on the grant: {question}"
    );
    assert!(
        question.contains("Command: \"touch b.txt\""),
        "another command asks: {question}"
    );
    pty.send_line("n");
    pty.expect("jan> tried both");
    assert!(!asking.exists("b.txt"));
    pty.send_line("/quit");
}

/// One call of every kind an asked agent can ask about; what the asker
/// decides for jan's call must be what it decides for its own.
fn every_kind(url: &str, public: bool) -> Vec<(String, serde_json::Value)> {
    let mut calls = vec![
        (
            "write_file".to_string(),
            json!({"path": "w.txt", "content": "x\n"}),
        ),
        (
            "edit_file".to_string(),
            json!({"path": "README.md", "old_string": "a", "new_string": "b"}),
        ),
        ("bash".to_string(), json!({"command": "touch t.txt"})),
        ("bash".to_string(), json!({"command": "rm -rf .git"})),
        (
            "bash".to_string(),
            json!({"command": "touch u.txt", "sandbox": false, "reason": "needs the home"}),
        ),
        ("fetch_content".to_string(), json!({ "url": url })),
    ];
    if public {
        calls.push((
            "fetch_content".to_string(),
            json!({"url": "http://192.0.2.1/page"}),
        ));
    }
    calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_jans_call_is_decided_as_the_askers_own_call_of_that_kind() {
    let (url, _hits) = page().await;
    for mode in ["manual", "accept-edits", "auto", "bypass"] {
        let calls = every_kind(&url, mode != "bypass");
        let count = calls.len();
        let own = Asking::new(vec![Reply::Tools(calls.clone()), text("done")], vec![], "").await;
        std::fs::write(own.project.path().join("README.md"), "a\n").unwrap();
        let (status, _, stderr) = own.print(&["--mode", mode], "go");
        let mine = audited(&own, "");
        assert_eq!(mine.len(), count, "in {mode} mode: {stderr}");
        // -p exits 2 when every call it made was refused.
        let refused_all = mine.iter().all(|(_, decision, _)| decision != "allow");
        assert_eq!(status, if refused_all { 2 } else { 0 }, "{stderr}");

        let asked = Asking::new(vec![], vec![Reply::Tools(calls), text("done")], "").await;
        std::fs::write(asked.project.path().join("README.md"), "a\n").unwrap();
        let (status, _, stderr) = asked.ask(&["--mode", mode], "go\n").await;
        assert_eq!(status, 0, "{stderr}");
        let jans = audited(&asked, "jan/");
        assert_eq!(jans, mine, "in {mode} mode: {stderr}");
    }
}

/// A page on 127.0.0.1 (a private destination) that counts its requests.
async fn page() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let body = "secret page";
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
        }
    });
    (format!("http://{addr}/page"), hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_agents_answer_is_redacted_of_the_askers_secrets() {
    let secret = crate::support::world::SECRET;
    let asking = Asking::new(vec![], vec![text(&format!("The token is {secret}."))], "").await;
    let (code, stdout, stderr) = asking.ask(&[], "what is the token?").await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains(secret), "{stdout}");
    assert!(!stderr.contains(secret), "{stderr}");
    assert!(stdout.contains("[redacted: TOKEN]"), "{stdout}");
}

/// jan's answer streams in pieces of a few characters, so the secret in it
/// arrives split; the full screen shows it redacted, never reassembled
/// from pieces that each looked harmless.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_split_across_jans_streamed_pieces_never_shows() {
    let secret = crate::support::world::SECRET;
    let asking = Asking::new(
        vec![],
        vec![text(&format!("The token is {secret}. That is all."))],
        "",
    )
    .await;
    let mut screen = asking.full_screen();
    screen.submit("/ask-jan what is the token?");
    let shown = screen.wait_for("That is all.");
    assert!(!shown.contains(secret), "{shown}");
    assert!(!shown.contains("SECRET-5b8e"), "{shown}");
    assert!(shown.contains("[redacted: TOKEN]"), "{shown}");
    screen.submit("/quit");
}
