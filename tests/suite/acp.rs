//! `mino acp` driven by a real ACP client (the official TypeScript SDK at
//! the version pinned in tests/node, installed by scripts/node-deps) against
//! a loopback model service: prompts with streamed chunks, permission
//! requests with the four answers, cancel, protected reads, a client that
//! answers `cancelled` or goes away mid-question, the editor's mode
//! selector, loading a saved session, and nothing but protocol messages on
//! stdout, checked byte for byte.

use std::path::{Path, PathBuf};

use crate::support::llm::{Reply, text, tool};
use crate::support::world::{SECRET, World};
use serde_json::{Value, json};

fn node_client() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
    assert!(
        dir.join("node_modules/@agentclientprotocol/sdk").is_dir(),
        "the ACP test client is not installed: run scripts/node-deps (scripts/test does), which needs node and npm"
    );
    dir.join("acp_client.mjs")
}

/// What one client run saw.
pub(super) struct Run {
    pub(super) log: Vec<Value>,
    pub(super) exit_code: Option<i64>,
    /// What the client failed with (a request answered with an error).
    failure: Option<String>,
}

impl Run {
    pub(super) fn events(&self, kind: &str) -> Vec<&Value> {
        self.log.iter().filter(|e| e["event"] == kind).collect()
    }

    pub(super) fn updates(&self, kind: &str) -> Vec<&Value> {
        self.log
            .iter()
            .filter(|e| e["event"] == "update" && e["update"]["sessionUpdate"] == kind)
            .map(|e| &e["update"])
            .collect()
    }

    pub(super) fn permissions(&self) -> Vec<&Value> {
        self.events("permission")
    }

    fn stops(&self) -> Vec<String> {
        self.events("stop")
            .iter()
            .map(|e| e["stopReason"].as_str().unwrap().to_string())
            .collect()
    }

    fn agent_text(&self) -> String {
        self.updates("agent_message_chunk")
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap_or_default())
            .collect()
    }

    /// Every text a tool call update carried.
    fn call_texts(&self) -> String {
        self.updates("tool_call_update")
            .iter()
            .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["content"]["text"].as_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Checks the agent's raw stdout byte for byte: UTF-8, newline-terminated
/// lines, each one JSON-RPC 2.0 message and nothing else.
fn only_protocol(raw: &[u8]) {
    let text = std::str::from_utf8(raw).expect("stdout is UTF-8");
    assert!(!text.is_empty(), "nothing on stdout");
    assert!(text.ends_with('\n'), "stdout does not end a line: {text:?}");
    for line in text[..text.len() - 1].split('\n') {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a line on stdout is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        let keys: Vec<&String> = message.as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|k| ["jsonrpc", "id", "method", "params", "result", "error"]
                    .contains(&k.as_str())),
            "not a JSON-RPC message: {line}"
        );
        assert_eq!(
            serde_json::to_string(&message).unwrap().len(),
            line.len(),
            "{line}"
        );
    }
}

impl World {
    async fn acp(replies: Vec<Reply>) -> Self {
        World::with("openai-chat", replies, "").await
    }

    /// Runs the client with `steps` against `mino acp` in this world.
    pub(super) async fn client(&self, steps: Value, extra: Value) -> Run {
        let run = self.client_may_fail(steps, extra).await;
        assert!(run.failure.is_none(), "client failed: {:?}", run.failure);
        run
    }

    /// As `client`, for a run whose requests may be answered with errors.
    async fn client_may_fail(&self, steps: Value, extra: Value) -> Run {
        let raw_path = self.home.path().join("acp-stdout.bin");
        let mut plan = json!({
            "command": [env!("CARGO_BIN_EXE_mino"), "acp"],
            "env": {
                "MINO_HOME": self.home.path(),
                "OPENAI_API_KEY": "test",
                "AGENT_YOLO": "",
            },
            "cwd": self.project.path(),
            "rawStdout": raw_path,
            "steps": steps,
        });
        if let (Some(plan), Some(extra)) = (plan.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                plan.insert(k.clone(), v.clone());
            }
        }
        let script = node_client();
        let output = tokio::task::spawn_blocking(move || {
            std::process::Command::new("node")
                .arg(script)
                .arg(plan.to_string())
                .output()
                .expect("node runs")
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "the client said no result ({e}): {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        only_protocol(&std::fs::read(&raw_path).unwrap());
        Run {
            log: result["log"].as_array().cloned().unwrap_or_default(),
            exit_code: result["exit"]["code"].as_i64(),
            failure: result["failure"].as_str().map(str::to_string),
        }
    }

    pub(super) fn new_session(&self) -> Value {
        json!({"new": self.project.path()})
    }

    fn exists(&self, name: &str) -> bool {
        self.project.path().join(name).exists()
    }
}

fn bash(command: &str) -> Reply {
    tool("bash", json!({"command": command}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_call_asks_with_four_options_and_reject_once_never_runs_it() {
    let world = World::acp(vec![
        bash("touch rejected.txt"),
        text("Not run, as you said."),
    ])
    .await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "make a file", "answers": ["reject_once"]}]),
            json!({}),
        )
        .await;
    let init = &run.events("initialized")[0]["response"];
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    assert_eq!(init["agentInfo"]["name"], "mino");

    let modes = &run.events("session")[0]["modes"];
    assert_eq!(modes["currentModeId"], "manual", "{modes}");
    assert_eq!(modes["availableModes"].as_array().unwrap().len(), 5);

    let asked = run.permissions();
    assert_eq!(asked.len(), 1, "{:#?}", run.log);
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let shown = asked[0]["toolCall"].to_string();
    assert!(
        shown.contains("Command: \\\"touch rejected.txt\\\""),
        "{shown}"
    );
    assert!(shown.contains("Working directory"), "{shown}");
    assert!(!world.exists("rejected.txt"), "a rejected call ran");

    let calls = run.updates("tool_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["kind"], "execute");
    assert_eq!(calls[0]["rawInput"]["command"], "touch rejected.txt");
    assert!(
        run.call_texts().contains("did not approve"),
        "{}",
        run.call_texts()
    );

    // The answer streams in more than one chunk.
    assert!(run.updates("agent_message_chunk").len() > 1);
    assert_eq!(run.agent_text(), "Not run, as you said.");
    assert_eq!(run.stops(), ["end_turn"]);
    assert_eq!(
        run.exit_code,
        Some(0),
        "mino exits cleanly when stdin closes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_lets_the_sessions_next_bash_call_run_without_a_request() {
    let world = World::acp(vec![
        bash("echo one > one.txt"),
        text("one done"),
        bash("echo two > two.txt"),
        text("two done"),
    ])
    .await;
    let run = world
        .client(
            json!([
                world.new_session(),
                {"prompt": "first", "answers": ["allow_always"]},
                {"prompt": "second", "answers": []},
            ]),
            json!({}),
        )
        .await;
    assert_eq!(run.permissions().len(), 1, "{:#?}", run.log);
    assert!(world.exists("one.txt") && world.exists("two.txt"));
    let texts = run.call_texts();
    assert!(
        texts.contains("[Tool: bash, allowed for this session]\nCommand: \"echo two > two.txt\""),
        "{texts}"
    );
    let statuses: Vec<&str> = run
        .updates("tool_call_update")
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert!(
        statuses.contains(&"in_progress") && statuses.contains(&"completed"),
        "{statuses:?}"
    );
    assert_eq!(run.stops(), ["end_turn", "end_turn"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_turn_stops_the_turn_at_once_and_the_next_prompt_works() {
    let world = World::acp(vec![Reply::Hang, text("still here")]).await;
    // The cancel must come after the first request reached the service
    // (else the next prompt is the one answered by the hang) and before
    // the service's 2 s first-byte timeout: a second leaves room on both
    // sides on a loaded machine.
    let run = world
        .client(
            json!([
                world.new_session(),
                {"prompt": "think forever", "cancelAfterMs": 1000},
                {"prompt": "again"},
            ]),
            json!({}),
        )
        .await;
    assert_eq!(run.stops(), ["cancelled", "end_turn"], "{:#?}", run.log);
    assert_eq!(run.agent_text(), "still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_question_closes_it_and_nothing_runs() {
    let world = World::acp(vec![bash("touch cancelled.txt"), text("unused")]).await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "go", "answers": ["cancel"]}]),
            json!({}),
        )
        .await;
    assert_eq!(run.permissions().len(), 1);
    assert_eq!(run.stops(), ["cancelled"], "{:#?}", run.log);
    assert!(!world.exists("cancelled.txt"));
    assert_eq!(
        world.llm.bodies().len(),
        1,
        "the turn ended at the question"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_answer_rejects_the_call() {
    let world = World::acp(vec![bash("touch answered.txt"), text("fine")]).await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "go", "answers": ["cancelled"]}]),
            json!({}),
        )
        .await;
    assert_eq!(run.permissions().len(), 1);
    assert!(!world.exists("answered.txt"));
    assert!(run.call_texts().contains("did not approve"));
    let bodies = world.llm.bodies();
    assert!(
        bodies[1].contains("The user did not approve this command."),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_question_rejects_and_mino_exits_cleanly() {
    let world = World::acp(vec![bash("touch gone.txt"), text("unused")]).await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "go", "answers": ["close"]}]),
            json!({}),
        )
        .await;
    assert_eq!(run.permissions().len(), 1);
    assert_eq!(run.events("closed").len(), 1);
    assert_eq!(run.exit_code, Some(0));
    assert!(!world.exists("gone.txt"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_read_is_denied_without_a_request() {
    let world = World::acp(vec![tool("read_file", json!({"path": ".env"})), text("ok")]).await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "read it"}]),
            json!({}),
        )
        .await;
    assert!(run.permissions().is_empty(), "{:#?}", run.log);
    let failed: Vec<&Value> = run
        .updates("tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:#?}", run.log);
    assert!(failed[0].to_string().contains(".env is a protected path"));
    assert!(!world.llm.bodies().iter().any(|b| b.contains(SECRET)));
    assert!(!run.log.iter().any(|e| e.to_string().contains(SECRET)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_mode_selector_changes_the_mode() {
    let world = World::acp(vec![bash("echo hi > bypassed.txt"), text("ran")]).await;
    let run = world
        .client(
            json!([world.new_session(), {"setMode": "bypass"}, {"prompt": "go"}]),
            json!({}),
        )
        .await;
    assert!(run.permissions().is_empty(), "{:#?}", run.log);
    let changed = run.updates("current_mode_update");
    assert_eq!(changed.len(), 1, "{:#?}", run.log);
    assert_eq!(changed[0]["currentModeId"], "bypass");
    assert!(world.exists("bypassed.txt"));
    assert!(
        run.call_texts()
            .contains("[Tool: bash, allowed without confirmation in bypass mode]"),
        "{}",
        run.call_texts()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_session_loads_with_its_conversation() {
    let world = World::acp(vec![text("hello back")]).await;
    let first = world
        .client(json!([world.new_session(), {"prompt": "hello"}]), json!({}))
        .await;
    let id = first.events("session")[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let second = world
        .client(
            json!([{"load": id, "cwd": world.project.path()}]),
            json!({}),
        )
        .await;
    assert_eq!(second.events("loaded").len(), 1, "{:#?}", second.log);
    let said: Vec<&str> = second
        .updates("user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, ["hello"]);
    assert_eq!(second.agent_text(), "hello back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_question_carries_its_location_and_its_diff() {
    let world = World::acp(vec![
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "# Relase notes", "new_string": "# Release notes"}),
        ),
        text("fixed"),
    ])
    .await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "fix the title", "answers": ["allow_once"]}]),
            json!({}),
        )
        .await;
    let asked = run.permissions();
    assert_eq!(asked.len(), 1, "{:#?}", run.log);
    let call = &asked[0]["toolCall"];
    let notes = world.project.path().join("notes.md");
    assert_eq!(
        call["locations"][0]["path"],
        notes.to_str().unwrap(),
        "{call}"
    );
    assert_eq!(call["locations"][0]["line"], 1, "{call}");
    let diff = call["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff content: {call}"));
    assert_eq!(diff["path"], notes.to_str().unwrap());
    assert!(
        diff["oldText"]
            .as_str()
            .unwrap()
            .starts_with("# Relase notes\n"),
        "{diff}"
    );
    assert!(
        diff["newText"]
            .as_str()
            .unwrap()
            .starts_with("# Release notes\n"),
        "{diff}"
    );
    assert!(
        std::fs::read_to_string(&notes)
            .unwrap()
            .starts_with("# Release notes")
    );
}

/// The client's capabilities of an editor that serves its files.
fn editor_files(buffers: Value) -> Value {
    json!({
        "capabilities": {"fs": {"readTextFile": true, "writeTextFile": true}},
        "files": buffers,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_serves_files_is_read_after_the_decision_and_its_unsaved_buffer_is_seen() {
    let world = World::acp(vec![
        tool("read_file", json!({"path": "notes.md"})),
        tool("read_file", json!({"path": ".env"})),
        tool("read_file", json!({"path": "missing.md"})),
        text("read"),
    ])
    .await;
    let notes = world
        .project
        .path()
        .canonicalize()
        .unwrap()
        .join("notes.md");
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "read the notes"}]),
            editor_files(json!({ notes.to_str().unwrap(): "an unsaved line in the editor\n" })),
        )
        .await;
    let reads = run.events("read_text_file");
    assert_eq!(
        reads.len(),
        1,
        "only the file mino itself may read is asked for: {:#?}",
        run.log
    );
    assert_eq!(reads[0]["params"]["path"], notes.to_str().unwrap());
    let bodies = world.llm.bodies();
    let after_read = &bodies[1];
    assert!(
        after_read.contains("an unsaved line in the editor"),
        "{after_read}"
    );
    assert!(!after_read.contains("Relase notes"), "{after_read}");
    assert!(!bodies.iter().any(|b| b.contains(SECRET)));
    assert!(
        bodies[2].contains(".env is a protected path"),
        "{}",
        bodies[2]
    );
    assert!(bodies[3].contains("missing.md"), "{}", bodies[3]);
    assert_eq!(run.stops(), ["end_turn"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_edits_go_through_the_editor_after_the_decision_and_protected_ones_never_reach_it()
 {
    let world = World::acp(vec![
        tool("write_file", json!({"path": "new/hello.txt", "content": "hello\n"})),
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "# Relase notes", "new_string": "# Release notes"}),
        ),
        tool("write_file", json!({"path": ".env", "content": "STOLEN=1\n"})),
        tool("write_file", json!({"path": "rejected.txt", "content": "no\n"})),
        text("done"),
    ])
    .await;
    let root = world.project.path().canonicalize().unwrap();
    let run = world
        .client(
            json!([world.new_session(), {
                "prompt": "write and edit",
                "answers": ["allow_once", "allow_once", "reject_once"],
            }]),
            editor_files(json!({})),
        )
        .await;
    assert_eq!(run.permissions().len(), 3, "{:#?}", run.log);
    let writes = run.events("write_text_file");
    let paths: Vec<&str> = writes
        .iter()
        .map(|w| w["params"]["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            root.join("new/hello.txt").to_str().unwrap(),
            root.join("notes.md").to_str().unwrap(),
        ],
        "only decided, allowed writes reach the editor: {:#?}",
        run.log
    );
    assert_eq!(writes[0]["params"]["content"], "hello\n");
    assert!(
        writes[1]["params"]["content"]
            .as_str()
            .unwrap()
            .starts_with("# Release notes\n")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("new/hello.txt")).unwrap(),
        "hello\n"
    );
    assert!(
        std::fs::read_to_string(root.join(".env"))
            .unwrap()
            .contains(SECRET)
    );
    assert!(!world.exists("rejected.txt"));
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("Created new/hello.txt"), "{}", bodies[1]);
    assert!(
        bodies[2].contains("Edited notes.md at line 1"),
        "{}",
        bodies[2]
    );
    assert!(
        bodies[3].contains(".env is a protected path"),
        "{}",
        bodies[3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_since_inspection_is_not_written_through_the_editor() {
    // The editor's read shows a buffer, but the write is bound to what mino
    // inspected on disk: a change on disk between the question and the
    // answer refuses the write before the editor is asked.
    let world = World::acp(vec![
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "# Relase notes", "new_string": "# Release notes"}),
        ),
        text("done"),
    ])
    .await;
    let notes = world.project.path().join("notes.md");
    let run = world
        .client(
            json!([world.new_session(), {
                "prompt": "edit",
                "answers": ["allow_once"],
                "beforeAnswer": {"write": notes, "content": "# Relase notes\nchanged meanwhile\n"},
            }]),
            editor_files(json!({})),
        )
        .await;
    assert_eq!(run.permissions().len(), 1, "{:#?}", run.log);
    assert!(run.events("write_text_file").is_empty(), "{:#?}", run.log);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "# Relase notes\nchanged meanwhile\n"
    );
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("changed"), "{}", bodies[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_a_protected_directory_or_at_the_root_is_refused() {
    let world = World::acp(vec![
        tool(
            "write_file",
            json!({"path": "authorized_keys", "content": "ssh-ed25519 AAAA attacker\n"}),
        ),
        text("written"),
    ])
    .await;
    let ssh = world.project.path().join("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    for cwd in [ssh.clone(), std::path::PathBuf::from("/")] {
        let run = world
            .client_may_fail(
                json!([{"new": cwd}, {"prompt": "add my key", "answers": []}]),
                json!({}),
            )
            .await;
        let failure = run.failure.clone().unwrap_or_default();
        assert!(
            failure.contains("cannot be a project"),
            "{} was accepted: {failure} {:#?}",
            cwd.display(),
            run.log
        );
        assert!(run.events("session").is_empty(), "{:#?}", run.log);
    }
    assert!(!ssh.join("authorized_keys").exists());
    assert!(world.llm.bodies().is_empty());
}

/// A `resource` content block of the file `path`, holding `text`.
fn embedded(path: &std::path::Path, text: &str) -> Value {
    json!({"type": "resource", "resource": {
        "uri": format!("file://{}", path.display()),
        "mimeType": "text/plain",
        "text": text,
    }})
}

fn prompt_errors(run: &Run) -> String {
    run.events("prompt_error")
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_protected_resource_is_refused_and_never_reaches_the_model() {
    let world = World::acp(vec![text("unused")]).await;
    let env = world.project.path().join(".env");
    // The same file through a link with an ordinary name.
    let link = world.project.path().join("settings.txt");
    std::os::unix::fs::symlink(".env", &link).unwrap();
    for path in [env, link] {
        let secret = std::fs::read_to_string(&path).unwrap();
        let run = world
            .client(
                json!([world.new_session(), {"prompt": "look at this", "blocks": [embedded(&path, &secret)]}]),
                json!({}),
            )
            .await;
        let errors = prompt_errors(&run);
        assert!(
            errors.contains("protected path"),
            "{}: {:#?}",
            path.display(),
            run.log
        );
    }
    assert!(world.llm.bodies().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_resource_is_redacted_of_the_projects_secrets() {
    let world = World::acp(vec![text("seen")]).await;
    let notes = world.project.path().join("notes.md");
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "look at this", "blocks": [embedded(&notes, &format!("pasted: {SECRET}"))]}]),
            json!({}),
        )
        .await;
    assert_eq!(run.stops(), ["end_turn"], "{:#?}", run.log);
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1);
    assert!(!bodies[0].contains(SECRET), "{}", bodies[0]);
    assert!(bodies[0].contains("[redacted: TOKEN]"), "{}", bodies[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_past_prompt_bytes_is_refused_with_the_setting() {
    let world = World::with(
        "openai-chat",
        vec![text("short one")],
        "\n[limits]\nprompt_bytes = 1024\n",
    )
    .await;
    let run = world
        .client(
            json!([
                world.new_session(),
                {"prompt": "x".repeat(2000)},
                {"prompt": "a short one"},
            ]),
            json!({}),
        )
        .await;
    let errors = prompt_errors(&run);
    assert!(errors.contains("[limits] prompt_bytes"), "{:#?}", run.log);
    assert_eq!(run.stops(), ["end_turn"], "{:#?}", run.log);
    assert_eq!(world.llm.bodies().len(), 1);
}
