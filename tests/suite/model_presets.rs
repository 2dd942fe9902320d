//! Provider presets and `/model` per session, end to end with the built
//! binary: the settings' service speaks openai-chat, a `[providers.other]`
//! preset is a second loopback server speaking Anthropic's wire. `/model
//! other` sends the next prompt there; the session's file records it, so
//! `--resume` and `-c` come back to it and `/new` starts on the settings'
//! model; a preset gone from the settings is said and the settings' model
//! used; a preset whose key variable is unset is refused before anything
//! changes; a server with a small window chooses the small profile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::{Llm, text, tool};
use crate::support::run::mino;
use crate::support::world::World;

/// The preset table for a server at `url` of `provider`'s wire.
fn preset(name: &str, provider: &str, url: &str, model: &str) -> String {
    format!(
        "\n[providers.{name}]\nprovider = \"{provider}\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\napi_key_env = \"OPENAI_API_KEY\"\nmax_retries = 0\n"
    )
}

/// `mino --line` with `input` piped, and `args` before: (stdout, stderr).
async fn line(world: &World, args: &[&str], input: &str) -> (String, String) {
    let mut all = args.to_vec();
    all.push("--line");
    let out = mino(world, &all, Some(input.as_bytes())).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// The session id the banner names.
fn session_id(out: &str) -> String {
    let at = out.find("Session: ").expect(out) + "Session: ".len();
    out[at..].split_whitespace().next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_to_a_preset_holds_for_the_session_and_comes_back_with_it() {
    let other = Llm::start(
        "anthropic",
        vec![text("ANSWER-FROM-OTHER"), text("AGAIN-FROM-OTHER")],
    )
    .await;
    let world = World::with(
        "openai-chat",
        vec![text("NEW-FROM-DEFAULT")],
        &preset("other", "anthropic", &other.base_url(), "claude-other"),
    )
    .await;
    let (out, err) = line(&world, &[], "/model other\nFIRST-PROMPT\n").await;
    assert!(
        out.contains("Model for this session from now on: other/claude-other (anthropic at"),
        "{out}\n{err}"
    );
    assert!(out.contains("Model: other/claude-other."), "{out}");
    assert!(out.contains("ANSWER-FROM-OTHER"), "{out}\n{err}");
    let id = session_id(&out);
    let sent = other.bodies();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("FIRST-PROMPT"), "{}", sent[0]);
    assert!(
        sent[0].contains("\"model\":\"claude-other\""),
        "{}",
        sent[0]
    );
    assert!(
        world.llm.bodies().is_empty(),
        "nothing went to the settings' service"
    );

    // The session's file records the switch; resuming it comes back there.
    let file = world.home.path().join(format!("sessions/{id}.jsonl"));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(
        saved.contains(r#"{"type":"model","model":"claude-other","preset":"other"}"#),
        "{saved}"
    );
    let (out, _) = line(&world, &["--resume", &id], "SECOND-PROMPT\n").await;
    assert!(out.contains("Model: other/claude-other."), "{out}");
    assert!(out.contains("AGAIN-FROM-OTHER"), "{out}");
    let sent = other.bodies();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[1].contains("FIRST-PROMPT") && sent[1].contains("SECOND-PROMPT"));
    assert!(world.llm.bodies().is_empty());

    // A new session starts on the settings' model.
    let (out, _) = line(&world, &["-c"], "/new\nTHIRD-PROMPT\n").await;
    assert!(out.contains("NEW-FROM-DEFAULT"), "{out}");
    let sent = world.llm.bodies();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("THIRD-PROMPT"), "{}", sent[0]);
    assert!(sent[0].contains("\"model\":\"test-model\""), "{}", sent[0]);
    assert_eq!(other.bodies().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_whose_preset_is_gone_says_so_and_uses_the_settings_model() {
    let other = Llm::start("anthropic", vec![text("FROM-OTHER")]).await;
    let world = World::with(
        "openai-chat",
        vec![text("FROM-DEFAULT")],
        &preset("other", "anthropic", &other.base_url(), "claude-other"),
    )
    .await;
    let (out, _) = line(&world, &[], "/model other\nFIRST\n").await;
    let id = session_id(&out);
    let settings = world.home.path().join("config.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    let without = &text[..text.find("\n[providers.other]").unwrap()];
    std::fs::write(&settings, without).unwrap();
    let (out, err) = line(&world, &["--resume", &id], "SECOND\n").await;
    let both = format!("{out}\n{err}");
    assert!(
        both.contains(&format!(
            "Session {id} was on other/claude-other, which cannot be used now: preset other is not defined in {} any more. It continues on test-model, the settings' model.",
            settings.display()
        )),
        "{both}"
    );
    assert!(out.contains("Model: test-model."), "{out}");
    assert!(out.contains("FROM-DEFAULT"), "{out}");
    let sent = world.llm.bodies();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("FIRST") && sent[0].contains("SECOND"));
    assert_eq!(other.bodies().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_name_or_a_preset_without_its_key_changes_nothing() {
    let world = World::with(
        "openai-chat",
        vec![text("STILL-DEFAULT")],
        "models = [\"second-model\"]\n\n[providers.remote]\nprovider = \"anthropic\"\nbase_url = \"http://192.0.2.1/v1\"\nmodel = \"claude-remote\"\nmodels = [\"claude-remote\", \"claude-other\"]\napi_key_env = \"MINO_TEST_KEY_NEVER_SET\"\n",
    )
    .await;
    let settings = world.home.path().join("config.toml");
    let (out, err) = line(&world, &[], "/model remote\n/model nothing-such\nPROMPT\n").await;
    assert!(
        err.contains(&format!(
            "/model remote: the variable MINO_TEST_KEY_NEVER_SET is not set, so preset remote's requests would go out without an API key; export it (the name comes from [providers.remote] api_key_env in {})",
            settings.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "/model nothing-such: not a model this session can switch to; accepted: test-model, second-model, served-model, remote/claude-remote, remote/claude-other, remote ("
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!("in {})", settings.display())),
        "{err}"
    );
    assert!(out.contains("STILL-DEFAULT"), "{out}");
    assert!(!out.contains("Model for this session from now on"), "{out}");
    let sent = world.llm.bodies();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].contains("\"model\":\"test-model\""), "{}", sent[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_to_a_small_window_chooses_the_small_profile_and_back() {
    let small = Llm::start_with_props(
        "openai-chat",
        vec![tool("final_answer", json!({"answer": "SMALL-ANSWER"}))],
        json!({"default_generation_settings": {"n_ctx": 4096}}),
    )
    .await;
    let world = World::with(
        "openai-chat",
        vec![text("BIG-ANSWER")],
        &preset("tiny", "openai-chat", &small.base_url(), "tiny-model"),
    )
    .await;
    let (out, err) = line(
        &world,
        &[],
        "/model tiny\nSMALL-PROMPT\n/model test-model\nBIG-PROMPT\n",
    )
    .await;
    assert!(
        out.contains("context window 4096 tokens (reported by the server: llama.cpp /props n_ctx); profile: small."),
        "{out}\n{err}"
    );
    assert!(out.contains("SMALL-ANSWER"), "{out}\n{err}");
    assert!(out.contains("BIG-ANSWER"), "{out}\n{err}");
    let sent: Vec<Value> = small
        .bodies()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["tool_choice"], "required", "{}", sent[0]);
    assert!(sent[0].to_string().contains("final_answer"));
    let back: Value = serde_json::from_str(&world.llm.bodies()[0]).unwrap();
    assert!(back.get("tool_choice").is_none(), "{back}");
    assert!(!back.to_string().contains("final_answer"), "{back}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_and_the_picker_list_presets_models_and_the_status_bar_names_the_switch() {
    let other = Llm::start("anthropic", vec![text("PICKED-OTHER")]).await;
    let world = World::with(
        "openai-chat",
        vec![],
        &format!(
            "{}models = [\"claude-other\", \"claude-third\"]\n",
            preset("other", "anthropic", &other.base_url(), "claude-other")
        ),
    )
    .await;
    let mut screen = world.full_screen();
    // The settings' names complete after `/model ` from the start.
    screen.send(b"/model other/claude-t");
    screen.wait_until("the completion of a preset's model", |s| {
        s.contains("other/claude-third") && !s.contains("/model other/claude-third")
    });
    screen.send(b"\t");
    screen.wait_for("/model other/claude-third");
    screen.send(&[0x15]);
    screen.wait_until("the input emptied", |s| {
        !s.contains("/model other/claude-third")
    });
    screen.submit("/model");
    let picker = screen.wait_for("other/claude-third");
    assert!(picker.contains("other/claude-other"), "{picker}");
    assert!(picker.contains("Model for this session"), "{picker}");
    screen.esc();
    screen.wait_until("the picker closed", |s| !s.contains("Enter switches"));
    screen.submit("/model other/claude-third");
    screen.wait_until("the switch in the status bar", |s| {
        status_bar(s).contains("other/claude-third")
    });
    screen.submit("hello");
    screen.wait_for("PICKED-OTHER");
    quit(&mut screen);
    let sent = other.bodies();
    assert!(
        sent.iter()
            .any(|b| b.contains("\"model\":\"claude-third\"")),
        "{sent:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presets_key_is_hidden_from_commands_and_redacted_like_the_settings_key() {
    const KEY: &str = "sk-preset-key-7f3c1a9e2b";
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "bash",
                json!({"command": "printf 'seen:%s.\\n' \"$MINO_TEST_PRESET_KEY\"; cat key.txt"}),
            ),
            text("done"),
        ],
        "\n[providers.remote]\nprovider = \"anthropic\"\nbase_url = \"https://example.invalid/v1\"\napi_key_env = \"MINO_TEST_PRESET_KEY\"\n",
    )
    .await;
    std::fs::write(world.project.path().join("key.txt"), format!("k {KEY}\n")).unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mino"));
    command
        .args(["-p", "look", "--yolo", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "test")
        .env("MINO_TEST_PRESET_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    assert!(bodies[1].contains("seen:."), "{}", bodies[1]);
    assert!(!bodies[1].contains(KEY), "{}", bodies[1]);
    assert!(
        bodies[1].contains("[redacted: MINO_TEST_PRESET_KEY]"),
        "{}",
        bodies[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presets_user_name_and_password_in_its_url_are_never_shown() {
    let other = Llm::start("openai-chat", vec![text("CRED-ANSWER")]).await;
    let with_login = other
        .base_url()
        .replacen("http://", "http://alice:hunter2PASS@", 1);
    let world = World::with(
        "openai-chat",
        vec![text("UNUSED")],
        &preset("cred", "openai-chat", &with_login, "cred-model"),
    )
    .await;
    let (out, err) = line(&world, &[], "/model cred\nPROMPT\n").await;
    let shown = other.base_url();
    assert!(
        out.contains(&format!(
            "Model for this session from now on: cred/cred-model (openai-chat at {shown})"
        )),
        "{out}\n{err}"
    );
    assert!(out.contains("CRED-ANSWER"), "{out}\n{err}");
    // Resumed, the switch is said again: still without the login.
    let id = session_id(&out);
    let (again, again_err) = line(&world, &["--resume", &id], "").await;
    assert!(
        again.contains("cred/cred-model (openai-chat at"),
        "{again}\n{again_err}"
    );
    for text in [&out, &err, &again, &again_err] {
        assert!(
            !text.contains("hunter2PASS") && !text.contains("alice"),
            "{text}"
        );
    }
}
