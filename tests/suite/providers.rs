//! The model services against a real loopback HTTP server: what each wire
//! format sends (system, history, paired tool results, tools, extra fields,
//! auth), how its stream is assembled, and every fault (retries, status
//! errors, broken, malformed and stalled streams, cancellation), plus the
//! scripted provider. The API key must never show in an error text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::{End, Recorded, Reply, TestServer, data, named};
use futures_util::StreamExt;
use mino::model::ToolSpec;
use mino::model::config::Backoff;
use mino::model::{
    FinishReason, Item, ModelError, Provider, ProviderConfig, ProviderKind, Request, RequestKind,
    Response, ResultStatus, StreamEvent, ToolCall, build_provider,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-SECRET-4f1c9a";
const WIRES: [ProviderKind; 3] = [
    ProviderKind::OpenAiChat,
    ProviderKind::OpenAiResponses,
    ProviderKind::Anthropic,
];

fn config(kind: ProviderKind, server: &TestServer) -> ProviderConfig {
    let mut cfg = ProviderConfig::new(kind, "test-model");
    cfg.base_url = server.base_url.clone();
    cfg.api_key = Some(KEY.to_string());
    cfg.extras.extra_body = json!({"temperature": 0.25, "metadata": {"run": "t"}})
        .as_object()
        .unwrap()
        .clone();
    cfg.request_timeout = Duration::from_secs(10);
    cfg.connect_timeout = Duration::from_secs(2);
    cfg.max_retries = 2;
    // Retries are counted, never waited for.
    cfg.backoff = Backoff::fixed(Duration::ZERO);
    cfg
}

/// A hang guard: `what` must end within this (it ends at once when it
/// works; a bug that waits for a timeout or a backoff takes far longer).
const HANG: Duration = Duration::from_secs(10);

fn provider(cfg: &ProviderConfig) -> Box<dyn Provider> {
    build_provider(cfg).unwrap()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// History with two calls whose results were recorded out of order, a
/// summary and a new prompt.
fn request() -> Request {
    Request {
        kind: RequestKind::TurnFirst,
        system: "You are mino.".into(),
        items: vec![
            Item::User {
                text: "list the files".into(),
            },
            Item::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![
                    call("call_a", "read_file", r#"{"path":"a.txt"}"#),
                    call("call_b", "list_dir", "{}"),
                ],
            },
            Item::ToolResult {
                call_id: "call_b".into(),
                status: ResultStatus::Completed,
                output: "a.txt\nb.txt".into(),
            },
            Item::ToolResult {
                call_id: "call_a".into(),
                status: ResultStatus::Denied,
                output: "Blocked by policy.".into(),
            },
            Item::Summary {
                text: "Earlier we listed files.".into(),
            },
            Item::User {
                text: "thanks; now read a.txt".into(),
            },
        ]
        .into(),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

/// SSE frames streaming "Hello, world" and one read_file call with
/// arguments in two pieces, usage 11 in / 7 out, then completion.
fn text_and_tool(kind: ProviderKind) -> Vec<String> {
    match kind {
        ProviderKind::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| {
                data(&json!({"object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
            };
            vec![
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"content": "Hello"}), Value::Null),
                chunk(json!({"content": ", world"}), Value::Null),
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": ""}}]}),
                    Value::Null,
                ),
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}),
                    Value::Null,
                ),
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]}),
                    Value::Null,
                ),
                chunk(json!({}), json!("tool_calls")),
                data(
                    &json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7}}),
                ),
                "data: [DONE]\n\n".to_string(),
            ]
        }
        ProviderKind::OpenAiResponses => {
            let ev = |name: &str, mut body: Value| {
                body["type"] = json!(name);
                named(name, &body)
            };
            vec![
                ev(
                    "response.created",
                    json!({"response": {"id": "resp_1", "status": "in_progress"}}),
                ),
                ev(
                    "response.output_item.added",
                    json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
                ),
                ev(
                    "response.output_text.delta",
                    json!({"item_id": "msg_1", "output_index": 0, "delta": "Hello"}),
                ),
                ev(
                    "response.output_text.delta",
                    json!({"item_id": "msg_1", "output_index": 0, "delta": ", world"}),
                ),
                ev(
                    "response.output_item.added",
                    json!({"output_index": 1, "item": {"type": "function_call", "id": "fc_1",
                        "call_id": "call_1", "name": "read_file", "arguments": ""}}),
                ),
                ev(
                    "response.function_call_arguments.delta",
                    json!({"item_id": "fc_1", "output_index": 1, "delta": "{\"path\":"}),
                ),
                ev(
                    "response.function_call_arguments.delta",
                    json!({"item_id": "fc_1", "output_index": 1, "delta": "\"a.txt\"}"}),
                ),
                ev(
                    "response.function_call_arguments.done",
                    json!({"item_id": "fc_1", "output_index": 1, "arguments": "{\"path\":\"a.txt\"}"}),
                ),
                ev(
                    "response.completed",
                    json!({"response": {"id": "resp_1", "status": "completed",
                        "usage": {"input_tokens": 11, "output_tokens": 7}}}),
                ),
            ]
        }
        ProviderKind::Anthropic => {
            let ev = |name: &str, mut body: Value| {
                body["type"] = json!(name);
                named(name, &body)
            };
            vec![
                ev(
                    "message_start",
                    json!({"message": {"id": "msg_1", "usage": {"input_tokens": 11, "output_tokens": 1}}}),
                ),
                ev(
                    "content_block_start",
                    json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                ev("ping", json!({})),
                ev(
                    "content_block_delta",
                    json!({"index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
                ),
                ev(
                    "content_block_delta",
                    json!({"index": 0, "delta": {"type": "text_delta", "text": ", world"}}),
                ),
                ev("content_block_stop", json!({"index": 0})),
                ev(
                    "content_block_start",
                    json!({"index": 1, "content_block": {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {}}}),
                ),
                ev(
                    "content_block_delta",
                    json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}}),
                ),
                ev(
                    "content_block_delta",
                    json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"a.txt\"}"}}),
                ),
                ev("content_block_stop", json!({"index": 1})),
                ev(
                    "message_delta",
                    json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
                ),
                ev("message_stop", json!({})),
            ]
        }
        ProviderKind::Scripted => unreachable!(),
    }
}

/// Collects a stream into a response; the first error ends it. Checks that
/// `Done` is the last event and that nothing follows it.
async fn run(provider: &dyn Provider, cancel: CancellationToken) -> Result<Response, ModelError> {
    let mut stream = provider.stream(request(), cancel);
    let mut response = Response::default();
    let mut done = false;
    while let Some(event) = stream.next().await {
        assert!(!done, "an event after Done");
        let event = event?;
        done = event == StreamEvent::Done;
        response.apply(&event);
    }
    assert!(done, "the stream ended without Done or an error");
    Ok(response)
}

/// What `text_and_tool(kind)` streams, assembled. The finish is the one
/// the wire sent: chat's `tool_calls` and Anthropic's `tool_use` are
/// `ToolCalls`; the responses wire says only `completed`.
fn expected_response(kind: ProviderKind) -> Response {
    let finish = match kind {
        ProviderKind::OpenAiResponses => FinishReason::Stop,
        _ => FinishReason::ToolCalls,
    };
    let mut expected = Response {
        text: "Hello, world".into(),
        tool_calls: vec![call("call_1", "read_file", r#"{"path":"a.txt"}"#)],
        finish: Some(finish),
        ..Response::default()
    };
    expected.usage.input_tokens = 11;
    expected.usage.output_tokens = 7;
    expected
}

fn path_of(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAiChat => "/v1/chat/completions",
        ProviderKind::OpenAiResponses => "/v1/responses",
        ProviderKind::Anthropic => "/v1/messages",
        ProviderKind::Scripted => unreachable!(),
    }
}

fn service_of(kind: ProviderKind, server: &TestServer) -> String {
    let label = match kind {
        ProviderKind::OpenAiChat => "OpenAI chat completions",
        ProviderKind::OpenAiResponses => "OpenAI responses",
        ProviderKind::Anthropic => "Anthropic messages",
        ProviderKind::Scripted => unreachable!(),
    };
    format!("{label} at {}", server.base_url)
}

fn assert_no_key(error: &ModelError) {
    let text = format!("{error} {error:?}");
    assert!(!text.contains(KEY), "the key leaked: {text}");
}

// ---------------------------------------------------------------- happy path

#[tokio::test]
async fn every_wire_format_streams_text_and_a_tool_call() {
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
        let provider = provider(&config(kind, &server));
        assert_eq!(provider.model(), "test-model");
        let response = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response, expected_response(kind), "{kind}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{kind}");
        assert_eq!(requests[0].method, "POST");
        assert_eq!(requests[0].path, path_of(kind));
        assert_eq!(requests[0].headers["content-type"], "application/json");
    }
}

#[tokio::test]
async fn text_arrives_as_deltas() {
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
        let provider = provider(&config(kind, &server));
        let events: Vec<_> = provider
            .stream(request(), CancellationToken::new())
            .collect()
            .await;
        let texts: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                Ok(StreamEvent::TextDelta(text)) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Hello", ", world"], "{kind}");
    }
}

#[tokio::test]
async fn frames_split_anywhere_are_reassembled() {
    for kind in WIRES {
        let mut frames = text_and_tool(kind);
        // Multi-byte characters across chunk boundaries, in the first delta.
        let at = frames
            .iter()
            .position(|frame| frame.contains("Hello"))
            .unwrap();
        frames[at] = frames[at].replace("Hello", "Héllo ✓");
        let bytes: Vec<u8> = frames.concat().into_bytes();
        let pieces: Vec<Vec<u8>> = bytes.chunks(5).map(<[u8]>::to_vec).collect();
        let server = TestServer::start(vec![Reply::Sse {
            frames: pieces,
            end: End::Complete,
        }])
        .await;
        let provider = provider(&config(kind, &server));
        let response = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap();
        let mut expected = expected_response(kind);
        expected.text = "Héllo ✓, world".into();
        assert_eq!(response, expected, "{kind}");
    }
}

fn common_body_checks(kind: ProviderKind, recorded: &Recorded) {
    let body = &recorded.body;
    assert_eq!(body["model"], "test-model", "{kind}");
    assert_eq!(body["stream"], true, "{kind}");
    assert_eq!(body["temperature"], 0.25, "{kind}: extra_body");
    assert_eq!(body["metadata"], json!({"run": "t"}), "{kind}: extra_body");
}

#[tokio::test]
async fn openai_chat_request_carries_history_tools_and_auth() {
    let kind = ProviderKind::OpenAiChat;
    let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
    run(
        provider(&config(kind, &server)).as_ref(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let recorded = &server.requests()[0];
    common_body_checks(kind, recorded);
    assert_eq!(recorded.headers["authorization"], format!("Bearer {KEY}"));
    let body = &recorded.body;
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "user"
        ]
    );
    assert_eq!(messages[0]["content"], "You are mino.");
    assert_eq!(messages[1]["content"], "list the files");
    assert_eq!(messages[2]["content"], "Let me look.");
    assert_eq!(
        messages[2]["tool_calls"],
        json!([
            {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}},
        ])
    );
    // Results follow their calls in call order, whatever order they were recorded in.
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert_eq!(messages[3]["content"], "Blocked by policy.");
    assert_eq!(messages[4]["tool_call_id"], "call_b");
    assert_eq!(messages[4]["content"], "a.txt\nb.txt");
    let summary = messages[5]["content"].as_str().unwrap();
    assert!(
        summary.contains("Summary of the earlier conversation"),
        "{summary}"
    );
    assert!(summary.contains("lossy"), "{summary}");
    assert!(summary.ends_with("Earlier we listed files."), "{summary}");
    assert_eq!(messages[6]["content"], "thanks; now read a.txt");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
    );
}

#[tokio::test]
async fn openai_responses_request_carries_history_tools_and_auth() {
    let kind = ProviderKind::OpenAiResponses;
    let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
    run(
        provider(&config(kind, &server)).as_ref(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let recorded = &server.requests()[0];
    common_body_checks(kind, recorded);
    assert_eq!(recorded.headers["authorization"], format!("Bearer {KEY}"));
    let body = &recorded.body;
    assert_eq!(body["instructions"], "You are mino.");
    assert_eq!(body["store"], false);
    let input = body["input"].as_array().unwrap();
    let shape: Vec<String> = input
        .iter()
        .map(|item| {
            let kind = item["type"].as_str().unwrap();
            match item["role"].as_str() {
                Some(role) => format!("{kind}:{role}"),
                None => format!("{kind}:{}", item["call_id"].as_str().unwrap()),
            }
        })
        .collect();
    assert_eq!(
        shape,
        [
            "message:user",
            "message:assistant",
            "function_call:call_a",
            "function_call:call_b",
            "function_call_output:call_a",
            "function_call_output:call_b",
            "message:user",
            "message:user",
        ]
    );
    assert_eq!(
        input[0]["content"][0],
        json!({"type": "input_text", "text": "list the files"})
    );
    assert_eq!(
        input[1]["content"][0],
        json!({"type": "output_text", "text": "Let me look."})
    );
    assert_eq!(input[2]["name"], "read_file");
    assert_eq!(input[2]["arguments"], "{\"path\":\"a.txt\"}");
    assert_eq!(input[4]["output"], "Blocked by policy.");
    assert_eq!(input[5]["output"], "a.txt\nb.txt");
    let summary = input[6]["content"][0]["text"].as_str().unwrap();
    assert!(summary.contains("lossy") && summary.ends_with("Earlier we listed files."));
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "name": "read_file", "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    );
}

#[tokio::test]
async fn anthropic_request_carries_history_tools_and_auth() {
    let kind = ProviderKind::Anthropic;
    let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
    run(
        provider(&config(kind, &server)).as_ref(),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let recorded = &server.requests()[0];
    common_body_checks(kind, recorded);
    assert_eq!(recorded.headers["x-api-key"], KEY);
    assert_eq!(recorded.headers["anthropic-version"], "2023-06-01");
    assert!(!recorded.headers.contains_key("authorization"));
    let body = &recorded.body;
    assert_eq!(body["system"], "You are mino.");
    assert_eq!(body["max_tokens"], 8192);
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[0]["content"],
        json!([{"type": "text", "text": "list the files"}])
    );
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.txt"}},
            {"type": "tool_use", "id": "call_b", "name": "list_dir", "input": {}},
        ])
    );
    let user = messages[2]["content"].as_array().unwrap();
    assert_eq!(
        user[0],
        json!({"type": "tool_result", "tool_use_id": "call_a", "content": "Blocked by policy.", "is_error": true})
    );
    assert_eq!(
        user[1],
        json!({"type": "tool_result", "tool_use_id": "call_b", "content": "a.txt\nb.txt", "is_error": false})
    );
    let summary = user[2]["text"].as_str().unwrap();
    assert!(summary.contains("lossy") && summary.ends_with("Earlier we listed files."));
    assert_eq!(
        user[3],
        json!({"type": "text", "text": "thanks; now read a.txt"})
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "read_file", "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    );
}

#[tokio::test]
async fn extra_body_overrides_defaults() {
    let kind = ProviderKind::Anthropic;
    let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
    let mut cfg = config(kind, &server);
    cfg.extras
        .extra_body
        .insert("max_tokens".into(), json!(1024));
    run(provider(&cfg).as_ref(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(server.requests()[0].body["max_tokens"], 1024);
}

#[tokio::test]
async fn no_key_means_no_auth_header() {
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
        let mut cfg = config(kind, &server);
        cfg.api_key = None;
        run(provider(&cfg).as_ref(), CancellationToken::new())
            .await
            .unwrap();
        let headers = &server.requests()[0].headers;
        assert!(!headers.contains_key("authorization"), "{kind}");
        assert!(!headers.contains_key("x-api-key"), "{kind}");
    }
}

#[tokio::test]
async fn a_call_without_a_result_is_sent_as_interrupted() {
    let kind = ProviderKind::OpenAiChat;
    let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
    let provider = provider(&config(kind, &server));
    let mut request = request();
    std::sync::Arc::make_mut(&mut request.items).truncate(2);
    let mut stream = provider.stream(request, CancellationToken::new());
    while stream.next().await.is_some() {}
    let messages = server.requests()[0].body["messages"].clone();
    assert_eq!(messages[3]["tool_call_id"], "call_a");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted")
    );
    assert_eq!(messages[4]["tool_call_id"], "call_b");
}

// ---------------------------------------------------------------- retries

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    for kind in WIRES {
        let server = TestServer::start(vec![
            Reply::Status {
                code: 429,
                retry_after: Some("0"),
                body: r#"{"error":{"message":"slow down"}}"#.into(),
            },
            Reply::sse(text_and_tool(kind)),
        ])
        .await;
        // Backoff alone would wait an hour: only `Retry-After: 0` lets the
        // retry go within the guard.
        let mut cfg = config(kind, &server);
        cfg.backoff = Backoff::fixed(Duration::from_secs(3600));
        let provider = provider(&cfg);
        let response = tokio::time::timeout(HANG, run(provider.as_ref(), CancellationToken::new()))
            .await
            .expect("Retry-After: 0 was not honoured")
            .unwrap();
        assert_eq!(response, expected_response(kind), "{kind}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{kind}");
        assert_eq!(
            requests[0].body, requests[1].body,
            "{kind}: the same body twice"
        );
    }
}

#[tokio::test]
async fn a_500_past_max_retries_is_a_status_error_naming_the_service() {
    let kind = ProviderKind::OpenAiChat;
    let body = r#"{"error":{"message":"upstream exploded","type":"server_error"}}"#;
    let server = TestServer::start(vec![
        Reply::status(500, body),
        Reply::status(500, body),
        Reply::status(500, body),
        Reply::sse(text_and_tool(kind)),
    ])
    .await;
    let provider = provider(&config(kind, &server));
    let error = run(provider.as_ref(), CancellationToken::new())
        .await
        .unwrap_err();
    let service = service_of(kind, &server);
    match &error {
        ModelError::Status {
            service: named,
            status,
            message,
        } => {
            assert_eq!(named, &service);
            assert_eq!(*status, 500);
            assert!(message.contains("upstream exploded"), "{message}");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    let text = error.to_string();
    assert!(text.contains(&service) && text.contains("500"), "{text}");
    assert_eq!(server.requests().len(), 3, "one try and two retries");
    assert_no_key(&error);
}

#[tokio::test]
async fn other_4xx_are_not_retried_and_never_show_the_key() {
    for kind in WIRES {
        // A service that echoes the key it was sent.
        let body = format!(
            r#"{{"error":{{"message":"invalid key {KEY}","type":"authentication_error"}}}}"#
        );
        let server = TestServer::start(vec![Reply::status(401, &body)]).await;
        let provider = provider(&config(kind, &server));
        let error = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(error, ModelError::Status { status: 401, .. }),
            "{kind}: {error:?}"
        );
        assert!(
            error.to_string().contains("authentication_error"),
            "{error}"
        );
        assert!(error.to_string().contains("[redacted]"), "{error}");
        assert_no_key(&error);
        assert_eq!(server.requests().len(), 1, "{kind}");
    }
}

#[tokio::test]
async fn connection_refused_is_retried_then_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut cfg = ProviderConfig::new(ProviderKind::OpenAiChat, "m");
    cfg.base_url = format!("http://127.0.0.1:{port}/v1");
    cfg.api_key = Some(KEY.into());
    cfg.max_retries = 1;
    let error = run(provider(&cfg).as_ref(), CancellationToken::new())
        .await
        .unwrap_err();
    match &error {
        ModelError::Connect { service, message } => {
            assert_eq!(
                service,
                &format!("OpenAI chat completions at http://127.0.0.1:{port}/v1")
            );
            assert!(message.contains("2 attempts"), "{message}");
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
    assert_no_key(&error);
}

// ---------------------------------------------------------------- broken streams

#[tokio::test]
async fn a_stream_cut_mid_response_is_broken() {
    for kind in WIRES {
        let frames = text_and_tool(kind);
        let half = frames[..frames.len() / 2].to_vec();
        let server = TestServer::start(vec![Reply::sse_ending(half, End::Abrupt)]).await;
        let provider = provider(&config(kind, &server));
        let error = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(error, ModelError::Broken { .. }),
            "{kind}: {error:?}"
        );
        assert!(
            error.to_string().contains(&service_of(kind, &server)),
            "{error}"
        );
        assert_no_key(&error);
    }
}

#[tokio::test]
async fn a_body_that_ends_before_completion_is_broken() {
    for kind in WIRES {
        let frames = text_and_tool(kind);
        let half = frames[..frames.len() / 2].to_vec();
        let server = TestServer::start(vec![Reply::sse_ending(half, End::Complete)]).await;
        let provider = provider(&config(kind, &server));
        let error = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap_err();
        match &error {
            ModelError::Broken { message, .. } => {
                assert!(message.contains("ended before"), "{kind}: {message}");
            }
            other => panic!("{kind}: expected broken, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn malformed_json_in_an_event_is_malformed_naming_the_event() {
    for kind in WIRES {
        let mut frames = text_and_tool(kind);
        let bad = match kind {
            ProviderKind::OpenAiChat => "data: {\"choices\": [\n\n".to_string(),
            ProviderKind::OpenAiResponses => {
                "event: response.output_text.delta\ndata: {\"delta\": nope}\n\n".to_string()
            }
            _ => "event: content_block_delta\ndata: {\"index\": 0,\n\n".to_string(),
        };
        frames.insert(2, bad);
        let server = TestServer::start(vec![Reply::sse(frames)]).await;
        let provider = provider(&config(kind, &server));
        let error = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap_err();
        match &error {
            ModelError::Malformed { service, message } => {
                assert_eq!(service, &service_of(kind, &server));
                let event = match kind {
                    ProviderKind::OpenAiChat => "`message` event",
                    ProviderKind::OpenAiResponses => "`response.output_text.delta` event",
                    _ => "`content_block_delta` event",
                };
                assert!(message.contains(event), "{kind}: {message}");
            }
            other => panic!("{kind}: expected malformed, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn errors_reported_inside_the_stream_end_it() {
    let cases = [
        (
            ProviderKind::OpenAiChat,
            data(&json!({"error": {"message": "model overloaded", "type": "overloaded"}})),
        ),
        (
            ProviderKind::OpenAiResponses,
            named(
                "response.failed",
                &json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "model overloaded"}}}),
            ),
        ),
        (
            ProviderKind::Anthropic,
            named(
                "error",
                &json!({"type": "error", "error": {"type": "overloaded_error", "message": "model overloaded"}}),
            ),
        ),
    ];
    for (kind, frame) in cases {
        let mut frames = text_and_tool(kind)[..2].to_vec();
        frames.push(frame);
        let server = TestServer::start(vec![Reply::sse(frames)]).await;
        let provider = provider(&config(kind, &server));
        let error = run(provider.as_ref(), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(error, ModelError::Broken { .. }),
            "{kind}: {error:?}"
        );
        assert!(
            error.to_string().contains("model overloaded"),
            "{kind}: {error}"
        );
    }
}

#[tokio::test]
async fn garbage_never_panics() {
    let garbage: Vec<Vec<u8>> = vec![
        b"data: {\"choices\": 5}\n\n".to_vec(),
        b"data: {\"choices\": [{\"delta\": {\"tool_calls\": [7, {\"index\": \"x\"}]}}]}\n\n".to_vec(),
        b"event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": -1, \"content_block\": 7}\n\n".to_vec(),
        b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 99, \"delta\": {\"type\": \"input_json_delta\", \"partial_json\": 3}}\n\n".to_vec(),
        b"data: {\"type\": \"response.function_call_arguments.delta\", \"output_index\": 42}\n\n".to_vec(),
        b"data: {\"type\": \"response.output_item.added\", \"item\": {\"type\": \"function_call\"}}\n\n".to_vec(),
        b": a comment\nretry: x\nid\n\n".to_vec(),
        b"data: [1, 2, 3]\n\ndata: null\n\ndata: \"text\"\n\n".to_vec(),
    ];
    for kind in WIRES {
        let mut frames = garbage.clone();
        frames.push(b"data: \xff\xfe not utf-8\n\n".to_vec());
        let server = TestServer::start(vec![Reply::Sse {
            frames,
            end: End::Complete,
        }])
        .await;
        let provider = provider(&config(kind, &server));
        let events: Vec<_> = provider
            .stream(request(), CancellationToken::new())
            .collect()
            .await;
        let last = events.last().expect("at least one item");
        assert!(
            matches!(
                last,
                Err(ModelError::Malformed { .. }) | Err(ModelError::Broken { .. })
            ),
            "{kind}: {last:?}"
        );
    }
}

// ---------------------------------------------------------------- time

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_naming_the_key() {
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::Silent]).await;
        let mut cfg = config(kind, &server);
        cfg.first_byte_timeout = Duration::from_millis(300);
        let provider = provider(&cfg);
        let result = tokio::time::timeout(HANG, run(provider.as_ref(), CancellationToken::new()))
            .await
            .expect("the request hung");
        let error = result.unwrap_err();
        assert!(
            matches!(error, ModelError::FirstByte { .. }),
            "{kind}: {error:?}"
        );
        assert!(error.to_string().contains(&service_of(kind, &server)));
        assert!(
            error.to_string().contains("first_byte_timeout_secs"),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1, "a stall is not retried");
    }
}

#[tokio::test]
async fn a_stream_that_stops_sending_is_stalled() {
    for kind in WIRES {
        let frames = text_and_tool(kind)[..3].to_vec();
        let server = TestServer::start(vec![Reply::sse_ending(frames, End::Hang)]).await;
        let mut cfg = config(kind, &server);
        cfg.request_timeout = Duration::from_millis(300);
        let provider = provider(&cfg);
        let result = tokio::time::timeout(
            Duration::from_secs(10),
            run(provider.as_ref(), CancellationToken::new()),
        )
        .await
        .expect("the request hung");
        let error = result.unwrap_err();
        // The last frames' bytes may still be in the open window: fewer
        // than `stall_min_bytes` in it is the same stall, said so.
        assert!(
            matches!(
                error,
                ModelError::Stalled { .. } | ModelError::Trickle { .. }
            ),
            "{kind}: {error:?}"
        );
        assert!(
            error.to_string().contains("request_timeout_secs"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn cancelling_mid_stream_is_prompt() {
    for kind in WIRES {
        let frames = text_and_tool(kind);
        let frames = frames[..frames.len() / 2].to_vec();
        let server = TestServer::start(vec![Reply::sse_ending(frames, End::Hang)]).await;
        let provider = provider(&config(kind, &server));
        let cancel = CancellationToken::new();
        let mut stream = provider.stream(request(), cancel.clone());
        let first = stream.next().await.unwrap().unwrap();
        assert!(
            matches!(first, StreamEvent::TextDelta(_)),
            "{kind}: {first:?}"
        );
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            canceller.cancel();
        });
        let outcome = tokio::time::timeout(HANG, async {
            loop {
                match stream.next().await {
                    Some(Ok(_)) => continue,
                    other => break other,
                }
            }
        })
        .await
        .expect("cancellation did not end the stream");
        assert_eq!(outcome, Some(Err(ModelError::Cancelled)), "{kind}");
        assert!(
            stream.next().await.is_none(),
            "{kind}: the stream goes on after an error"
        );
    }
}

#[tokio::test]
async fn cancelling_while_waiting_for_an_answer_is_prompt() {
    let server = TestServer::start(vec![Reply::Silent]).await;
    let provider = provider(&config(ProviderKind::Anthropic, &server));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    // Unanswered, the request would stall only after 10 s.
    let error = tokio::time::timeout(HANG / 2, run(provider.as_ref(), cancel))
        .await
        .expect("the cancel was not prompt")
        .unwrap_err();
    assert_eq!(error, ModelError::Cancelled);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_during_backoff_is_prompt() {
    let server = TestServer::start(vec![Reply::Status {
        code: 503,
        retry_after: Some("20"),
        body: String::new(),
    }])
    .await;
    // The service asks for 20 s, which the default backoff honours.
    let mut cfg = config(ProviderKind::OpenAiResponses, &server);
    cfg.backoff = Backoff::default();
    let provider = provider(&cfg);
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let error = tokio::time::timeout(HANG / 2, run(provider.as_ref(), cancel))
        .await
        .expect("the cancel waited for the backoff")
        .unwrap_err();
    assert_eq!(error, ModelError::Cancelled);
    assert_eq!(server.requests().len(), 1, "no retry after the cancel");
}

// ---------------------------------------------------------------- settings

#[test]
fn the_key_never_shows_in_debug() {
    let mut cfg = ProviderConfig::new(ProviderKind::Anthropic, "claude");
    cfg.api_key = Some(KEY.into());
    let shown = format!("{cfg:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
}

#[test]
fn provider_kinds_have_their_names() {
    for kind in ProviderKind::ALL {
        assert_eq!(kind.name().parse::<ProviderKind>(), Ok(kind));
        assert_eq!(kind.to_string(), kind.name());
    }
    let error = "openai".parse::<ProviderKind>().unwrap_err();
    assert!(error.to_string().contains("openai-chat"), "{error}");
}

#[test]
fn bad_settings_are_setup_errors() {
    let mut cfg = ProviderConfig::new(ProviderKind::OpenAiChat, "m");
    cfg.base_url = "not a url".into();
    assert!(matches!(build_provider(&cfg), Err(ModelError::Setup(_))));
    cfg.base_url = "ftp://example.com".into();
    assert!(matches!(build_provider(&cfg), Err(ModelError::Setup(_))));
    let mut cfg = ProviderConfig::new(ProviderKind::OpenAiChat, "m");
    cfg.api_key = Some(format!("{KEY}\n"));
    match build_provider(&cfg) {
        Err(ModelError::Setup(text)) => assert!(!text.contains(KEY), "{text}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a key with a newline was accepted"),
    }
    let cfg = ProviderConfig::new(ProviderKind::Scripted, "");
    match build_provider(&cfg) {
        Err(ModelError::Setup(text)) => assert!(text.contains("script"), "{text}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a scripted provider without a script was built"),
    }
}

// ---------------------------------------------------------------- scripted

fn scripted(script: &Value) -> (tempfile::TempDir, Box<dyn Provider>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, serde_json::to_string_pretty(script).unwrap()).unwrap();
    let mut cfg = ProviderConfig::new(ProviderKind::Scripted, "");
    cfg.script = Some(path);
    (dir, provider(&cfg))
}

fn prompt(text: &str) -> Request {
    Request {
        kind: RequestKind::TurnFirst,
        system: "sys".into(),
        items: vec![Item::User { text: text.into() }].into(),
        tools: Vec::new(),
    }
}

fn after_tool(text: &str) -> Request {
    let mut request = prompt(text);
    std::sync::Arc::make_mut(&mut request.items).push(Item::Assistant {
        text: String::new(),
        tool_calls: vec![call("call_1", "read_file", "{}")],
    });
    std::sync::Arc::make_mut(&mut request.items).push(Item::ToolResult {
        call_id: "call_1".into(),
        status: ResultStatus::Completed,
        output: "contents".into(),
    });
    request
}

async fn play(provider: &dyn Provider, request: Request) -> (Response, usize) {
    let mut stream = provider.stream(request, CancellationToken::new());
    let mut response = Response::default();
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if matches!(event, StreamEvent::TextDelta(_)) {
            deltas += 1;
        }
        response.apply(&event);
    }
    (response, deltas)
}

#[tokio::test]
async fn a_script_plays_in_order_then_says_it_ended() {
    let (_dir, provider) = scripted(&json!({"responses": [
        {"text": "The first answer, long enough for several chunks.", "chunk_chars": 8},
        {"text": "Reading.", "tool_calls": [
            {"name": "read_file", "arguments": {"path": "notes.md"}},
            {"id": "mine", "name": "bash", "arguments": "{broken"}
        ]},
    ]}));
    assert_eq!(provider.model(), "scripted");
    let (first, deltas) = play(provider.as_ref(), prompt("hi")).await;
    assert_eq!(
        first.text,
        "The first answer, long enough for several chunks."
    );
    assert_eq!(deltas, 7);
    assert!(first.tool_calls.is_empty());
    let (second, _) = play(provider.as_ref(), prompt("go on")).await;
    assert_eq!(second.text, "Reading.");
    assert_eq!(
        second.tool_calls,
        vec![
            call("call_1", "read_file", r#"{"path":"notes.md"}"#),
            call("mine", "bash", "{broken"),
        ]
    );
    let (third, _) = play(provider.as_ref(), prompt("more")).await;
    assert!(third.text.contains("script has ended"), "{}", third.text);
}

#[tokio::test]
async fn after_prompt_jumps_to_its_section() {
    let (_dir, provider) = scripted(&json!({"responses": [
        {"after_prompt": "summarize", "text": "S1", "tool_calls": [{"name": "read_file", "arguments": {}}]},
        {"text": "S2"},
        {"after_prompt": "edit", "text": "E1"},
        {"text": "E2"},
    ]}));
    let text = |request| {
        let provider = provider.as_ref();
        async move { play(provider, request).await.0.text }
    };
    assert_eq!(text(prompt("please edit notes.md")).await, "E1");
    assert_eq!(text(prompt("summarize notes.md")).await, "S1");
    // A request carrying tool results continues the section, even though
    // its newest user item still says "summarize".
    assert_eq!(text(after_tool("summarize notes.md")).await, "S2");
    // A prompt that matches nothing takes the next response in order.
    assert_eq!(text(prompt("what now?")).await, "E1");
    assert_eq!(text(prompt("edit again")).await, "E1");
    assert_eq!(text(after_tool("edit again")).await, "E2");
}

#[tokio::test]
async fn a_malformed_script_names_the_file_and_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo-script.json");
    std::fs::write(
        &path,
        "{\"responses\": [\n  {\"text\": \"ok\"},\n  {\"text\": oops}\n]}\n",
    )
    .unwrap();
    let mut cfg = ProviderConfig::new(ProviderKind::Scripted, "");
    cfg.script = Some(path.clone());
    let Err(ModelError::Setup(text)) = build_provider(&cfg) else {
        panic!("a malformed script was accepted");
    };
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("line 3 column"), "{text}");

    std::fs::write(&path, r#"{"responses": [{"txt": "typo"}]}"#).unwrap();
    let Err(ModelError::Setup(text)) = build_provider(&cfg) else {
        panic!("an unknown field was accepted");
    };
    assert!(text.contains("txt"), "{text}");

    cfg.script = Some(dir.path().join("missing.json"));
    let Err(ModelError::Setup(text)) = build_provider(&cfg) else {
        panic!("a missing script was accepted");
    };
    assert!(text.contains("missing.json"), "{text}");
}

/// The script's delays on the runtime's clock, paused: the test reads
/// virtual time, exactly, and waits for none of it.
#[tokio::test(start_paused = true)]
async fn a_slow_script_can_be_cancelled() {
    let (_dir, provider) = scripted(&json!({"responses": [
        {"text": "one two three four", "chunk_chars": 4, "delay_ms": 150},
    ]}));
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(prompt("hi"), cancel.clone());
    let started = tokio::time::Instant::now();
    assert_eq!(
        stream.next().await,
        Some(Ok(StreamEvent::TextDelta("one ".into())))
    );
    assert_eq!(started.elapsed(), Duration::from_millis(150));
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let started = tokio::time::Instant::now();
    assert_eq!(stream.next().await, Some(Err(ModelError::Cancelled)));
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(50),
        "the cancel waited for the delay"
    );
    assert_eq!(stream.next().await, None);
}

// ------------------------------------------------------- real servers' ways

/// A request of `kind` whose history holds one call with `arguments`.
fn request_with_call(kind: RequestKind, arguments: &str) -> Request {
    let mut request = request();
    request.kind = kind;
    request.items = vec![
        Item::User {
            text: "run it".into(),
        },
        Item::Assistant {
            text: String::new(),
            tool_calls: vec![call("call_cut", "bash", arguments)],
        },
        Item::ToolResult {
            call_id: "call_cut".into(),
            status: ResultStatus::Error,
            output: "cut off".into(),
        },
    ]
    .into();
    request
}

async fn drain(provider: &dyn Provider, request: Request) -> Result<Response, ModelError> {
    let mut stream = provider.stream(request, CancellationToken::new());
    let mut response = Response::default();
    while let Some(event) = stream.next().await {
        response.apply(&event?);
    }
    Ok(response)
}

#[tokio::test]
async fn a_recorded_llama_cpp_responses_stream_parses_into_a_call_with_its_arguments() {
    // Recorded from llama.cpp's server (xllamacpp 0.2.14): the added item has
    // no `id` and no `output_index`, the deltas name the call by `item_id`
    // equal to its `call_id`, and `output_item.done` repeats the arguments.
    let recorded = include_str!("../fixtures/llamacpp-responses-tool-call.sse");
    let frames: Vec<String> = recorded
        .split_inclusive("\n\n")
        .map(str::to_string)
        .collect();
    assert!(frames.len() > 10);
    let server = TestServer::start(vec![Reply::sse(frames)]).await;
    let cfg = config(ProviderKind::OpenAiResponses, &server);
    let response = drain(provider(&cfg).as_ref(), request()).await.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![call(
            "fc_UZSqpClVui20cV5oFPkTEpqMP38d3zlr",
            "read_file",
            r#"{"path": "notes.md"}"#
        )]
    );
    assert_eq!(response.usage.input_tokens, 158);
    assert_eq!(response.finish, Some(FinishReason::Stop));
}

#[tokio::test]
async fn a_done_event_s_arguments_are_final_and_deltas_without_ids_go_to_the_open_call() {
    let frames = vec![
        named(
            "response.output_item.added",
            &json!({"type":"response.output_item.added","item":{"type":"function_call","call_id":"c9","name":"bash","arguments":""}}),
        ),
        named(
            "response.function_call_arguments.delta",
            &json!({"type":"response.function_call_arguments.delta","delta":"{\"comm"}),
        ),
        named(
            "response.output_item.done",
            &json!({"type":"response.output_item.done","item":{"type":"function_call","call_id":"c9","name":"bash","arguments":"{\"command\":\"ls\"}"}}),
        ),
        named(
            "response.completed",
            &json!({"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":2}}}),
        ),
    ];
    let server = TestServer::start(vec![Reply::sse(frames)]).await;
    let cfg = config(ProviderKind::OpenAiResponses, &server);
    let response = drain(provider(&cfg).as_ref(), request()).await.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![call("c9", "bash", r#"{"command":"ls"}"#)]
    );
}

#[tokio::test]
async fn arguments_cut_off_mid_string_are_sent_back_as_valid_json() {
    let cut = r#"{"command": "cat > notes.md <<'EOF'\nline one"#;
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::sse(text_and_tool(kind))]).await;
        let cfg = config(kind, &server);
        drain(
            provider(&cfg).as_ref(),
            request_with_call(RequestKind::TurnNext, cut),
        )
        .await
        .unwrap();
        let body = &server.requests()[0].body;
        let sent = match kind {
            ProviderKind::OpenAiChat => {
                body["messages"][2]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .map(str::to_string)
            }
            ProviderKind::OpenAiResponses => {
                body["input"][1]["arguments"].as_str().map(str::to_string)
            }
            _ => Some(body["messages"][1]["content"][0]["input"].to_string()),
        }
        .unwrap_or_else(|| panic!("{kind}: no arguments in {body}"));
        let parsed: Value = serde_json::from_str(&sent)
            .unwrap_or_else(|e| panic!("{kind}: {sent:?} is not JSON: {e}"));
        assert_eq!(parsed, json!({}), "{kind}");
        assert!(!body.to_string().contains("line one"), "{kind}");
    }
}

#[tokio::test]
async fn every_wire_reports_a_length_stop() {
    let frames = |kind: ProviderKind| -> Vec<String> {
        match kind {
            ProviderKind::OpenAiChat => vec![
                data(&json!({"choices":[{"index":0,"delta":{"content":"The answ"}}]})),
                data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})),
                "data: [DONE]\n\n".to_string(),
            ],
            ProviderKind::OpenAiResponses => vec![
                named(
                    "response.output_text.delta",
                    &json!({"type":"response.output_text.delta","delta":"The answ"}),
                ),
                named(
                    "response.incomplete",
                    &json!({"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}),
                ),
            ],
            _ => vec![
                named(
                    "content_block_delta",
                    &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The answ"}}),
                ),
                named(
                    "message_delta",
                    &json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}),
                ),
                named("message_stop", &json!({"type":"message_stop"})),
            ],
        }
    };
    for kind in WIRES {
        let server = TestServer::start(vec![Reply::sse(frames(kind))]).await;
        let cfg = config(kind, &server);
        let response = drain(provider(&cfg).as_ref(), request()).await.unwrap();
        assert_eq!(response.text, "The answ", "{kind}");
        assert_eq!(response.finish, Some(FinishReason::Length), "{kind}");
    }
}

#[tokio::test]
async fn each_kind_of_request_carries_its_own_extra_fields_and_output_cap() {
    for kind in WIRES {
        let replies = (0..3).map(|_| Reply::sse(text_and_tool(kind))).collect();
        let server = TestServer::start(replies).await;
        let mut cfg = config(kind, &server);
        cfg.extras.max_output_tokens = Some(1024);
        cfg.extras.first_request_extra_body = json!({"tool_choice": "required"})
            .as_object()
            .unwrap()
            .clone();
        cfg.extras.compaction_extra_body = json!({"temperature": 0.0}).as_object().unwrap().clone();
        let provider = provider(&cfg);
        for request_kind in [
            RequestKind::TurnFirst,
            RequestKind::TurnNext,
            RequestKind::Compaction,
        ] {
            let mut request = request();
            request.kind = request_kind;
            drain(provider.as_ref(), request).await.unwrap();
        }
        let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
        let cap = match kind {
            ProviderKind::OpenAiResponses => "max_output_tokens",
            _ => "max_tokens",
        };
        assert_eq!(bodies[0]["tool_choice"], "required", "{kind}");
        assert_eq!(bodies[0]["temperature"], 0.25, "{kind}");
        assert!(bodies[1].get("tool_choice").is_none(), "{kind}");
        assert_eq!(bodies[1]["temperature"], 0.25, "{kind}");
        assert!(bodies[2].get("tool_choice").is_none(), "{kind}");
        assert!(bodies[2].get("metadata").is_none(), "{kind}");
        assert_eq!(bodies[2]["temperature"], 0.0, "{kind}");
        for body in &bodies {
            assert_eq!(body[cap], 1024, "{kind}");
        }
    }
}

#[tokio::test]
async fn a_5xx_saying_the_request_is_malformed_is_not_retried() {
    let body = r#"{"error":{"code":500,"message":"[json.exception.parse_error.101] parse error at line 1, column 12: syntax error","type":"server_error"}}"#;
    let server = TestServer::start(vec![
        Reply::status(500, body),
        Reply::status(500, body),
        Reply::status(500, body),
    ])
    .await;
    let cfg = config(ProviderKind::OpenAiChat, &server);
    let error = drain(provider(&cfg).as_ref(), request()).await.unwrap_err();
    assert!(
        matches!(error, ModelError::Status { status: 500, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("parse error"), "{error}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

/// The clock is paused: tokio moves it to the next timer whenever every
/// task waits, so the server's 90 s delay takes no real time, and the
/// client's deadline is measured on the same clock.
#[tokio::test(start_paused = true)]
async fn a_loopback_server_that_waits_90_s_before_its_first_byte_is_waited_for() {
    let kind = ProviderKind::OpenAiChat;
    let server = TestServer::start(vec![Reply::Delayed {
        delay: Duration::from_secs(90),
        then: Box::new(Reply::sse(text_and_tool(kind))),
    }])
    .await;
    let mut settings = mino::config::ModelSettings::defaults_for(kind);
    settings.base_url = server.base_url.clone();
    let mut cfg = config(kind, &server);
    cfg.first_byte_timeout = settings.first_byte_timeout();
    assert_eq!(cfg.first_byte_timeout, Duration::from_secs(300));
    let started = tokio::time::Instant::now();
    let response = drain(provider(&cfg).as_ref(), request()).await.unwrap();
    assert_eq!(response.text, "Hello, world");
    assert!(started.elapsed() >= Duration::from_secs(90));
    settings.base_url = "https://api.example.com/v1".into();
    assert_eq!(settings.first_byte_timeout(), Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn a_first_byte_later_than_the_setting_is_an_error_naming_the_key() {
    let kind = ProviderKind::OpenAiChat;
    let server = TestServer::start(vec![Reply::Delayed {
        delay: Duration::from_secs(400),
        then: Box::new(Reply::sse(text_and_tool(kind))),
    }])
    .await;
    let mut cfg = config(kind, &server);
    cfg.first_byte_timeout = Duration::from_secs(300);
    let error = drain(provider(&cfg).as_ref(), request()).await.unwrap_err();
    assert!(
        matches!(error, ModelError::FirstByte { seconds: 300, .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("`[model] first_byte_timeout_secs`")
    );
}
