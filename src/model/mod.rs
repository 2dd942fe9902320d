//! Model services behind one `Provider` trait: a request (system prompt,
//! provider-neutral history, tool specs) in, a stream of events out. Wire
//! formats live one per file. Never decides and never runs a tool.

pub mod anthropic;
pub mod bounds;
mod chat_chunk;
pub mod config;
mod history;
pub mod http;
pub mod listing;
pub mod openai_chat;
pub mod openai_responses;
pub mod scripted;
pub mod sse;
mod sse_parse;
pub mod window;

use std::borrow::Cow;
use std::pin::Pin;

use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use config::{ProviderConfig, ProviderKind, build_provider};

/// What the model is offered of a tool: its name, description and the JSON
/// schema of its arguments. Defined here, beside the wire formats that send
/// it, so the model services never depend on the tools. Built-in tools name
/// themselves with static text; an MCP server's tools carry the names and
/// text the server gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: Cow<'static, str>,
    pub description: Cow<'static, str>,
    pub parameters: Value,
}

/// One tool call the model asked for. `arguments` is the raw JSON text the
/// model produced; it is parsed (and may be invalid) later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// How a tool result ended, as the model and the session log see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    Completed,
    Denied,
    Rejected,
    Error,
    Interrupted,
    /// The call never started: the user interrupted the turn before
    /// answering it, or before the turn reached it, or a limit stopped it.
    NotRun,
}

impl ResultStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultStatus::Completed => "completed",
            ResultStatus::Denied => "denied",
            ResultStatus::Rejected => "rejected",
            ResultStatus::Error => "error",
            ResultStatus::Interrupted => "interrupted",
            ResultStatus::NotRun => "not_run",
        }
    }
}

/// One item of provider-neutral history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    User {
        text: String,
    },
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        status: ResultStatus,
        output: String,
    },
    /// A compaction summary: lossy context, never authorization.
    Summary {
        text: String,
    },
    /// A line mino itself put in the conversation (the reminder after a
    /// call written as text). It reaches the model as user text, but it is
    /// never the person's prompt: compaction keeps the person's.
    Reminder {
        text: String,
    },
}

/// What a request is for. Settings that belong to some requests only
/// (`first_request_extra_body`, `[model.compaction]`) follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// The first request of a turn, right after the user's prompt.
    TurnFirst,
    /// A later request of a turn, carrying tool results.
    TurnNext,
    /// A compaction summary: none of `extra_body`, only `[model.compaction]`.
    Compaction,
    /// One isolated request outside any turn (the shell gate's judge):
    /// the output cap, none of the user's extra fields.
    Isolated,
}

/// One request to a model service.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub kind: RequestKind,
    pub system: String,
    /// Shared with the session's history, never copied per request (a
    /// long turn's history is megabytes).
    pub items: std::sync::Arc<Vec<Item>>,
    pub tools: Vec<ToolSpec>,
}

/// Token counts a service reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why a response ended, as the service said it. Every wire's "ran into
/// the output limit" (`length`, `max_output_tokens`, `max_tokens`) is
/// `Length`; every wire's "ended for its tool calls" (`tool_calls`,
/// `function_call`, `tool_use`) is `ToolCalls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end (the responses wire's `completed` also for a response
    /// with calls: that wire names no other end).
    Stop,
    /// The service ended the response for its tool calls.
    ToolCalls,
    /// Cut off at the output limit.
    Length,
    /// Anything else the service named (e.g. `content_filter`).
    Other(String),
}

impl FinishReason {
    /// Reads a wire's word for it.
    pub fn from_wire(word: &str) -> Self {
        match word {
            "stop" | "end_turn" | "stop_sequence" | "completed" => FinishReason::Stop,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "length" | "max_tokens" | "max_output_tokens" => FinishReason::Length,
            other => FinishReason::Other(other.to_string()),
        }
    }

    /// The stable word for `stream-json`.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::Other(word) => word,
        }
    }
}

/// What a streaming response reports, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A tool call begins; `index` identifies it in later deltas.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    /// A call's whole arguments, final: they replace any pieces before.
    ToolCallArguments {
        index: usize,
        arguments: String,
    },
    /// A call past `[model] max_tool_calls` (`bound`): only its id and name
    /// are kept, and its arguments never arrive. It never runs: the turn
    /// answers it with a refusal.
    ToolCallPastBound {
        bound: usize,
        id: String,
        name: String,
    },
    Usage(Usage),
    Finish(FinishReason),
    /// The request failed before its answer began and is tried again
    /// after `delay`; `reason` is the status (`429`) or `no connection`.
    Retrying {
        delay: std::time::Duration,
        reason: String,
    },
    /// The response is complete.
    Done,
}

/// Why a request failed. Texts name the service and what happened; never a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("{service}: could not connect: {message}")]
    Connect { service: String, message: String },
    #[error("{service} answered HTTP {status}: {message}")]
    Status {
        service: String,
        status: u16,
        message: String,
    },
    #[error("{service}: the stream broke before the response was complete: {message}")]
    Broken { service: String, message: String },
    #[error(
        "{service}: no data for {seconds} s; the request was abandoned (raise `[model] request_timeout_secs` for a slower service)"
    )]
    Stalled { service: String, seconds: u64 },
    #[error(
        "{service}: fewer than {bytes} bytes in {seconds} s; the stream stalled and the request was abandoned (`[model] request_timeout_secs`, `stall_min_bytes`)"
    )]
    Trickle {
        service: String,
        bytes: usize,
        seconds: u64,
    },
    #[error(
        "{service}: the response went past {limit} {what}; the request was abandoned (`[model] {setting}`)"
    )]
    TooLarge {
        service: String,
        what: &'static str,
        limit: usize,
        setting: &'static str,
    },
    #[error(
        "{service}: no answer within {seconds} s of sending the request; it was abandoned (raise `[model] first_byte_timeout_secs` for a slower service)"
    )]
    FirstByte { service: String, seconds: u64 },
    #[error("{service} sent data that is not valid: {message}")]
    Malformed { service: String, message: String },
    #[error("the request was cancelled")]
    Cancelled,
    #[error("{0}")]
    Setup(String),
    #[error(
        "{message}; the request did not fit even after compaction. mino counts with `[model] context_window` = {window} tokens: set it to the window the server really has (llama.cpp: its context size), or give the server a larger one"
    )]
    ContextExceeded { message: String, window: u64 },
}

/// What services write in an error body when the request itself cannot be
/// processed (llama.cpp answers 500 to a body it cannot parse). Sending the
/// same request again cannot help.
const MALFORMED_REQUEST_MARKERS: &[&str] = &[
    "parse error",
    "json.exception",
    "failed to parse",
    "invalid request",
    "invalid_request_error",
    "malformed",
    "invalid json",
];

/// What services write when a request does not fit the model's context.
const CONTEXT_EXCEEDED_MARKERS: &[&str] = &[
    "exceeds the available context",
    "exceed_context_size",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "too many tokens",
];

impl ModelError {
    /// An error status whose text says the request itself is malformed.
    pub fn says_request_is_malformed(&self) -> bool {
        self.status_says(MALFORMED_REQUEST_MARKERS) || self.says_context_exceeded()
    }

    /// An error status whose text says the request is larger than the
    /// model's context.
    pub fn says_context_exceeded(&self) -> bool {
        self.status_says(CONTEXT_EXCEEDED_MARKERS)
    }

    /// The request's size in tokens, when an error saying it exceeded the
    /// context gives one: the largest number followed by "tokens".
    pub fn counted_tokens(&self) -> Option<u64> {
        self.token_numbers().into_iter().max()
    }

    /// The service's own window, when an error saying the request exceeded
    /// it names two sizes: the smaller one.
    pub fn stated_window(&self) -> Option<u64> {
        let numbers = self.token_numbers();
        let (min, max) = (numbers.iter().min()?, numbers.iter().max()?);
        (min < max).then_some(*min)
    }

    /// Every number followed by a word starting with "token" in an error
    /// status's text.
    fn token_numbers(&self) -> Vec<u64> {
        let ModelError::Status { message, .. } = self else {
            return Vec::new();
        };
        let words: Vec<&str> = message
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '.' | ':'))
            .filter(|w| !w.is_empty())
            .collect();
        words
            .windows(2)
            .filter(|pair| pair[1].to_lowercase().starts_with("token"))
            .filter_map(|pair| pair[0].parse::<u64>().ok())
            .collect()
    }

    fn status_says(&self, markers: &[&str]) -> bool {
        match self {
            ModelError::Status { message, .. } => {
                let message = message.to_lowercase();
                markers.iter().any(|marker| message.contains(marker))
            }
            _ => false,
        }
    }
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send>>;

/// A model service.
pub trait Provider: Send + Sync {
    /// The model's name, for the status bar and the session line.
    fn model(&self) -> &str;

    /// Starts one streaming request. The stream ends after `Done` or the
    /// first error; cancelling `cancel` ends it with `ModelError::Cancelled`.
    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream;

    /// The output cap a request of `kind` carries, when it carries one: an
    /// answer whose reported output tokens reach it was cut off, whatever
    /// the service called its end (llama.cpp's `/v1/responses` says
    /// `completed`).
    fn output_cap(&self, _kind: RequestKind) -> Option<u32> {
        None
    }
}

/// A whole response, assembled from the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// `None` when the service did not say.
    pub finish: Option<FinishReason>,
    /// The calls past `[model] max_tool_calls`, when the response asked
    /// for more.
    pub past_bound: Option<PastBound>,
}

/// The calls of a response past its bound on calls: each kept as its id
/// and name only (its arguments empty), in the order they came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PastBound {
    /// `[model] max_tool_calls`: the calls of a response kept.
    pub bound: usize,
    pub calls: Vec<ToolCall>,
}

impl Response {
    /// Marks the response cut off when the output tokens the service
    /// reported reach the request's `cap`, whatever end it named.
    pub fn check_cap(&mut self, cap: Option<u32>) {
        let reached = cap.is_some_and(|cap| cap > 0 && self.usage.output_tokens >= u64::from(cap));
        if reached {
            self.finish = Some(FinishReason::Length);
        }
    }

    /// Gives each call of the response an id of its own: a repeated one
    /// (a service's mistake, or an id made up for a call that had none)
    /// becomes `ID-2`, `ID-3`, … Results are paired with calls by id, so a
    /// repeat would pair a call that ran with another's refusal.
    pub fn unique_call_ids(&mut self) {
        let past = self.past_bound.iter_mut().flat_map(|p| p.calls.iter_mut());
        let calls: Vec<&mut ToolCall> = self.tool_calls.iter_mut().chain(past).collect();
        let mut taken: std::collections::HashSet<String> =
            std::collections::HashSet::with_capacity(calls.len());
        let mut repeated = Vec::new();
        for call in calls {
            if !taken.insert(call.id.clone()) {
                repeated.push(call);
            }
        }
        for call in repeated {
            let fresh = (2u64..)
                .map(|n| format!("{}-{n}", call.id))
                .find(|id| !taken.contains(id))
                .unwrap_or_default();
            taken.insert(fresh.clone());
            call.id = fresh;
        }
    }

    /// Folds one event into the response.
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(text) => self.text.push_str(text),
            StreamEvent::ToolCallStart { index, id, name } => {
                while self.tool_calls.len() <= *index {
                    self.tool_calls.push(ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                }
                self.tool_calls[*index].id.clone_from(id);
                self.tool_calls[*index].name.clone_from(name);
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                if let Some(call) = self.tool_calls.get_mut(*index) {
                    call.arguments.push_str(arguments);
                }
            }
            StreamEvent::ToolCallArguments { index, arguments } => {
                if let Some(call) = self.tool_calls.get_mut(*index) {
                    call.arguments.clone_from(arguments);
                }
            }
            StreamEvent::ToolCallPastBound { bound, id, name } => {
                let past = self.past_bound.get_or_insert_with(|| PastBound {
                    bound: *bound,
                    calls: Vec::new(),
                });
                past.calls.push(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                });
            }
            StreamEvent::Usage(usage) => self.usage = *usage,
            StreamEvent::Finish(reason) => self.finish = Some(reason.clone()),
            StreamEvent::Retrying { .. } | StreamEvent::Done => {}
        }
    }
}

/// Merges `extra` into a request body (its fields win).
pub fn merge_extra_body(body: &mut Value, extra: &serde_json::Map<String, Value>) {
    if let Value::Object(map) = body {
        for (key, value) in extra {
            map.insert(key.clone(), value.clone());
        }
    }
}

/// What goes into a request body besides the conversation, by the kind of
/// request: the output cap and the user's extra fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BodyExtras {
    /// `[model] max_output_tokens`: the cap a turn's requests carry.
    pub max_output_tokens: Option<u32>,
    /// `[model] extra_body`: every request of a turn.
    pub extra_body: serde_json::Map<String, Value>,
    /// `[model] first_request_extra_body`: the first request of a turn only
    /// (after `extra_body`, so its fields win).
    pub first_request_extra_body: serde_json::Map<String, Value>,
    /// `[model.compaction] max_output_tokens`; the turn's cap when unset.
    pub compaction_max_output_tokens: Option<u32>,
    /// `[model.compaction] extra_body`: compaction requests only; nothing
    /// of `extra_body` goes into them.
    pub compaction_extra_body: serde_json::Map<String, Value>,
    /// The small profile: a turn's requests that offer tools force a call
    /// (`tool_choice`, in each wire's words; an extra field of that name
    /// wins).
    pub force_tool_call: bool,
}

impl BodyExtras {
    /// Whether a request of `kind` that offers tools forces a call: a
    /// turn's requests under the small profile, never compaction's or the
    /// judge's.
    pub fn forces_tool_call(&self, kind: RequestKind) -> bool {
        self.force_tool_call && matches!(kind, RequestKind::TurnFirst | RequestKind::TurnNext)
    }

    /// The output cap a request of `kind` carries under `cap_field`, as
    /// its body ends up (an extra field of the same name wins).
    pub fn cap(&self, kind: RequestKind, cap_field: &str) -> Option<u32> {
        let mut body = Value::Object(serde_json::Map::new());
        self.apply(&mut body, kind, cap_field);
        body.get(cap_field)
            .and_then(Value::as_u64)
            .and_then(|cap| u32::try_from(cap).ok())
    }

    /// Puts the output cap (under the wire's own field name) and the extra
    /// fields for `kind` into `body`.
    pub fn apply(&self, body: &mut Value, kind: RequestKind, cap_field: &str) {
        let cap = match kind {
            RequestKind::Compaction => self.compaction_max_output_tokens.or(self.max_output_tokens),
            _ => self.max_output_tokens,
        };
        if let (Some(cap), Value::Object(map)) = (cap, &mut *body) {
            map.insert(cap_field.to_string(), Value::from(cap));
        }
        match kind {
            RequestKind::TurnFirst => {
                merge_extra_body(body, &self.extra_body);
                merge_extra_body(body, &self.first_request_extra_body);
            }
            RequestKind::TurnNext => merge_extra_body(body, &self.extra_body),
            RequestKind::Compaction => merge_extra_body(body, &self.compaction_extra_body),
            RequestKind::Isolated => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_in_force_is_the_body_s_own_and_reaching_it_is_cut_off() {
        let mut extras = BodyExtras {
            max_output_tokens: Some(100),
            compaction_max_output_tokens: Some(40),
            ..Default::default()
        };
        assert_eq!(extras.cap(RequestKind::TurnFirst, "max_tokens"), Some(100));
        assert_eq!(extras.cap(RequestKind::Compaction, "max_tokens"), Some(40));
        assert_eq!(extras.cap(RequestKind::Isolated, "max_tokens"), Some(100));
        // An extra field of the cap's own name is what the service gets.
        extras
            .extra_body
            .insert("max_tokens".into(), Value::from(300));
        assert_eq!(extras.cap(RequestKind::TurnNext, "max_tokens"), Some(300));
        assert_eq!(
            extras.cap(RequestKind::TurnNext, "max_output_tokens"),
            Some(100)
        );
        let mut response = Response {
            text: "The answer is".into(),
            usage: Usage {
                input_tokens: 9,
                output_tokens: 300,
            },
            finish: Some(FinishReason::Stop),
            ..Default::default()
        };
        response.check_cap(Some(301));
        assert_eq!(response.finish, Some(FinishReason::Stop));
        response.check_cap(None);
        assert_eq!(response.finish, Some(FinishReason::Stop));
        response.check_cap(Some(300));
        assert_eq!(response.finish, Some(FinishReason::Length));
    }

    #[test]
    fn repeated_call_ids_are_made_unique_past_the_bound_too() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: String::new(),
        };
        let mut response = Response {
            tool_calls: vec![call("c0"), call("c0"), call("c0-2"), call("c1")],
            past_bound: Some(PastBound {
                bound: 4,
                calls: vec![call("c0"), call("c1")],
            }),
            ..Response::default()
        };
        response.unique_call_ids();
        let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c0", "c0-3", "c0-2", "c1"]);
        let past = response.past_bound.unwrap();
        let ids: Vec<&str> = past.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c0-4", "c1-2"]);
        // Ids already unique stay as they came.
        let mut unique = Response {
            tool_calls: vec![call("a"), call("b")],
            ..Response::default()
        };
        unique.unique_call_ids();
        assert_eq!(unique.tool_calls[1].id, "b");
    }

    #[test]
    fn a_context_error_gives_the_request_size_when_it_says_it() {
        let error = |message: &str| ModelError::Status {
            service: "llama.cpp".into(),
            status: 400,
            message: message.into(),
        };
        let llama = error(
            "the request exceeds the available context size (9884 tokens > 4096 tokens), try increasing it",
        );
        assert!(llama.says_context_exceeded());
        assert_eq!(llama.counted_tokens(), Some(9884));
        assert_eq!(llama.stated_window(), Some(4096));
        let openai = error(
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        );
        assert_eq!(openai.counted_tokens(), Some(9000));
        assert_eq!(openai.stated_window(), Some(8192));
        assert_eq!(
            error("exceeds the available context size").counted_tokens(),
            None
        );
    }
}
