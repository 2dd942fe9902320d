//! What real models do to a session, against the built binary and a
//! loopback model service: answers cut off at the output limit, arguments
//! that are not JSON, per-request extra fields, and what `stream-json`
//! reports about each request.

use std::process::Output;

use crate::support::llm::{Reply, text, tool};
use crate::support::stream::records;
use crate::support::world::World;
use serde_json::{Value, json};

pub(super) async fn run(world: &World, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(args)
        .arg("--cd")
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        // Long, so redacting it cannot touch the words of a service's error.
        .env("OPENAI_API_KEY", "sk-loopback-9e3b7c1d")
        .env("ANTHROPIC_API_KEY", "sk-loopback-9e3b7c1d")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

pub(super) async fn print(
    world: &World,
    prompt: &str,
    extra: &[&str],
) -> (Vec<Value>, String, Output) {
    let mut args = vec!["-p", prompt, "--output-format", "stream-json"];
    args.extend_from_slice(extra);
    let out = run(world, &args).await;
    let events = records(&out.stdout);
    (
        events,
        String::from_utf8_lossy(&out.stderr).to_string(),
        out,
    )
}

pub(super) fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

pub(super) fn session_of(events: &[Value]) -> String {
    of_type(events, "session")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(super) fn bodies(world: &World) -> Vec<Value> {
    world
        .llm
        .bodies()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect()
}

#[tokio::test]
async fn a_length_stop_is_reported_in_stream_json() {
    for provider in ["openai-chat", "openai-responses", "anthropic"] {
        let world = World::with(provider, vec![Reply::Length("The answer is".into())], "").await;
        let (events, stderr, out) = print(&world, "explain", &[]).await;
        assert!(
            !out.status.success(),
            "{provider}: a cut answer is not a completed turn"
        );
        let end = of_type(&events, "turn_end")[0];
        assert_eq!(end["stop"], "length", "{provider}: {events:?}");
        let usage = of_type(&events, "usage");
        assert_eq!(usage.len(), 1, "{provider}");
        assert_eq!(usage[0]["finish_reason"], "length", "{provider}");
        assert_eq!(usage[0]["prompt_tokens"], 100, "{provider}");
        assert_eq!(usage[0]["completion_tokens"], 10, "{provider}");
        let notices = of_type(&events, "notice");
        assert!(
            notices.iter().any(|n| n["kind"] == "cut_off"
                && n["message"].as_str().unwrap().contains("max_output_tokens")),
            "{provider}: {notices:?} {stderr}"
        );
        assert_eq!(of_type(&events, "assistant")[0]["text"], "The answer is");
        // The default output cap went with the request: a quarter of the
        // default window is over 4,096, so 4,096.
        let body = &bodies(&world)[0];
        let cap = if provider == "openai-responses" {
            "max_output_tokens"
        } else {
            "max_tokens"
        };
        assert_eq!(body[cap], 4096, "{provider}: {body}");
    }
}

#[tokio::test]
async fn a_length_stop_shows_in_text_mode() {
    let world = World::with(
        "openai-chat",
        vec![Reply::Length("The answer is".into())],
        "",
    )
    .await;
    let out = run(&world, &["-p", "explain"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut off"), "{stderr}");
}

#[tokio::test]
async fn arguments_cut_off_mid_string_go_back_as_valid_json_and_the_session_resumes() {
    let cut = r#"{"command": "cat > notes.md <<'EOF'\n# Release notes\n- one deci"#;
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", Value::String(cut.into())),
            text("I will write it in parts."),
            text("Resumed."),
        ],
        "",
    )
    .await;
    let (events, stderr, out) = print(&world, "rewrite the notes", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = of_type(&events, "tool_result");
    assert_eq!(results[0]["status"], "error");
    let output = results[0]["output"].as_str().unwrap();
    assert!(
        output.contains("did not run") && output.contains("cut off"),
        "{output}"
    );
    let session = session_of(&events);
    // The raw text stays in the session log, and only there.
    let log = std::fs::read_to_string(
        world
            .home
            .path()
            .join("sessions")
            .join(format!("{session}.jsonl")),
    )
    .unwrap();
    assert!(log.contains("- one deci"), "the raw arguments are kept");

    let (events, stderr, out) = print(&world, "go on", &["--yolo", "--resume", &session]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(of_type(&events, "assistant")[0]["text"], "Resumed.");
    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 3);
    for body in &bodies[1..] {
        let call = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|m| m.get("tool_calls"))
            .expect("the call is in the history");
        let arguments = call[0]["function"]["arguments"].as_str().unwrap();
        assert_eq!(serde_json::from_str::<Value>(arguments).unwrap(), json!({}));
        assert!(!body.to_string().contains("- one deci"), "{body}");
    }
}

#[tokio::test]
async fn first_request_extra_body_goes_only_into_a_turn_s_first_request_and_extra_body_never_into_compaction()
 {
    let long = "OLD-DETAIL ".repeat(700);
    let world = World::with(
        "openai-chat",
        vec![
            text(&long),
            text("SUMMARY-OF-EARLIER-WORK"),
            tool("list_dir", json!({})),
            text("ok"),
        ],
        "context_window = 2000\nprofile = \"default\"\nextra_body = { temperature = 0.3 }\nfirst_request_extra_body = { tool_choice = \"required\" }\n[model.compaction]\nextra_body = { top_p = 0.5 }\nmax_output_tokens = 90\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "first", &[]).await;
    assert!(out.status.success(), "{stderr}");
    let session = session_of(&events);
    let (events, stderr, out) = print(&world, "second", &["--resume", &session]).await;
    assert!(out.status.success(), "{stderr}");
    assert!(
        of_type(&events, "notice")
            .iter()
            .any(|n| n["kind"] == "compaction"
                && n["message"].as_str().unwrap().contains("Summarised")),
        "{events:?}"
    );
    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 4, "{bodies:#?}");
    let [first, compaction, second_first, second_next] = &bodies[..] else {
        unreachable!()
    };
    assert_eq!(first["tool_choice"], "required");
    assert_eq!(first["temperature"], 0.3);
    assert_eq!(
        first["max_tokens"], 500,
        "a quarter of the 2,000-token window"
    );
    assert!(
        compaction
            .to_string()
            .contains("Summarise this conversation")
    );
    assert!(compaction.get("tool_choice").is_none(), "{compaction}");
    assert!(compaction.get("temperature").is_none(), "{compaction}");
    assert_eq!(compaction["top_p"], 0.5);
    assert_eq!(compaction["max_tokens"], 90);
    assert_eq!(second_first["tool_choice"], "required");
    assert!(second_next.get("tool_choice").is_none(), "{second_next}");
    assert_eq!(second_next["temperature"], 0.3);
}

#[tokio::test]
async fn a_cut_off_compaction_summary_is_not_accepted() {
    let long = "OLD-DETAIL ".repeat(200);
    let world = World::with(
        "openai-chat",
        vec![text(&long), Reply::Length("SUMMARY-CUT".into()), text("ok")],
        "context_window = 400\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "first", &[]).await;
    assert!(out.status.success(), "{stderr}");
    let session = session_of(&events);
    let (events, _stderr, _out) = print(&world, "second", &["--resume", &session]).await;
    let said = serde_json::to_string(&events).unwrap();
    assert!(said.contains("cut off at the output limit"), "{said}");
    let bodies = bodies(&world);
    assert!(
        !bodies[2].to_string().contains("SUMMARY-CUT"),
        "a cut summary never replaces history"
    );
}

/// OpenAI's own chat completions refuse `max_tokens` for its current
/// models; `[model] max_tokens_field` puts the cap where the service wants it.
#[tokio::test]
async fn a_service_that_refuses_max_tokens_gets_max_completion_tokens_when_set() {
    let llm = crate::support::llm::Llm::start_openai(vec![text("Hello from gpt.")]).await;
    let world = World::serving(
        "openai-chat",
        llm,
        "max_tokens_field = \"max_completion_tokens\"\n",
    );
    let (events, stderr, out) = print(&world, "hi", &[]).await;
    assert!(out.status.success(), "{stderr} {events:?}");
    assert_eq!(of_type(&events, "assistant")[0]["text"], "Hello from gpt.");
    let body = &bodies(&world)[0];
    assert_eq!(body["max_completion_tokens"], 4096, "{body}");
    assert!(body.get("max_tokens").is_none(), "{body}");
}

/// The same service and the default for a loopback address (`max_tokens`,
/// as llama.cpp, Ollama and vLLM read it): OpenAI's refusal is shown whole.
#[tokio::test]
async fn a_local_address_sends_max_tokens_by_default() {
    let llm = crate::support::llm::Llm::start_openai(vec![text("never sent")]).await;
    let world = World::serving("openai-chat", llm, "");
    let (events, stderr, out) = print(&world, "hi", &[]).await;
    assert!(!out.status.success(), "{stderr} {events:?}");
    let body = &bodies(&world)[0];
    assert_eq!(body["max_tokens"], 4096, "{body}");
    assert!(body.get("max_completion_tokens").is_none(), "{body}");
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{stderr} {events:?}");
    let said = errors[0]["message"].as_str().unwrap();
    assert!(said.contains("HTTP 400"), "{said}");
    assert!(
        said.contains("Use 'max_completion_tokens' instead"),
        "{said}"
    );
    assert!(
        said.contains("set `[model] max_tokens_field = \"max_completion_tokens\"`"),
        "the error names the setting that sends what the service asks: {said}"
    );
}

/// `finish_reason` says what the service said: a response ended for its
/// tool calls is not a `stop`.
#[tokio::test]
async fn stream_json_reports_a_tool_calls_finish_as_sent() {
    for provider in ["openai-chat", "anthropic"] {
        let world = World::with(
            provider,
            vec![
                tool("read_file", json!({"path": "notes.md"})),
                text("Done."),
            ],
            "",
        )
        .await;
        let (events, stderr, out) = print(&world, "read the notes", &[]).await;
        assert!(out.status.success(), "{provider}: {stderr}");
        let usage = of_type(&events, "usage");
        let reasons: Vec<&Value> = usage.iter().map(|u| &u["finish_reason"]).collect();
        assert_eq!(
            reasons,
            [&json!("tool_calls"), &json!("stop")],
            "{provider}: {events:?}"
        );
    }
}
