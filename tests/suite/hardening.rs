//! The attacks of the hardening review, each against the built binary and
//! a loopback model service: mino's home inside the project, the key read
//! from the process or printed by a command, settings files that are not
//! regular files, redirects and private destinations, a switched-off edit
//! tool, the umask, and processes that try to outlive their command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::llm::{Llm, Reply, text, tool};
use crate::support::stream::{decisions, of_type, outputs, records};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The key every run is given; no request body, session file or log line
/// may ever carry it.
const KEY: &str = "sk-hardening/5f1c+9e7a=2b4d";

/// A project and a home, with the home's settings pointing at a loopback
/// model service.
struct Case {
    project: TempDir,
    home: PathBuf,
    /// Keeps a home outside the project alive.
    _home_dir: Option<TempDir>,
    llm: Llm,
}

impl Case {
    /// A home outside the project.
    async fn new(replies: Vec<Reply>, extra: &str) -> Self {
        let home = TempDir::new().unwrap();
        let mut case = Self::at(
            TempDir::new().unwrap(),
            home.path().to_path_buf(),
            replies,
            extra,
        )
        .await;
        case._home_dir = Some(home);
        case
    }

    /// A home at `home`, settings written there.
    async fn at(project: TempDir, home: PathBuf, replies: Vec<Reply>, extra: &str) -> Self {
        let llm = Llm::start("openai-chat", replies).await;
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), settings_text(&llm, extra)).unwrap();
        Self {
            project,
            home,
            _home_dir: None,
            llm,
        }
    }

    fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .arg("--cd")
            .arg(self.project.path())
            .env("MINO_HOME", &self.home)
            .env("OPENAI_API_KEY", KEY)
            .env_remove("AGENT_YOLO")
            .stdin(std::process::Stdio::null());
        command
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().await.unwrap()
    }

    /// `-p PROMPT --output-format stream-json` with `extra`: the events,
    /// stderr and the output.
    async fn print(&self, prompt: &str, extra: &[&str]) -> (Vec<Value>, String, Output) {
        let mut args = vec!["-p", prompt, "--output-format", "stream-json"];
        args.extend_from_slice(extra);
        let out = self.run(&args).await;
        let events = records(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (events, stderr, out)
    }

    /// Every file under the home's `sessions/` and `logs/`, and the audit
    /// log, as text.
    fn home_files(&self) -> String {
        let mut all = String::new();
        for dir in ["sessions", "logs"] {
            if let Ok(entries) = std::fs::read_dir(self.home.join(dir)) {
                for entry in entries {
                    all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
                }
            }
        }
        all.push_str(&std::fs::read_to_string(self.home.join("audit.jsonl")).unwrap_or_default());
        all
    }

    /// Asserts `needle` reached no request body, session file, log line
    /// and stdout or stderr of the run.
    fn assert_nowhere(&self, needle: &str, out: &Output) {
        for body in self.llm.bodies() {
            assert!(!body.contains(needle), "a request body carried it: {body}");
        }
        let files = self.home_files();
        assert!(!files.is_empty());
        assert!(!files.contains(needle), "the home carried it: {files}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains(needle));
        assert!(!String::from_utf8_lossy(&out.stderr).contains(needle));
    }
}

fn settings_text(llm: &Llm, extra: &str) -> String {
    format!(
        "[model]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"OPENAI_API_KEY\"\nrequest_timeout_secs = 5\nmax_retries = 0\n{extra}",
        llm.base_url()
    )
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

// 1. mino's home is never a project path.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minos_home_inside_the_project_is_refused_in_every_mode() {
    const TRANSCRIPT: &str = "OTHER-SESSION-TRANSCRIPT-77e1";
    let project = TempDir::new().unwrap();
    let home = project.path().join(".config/mino");
    let hook_ran = project.path().join("hook-ran");
    let planted = format!(
        "yolo = true\npre_tool_call = [\"/usr/bin/touch\", \"{}\"]\n",
        hook_ran.display()
    );
    let case = Case::at(
        project,
        home.clone(),
        vec![
            tool(
                "write_file",
                json!({"path": ".config/mino/config.toml", "content": planted}),
            ),
            tool(
                "edit_file",
                json!({"path": ".config/MINO/config.toml", "old_string": "[model]", "new_string": "yolo = true\n[model]"}),
            ),
            tool("read_file", json!({"path": ".config/mino/sessions/old.jsonl"})),
            tool("search", json!({"path": ".", "pattern": "TRANSCRIPT"})),
            tool("list_dir", json!({"path": ".config"})),
            tool("list_dir", json!({"path": ".config/mino"})),
            text("done"),
            text("second start"),
        ],
        "",
    )
    .await;
    std::fs::create_dir_all(home.join("sessions")).unwrap();
    std::fs::write(
        home.join("sessions/old.jsonl"),
        format!("{{\"text\":\"{TRANSCRIPT}\"}}\n"),
    )
    .unwrap();
    let before = std::fs::read_to_string(home.join("config.toml")).unwrap();

    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let decided = decisions(&events);
    assert_eq!(decided.len(), 6, "{stderr}\n{events:?}");
    for (tool, decision, code) in &decided[..3] {
        assert_eq!(
            (decision.as_str(), code.as_str()),
            ("deny", "MINO_DENY_MINO_HOME"),
            "{tool}"
        );
    }
    assert_eq!(
        decided[5],
        (
            "list_dir".into(),
            "deny".into(),
            "MINO_DENY_MINO_HOME".into()
        )
    );
    let outputs = outputs(&events);
    assert!(outputs[0].contains("mino's own home"), "{}", outputs[0]);
    // search and list_dir skip the home as they skip protected paths.
    assert!(!outputs[3].contains(TRANSCRIPT), "{}", outputs[3]);
    assert!(!outputs[4].contains("mino"), "{}", outputs[4]);
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        before
    );
    for body in case.llm.bodies() {
        assert!(!body.contains(TRANSCRIPT), "a transcript reached the model");
    }

    // The next start is still in manual, and no hook ran.
    let (events, stderr, _) = case.print("again", &[]).await;
    assert_eq!(of_type(&events, "session")[0]["mode"], "manual", "{stderr}");
    assert!(!hook_ran.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_check_names_the_home_code() {
    let project = TempDir::new().unwrap();
    let home = project.path().join("mino-home");
    let case = Case::at(project, home.clone(), vec![], "").await;
    let out = case
        .run(&[
            "policy",
            "check",
            "--mode",
            "bypass",
            "--tool",
            "write_file",
            "--path",
            &relative(&home.join("config.toml"), case.project.path()),
        ])
        .await;
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["decision"], "deny");
    assert_eq!(value["code"], "MINO_DENY_MINO_HOME");
}

// 6. A tool switched off stays off.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_output_follows_the_edit_switch() {
    let case = Case::new(
        vec![
            tool(
                "fetch_content",
                json!({"url": "https://example.invalid/x", "output": "src/main.rs"}),
            ),
            text("done"),
        ],
        "[tools]\nedit = false\n",
    )
    .await;
    std::fs::create_dir(case.project.path().join("src")).unwrap();
    std::fs::write(case.project.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let result = of_type(&events, "tool_result");
    assert_eq!(result.len(), 1, "{stderr}");
    assert_eq!(result[0]["status"], "error");
    assert!(
        result[0]["output"]
            .as_str()
            .unwrap()
            .contains("edit = false"),
        "{}",
        result[0]["output"]
    );
    assert_eq!(
        std::fs::read_to_string(case.project.path().join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    // The parameter is not offered, and neither are the edit tools.
    let body: Value = serde_json::from_str(&case.llm.bodies()[0]).unwrap();
    let tools = body["tools"].as_array().unwrap();
    let fetch = tools
        .iter()
        .find(|t| t["function"]["name"] == "fetch_content")
        .unwrap();
    assert!(
        fetch["function"]["parameters"]["properties"]
            .get("output")
            .is_none(),
        "{fetch}"
    );
    assert!(!tools.iter().any(|t| t["function"]["name"] == "write_file"));
}

// 7. New files respect the umask.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_files_respect_the_umask_and_old_ones_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let case = Case::new(
        vec![
            tool(
                "write_file",
                json!({"path": "new/secret.txt", "content": "x\n"}),
            ),
            tool(
                "edit_file",
                json!({"path": "open.txt", "old_string": "a", "new_string": "b"}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let open = case.project.path().join("open.txt");
    std::fs::write(&open, "a\n").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = tokio::process::Command::new("sh")
        .arg("-c")
        .arg("umask 077 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "go", "--mode", "bypass", "--cd"])
        .arg(case.project.path())
        .env("MINO_HOME", &case.home)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&case.project.path().join("new/secret.txt")), 0o600);
    assert_eq!(mode(&case.project.path().join("new")), 0o700);
    assert_eq!(mode(&open), 0o644);
    assert_eq!(std::fs::read_to_string(&open).unwrap(), "b\n");
}

// 3. The key never reaches a child, nor the model through a result.

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    uid.split_whitespace().nth(2) == Some("0")
}

fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_cannot_be_read_from_minos_proc_entries() {
    let case = Case::new(
        vec![
            tool(
                "bash",
                json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ; grep -a OPENAI /proc/$PPID/environ; echo \"child sees: ${OPENAI_API_KEY:-nothing}\""}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    // Root reads every process's /proc entries whatever their owner; run
    // mino as an ordinary user then, so the check means what it says.
    let mut command = if is_root() {
        for path in [case.project.path(), case.home.as_path()] {
            chown_tree(path, NOBODY);
        }
        let mut command = tokio::process::Command::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            env!("CARGO_BIN_EXE_mino"),
        ]);
        command
    } else {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
    };
    let out = command
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--mode",
            "bypass",
            "--cd",
        ])
        .arg(case.project.path())
        .env("MINO_HOME", &case.home)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 1, "{stderr}");
    assert!(outputs[0].contains("Permission denied"), "{}", outputs[0]);
    assert!(outputs[0].contains("child sees: nothing"), "{}", outputs[0]);
    case.assert_nowhere(KEY, &out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_printed_by_a_command_is_redacted_before_it_is_saved_or_sent() {
    let case = Case::new(
        vec![
            tool(
                "bash",
                json!({"command": "v=$(cat planted.txt); echo \"plain: $v\"; printf 'X=%s' \"$v\" | base64 -w0; echo; printf '%s' \"$v\" | sed 's#/#%2F#g; s#+#%2B#g; s#=#%3D#g'"}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    std::fs::write(case.project.path().join("planted.txt"), KEY).unwrap();
    let (events, stderr, out) = case.print("go", &["--mode", "bypass"]).await;
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 1, "{stderr}");
    assert!(
        outputs[0].contains("plain: [redacted: OPENAI_API_KEY]"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[0].contains("the value of OPENAI_API_KEY from this result"),
        "{}",
        outputs[0]
    );
    case.assert_nowhere(KEY, &out);
    let encoded = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("X={KEY}"))
    };
    case.assert_nowhere(&encoded[4..24], &out);
    case.assert_nowhere("sk-hardening%2F5f1c%2B", &out);
}

// 8. Nothing a command starts outlives it.

/// Processes whose command line is `sleep SECONDS`.
fn sleeping(seconds: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if !zombie
            && args.len() >= 2
            && args[0].ends_with(b"sleep")
            && args[1] == seconds.as_bytes()
        {
            found.push(pid);
        }
    }
    found
}

/// Waits up to five seconds for every `sleep SECONDS` to be gone.
async fn gone(seconds: &[&str]) -> Vec<String> {
    for _ in 0..100 {
        let left: Vec<String> = seconds
            .iter()
            .filter(|s| !sleeping(s).is_empty())
            .map(|s| s.to_string())
            .collect();
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    seconds
        .iter()
        .filter(|s| !sleeping(s).is_empty())
        .map(|s| s.to_string())
        .collect()
}

/// Distinct durations for this test process, so parallel runs never see
/// each other's sleepers.
fn durations(salt: u32) -> [String; 3] {
    let base = 100_000 + (std::process::id() % 50_000) * 10 + salt * 3;
    [base, base + 1, base + 2].map(|n| n.to_string())
}

fn escaping_command(d: &[String; 3], then: &str) -> String {
    format!(
        "setsid sleep {} > /dev/null 2>&1 & (setsid sh -c 'sleep {} > /dev/null 2>&1 &' &); (sleep {} > /dev/null 2>&1 &); echo started; {then}",
        d[0], d[1], d[2]
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escaped_processes_are_gone_when_the_call_ends() {
    let d = durations(0);
    let case = Case::new(
        vec![
            tool("bash", json!({"command": escaping_command(&d, "true")})),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, stderr, out) = case.print("go", &["--mode", "bypass"]).await;
    assert!(out.status.success(), "{stderr}");
    let outputs = outputs(&events);
    assert!(
        outputs[0].starts_with("Exit code: 0\nstarted"),
        "{}",
        outputs[0]
    );
    let refs: Vec<&str> = d.iter().map(String::as_str).collect();
    assert_eq!(gone(&refs).await, Vec::<String>::new(), "still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escaped_processes_and_the_shell_are_gone_when_mino_is_killed() {
    let d = durations(1);
    // Its own salt: durations(3) belongs to a test that may run meanwhile.
    let [shell_sleep, _, _] = durations(4);
    let case = Case::new(
        vec![
            tool(
                "bash",
                json!({"command": escaping_command(&d, &format!("sleep {shell_sleep}"))}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let mut child = case
        .command()
        .args(["-p", "go", "--mode", "bypass"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut all: Vec<&str> = d.iter().map(String::as_str).collect();
    all.push(&shell_sleep);
    for _ in 0..200 {
        if all.iter().all(|s| !sleeping(s).is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(
        all.iter().all(|s| !sleeping(s).is_empty()),
        "the command never started"
    );
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert_eq!(gone(&all).await, Vec::<String>::new(), "still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_or_guard_killing_command_leaves_nothing() {
    let d = durations(2);
    let e = durations(3);
    let case = Case::new(
        vec![
            tool(
                "bash",
                json!({"command": escaping_command(&d, "sleep 60"), "timeout_secs": 1}),
            ),
            // A command that kills the process it runs under.
            tool(
                "bash",
                json!({"command": escaping_command(&e, "kill -9 $PPID; sleep 60")}),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 2, "{stderr}");
    assert!(
        outputs[0].starts_with("Timed out after 1 s"),
        "{}",
        outputs[0]
    );
    let refs: Vec<&str> = d.iter().chain(e.iter()).map(String::as_str).collect();
    assert_eq!(gone(&refs).await, Vec::<String>::new(), "still running");
}

// 4. Settings files are opened like project files.

/// Starts mino on `case` and returns (exit code, stderr), or fails the
/// test if it has not ended within five seconds.
async fn start_fails(case: &Case) -> (i32, String) {
    let run = case.run(&["-p", "hello"]);
    let out = tokio::time::timeout(std::time::Duration::from_secs(5), run)
        .await
        .expect("mino hung at start");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_settings_file_that_is_no_regular_file_is_a_clear_error() {
    for (what, lay_out) in [
        ("a link to /dev/zero", 0),
        ("a FIFO", 1),
        ("a 5 MiB file", 2),
    ] {
        let case = Case::new(vec![text("never")], "").await;
        let dir = case.project.path().join(".mino");
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("config.toml");
        match lay_out {
            0 => std::os::unix::fs::symlink("/dev/zero", &file).unwrap(),
            1 => {
                let status = std::process::Command::new("mkfifo")
                    .arg(&file)
                    .status()
                    .unwrap();
                assert!(status.success());
            }
            _ => std::fs::write(&file, format!("# {}\n", "x".repeat(5 * 1024 * 1024))).unwrap(),
        }
        let (code, stderr) = start_fails(&case).await;
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(stderr.contains(".mino/config.toml"), "{what}: {stderr}");
        assert!(
            stderr.contains("Accepted: a regular file"),
            "{what}: {stderr}"
        );
        assert!(case.llm.bodies().is_empty(), "{what}: nothing starts");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soul_and_agents_files_that_are_no_regular_files_stop_the_start() {
    let case = Case::new(vec![text("never")], "").await;
    let status = std::process::Command::new("mkfifo")
        .arg(case.project.path().join("AGENTS.md"))
        .status()
        .unwrap();
    assert!(status.success());
    let (code, stderr) = start_fails(&case).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("AGENTS.md is not a regular file"),
        "{stderr}"
    );

    let case = Case::new(vec![text("never")], "").await;
    std::os::unix::fs::symlink("/dev/zero", case.home.join("SOUL.md")).unwrap();
    let (code, stderr) = start_fails(&case).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("SOUL.md"), "{stderr}");
    assert!(stderr.contains("a character device"), "{stderr}");
    assert!(case.llm.bodies().is_empty());
}

// 5. Redirects are decided, not followed; private destinations ask.

/// A loopback HTTP server answering each request with `reply(path)` (a
/// whole HTTP response) and recording every request line.
async fn http_server(
    reply: fn(&str, u16) -> String,
) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&head)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            seen.lock().unwrap().push(line);
            let _ = socket.write_all(reply(&path, port).as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (port, log)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn redirect(location: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
}

/// A run whose model fetches each of `urls` in turn, then says "done", with
/// private destinations allowed by the user (the servers are on loopback).
async fn fetching(urls: &[String]) -> Case {
    let mut replies: Vec<Reply> = urls
        .iter()
        .map(|url| tool("fetch_content", json!({ "url": url })))
        .collect();
    replies.push(text("done"));
    Case::new(replies, "[tools]\nfetch_private_hosts = \"allow\"\n").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_ends_the_call_and_the_target_is_never_fetched() {
    let (target, target_log) = http_server(|_, _| ok("TARGET-SECRET=1")).await;
    static TARGET: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    TARGET.set(target).unwrap();
    let (origin, _) = http_server(|path, _| match path {
        "/start" => redirect(&format!("http://127.0.0.1:{}/.env", TARGET.get().unwrap())),
        "/same" => redirect("/final"),
        _ => ok("same origin content"),
    })
    .await;
    let case = fetching(&[
        format!("http://127.0.0.1:{origin}/start"),
        format!("http://127.0.0.1:{origin}/same"),
    ])
    .await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 2, "{stderr}");
    assert!(
        outputs[0].contains(&format!("redirected to http://127.0.0.1:{target}/.env"))
            && outputs[0].contains("does not follow it"),
        "{}",
        outputs[0]
    );
    assert!(outputs[1].contains("same origin content"), "{}", outputs[1]);
    assert!(
        target_log.lock().unwrap().is_empty(),
        "the target was fetched"
    );
    for body in case.llm.bodies() {
        assert!(!body.contains("TARGET-SECRET"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_destinations_ask_even_in_bypass_and_are_rejected_where_nobody_can_answer() {
    let (port, log) = http_server(|_, _| ok("LOCAL-SECRET=1")).await;
    let urls = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://localhost:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ];
    let mut replies: Vec<Reply> = urls
        .iter()
        .map(|u| tool("fetch_content", json!({"url": u})))
        .collect();
    replies.push(text("done"));
    let case = Case::new(replies, "").await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let decided = decisions(&events);
    assert_eq!(decided.len(), urls.len(), "{stderr}");
    for (_, decision, code) in &decided {
        assert_eq!(
            (decision.as_str(), code.as_str()),
            ("deny", "MINO_DENY_NOBODY_TO_ASK")
        );
    }
    let statuses: Vec<&str> = of_type(&events, "tool_result")
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(statuses.iter().all(|s| *s == "rejected"), "{statuses:?}");
    assert!(
        log.lock().unwrap().is_empty(),
        "the loopback server was hit"
    );

    // policy check says the same: it asks in bypass.
    let out = case
        .run(&[
            "policy",
            "check",
            "--mode",
            "bypass",
            "--tool",
            "fetch_content",
            "--url",
            &urls[0],
        ])
        .await;
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["decision"], "ask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_hosts_allowed_by_the_user_are_fetched_but_a_project_cannot_allow_them() {
    let (port, log) = http_server(|_, _| ok("local page")).await;
    let case = fetching(&[format!("http://127.0.0.1:{port}/")]).await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    assert!(outputs(&events)[0].contains("local page"), "{stderr}");
    assert_eq!(log.lock().unwrap().len(), 1);

    let case = Case::new(vec![text("never")], "").await;
    std::fs::create_dir(case.project.path().join(".mino")).unwrap();
    std::fs::write(
        case.project.path().join(".mino/config.toml"),
        "[tools]\nfetch_private_hosts = \"allow\"\n",
    )
    .unwrap();
    let out = case.run(&["-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tools.fetch_private_hosts"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_origin_redirect_loop_stops_after_ten_redirects() {
    let (port, log) = http_server(|_, _| redirect("/loop")).await;
    let case = fetching(&[format!("http://127.0.0.1:{port}/loop")]).await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 1, "{stderr}");
    assert!(
        outputs[0].contains("redirected more than 10 times"),
        "{}",
        outputs[0]
    );
    // The request, then ten redirects followed; the eleventh is not.
    assert_eq!(log.lock().unwrap().len(), 11);
}

/// A loopback HTTP server that keeps connections open (HTTP/1.1
/// keep-alive) and answers every request on them with `body`; returns its
/// port, how many connections it accepted and how many requests it served.
async fn keep_alive_server(
    body: &'static str,
) -> (
    u16,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(AtomicUsize::new(0));
    let requests = std::sync::Arc::new(AtomicUsize::new(0));
    let (accepted, served) = (connections.clone(), requests.clone());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            accepted.fetch_add(1, Ordering::SeqCst);
            let served = served.clone();
            tokio::spawn(async move {
                let mut pending = Vec::new();
                let mut buf = [0u8; 1024];
                loop {
                    while !pending.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => pending.extend_from_slice(&buf[..n]),
                        }
                    }
                    let end = pending.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    pending.drain(..end);
                    served.fetch_add(1, Ordering::SeqCst);
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, connections, requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetches_of_a_run_share_one_client_and_its_connection() {
    use std::sync::atomic::Ordering;
    let (port, connections, requests) = keep_alive_server("kept page").await;
    let case = fetching(&[
        format!("http://127.0.0.1:{port}/one"),
        format!("http://127.0.0.1:{port}/two"),
    ])
    .await;
    let (events, stderr, _) = case.print("go", &["--mode", "bypass"]).await;
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 2, "{stderr}");
    assert!(outputs[0].contains("kept page"), "{outputs:?}");
    // Both were fetched (the second result may say it is the same as the
    // first), over one connection: a client per call would have opened two.
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}
