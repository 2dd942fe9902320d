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
struct Asking {
    home: TempDir,
    project: TempDir,
    own: Llm,
    jan: Llm,
}

impl Asking {
    /// `entry` is appended to `[agents.jan]`.
    async fn new(own: Vec<Reply>, jan: Vec<Reply>, entry: &str) -> Self {
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

    /// `mino --ask jan` with `question` on stdin: (status, stdout, stderr).
    async fn ask(&self, extra: &[&str], question: &str) -> (i32, String, String) {
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

    fn exists(&self, name: &str) -> bool {
        self.project.path().join(name).exists()
    }
}

fn bash(command: &str) -> Reply {
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
