//! Whole answers in each wire format for the loopback service of
//! `server.rs`: text, tool calls, and the faults a test wants (an error
//! status, a cut stream, malformed JSON, silence).

use serde_json::{Value, json};

use super::server::{End, Reply as Raw, TestServer, data, named};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    Text(String),
    /// Tool calls `(name, arguments)`.
    Tools(Vec<(String, Value)>),
    /// An HTTP status with an optional Retry-After (seconds).
    Status(u16, Option<&'static str>),
    /// Half the events of a text answer, then the connection closes.
    Cut(String),
    /// A text answer that ends at the output limit.
    Length(String),
    /// An event whose data is not JSON.
    Malformed,
    /// Accept and never answer.
    Hang,
}

pub fn text(s: &str) -> Reply {
    Reply::Text(s.to_string())
}

pub fn tool(name: &str, args: Value) -> Reply {
    Reply::Tools(vec![(name.to_string(), args)])
}

/// The names of the tools a chat request's body offers.
pub fn offered_tools(body: &str) -> Vec<String> {
    let body: Value = serde_json::from_str(body).unwrap();
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// A model service speaking one wire format.
pub struct Llm {
    server: TestServer,
}

impl Llm {
    /// `provider` is a provider name: `openai-chat`, `openai-responses` or
    /// `anthropic`.
    pub async fn start(provider: &str, replies: Vec<Reply>) -> Self {
        Self::start_windowed(provider, replies, None).await
    }

    /// As `start`, and with `window`, a model whose context holds that many
    /// tokens (see `server::Reply::Windowed`).
    pub async fn start_windowed(provider: &str, replies: Vec<Reply>, window: Option<u64>) -> Self {
        Self::start_wrapped(provider, replies, |raw| match window {
            Some(window) => Raw::Windowed {
                window,
                then: Box::new(raw),
            },
            None => raw,
        })
        .await
    }

    /// An `openai-chat` service that answers as OpenAI's own does: a body
    /// with `max_tokens` is refused (see `server::Reply::RefusesMaxTokens`).
    pub async fn start_openai(replies: Vec<Reply>) -> Self {
        Self::start_wrapped("openai-chat", replies, |raw| {
            Raw::RefusesMaxTokens(Box::new(raw))
        })
        .await
    }

    /// A service that is also a llama.cpp server: `GET /props` answers
    /// `props`.
    pub async fn start_with_props(provider: &str, replies: Vec<Reply>, props: Value) -> Self {
        let raw = raw_replies(provider, replies, |raw| raw);
        Self {
            server: TestServer::answering_props(raw, Some(props)).await,
        }
    }

    async fn start_wrapped(provider: &str, replies: Vec<Reply>, wrap: impl Fn(Raw) -> Raw) -> Self {
        Self {
            server: TestServer::start(raw_replies(provider, replies, wrap)).await,
        }
    }

    /// A service answering with `replies` exactly as given (raw frames,
    /// statuses, content types).
    pub async fn raw(replies: Vec<Raw>) -> Self {
        Self {
            server: TestServer::start(replies).await,
        }
    }

    pub fn base_url(&self) -> String {
        self.server.base_url.clone()
    }

    /// Every request body, as JSON text.
    pub fn bodies(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect()
    }

    /// Every request path.
    pub fn paths(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .map(|r| r.path.clone())
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Format {
    Chat,
    Responses,
    Anthropic,
}

/// A call's arguments as sent: a JSON string stands for raw text (which
/// need not be JSON), anything else is sent as JSON.
fn raw(args: &Value) -> String {
    match args {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

/// The SSE events of one reply, and whether to cut the stream halfway.
fn events(format: Format, reply: &Reply, n: usize) -> (Vec<String>, bool) {
    let length = matches!(reply, Reply::Length(_));
    let (text, calls, cut, malformed) = match reply {
        Reply::Text(t) | Reply::Length(t) => (t.clone(), vec![], false, false),
        Reply::Cut(t) => (t.clone(), vec![], true, false),
        Reply::Tools(calls) => (String::new(), calls.clone(), false, false),
        Reply::Malformed => (String::new(), vec![], false, true),
        Reply::Status(..) | Reply::Hang => (String::new(), vec![], false, false),
    };
    let mut out = Vec::new();
    match format {
        Format::Chat => {
            if malformed {
                out.push("data: {not json\n\n".to_string());
            }
            for piece in chunks(&text) {
                out.push(data(
                    &json!({"choices":[{"index":0,"delta":{"content":piece}}]}),
                ));
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                let id = format!("call_{n}_{i}");
                out.push(data(&json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}}]})));
                let args = raw(args);
                for piece in chunks(&args) {
                    out.push(data(&json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"function":{"arguments":piece}}]}}]})));
                }
            }
            let finish = if length {
                "length"
            } else if calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            out.push(data(
                &json!({"choices":[{"index":0,"delta":{},"finish_reason":finish}]}),
            ));
            out.push(data(&json!({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}})));
            out.push("data: [DONE]\n\n".to_string());
        }
        Format::Responses => {
            out.push(named(
                "response.created",
                &json!({"type":"response.created","response":{"id":format!("resp_{n}")}}),
            ));
            if malformed {
                out.push("event: response.output_text.delta\ndata: {not json\n\n".to_string());
            }
            for piece in chunks(&text) {
                out.push(named(
                    "response.output_text.delta",
                    &json!({"type":"response.output_text.delta","output_index":0,"delta":piece}),
                ));
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                let id = format!("call_{n}_{i}");
                out.push(named("response.output_item.added", &json!({"type":"response.output_item.added","output_index":i,"item":{"type":"function_call","id":format!("fc_{n}_{i}"),"call_id":id,"name":name,"arguments":""}})));
                for piece in chunks(&raw(args)) {
                    out.push(named("response.function_call_arguments.delta", &json!({"type":"response.function_call_arguments.delta","output_index":i,"item_id":format!("fc_{n}_{i}"),"delta":piece})));
                }
                out.push(named("response.output_item.done", &json!({"type":"response.output_item.done","output_index":i,"item":{"type":"function_call","id":format!("fc_{n}_{i}"),"call_id":id,"name":name,"arguments":raw(args)}})));
            }
            if length {
                out.push(named("response.incomplete", &json!({"type":"response.incomplete","response":{"id":format!("resp_{n}"),"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":100,"output_tokens":10,"total_tokens":110}}})));
            } else {
                out.push(named("response.completed", &json!({"type":"response.completed","response":{"id":format!("resp_{n}"),"status":"completed","usage":{"input_tokens":100,"output_tokens":10,"total_tokens":110}}})));
            }
        }
        Format::Anthropic => {
            out.push(named("message_start", &json!({"type":"message_start","message":{"id":format!("msg_{n}"),"usage":{"input_tokens":100,"output_tokens":1}}})));
            if malformed {
                out.push("event: content_block_delta\ndata: {not json\n\n".to_string());
            }
            let mut index = 0;
            if !text.is_empty() {
                out.push(named("content_block_start", &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})));
                for piece in chunks(&text) {
                    out.push(named("content_block_delta", &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":piece}})));
                }
                out.push(named(
                    "content_block_stop",
                    &json!({"type":"content_block_stop","index":0}),
                ));
                index = 1;
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                let at = index + i;
                out.push(named("content_block_start", &json!({"type":"content_block_start","index":at,"content_block":{"type":"tool_use","id":format!("toolu_{n}_{i}"),"name":name,"input":{}}})));
                for piece in chunks(&raw(args)) {
                    out.push(named("content_block_delta", &json!({"type":"content_block_delta","index":at,"delta":{"type":"input_json_delta","partial_json":piece}})));
                }
                out.push(named(
                    "content_block_stop",
                    &json!({"type":"content_block_stop","index":at}),
                ));
            }
            let stop = if length {
                "max_tokens"
            } else if calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            out.push(named("message_delta", &json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":10}})));
            out.push(named("message_stop", &json!({"type":"message_stop"})));
        }
    }
    (out, cut)
}

/// The scripted replies as raw frames of `provider`'s wire.
fn raw_replies(provider: &str, replies: Vec<Reply>, wrap: impl Fn(Raw) -> Raw) -> Vec<Raw> {
    let format = match provider {
        "openai-chat" => Format::Chat,
        "anthropic" => Format::Anthropic,
        _ => Format::Responses,
    };
    replies
        .iter()
        .enumerate()
        .map(|(n, reply)| match reply {
            Reply::Status(code, retry_after) => Raw::Status {
                code: *code,
                retry_after: *retry_after,
                body: r#"{"error":{"message":"scripted failure"}}"#.to_string(),
            },
            Reply::Hang => Raw::Silent,
            other => {
                let (frames, cut) = events(format, other, n + 1);
                let take = if cut { frames.len() / 2 } else { frames.len() };
                Raw::sse_ending(
                    frames.into_iter().take(take).collect(),
                    if cut { End::Abrupt } else { End::Complete },
                )
            }
        })
        .map(wrap)
        .collect()
}
