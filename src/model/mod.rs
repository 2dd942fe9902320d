//! Model services behind one `Provider` trait: a request (system prompt,
//! provider-neutral history, tool specs) in, a stream of events out. Wire
//! formats live one per file. Never decides and never runs a tool.

pub mod anthropic;
pub mod config;
mod history;
pub mod http;
pub mod openai_chat;
pub mod openai_responses;
pub mod scripted;
pub mod sse;

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
}

/// One request to a model service.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub system: String,
    pub items: Vec<Item>,
    pub tools: Vec<ToolSpec>,
}

/// Token counts a service reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
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
    Usage(Usage),
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
    #[error("{service}: no data for {seconds} s; the request was abandoned")]
    Stalled { service: String, seconds: u64 },
    #[error("{service} sent data that is not valid: {message}")]
    Malformed { service: String, message: String },
    #[error("the request was cancelled")]
    Cancelled,
    #[error("{0}")]
    Setup(String),
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send>>;

/// A model service.
pub trait Provider: Send + Sync {
    /// The model's name, for the status bar and the session line.
    fn model(&self) -> &str;

    /// Starts one streaming request. The stream ends after `Done` or the
    /// first error; cancelling `cancel` ends it with `ModelError::Cancelled`.
    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream;
}

/// A whole response, assembled from the stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
}

impl Response {
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
            StreamEvent::Usage(usage) => self.usage = *usage,
            StreamEvent::Done => {}
        }
    }
}

/// Merges `extra` (the `[model] extra_body` table) into a request body.
pub fn merge_extra_body(body: &mut Value, extra: &serde_json::Map<String, Value>) {
    if let Value::Object(map) = body {
        for (key, value) in extra {
            map.insert(key.clone(), value.clone());
        }
    }
}
