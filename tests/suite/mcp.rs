//! MCP against real servers: `@modelcontextprotocol/server-everything` and
//! `@modelcontextprotocol/server-filesystem` at the versions pinned in
//! `tests/mcp/package-lock.json` (installed by `scripts/test-deps`), and a
//! small script server for the misbehaving cases. The built binary runs
//! against the loopback model service; every request body is checked.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::llm::{Llm, Reply, text, tool};
use crate::support::pty::Pty;
use crate::support::stream::{completed_status, decisions, of_type, records};
use crate::support::world::{SECRET, World};
use serde_json::{Value, json};

pub(super) const KEY: &str = "sk-test-key-never-logged";
pub(super) const TOKEN: &str = "mcp-token-7f3a9c-never-shown";
const LITERAL: &str = "literal-credential-51d2e8";

/// Where `scripts/test-deps` installs the servers; a clear failure when it
/// has not run.
pub(super) fn servers() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".test-deps/mcp/node_modules/@modelcontextprotocol");
    assert!(
        dir.join("server-everything/dist/index.js").is_file()
            && dir.join("server-filesystem/dist/index.js").is_file(),
        "the MCP test servers are not installed in {}: run scripts/test-deps (it needs node and npm), or scripts/test",
        dir.display()
    );
    dir
}

pub(super) fn everything(name: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = \"node\"\nargs = [{:?}]\n{extra}\n",
        servers()
            .join("server-everything/dist/index.js")
            .display()
            .to_string()
    )
}

pub(super) fn filesystem(name: &str, root: &Path, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n{extra}\n",
        servers()
            .join("server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root.display().to_string()
    )
}

pub(super) fn fake(name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[mcp.servers.{name}]\ncommand = \"node\"\nargs = [{:?}, {mode:?}]\n{extra}\n",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp/fake-server.mjs")
            .display()
            .to_string()
    )
}

impl World {
    /// A world whose user settings hold the servers `servers` writes (TOML
    /// tables) for the canonical project directory.
    pub(super) async fn mcp(replies: Vec<Reply>, servers: impl FnOnce(&Path) -> String) -> Self {
        World::mcp_at(|_| replies, servers).await
    }

    /// `mcp`, with replies that name paths in the project.
    async fn mcp_at(
        replies: impl FnOnce(&Path) -> Vec<Reply>,
        servers: impl FnOnce(&Path) -> String,
    ) -> Self {
        let mut world = World::with("openai-chat", vec![], "").await;
        let root = world.project.path().canonicalize().unwrap();
        let llm = Llm::start("openai-chat", replies(&root)).await;
        let config = world.home.path().join("config.toml");
        let mut text = std::fs::read_to_string(&config)
            .unwrap()
            .replace(&world.llm.base_url(), &llm.base_url());
        world.llm = llm;
        text.push('\n');
        text.push_str(&servers(&root));
        std::fs::write(&config, text).unwrap();
        world
    }

    /// `print`, for the other MCP suites.
    pub(super) async fn mcp_print(
        &self,
        prompt: &str,
        extra: &[&str],
    ) -> (Vec<Value>, String, Output) {
        self.print(prompt, extra).await
    }

    async fn print(&self, prompt: &str, extra: &[&str]) -> (Vec<Value>, String, Output) {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
            .args(["-p", prompt, "--output-format", "stream-json"])
            .args(extra)
            .arg("--cd")
            .arg(self.project.path())
            .env("MINO_HOME", self.home.path())
            .env("OPENAI_API_KEY", KEY)
            .env("TEST_MCP_TOKEN", TOKEN)
            .env_remove("AGENT_YOLO")
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let events = records(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (events, stderr, out)
    }

    pub(super) fn line_mode(&self, extra: &[&str]) -> Pty {
        let home = self.home.path().to_str().unwrap().to_string();
        let project = self.project.path().to_str().unwrap().to_string();
        let mut args = vec!["--line", "--cd", &project];
        args.extend_from_slice(extra);
        Pty::spawn(
            env!("CARGO_BIN_EXE_mino"),
            &args,
            self.project.path(),
            &[
                ("MINO_HOME", &home),
                ("OPENAI_API_KEY", KEY),
                ("TEST_MCP_TOKEN", TOKEN),
                ("AGENT_YOLO", ""),
            ],
        )
    }

    /// Everything mino wrote under its home (sessions, logs, audit).
    pub(super) fn home_text(&self) -> String {
        let mut all = String::new();
        for entry in walk(self.home.path()) {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap()));
        }
        all
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The results, as (status, output), in order.
pub(super) fn results(events: &[Value]) -> Vec<(String, String)> {
    of_type(events, "tool_result")
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_string(),
                r["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn offered_tools(body: &str) -> Vec<String> {
    let body: Value = serde_json::from_str(body).unwrap();
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_namespaced_and_round_trip_in_bypass_with_record_lines() {
    let world = World::mcp(
        vec![
            tool("mcp_everything_echo", json!({"message": "hello over mcp"})),
            tool("mcp_everything_get-sum", json!({"a": 2, "b": 40})),
            tool("mcp_files_read_text_file", json!({"path": "notes.md"})),
            text("done"),
        ],
        |root| {
            format!(
                "{}{}[mcp.servers.off]\ncommand = \"/nonexistent/server\"\nenabled = false\n",
                everything("everything", ""),
                filesystem("files", root, "")
            )
        },
    )
    .await;
    let (events, stderr, out) = world.print("use the tools", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let bodies = world.llm.bodies();
    let tools = offered_tools(&bodies[0]);
    for name in [
        "mcp_everything_echo",
        "mcp_everything_get-sum",
        "mcp_files_read_text_file",
        "read_file",
    ] {
        assert!(tools.contains(&name.to_string()), "{name} not in {tools:?}");
    }
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp_off")),
        "a disabled server's tools are never offered: {tools:?}"
    );
    let results = results(&events);
    assert_eq!(results.len(), 3, "{results:?}\n{stderr}");
    assert_eq!(results[0].0, "completed");
    assert_eq!(results[0].1, "Echo: hello over mcp");
    assert!(results[1].1.contains("42"), "{results:?}");
    assert!(bodies[2].contains("42"));
    assert_eq!(results[2].0, "completed", "{results:?}");
    assert!(results[2].1.contains("Relase notes"), "{results:?}");
    assert!(bodies[3].contains("Relase notes"));
    // Each ran with its record line.
    assert!(
        stderr.contains("[Tool: mcp_everything_echo, allowed without confirmation in bypass mode]"),
        "{stderr}"
    );
    assert!(stderr.contains("Server: \"everything\""), "{stderr}");
    assert!(stderr.contains("Destination: \"node "), "{stderr}");
    assert!(stderr.contains("Tool: \"echo\""), "{stderr}");
    assert!(stderr.contains("Arguments: "), "{stderr}");
    assert!(stderr.contains("hello over mcp"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_manual_a_call_asks_and_a_rejected_one_never_reaches_the_server() {
    let world = World::mcp(
        vec![
            tool(
                "mcp_files_write_file",
                json!({"path": "written.txt", "content": "from the model"}),
            ),
            text("I could not write it."),
        ],
        |root| filesystem("files", root, ""),
    )
    .await;
    let mut pty = world.line_mode(&[]);
    pty.expect("MCP server files started");
    pty.send_line("write a file");
    let question = pty.expect("Approve this operation? [y/N]");
    for field in [
        "[Tool: mcp_files_write_file]",
        "Server: \"files\"",
        "Destination: \"node ",
        "Tool: \"write_file\"",
        "Arguments: \"{\\n  \\\"path\\\": \\\"written.txt\\\"",
    ] {
        assert!(question.contains(field), "{field} missing from {question}");
    }
    pty.send_line("n");
    pty.expect("I could not write it.");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    assert!(
        !world.project.path().join("written.txt").exists(),
        "the server never saw the rejected call"
    );
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("The user did not approve this command"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_marked_ask_asks_in_bypass_and_is_rejected_through_p() {
    let world = World::mcp(
        vec![
            tool(
                "mcp_files_write_file",
                json!({"path": "written.txt", "content": "x"}),
            ),
            text("refused"),
        ],
        |root| filesystem("files", root, "trust = \"ask\""),
    )
    .await;
    let (events, stderr, out) = world.print("write", &["--yolo"]).await;
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    assert_eq!(
        decisions(&events),
        [(
            "mcp_files_write_file".to_string(),
            "deny".to_string(),
            "MINO_DENY_NOBODY_TO_ASK".to_string()
        )]
    );
    assert_eq!(
        stderr
            .matches("calls that need your confirmation are rejected here")
            .count(),
        1,
        "said once: {stderr}"
    );
    assert!(!world.project.path().join("written.txt").exists());
}

/// Two `read_text_file` calls with `args(project root)`, in a project where
/// `notes-link.md -> .env`: both are denied, and the secret never reaches
/// the model, though the server would follow the link.
async fn both_denied_through_a_link_to_env(args: fn(&Path) -> [Value; 2]) {
    let world = World::mcp_at(
        |root| {
            let [first, second] = args(root);
            vec![
                tool("mcp_files_read_text_file", first),
                tool("mcp_files_read_text_file", second),
                text("blocked"),
            ]
        },
        |root| filesystem("files", root, ""),
    )
    .await;
    std::os::unix::fs::symlink(".env", world.project.path().join("notes-link.md")).unwrap();
    let (events, stderr, out) = world.print("read the notes", &["--yolo"]).await;
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    let codes: Vec<String> = decisions(&events).into_iter().map(|d| d.2).collect();
    assert_eq!(
        codes,
        [
            "MINO_DENY_PROTECTED_ARGUMENT",
            "MINO_DENY_PROTECTED_ARGUMENT"
        ]
    );
    for body in world.llm.bodies() {
        assert!(!body.contains(SECRET), "the secret reached the model");
    }
}

/// A link in the project named like an ordinary file but leading to
/// `.env` is judged by where it leads, absolute or relative.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_a_protected_file_is_denied_by_where_it_leads() {
    both_denied_through_a_link_to_env(|root| {
        [
            json!({"path": root.join("notes-link.md").display().to_string()}),
            json!({"path": "notes-link.md"}),
        ]
    })
    .await;
}

/// The link is found however the argument hides it: after hundreds of
/// other strings, or as a percent-encoded `file:` URI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_a_protected_file_is_found_behind_filler_and_encoding() {
    both_denied_through_a_link_to_env(|root| {
        let filler: Vec<String> = (0..300).map(|n| format!("filler {n}")).collect();
        [
            json!({"pad": filler, "path": "notes-link.md"}),
            json!({"path": format!("FILE://localhost{}/notes-link%2Emd", root.display())}),
        ]
    })
    .await;
}

/// mino's home (sessions, the log, settings) is never named to a server,
/// even one whose allowed directory it is: the call is denied before it
/// leaves mino, and the file's text never reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_inside_minos_home_is_never_sent_to_a_server() {
    const MARKER: &str = "home-marker-4471";
    let mut world = World::with("openai-chat", vec![], "").await;
    let home = world.home.path().canonicalize().unwrap();
    std::fs::write(home.join("kept.txt"), MARKER).unwrap();
    let llm = Llm::start(
        "openai-chat",
        vec![
            tool(
                "mcp_files_read_text_file",
                json!({"path": home.join("kept.txt").display().to_string()}),
            ),
            tool(
                "mcp_files_read_text_file",
                json!({"path": format!("file://{}/x/../kept.txt", home.display())}),
            ),
            text("blocked"),
        ],
    )
    .await;
    let config = home.join("config.toml");
    let mut settings = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&world.llm.base_url(), &llm.base_url());
    world.llm = llm;
    settings.push('\n');
    settings.push_str(&filesystem("files", &home, ""));
    std::fs::write(&config, settings).unwrap();
    let (events, stderr, out) = world.print("read the home", &["--yolo"]).await;
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    let codes: Vec<String> = decisions(&events).into_iter().map(|d| d.2).collect();
    assert_eq!(
        codes,
        [
            "MINO_DENY_PROTECTED_ARGUMENT",
            "MINO_DENY_PROTECTED_ARGUMENT"
        ]
    );
    for body in world.llm.bodies() {
        assert!(
            !body.contains(MARKER),
            "a file of the home reached the model"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_env_by_absolute_path_is_denied_before_the_call_leaves_mino() {
    let world = World::mcp_at(
        |root| {
            vec![
                tool(
                    "mcp_files_read_text_file",
                    json!({"path": root.join(".env").display().to_string()}),
                ),
                tool(
                    "mcp_files_read_multiple_files",
                    json!({"paths": ["notes.md", ".ENV"]}),
                ),
                // The server normalises paths before it opens them: these
                // read .env too unless mino reads them the same way.
                tool(
                    "mcp_files_read_text_file",
                    json!({"path": format!("{}/.env/.", root.display())}),
                ),
                tool(
                    "mcp_files_read_text_file",
                    json!({"path": format!("{}/nowhere/../.env", root.display())}),
                ),
                text("blocked"),
            ]
        },
        |root| filesystem("files", root, ""),
    )
    .await;
    let (events, stderr, out) = world.print("read the secret", &["--yolo"]).await;
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    let codes: Vec<String> = decisions(&events).into_iter().map(|d| d.2).collect();
    assert_eq!(
        codes,
        [
            "MINO_DENY_PROTECTED_ARGUMENT",
            "MINO_DENY_PROTECTED_ARGUMENT",
            "MINO_DENY_PROTECTED_ARGUMENT",
            "MINO_DENY_PROTECTED_ARGUMENT"
        ]
    );
    for body in world.llm.bodies() {
        assert!(!body.contains(SECRET), "the secret reached the model");
    }
    assert!(!world.home_text().contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_exit_hang_or_crash_are_reported_and_mino_keeps_working() {
    let world = World::mcp(
        vec![
            tool("mcp_crashy_crash", json!({})),
            tool("mcp_everything_echo", json!({"message": "still here"})),
            tool("mcp_crashy_crash", json!({})),
            text("done"),
        ],
        |_| {
            format!(
                "[mcp.servers.dead]\ncommand = \"sh\"\nargs = [\"-c\", \"echo dying >&2; exit 3\"]\n\
                 [mcp.servers.silent]\ncommand = \"sleep\"\nargs = [\"7331\"]\nstartup_timeout_secs = 1\n\
                 [mcp.servers.missing]\ncommand = \"/nonexistent/mcp-server\"\n{}{}",
                fake("crashy", "crash-on-call", ""),
                everything("everything", "")
            )
        },
    )
    .await;
    let (events, stderr, out) = world.print("go", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("MCP server dead failed to start"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "MCP server silent failed to start: no answer to the handshake (server/discover, then initialize) within 1 s (startup_timeout_secs)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "MCP server missing failed to start: /nonexistent/mcp-server could not be started: not found"
        ),
        "{stderr}"
    );
    let results = results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0].0, "error", "{results:?}");
    assert!(results[0].1.contains("MCP server crashy"), "{results:?}");
    assert_eq!(results[1], ("completed".into(), "Echo: still here".into()));
    // The crashed server is stopped; its tool is refused at once.
    assert_eq!(results[2].0, "error");
    assert!(results[2].1.contains("is stopped"), "{results:?}");
    // Nothing the hung server started is left.
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 7331"])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "the hung server was left running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_in_env_never_leaves_even_when_a_tool_prints_it() {
    let world = World::mcp(
        vec![
            tool("mcp_everything_get-env", json!({})),
            tool(
                "bash",
                json!({"command": "echo \"token=[$TEST_MCP_TOKEN]\""}),
            ),
            text("done"),
        ],
        |_| {
            everything(
                "everything",
                &format!("env = {{ MY_TOKEN = \"$TEST_MCP_TOKEN\", MY_LITERAL = \"{LITERAL}\" }}"),
            )
        },
    )
    .await;
    let (events, stderr, out) = world.print("show the env", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert!(
        results[0]
            .1
            .contains("[redacted: mcp.servers.everything.env.MY_TOKEN]"),
        "{results:?}"
    );
    assert!(
        results[0]
            .1
            .contains("[redacted: mcp.servers.everything.env.MY_LITERAL]")
    );
    assert!(
        !results[0].1.contains(KEY),
        "the model key never reaches a server"
    );
    // bash does not inherit a variable a server's env refers to.
    assert!(results[1].1.contains("token=[]"), "{results:?}");
    for body in world.llm.bodies() {
        assert!(!body.contains(TOKEN) && !body.contains(LITERAL));
    }
    let home = world.home_text();
    assert!(
        home.contains("mcp_everything_get-env"),
        "the session was saved"
    );
    // Every file mino wrote (config.toml is the user's own).
    for file in walk(world.home.path())
        .into_iter()
        .filter(|f| !f.ends_with("config.toml"))
    {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).to_string();
        for secret in [TOKEN, LITERAL] {
            assert!(!text.contains(secret), "{secret} in {}", file.display());
        }
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(!printed.contains(TOKEN) && !stderr.contains(TOKEN) && !stderr.contains(LITERAL));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_tools_are_listed_again_and_shown() {
    let world = World::mcp(
        vec![tool("mcp_fake_grow", json!({})), text("grown")],
        |_| fake("fake", "list-changed", ""),
    )
    .await;
    let mut pty = world.line_mode(&["--yolo"]);
    pty.expect("MCP server fake started: 2 tools.");
    pty.send_line("grow");
    pty.expect("MCP server fake changed its tools: added extra; changed shout.");
    pty.send_line("/mcp");
    let listing = pty.expect("mcp_fake_extra");
    assert!(listing.contains("fake: running"), "{listing}");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
}

/// Every process below `root` now, as (pid, command line).
fn descendants(root: u32) -> Vec<(u32, String)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The fields after the command name: state, ppid, ...
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = after.split(' ').nth(1).unwrap().parse().unwrap();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        all.push((
            pid,
            ppid,
            String::from_utf8_lossy(&cmdline).replace('\0', " "),
        ));
    }
    let mut found = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for (pid, ppid, cmdline) in &all {
            if *ppid == parent {
                parents.push(*pid);
                found.push((*pid, cmdline.clone()));
            }
        }
    }
    found
}

/// The server processes below `root` whose command line contains `needle`
/// (the servers themselves, not the guards they run under).
fn server_pids(root: u32, needle: &str) -> Vec<u32> {
    descendants(root)
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains(needle) && !cmdline.contains("__mcp-guard"))
        .map(|(pid, _)| pid)
        .collect()
}

/// The guards below `root`.
fn guard_pids(root: u32) -> Vec<u32> {
    descendants(root)
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains("__mcp-guard"))
        .map(|(pid, _)| pid)
        .collect()
}

/// Waits until each of `servers` said it started, in whatever order.
fn expect_started(pty: &mut Pty, servers: &[&str]) {
    for _ in servers {
        pty.expect(" started: ");
    }
    let all = pty.all();
    for server in servers {
        assert!(
            all.contains(&format!("MCP server {server} started: ")),
            "{all}"
        );
    }
}

/// The pid a fake server wrote to `file`.
fn pid_in(file: &Path) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no pid in {}",
            file.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether `pid` is gone (or a zombie waiting for its parent).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
    }
}

fn wait_gone(pid: u32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_mcp_shows_states_and_a_server_killed_from_outside_is_stopped_and_refused() {
    let world = World::mcp(
        vec![
            tool("mcp_everything_echo", json!({"message": "anyone?"})),
            text("the server is gone"),
        ],
        |_| everything("everything", ""),
    )
    .await;
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut screen = crate::support::pty::Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", &project, "--yolo"],
        world.project.path(),
        &[
            ("TERM", "xterm-256color"),
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", KEY),
            ("AGENT_YOLO", ""),
        ],
    );
    screen.wait_for("MCP 1/1");
    screen.submit("/mcp");
    screen.wait_for_all(&[
        "everything: running",
        "mcp_everything_echo",
        "Destination: node",
    ]);
    let servers = server_pids(screen.pty.pid(), "server-everything");
    assert_eq!(servers.len(), 1, "one server process: {servers:?}");
    assert_eq!(guard_pids(screen.pty.pid()).len(), 1);
    let status = std::process::Command::new("kill")
        .args(["-KILL", &servers[0].to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    screen.wait_for_all(&["MCP server everything stopped", "MCP 0/1, 1 down"]);
    screen.submit("/mcp");
    screen.wait_for("everything: stopped: its connection ended");
    screen.submit("call it");
    screen.wait_for_all(&["cannot be called now", "the server is gone"]);
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("The MCP server everything is stopped"),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_processes_stop_with_mino() {
    let world = World::mcp(vec![], |root| {
        format!(
            "{}{}",
            everything("everything", ""),
            filesystem("files", root, "")
        )
    })
    .await;
    let mut pty = world.line_mode(&[]);
    expect_started(&mut pty, &["everything", "files"]);
    let mut servers = server_pids(pty.pid(), "server-everything");
    servers.extend(server_pids(pty.pid(), "server-filesystem"));
    assert_eq!(servers.len(), 2, "{servers:?}");
    servers.extend(guard_pids(pty.pid()));
    assert_eq!(
        servers.len(),
        4,
        "two servers under two guards: {servers:?}"
    );
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    for pid in servers {
        assert!(wait_gone(pid), "server process {pid} outlived mino");
    }
    // Their stderr went to the log, never to the screen.
    let log = std::fs::read_to_string(world.home.path().join("logs/mino.log")).unwrap_or_default();
    assert!(
        log.contains("Secure MCP Filesystem Server running on stdio"),
        "{log}"
    );
    assert!(!pty.all().contains("Secure MCP Filesystem Server"));
}

/// mino killed with SIGKILL cleans up nothing itself: each server's guard
/// notices and ends the server and everything below it, a child that left
/// the server's process group and session included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_and_their_children_die_when_mino_is_killed_with_sigkill() {
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let extra = format!(
        "env = {{ FAKE_PID_FILE = {:?} }}",
        pid_file.path().to_str().unwrap()
    );
    let world = World::mcp(vec![], |_| {
        format!(
            "{}{}",
            everything("everything", ""),
            fake("forker", "fork-child", &extra)
        )
    })
    .await;
    let mut pty = world.line_mode(&[]);
    expect_started(&mut pty, &["everything", "forker"]);
    let child = pid_in(pid_file.path());
    let mut doomed = server_pids(pty.pid(), "server-everything");
    doomed.extend(server_pids(pty.pid(), "fake-server.mjs"));
    doomed.extend(guard_pids(pty.pid()));
    assert_eq!(doomed.len(), 4, "two servers, two guards: {doomed:?}");
    // The forked child left the server's session; it still is below mino.
    assert!(!gone(child));
    doomed.push(child);
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pty.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    pty.wait();
    for pid in doomed {
        assert!(
            wait_gone(pid),
            "process {pid} outlived mino killed with SIGKILL"
        );
    }
}

/// A server that forks a child holding its stdout and exits: the guard
/// ends the child, so the connection ends and the server is shown stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forks_a_child_and_exits_is_stopped_with_its_child() {
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let extra = format!(
        "env = {{ FAKE_PID_FILE = {:?} }}",
        pid_file.path().to_str().unwrap()
    );
    let world = World::mcp(vec![], |_| fake("leaver", "fork-exit", &extra)).await;
    let mut pty = world.line_mode(&[]);
    pty.expect("MCP server leaver started");
    let child = pid_in(pid_file.path());
    pty.expect("MCP server leaver stopped: its connection ended");
    assert!(wait_gone(child), "the server's child {child} outlived it");
    assert!(guard_pids(pty.pid()).is_empty());
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
}

/// Names, descriptions and results from a server are untrusted text: its
/// escapes and right-to-left override never reach the terminal raw (in the
/// record line, the result, the changed-tools notice and `/mcp`), and its
/// description reaches the model only as a tool definition, never in the
/// system prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_server_cannot_drive_the_terminal_or_reach_the_system_prompt() {
    const NAME: &str = "mcp_hostile_evil__0_pwned___2J_txt_exe";
    let world = World::mcp(
        vec![tool(NAME, json!({"text": "hi"})), text("called it")],
        |_| fake("hostile", "hostile", ""),
    )
    .await;
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut screen = crate::support::pty::Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", &project, "--yolo"],
        world.project.path(),
        &[
            ("TERM", "xterm-256color"),
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", KEY),
            ("AGENT_YOLO", ""),
        ],
    );
    screen.wait_for("MCP 1/1");
    screen.submit("call the tool");
    screen.wait_for_all(&["called it", "MCP server hostile changed its tools"]);
    // The server's own name for the tool is on screen, made visible.
    screen.wait_for("Tool: \"evil");
    let shown = screen.text();
    assert!(
        shown.contains(r#"Tool: "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}txt.exe""#),
        "{shown}"
    );
    screen.submit("/mcp");
    screen.wait_for("hostile: running");
    screen.submit("/quit");
    let (code, bytes) = screen.wait_exit();
    assert_eq!(code, 0);
    let raw = String::from_utf8_lossy(&bytes);
    for needle in ["\u{1b}]0;pwned", "\u{1b}[2J", "\u{202e}", "pwned\u{7}"] {
        assert!(!raw.contains(needle), "{needle:?} reached the terminal raw");
    }
    let bodies = world.llm.bodies();
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    let system = first["messages"][0].to_string();
    assert!(!system.contains("IGNORE PREVIOUS"), "{system}");
    let described = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == NAME)
        .unwrap();
    assert!(
        described["function"]["description"]
            .as_str()
            .unwrap()
            .contains("IGNORE PREVIOUS INSTRUCTIONS")
    );
}

/// A server reached over streamable HTTP (server-everything in its
/// `streamableHttp` mode on a loopback port): its tools round-trip, the
/// destination shown is its address, and its headers (credentials) never
/// reach a request body, the session file, the log or the screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_round_trips_and_its_headers_never_leave() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new("node")
        .arg(servers().join("server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server never listened"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    // A second address that only records what arrives, to see the headers
    // go out (and the server fail to start without echoing them).
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let probe_url = format!(
        "http://127.0.0.1:{}/mcp",
        probe.local_addr().unwrap().port()
    );
    let recorded = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut stream, _) = probe.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&request).to_lowercase()
    });
    let world = World::mcp(
        vec![
            tool("mcp_remote_echo", json!({"message": "over http"})),
            text("done"),
        ],
        |_| {
            let headers = format!(
                "headers = {{ Authorization = \"$TEST_MCP_TOKEN\", X-Literal = {LITERAL:?} }}"
            );
            format!(
                "[mcp.servers.remote]\nurl = {url:?}\n{headers}\n[mcp.servers.probe]\nurl = {probe_url:?}\nstartup_timeout_secs = 2\n{headers}\n"
            )
        },
    )
    .await;
    let (events, stderr, out) = world.print("go", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        results(&events),
        [("completed".to_string(), "Echo: over http".to_string())]
    );
    assert!(
        stderr.contains(&format!("Destination: \"{url}\"")),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP server probe failed to start"),
        "{stderr}"
    );
    let request = recorded.await.unwrap();
    assert!(
        request.contains(&format!("authorization: {}", TOKEN.to_lowercase()))
            && request.contains(&format!("x-literal: {}", LITERAL.to_lowercase())),
        "the headers were not sent: {request}"
    );
    // Every file mino wrote (config.toml is the user's own).
    let written: Vec<PathBuf> = walk(world.home.path())
        .into_iter()
        .filter(|f| !f.ends_with("config.toml"))
        .collect();
    assert!(
        written
            .iter()
            .any(|f| f.to_string_lossy().contains("sessions"))
    );
    for secret in [TOKEN, LITERAL] {
        for body in world.llm.bodies() {
            assert!(!body.contains(secret), "a header reached the model");
        }
        for file in &written {
            let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).to_string();
            assert!(!text.contains(secret), "a header is in {}", file.display());
        }
        assert!(!stderr.contains(secret));
    }
    server.kill().await.unwrap();
}

/// The dialog shows an MCP call's arguments as a block of pretty JSON, its
/// own lines under `Arguments:`, scrolled with the arrow keys; rejecting it
/// still sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dialog_shows_long_arguments_as_a_block_that_scrolls() {
    let mut arguments = serde_json::Map::new();
    arguments.insert("message".into(), json!("first of many"));
    for i in 0..40 {
        arguments.insert(format!("key_{i:02}"), json!(format!("value {i}")));
    }
    let world = World::mcp(
        vec![
            tool("mcp_everything_echo", Value::Object(arguments)),
            text("nothing was sent"),
        ],
        |_| everything("everything", ""),
    )
    .await;
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut screen = crate::support::pty::Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", &project],
        world.project.path(),
        &[
            ("TERM", "xterm-256color"),
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", KEY),
            ("AGENT_YOLO", ""),
        ],
    );
    screen.wait_for("MCP 1/1");
    screen.submit("echo a lot");
    let shown = screen.wait_for_all(&[
        "mcp_everything_echo wants to call everything",
        "Arguments:",
        r#""message": "first of many","#,
        "↑↓ scroll",
        "keys armed",
    ]);
    assert!(!shown.contains(r#""key_39""#), "{shown}");
    for _ in 0..60 {
        screen.send(b"\x1b[B");
    }
    screen.wait_for(r#""key_39": "value 39""#);
    screen.send(b"n\r");
    screen.wait_for("nothing was sent");
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
}

/// A server that floods its stderr (30 MiB) and writes lines that are not
/// JSON, and whose tool answers with 50 MiB: mino keeps working, the model
/// gets the answer capped like bash's output, and the log does not take
/// the flood. A server whose answer is over the 64 MiB a message may take
/// is stopped at once with that reason, never left waiting for the tool
/// timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_server_and_huge_results_leave_mino_working() {
    let world = World::mcp(
        vec![
            tool("mcp_flood_big", json!({})),
            tool("mcp_flood_small", json!({})),
            tool("mcp_huge_big", json!({})),
            text("survived"),
        ],
        |_| {
            format!(
                "{}{}",
                fake("flood", "flood", "tool_timeout_secs = 100"),
                fake(
                    "huge",
                    "flood",
                    "tool_timeout_secs = 100\nenv = { FAKE_FLOOD_MB = \"0\", FAKE_BIG_MB = \"70\" }"
                )
            )
        },
    )
    .await;
    let (events, stderr, out) = world.print("go", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0].0, "completed");
    assert!(results[0].1.starts_with("yyyy"));
    assert!(
        results[0].1.contains("bytes of output left out"),
        "not capped"
    );
    assert!(results[0].1.len() < 200 * 1024, "{}", results[0].1.len());
    assert_eq!(
        results[1],
        ("completed".to_string(), "small answer".to_string())
    );
    assert_eq!(results[2].0, "error");
    assert!(
        results[2].1.contains("MCP server huge") && !results[2].1.contains("tool_timeout_secs"),
        "{}",
        results[2].1
    );
    assert!(
        stderr.contains("MCP server huge stopped: it sent a message longer than 64 MiB"),
        "{stderr}"
    );
    let logged: u64 = walk(&world.home.path().join("logs"))
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(logged < 4 * 1024 * 1024, "the log took {logged} bytes");
    for body in world.llm.bodies() {
        assert!(
            body.len() < 1024 * 1024,
            "a request of {} bytes",
            body.len()
        );
    }
}

/// A credential in a server's `args` is written as `$NAME`: the server gets
/// the value, the destination shows the reference, and a tool that echoes
/// its arguments back has the value redacted before anything sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_in_args_is_a_reference_and_never_shown() {
    let world = World::mcp(vec![tool("mcp_echoer_argv", json!({})), text("done")], |_| {
        format!(
            "[mcp.servers.echoer]\ncommand = \"node\"\nargs = [{:?}, \"argv\", \"--token\", \"$TEST_MCP_TOKEN\"]\n",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/mcp/fake-server.mjs")
                .display()
                .to_string()
        )
    })
    .await;
    let (events, stderr, out) = world.print("go", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0]
            .1
            .starts_with("--token [redacted: mcp.servers.echoer.args[3]]"),
        "{results:?}"
    );
    assert!(
        stderr.contains("argv --token '$TEST_MCP_TOKEN'"),
        "{stderr}"
    );
    assert!(!stderr.contains(TOKEN));
    for body in world.llm.bodies() {
        assert!(!body.contains(TOKEN), "the token reached the model");
    }
    assert!(!world.home_text().contains(TOKEN));
}

/// A deferred hub starts no server process before `begin` (the full screen
/// calls it after its first frame), and starts them at once after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_hub_starts_its_servers_only_after_begin() {
    use mino::config::McpServer;
    use mino::mcp::{HubConfig, McpHub};
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let server = McpServer {
        command: "sh".into(),
        args: vec![
            "-c".into(),
            format!("echo started > '{}'; sleep 30", marker.display()),
        ],
        startup_timeout: Duration::from_secs(2),
        ..McpServer::default()
    };
    let servers = BTreeMap::from([("late".to_string(), server)]);
    let (notices, _rx) = tokio::sync::mpsc::unbounded_channel();
    let hub = McpHub::start(
        HubConfig {
            servers: &servers,
            project_dir: dir.path(),
            hidden_env: Vec::new(),
            output_limit: 1024,
            guard: Some(PathBuf::from(env!("CARGO_BIN_EXE_mino"))),
            deferred: true,
            questions: None,
            home: None,
        },
        notices,
    );
    // Long enough for a server that was started to have written its marker.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!marker.exists(), "a deferred server started before begin");
    assert_eq!(hub.status().starting, 1);
    hub.begin();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the server never started after begin"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    hub.shutdown();
}
