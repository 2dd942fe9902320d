//! The sandbox end to end: the built binary in bypass against a loopback
//! model service, each bash command run for real, checked on the files it
//! left and on every request body the service received. HOME and the
//! project live under the build's own temporary directory, not under /tmp
//! (which the sandbox replaces), so a refused write is refused by the
//! sandbox and not by a missing directory.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support::llm::{Llm, Reply, text, tool};
use crate::support::pty::Pty;
use crate::support::stream::{completed_status, of_type, outputs, records};
use crate::support::world::SECRET;
use serde_json::{Value, json};
use tempfile::TempDir;

pub(super) const KEY: &str = "sk-sandbox-key-never-seen";
const SSH_SECRET: &str = "SSH-PRIVATE-KEY-7c1d";

/// A temporary HOME with credentials and a shell start-up file, a project
/// that is a git repository with a `.env`, and a model service.
/// Where each test's home and project go: the build's own temporary
/// directory, unless the checkout lives under `/tmp`. Inside the sandbox
/// `/tmp` is private (a home there is hidden, not read-only) and with
/// Landlock alone all of `/tmp` is writable, so a home there could not show
/// what these tests check.
pub(super) fn outside_tmp() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if target.starts_with("/tmp") {
        PathBuf::from("/var/tmp")
    } else {
        target
    }
}

pub(super) struct Setup {
    pub(super) root: TempDir,
    pub(super) llm: Llm,
}

impl Setup {
    pub(super) async fn new(replies: Vec<Reply>, sandbox: &str) -> Self {
        let root = tempfile::Builder::new()
            .prefix("sandbox-e2e")
            .tempdir_in(outside_tmp())
            .unwrap();
        let llm = Llm::start("openai-chat", replies).await;
        let b = Self { root, llm };
        std::fs::create_dir_all(b.home().join(".ssh")).unwrap();
        std::fs::write(b.home().join(".ssh/id_rsa"), SSH_SECRET).unwrap();
        std::fs::write(b.home().join(".bashrc"), "# start-up\n").unwrap();
        b.write_settings(sandbox);
        let project = b.project();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join(".env"), format!("TOKEN={SECRET}\n")).unwrap();
        std::fs::write(project.join("notes.md"), "notes\n").unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&project)
                .env("HOME", b.home())
                .output()
                .expect("git must be installed for these tests");
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["config", "user.name", "t"]);
        git(&["add", "notes.md"]);
        git(&["commit", "-qm", "first"]);
        b
    }

    fn write_settings(&self, sandbox: &str) {
        std::fs::create_dir_all(self.mino_home()).unwrap();
        std::fs::write(
            self.mino_home().join("config.toml"),
            format!(
                "[model]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key_env = \"OPENAI_API_KEY\"\nrequest_timeout_secs = 5\nmax_retries = 0\n[limits]\nturn_tool_calls = 30\n{sandbox}",
                self.llm.base_url()
            ),
        )
        .unwrap();
    }

    /// The same home and project with a new model service answering
    /// `replies` (for a world prepared after `new`).
    pub(super) async fn with_replies(mut self, replies: Vec<Reply>, sandbox: &str) -> Self {
        self.llm = Llm::start("openai-chat", replies).await;
        self.write_settings(sandbox);
        self
    }

    /// mino in line mode and bypass in a pseudo-terminal, its banner read.
    pub(super) fn line_in_bypass(&self) -> Pty {
        let home = self.home().to_str().unwrap().to_string();
        let mino_home = self.mino_home().to_str().unwrap().to_string();
        let project = self.project().to_str().unwrap().to_string();
        let mut pty = Pty::spawn(
            env!("CARGO_BIN_EXE_mino"),
            &["--line", "--yolo", "--cd", &project],
            &self.project(),
            &[
                ("HOME", &home),
                ("MINO_HOME", &mino_home),
                ("OPENAI_API_KEY", KEY),
                ("AGENT_YOLO", ""),
            ],
        );
        pty.expect("Use /mode to change it.");
        pty
    }

    /// mino on the full screen in bypass, once its first frame is up.
    pub(super) fn full_screen_in_bypass(&self) -> crate::support::pty::Screen {
        let home = self.home().to_str().unwrap().to_string();
        let mino_home = self.mino_home().to_str().unwrap().to_string();
        let project = self.project().to_str().unwrap().to_string();
        let mut screen = crate::support::pty::Screen::spawn(
            env!("CARGO_BIN_EXE_mino"),
            &["--yolo", "--cd", &project],
            &self.project(),
            &[
                ("HOME", &home),
                ("MINO_HOME", &mino_home),
                ("OPENAI_API_KEY", KEY),
                ("AGENT_YOLO", ""),
            ],
        );
        screen.wait_for(crate::support::full_screen::FIRST_FRAME);
        screen
    }

    pub(super) fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub(super) fn mino_home(&self) -> PathBuf {
        self.home().join(".config/mino")
    }

    pub(super) fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub(super) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(args)
            .arg("--cd")
            .arg(self.project())
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("MINO_HOME", self.mino_home())
            .env("OPENAI_API_KEY", KEY)
            .env_remove("AGENT_YOLO")
            .stdin(Stdio::null());
        command
    }

    /// One `-p` turn in bypass: the events and the process's output.
    pub(super) async fn bypass(&self, prompt: &str) -> (Vec<Value>, Output) {
        let mut command = self.command(&["-p", prompt, "--output-format", "stream-json", "--yolo"]);
        let out = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let events = records(&out.stdout);
        (events, out)
    }

    /// Every request body the service received, as one string.
    pub(super) fn bodies(&self) -> String {
        self.llm.bodies().join("\n")
    }
}

pub(super) fn bash(command: &str) -> Reply {
    tool("bash", json!({ "command": command }))
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_read_as_empty_and_never_reach_the_model() {
    let b = Setup::new(
        vec![
            bash("cat .env; echo end-of-env"),
            bash("cat ~/.ssh/id_rsa; ls -a ~/.ssh; echo end-of-ssh"),
            bash("cat \"$MINO_HOME/config.toml\"; echo end-of-home"),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("read the secrets").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].contains("end-of-env"), "{}", results[0]);
    assert!(
        results[0].contains(".env masked by the sandbox"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("end-of-ssh"), "{}", results[1]);
    assert!(
        results[1].contains("masked by the sandbox"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("end-of-home"), "{}", results[2]);
    let bodies = b.bodies();
    assert!(
        !bodies.contains(SECRET),
        "the .env marker reached the model"
    );
    assert!(
        !bodies.contains(SSH_SECRET),
        "the ssh key reached the model"
    );
    assert!(
        !bodies.contains("base_url"),
        "mino's settings reached the model"
    );
    // Nothing was written over the real files.
    assert_eq!(
        std::fs::read_to_string(b.project().join(".env")).unwrap(),
        format!("TOKEN={SECRET}\n")
    );
    assert_eq!(
        std::fs::read_to_string(b.home().join(".ssh/id_rsa")).unwrap(),
        SSH_SECRET
    );
    // The record line (on stderr with stream-json) says what the command ran in.
    let shown = stderr(&out);
    assert!(
        shown.contains("Sandbox: \"project writable, secrets masked, network via proxy\""),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_home_and_planting_paths_are_read_only_while_git_commit_works() {
    let b = Setup::new(
        vec![
            bash("touch ~/pwned"),
            bash("echo x >> ~/.bashrc"),
            bash("echo x > .git/hooks/pre-commit"),
            bash("echo y >> .git/config"),
            bash("echo changed >> notes.md && git commit -qam x && git log --oneline | wc -l"),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 5, "{results:?}");
    for refused in &results[..4] {
        assert!(!refused.contains("Exit code: 0"), "{refused}");
        assert!(refused.contains("Read-only file system"), "{refused}");
        assert!(refused.contains("\"sandbox\": false"), "{refused}");
    }
    assert!(!b.home().join("pwned").exists());
    assert_eq!(
        std::fs::read_to_string(b.home().join(".bashrc")).unwrap(),
        "# start-up\n"
    );
    assert!(!b.project().join(".git/hooks/pre-commit").exists());
    assert!(
        !std::fs::read_to_string(b.project().join(".git/config"))
            .unwrap()
            .contains("y\n")
    );
    assert!(results[4].contains("Exit code: 0"), "{}", results[4]);
    let log = Command::new("git")
        .args(["log", "--oneline"])
        .current_dir(b.project())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_cannot_see_mino_and_nothing_it_started_survives() {
    let marker = format!("300.{}", std::process::id());
    let b = Setup::new(
        vec![
            bash("echo ppid=$PPID; tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/*/environ | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'"),
            bash(&format!("setsid sleep {marker} > /dev/null 2>&1 & echo started")),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("look around").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(results[0].contains("ppid=1"), "{}", results[0]);
    assert!(
        !results[0].contains(KEY),
        "mino's key was visible: {}",
        results[0]
    );
    assert!(results[1].contains("started"), "{}", results[1]);
    assert!(!b.bodies().contains(KEY));
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

/// A hostile command tries the ways around the sandbox: links and `/proc`
/// paths to the masked secret, a hard link to it, a namespace of its own to
/// undo the masks, init's environment, the descriptors it inherited, a
/// shared `/dev/shm`, a write outside from another working directory, a
/// hooks directory the repository did not have, and the user's terminal
/// (mino runs in one here, as it does for a person).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ways_around_the_sandbox_are_closed() {
    let probe = format!("mino-sandbox-probe-{}", std::process::id());
    let b = Setup::new(
        vec![
            bash(
                "ln -s .env link; cat link /proc/self/root$PWD/.env /proc/1/root$PWD/.env; \
                 echo end-links",
            ),
            bash("ln .env hard; echo end-hard"),
            bash(
                "unshare -Urm sh -c 'umount .env; cat .env; mount -o remount,rw /; touch /escaped'; \
                 echo end-unshare",
            ),
            bash("cat /proc/1/environ; ls -l /proc/self/fd/; echo end-fds"),
            bash(&format!(
                "echo x > /dev/shm/{probe}; cd / && touch /{probe}; echo end-outside"
            )),
            bash("mkdir -p .git/hooks && echo 'touch planted' > .git/hooks/pre-commit"),
            bash("(exec 3<>/dev/tty) 2>/dev/null && echo tty-open || echo no-tty"),
            text("done"),
        ],
        "",
    )
    .await;
    // A repository may have no hooks directory: the command must not make one.
    std::fs::remove_dir_all(b.project().join(".git/hooks")).unwrap();
    let mino_home = b.mino_home().to_str().unwrap().to_string();
    let mut pty = b.line_in_bypass();
    pty.send_line("get out");
    pty.expect("done");
    // The tool results as the model received them, in order.
    let last: Value = serde_json::from_str(b.llm.bodies().last().unwrap()).unwrap();
    let results: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 7, "{results:?}");
    let [links, hard, unshare, fds, outside, hooks, tty] = &results[..] else {
        unreachable!()
    };
    let bodies = b.bodies();
    assert!(
        !bodies.contains(SECRET),
        "the .env marker reached the model"
    );
    assert!(!bodies.contains(KEY), "mino's key reached the model");
    assert!(links.contains("end-links"), "{links}");
    assert!(hard.contains("Invalid cross-device link"), "{hard}");
    assert!(!b.project().join("hard").exists());
    assert!(unshare.contains("end-unshare"), "{unshare}");
    assert!(!std::path::Path::new("/escaped").exists());
    assert!(
        fds.contains("Permission denied"),
        "init's environment: {fds}"
    );
    assert!(!fds.contains("socket:"), "a socket was inherited: {fds}");
    assert!(
        !fds.contains(&mino_home),
        "a file of mino's home was inherited: {fds}"
    );
    assert!(outside.contains("Read-only file system"), "{outside}");
    assert!(!std::path::Path::new("/dev/shm").join(&probe).exists());
    assert!(!std::path::Path::new("/").join(&probe).exists());
    assert!(!hooks.contains("Exit code: 0"), "{hooks}");
    assert!(!b.project().join(".git/hooks/pre-commit").exists());
    assert!(
        tty.contains("no-tty"),
        "the command reached the terminal: {tty}"
    );
    // The real .env is untouched.
    assert_eq!(
        std::fs::read_to_string(b.project().join(".env")).unwrap(),
        format!("TOKEN={SECRET}\n")
    );
}

/// A loopback listener outside the sandbox; the command connects with
/// bash's /dev/tcp.
fn connect_to(port: u16) -> Reply {
    bash(&format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached || echo unreachable"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_loopback_is_out_of_reach_in_every_network_setting() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for (setting, expected, said) in [
        ("on", "unreachable", "network via proxy"),
        ("off", "unreachable", "network off"),
    ] {
        let b = Setup::new(
            vec![connect_to(port), text("done")],
            &format!("[sandbox]\nnetwork = \"{setting}\"\n"),
        )
        .await;
        let (events, out) = b.bypass("connect").await;
        assert!(out.status.success(), "{}", stderr(&out));
        let result = &outputs(&events)[0];
        assert!(
            result.contains(&format!("\n{expected}")),
            "{setting}: {result}"
        );
        let shown = stderr(&out);
        assert!(shown.contains(said), "{shown}");
        assert!(
            matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{setting}: the host's loopback listener was reached"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_sandbox_is_rejected_where_nobody_can_ask() {
    let b = Setup::new(
        vec![
            tool(
                "bash",
                json!({"command": "touch ~/outside", "sandbox": false, "reason": "needs the home"}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("leave").await;
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{}",
        stderr(&out)
    );
    let decision = of_type(&events, "decision");
    assert_eq!(decision[0]["decision"], "deny", "{decision:?}");
    assert_eq!(decision[0]["code"], "MINO_DENY_NOBODY_TO_ASK");
    assert!(!b.home().join("outside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_sandbox_refuses_to_be_left_and_refuses_to_be_off() {
    let leave = || {
        tool(
            "bash",
            json!({"command": "touch ~/outside", "sandbox": false, "reason": "needs the home"}),
        )
    };
    let b = Setup::new(
        vec![leave(), bash("touch inside && echo made"), text("done")],
        "[sandbox]\nrequired = true\nunsandboxed_in_bypass = \"run\"\n",
    )
    .await;
    let (events, out) = b.bypass("leave").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = outputs(&events);
    assert!(first[0].contains("did not run"), "{}", first[0]);
    assert!(first[0].contains("required = true"), "{}", first[0]);
    assert!(!b.home().join("outside").exists());
    assert!(first[1].contains("made"), "{}", first[1]);
    // Turned off while required: nothing runs unsandboxed.
    let b = Setup::new(
        vec![bash("touch ~/outside"), text("done")],
        "[sandbox]\nrequired = true\nenabled = false\n",
    )
    .await;
    let (events, out) = b.bypass("run").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let off = outputs(&events);
    assert!(off[0].contains("did not run"), "{}", off[0]);
    assert!(!b.home().join("outside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_sandbox_asks_in_bypass_and_runs_when_allowed() {
    let b = Setup::new(
        vec![
            tool(
                "bash",
                json!({"command": "touch ~/outside", "sandbox": false, "reason": "needs the home"}),
            ),
            text("left it"),
        ],
        "",
    )
    .await;
    let mut pty = b.line_in_bypass();
    pty.send_line("go");
    let question = pty.expect("Approve this operation? [y/N]");
    assert!(
        question.contains("Reason: \"needs the home\""),
        "{question}"
    );
    assert!(question.contains("outside the sandbox"), "{question}");
    pty.send_line("y");
    pty.expect("left it");
    assert!(b.home().join("outside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_alone_still_restricts_writes() {
    let b = Setup::new(
        vec![
            bash("touch ~/pwned"),
            bash("touch made-here && echo made"),
            text("done"),
        ],
        "[sandbox]\nnamespaces = false\n",
    )
    .await;
    let (events, out) = b.bypass("write").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(!results[0].contains("Exit code: 0"), "{}", results[0]);
    assert!(!b.home().join("pwned").exists());
    assert!(results[1].contains("made"), "{}", results[1]);
    assert!(b.project().join("made-here").exists());
    let shown = stderr(&out);
    assert!(shown.contains("Landlock only"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_check_reports_what_this_machine_supports() {
    let b = Setup::new(vec![], "").await;
    let out = b.command(&["sandbox", "check"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["user_namespaces"], true, "{report}");
    assert!(
        report["landlock_abi"].as_i64().unwrap_or(0) >= 1,
        "{report}"
    );
    assert_eq!(report["level"], "full");
    assert_eq!(report["network"], "via proxy");
    assert_eq!(report["network_namespace"], true);
    assert_eq!(report["proxy"]["socket"], "/dev/mino-proxy");
    let masked = report["masked"].to_string();
    for path in [
        b.project().join(".env"),
        b.home().join(".ssh"),
        b.mino_home(),
    ] {
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        assert!(masked.contains(path.to_str().unwrap()), "{masked}");
    }
    assert!(
        report["writable"].to_string().contains("project"),
        "{report}"
    );
    // The constructed root's parts, from the one table.
    let root = report["root"].as_array().unwrap();
    let part = |path: &str| {
        root.iter()
            .find(|e| e["path"] == path)
            .map(|e| e["part"].clone())
            .unwrap_or_default()
    };
    assert_eq!(part("/usr"), "system", "{report}");
    assert_eq!(part("~/.cargo/bin"), "toolchain", "{report}");
    assert_eq!(part("~/.cache"), "cache", "{report}");
    assert!(part("/dev").to_string().contains("devpts"), "{report}");
    assert!(
        !report["env_allowed"].to_string().contains("TOKEN"),
        "{report}"
    );
}

/// The model is told where its commands run in the sandbox's own words,
/// never that there is none when there is one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_says_commands_run_in_the_sandbox() {
    let b = Setup::new(vec![text("ok")], "").await;
    let (_, out) = b.bypass("hello").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let bodies = b.bodies();
    assert!(
        bodies.contains("Shell commands run in a sandbox: project writable, secrets masked"),
        "{bodies}"
    );
    assert!(!bodies.contains("there is no sandbox"), "{bodies}");
}
