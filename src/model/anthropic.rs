//! The Anthropic Messages wire format: `system`, alternating user and
//! assistant messages of content blocks (`tool_use`, and `tool_result`
//! blocks in the user message right after), and the `message_*` /
//! `content_block_*` events of its stream. Never retries or times out by
//! itself (`http` and `sse` do).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::sse::Event;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::config::ProviderConfig;
use super::history::{Entry, entries};
use super::http::{HttpEndpoint, error_text, secret_header};
use super::sse::{Decoder, WireError, count, event_name, finish, json_data, stream_request};
use super::{
    BodyExtras, EventStream, FinishReason, ModelError, Provider, Request, RequestKind,
    ResultStatus, StreamEvent, Usage,
};

/// The API version this format speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` is required; `extra_body` may override it.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// A Messages API service.
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Arc<HttpEndpoint>,
    model: String,
    extras: BodyExtras,
}

impl Anthropic {
    pub fn new(cfg: &ProviderConfig) -> Result<Self, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = cfg.api_key.as_deref().filter(|key| !key.is_empty()) {
            let (name, value) = secret_header("x-api-key", key)?;
            headers.insert(name, value);
        }
        Ok(Self {
            endpoint: Arc::new(HttpEndpoint::new(cfg, "messages", headers)?),
            model: cfg.model.clone(),
            extras: cfg.extras.clone(),
        })
    }

    /// The JSON body for `request`.
    pub fn body(&self, request: &Request) -> Value {
        let mut messages = Messages::default();
        for entry in entries(&request.items) {
            messages.push(entry);
        }
        let mut body = json!({
            "model": self.model,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "messages": messages.into_json(),
            "stream": true,
        });
        if !request.system.is_empty() {
            body["system"] = Value::String(request.system.clone());
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.parameters,
                    })
                })
                .collect();
            body["tools"] = Value::Array(tools);
            if self.extras.forces_tool_call(request.kind) {
                body["tool_choice"] = json!({"type": "any"});
            }
        }
        self.extras.apply(&mut body, request.kind, "max_tokens");
        body
    }
}

/// Messages being built; consecutive blocks of one role share a message,
/// so tool results and the user text after them form one user turn.
#[derive(Default)]
struct Messages {
    list: Vec<(&'static str, Vec<Value>)>,
}

impl Messages {
    fn push(&mut self, entry: Entry<'_>) {
        match entry {
            Entry::User(text) => self.block("user", text_block(&text)),
            Entry::Assistant { text, calls } => {
                self.block("assistant", text_block(text));
                for call in calls {
                    // A stored call whose arguments are not a JSON object is
                    // replayed with none; its result already says what failed.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    self.block(
                        "assistant",
                        Some(json!({
                            "type": "tool_use",
                            "id": call.id,
                            "name": call.name,
                            "input": input,
                        })),
                    );
                }
            }
            Entry::Result {
                call_id,
                status,
                output,
            } => self.block(
                "user",
                Some(json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": output,
                    "is_error": status != ResultStatus::Completed,
                })),
            ),
        }
    }

    fn block(&mut self, role: &'static str, block: Option<Value>) {
        let Some(block) = block else {
            return;
        };
        match self.list.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => self.list.push((role, vec![block])),
        }
    }

    fn into_json(self) -> Vec<Value> {
        self.list
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect()
    }
}

/// A text block, or none for empty text (the API refuses empty blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

impl Provider for Anthropic {
    fn model(&self) -> &str {
        &self.model
    }

    fn output_cap(&self, kind: RequestKind) -> Option<u32> {
        self.extras.cap(kind, "max_tokens")
    }

    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream {
        let body = self.body(&request);
        stream_request(
            self.endpoint.clone(),
            body,
            MessagesDecoder::default(),
            cancel,
        )
    }
}

/// A `tool_use` block being streamed.
#[derive(Debug)]
struct ToolBlock {
    index: usize,
    arguments: Arguments,
}

/// Where a `tool_use` block's arguments come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arguments {
    /// Nothing yet: `{}` if the block ends so.
    Awaited,
    /// `input_json_delta` pieces, passed on as they come.
    Streamed,
    /// The whole `input` of `content_block_start`, passed on at once (and
    /// never held: a response of many calls past the bound would keep
    /// each); deltas after it are ignored.
    FromStart,
}

/// Reads `message_*` and `content_block_*` events up to `message_stop`.
#[derive(Debug, Default)]
pub struct MessagesDecoder {
    /// Content block index → the tool call streamed in it.
    tools: HashMap<u64, ToolBlock>,
    usage: Option<Usage>,
    stop_reason: Option<FinishReason>,
}

impl Decoder for MessagesDecoder {
    fn completion_event(&self) -> &'static str {
        "message_stop"
    }

    fn decode(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<(), WireError> {
        let data = json_data(event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_else(|| event_name(event));
        let block_index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.count_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                self.block_start(block_index, block, out);
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if !text.is_empty() {
                            out.push_back(StreamEvent::TextDelta(text.to_string()));
                        }
                    }
                    Some("input_json_delta") => {
                        let json = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        if let Some(tool) = self.tools.get_mut(&block_index)
                            && !json.is_empty()
                            && tool.arguments != Arguments::FromStart
                        {
                            tool.arguments = Arguments::Streamed;
                            out.push_back(StreamEvent::ToolCallDelta {
                                index: tool.index,
                                arguments: json.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(tool) = self.tools.get_mut(&block_index)
                    && tool.arguments == Arguments::Awaited
                {
                    tool.arguments = Arguments::Streamed;
                    out.push_back(StreamEvent::ToolCallDelta {
                        index: tool.index,
                        arguments: "{}".to_string(),
                    });
                }
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    self.count_usage(usage);
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(FinishReason::from_wire(reason));
                }
            }
            "message_stop" => {
                if let Some(reason) = self.stop_reason.take() {
                    out.push_back(StreamEvent::Finish(reason));
                }
                finish(self.usage.take(), out);
            }
            "error" => {
                let error = data.get("error").unwrap_or(&data);
                return Err(WireError::Service(error_text(error)));
            }
            _ => {}
        }
        Ok(())
    }
}

impl MessagesDecoder {
    fn block_start(&mut self, block_index: u64, block: &Value, out: &mut VecDeque<StreamEvent>) {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !text.is_empty() {
                    out.push_back(StreamEvent::TextDelta(text.to_string()));
                }
            }
            Some("tool_use") => {
                if self.tools.contains_key(&block_index) {
                    return;
                }
                let index = self.tools.len();
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("toolu_{index}"), str::to_string);
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push_back(StreamEvent::ToolCallStart { index, id, name });
                let initial = block
                    .get("input")
                    .filter(|input| input.as_object().is_some_and(|map| !map.is_empty()));
                let arguments = match initial {
                    Some(input) => {
                        out.push_back(StreamEvent::ToolCallDelta {
                            index,
                            arguments: input.to_string(),
                        });
                        Arguments::FromStart
                    }
                    None => Arguments::Awaited,
                };
                self.tools
                    .insert(block_index, ToolBlock { index, arguments });
            }
            _ => {}
        }
    }

    /// Usage arrives in pieces: input at the start, output at the end.
    /// Cached input counts as input (it fills the context all the same).
    fn count_usage(&mut self, usage: &Value) {
        let current = self.usage.get_or_insert_with(Usage::default);
        let input = count(usage.get("input_tokens"))
            + count(usage.get("cache_creation_input_tokens"))
            + count(usage.get("cache_read_input_tokens"));
        if input > 0 {
            current.input_tokens = input;
        }
        if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64) {
            current.output_tokens = output;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn feed(decoder: &mut MessagesDecoder, data: Value) -> Vec<StreamEvent> {
        let name = data["type"].as_str().unwrap().to_string();
        super::super::sse::tests::decode_one(decoder, &name, &data)
    }

    fn arguments(events: &[StreamEvent]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { arguments, .. } => Some(arguments.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_blocks_whole_input_at_its_start_is_passed_on_at_once_and_never_held() {
        let mut decoder = MessagesDecoder::default();
        let start = feed(
            &mut decoder,
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}}),
        );
        // Passed on with the start: nothing of it waits for the block's end.
        assert_eq!(arguments(&start), vec![r#"{"command":"ls"}"#.to_string()]);
        let delta = feed(
            &mut decoder,
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": "{\"x\":1}"}}),
        );
        assert!(arguments(&delta).is_empty(), "the start's input wins");
        let stop = feed(
            &mut decoder,
            json!({"type": "content_block_stop", "index": 0}),
        );
        assert!(arguments(&stop).is_empty());
        // An empty input waits for deltas, or is `{}` at the end.
        let mut decoder = MessagesDecoder::default();
        feed(
            &mut decoder,
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}}),
        );
        let stop = feed(
            &mut decoder,
            json!({"type": "content_block_stop", "index": 0}),
        );
        assert_eq!(arguments(&stop), vec!["{}".to_string()]);
    }
}
