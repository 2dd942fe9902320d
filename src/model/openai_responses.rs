//! The OpenAI Responses wire format: `instructions` and `input` items
//! (`message`, `function_call`, `function_call_output`) in the body, and the
//! `response.*` events of its stream. Never retries or times out by itself
//! (`http` and `sse` do) and never asks the service to keep the conversation
//! (`store: false`; mino sends the whole history every time).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use eventsource_stream::Event;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::config::ProviderConfig;
use super::history::{Entry, entries};
use super::http::{HttpEndpoint, bearer_headers, error_text};
use super::sse::{Decoder, WireError, count, event_name, finish, json_data, stream_request};
use super::{EventStream, ModelError, Provider, Request, StreamEvent, Usage, merge_extra_body};

/// A Responses API service.
#[derive(Debug)]
pub struct OpenAiResponses {
    endpoint: Arc<HttpEndpoint>,
    model: String,
    extra_body: Map<String, Value>,
}

impl OpenAiResponses {
    pub fn new(cfg: &ProviderConfig) -> Result<Self, ModelError> {
        let headers = bearer_headers(cfg)?;
        Ok(Self {
            endpoint: Arc::new(HttpEndpoint::new(cfg, "responses", headers)?),
            model: cfg.model.clone(),
            extra_body: cfg.extra_body.clone(),
        })
    }

    /// The JSON body for `request`.
    pub fn body(&self, request: &Request) -> Value {
        let mut input = Vec::new();
        for entry in entries(&request.items) {
            push_input(entry, &mut input);
        }
        let mut body = json!({
            "model": self.model,
            "input": input,
            "stream": true,
            "store": false,
        });
        if !request.system.is_empty() {
            body["instructions"] = Value::String(request.system.clone());
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    })
                })
                .collect();
            body["tools"] = Value::Array(tools);
        }
        merge_extra_body(&mut body, &self.extra_body);
        body
    }
}

fn push_input(entry: Entry<'_>, input: &mut Vec<Value>) {
    match entry {
        Entry::User(text) => input.push(json!({
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        })),
        Entry::Assistant { text, calls } => {
            if !text.is_empty() {
                input.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }));
            }
            for call in calls {
                input.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                }));
            }
        }
        Entry::Result {
            call_id, output, ..
        } => input.push(json!({
            "type": "function_call_output",
            "call_id": call_id,
            "output": output,
        })),
    }
}

impl Provider for OpenAiResponses {
    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream {
        let body = self.body(&request);
        stream_request(
            self.endpoint.clone(),
            body,
            ResponsesDecoder::default(),
            cancel,
        )
    }
}

/// One function call being streamed.
#[derive(Debug)]
struct Call {
    index: usize,
    /// Whether any arguments were passed on yet.
    streamed: bool,
}

/// Reads `response.*` events up to `response.completed`.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    /// By output index, the service's own key for an output item.
    calls: HashMap<u64, Call>,
    /// The service's item id → output index.
    item_ids: HashMap<String, u64>,
}

impl Decoder for ResponsesDecoder {
    fn completion_event(&self) -> &'static str {
        "response.completed"
    }

    fn decode(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<(), WireError> {
        let data = json_data(event)?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_else(|| event_name(event));
        match kind {
            "response.output_text.delta" => {
                if let Some(delta) = data.get("delta").and_then(Value::as_str)
                    && !delta.is_empty()
                {
                    out.push_back(StreamEvent::TextDelta(delta.to_string()));
                }
            }
            "response.output_item.added" => self.item_added(&data, out),
            "response.function_call_arguments.delta" => {
                let delta = data
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.arguments(&data, delta, false, out);
            }
            "response.function_call_arguments.done" => {
                let all = data
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.arguments(&data, all, true, out);
            }
            "response.output_item.done" => {
                let item = data.get("item");
                if item
                    .and_then(|item| item.get("type"))
                    .and_then(Value::as_str)
                    == Some("function_call")
                {
                    let all = item
                        .and_then(|item| item.get("arguments"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.arguments(&data, all, true, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                if kind == "response.incomplete" {
                    tracing::warn!(
                        reason = ?data.pointer("/response/incomplete_details/reason"),
                        "the model's response is incomplete"
                    );
                }
                let usage = data.pointer("/response/usage").filter(|u| u.is_object());
                let usage = usage.map(|usage| Usage {
                    input_tokens: count(usage.get("input_tokens")),
                    output_tokens: count(usage.get("output_tokens")),
                });
                finish(usage, out);
            }
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                let text = if error.is_null() {
                    "the response failed".to_string()
                } else {
                    error_text(error)
                };
                return Err(WireError::Service(text));
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

impl ResponsesDecoder {
    fn item_added(&mut self, data: &Value, out: &mut VecDeque<StreamEvent>) {
        let Some(item) = data.get("item") else {
            return;
        };
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let index = self.calls.len();
        let output_index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX - index as u64);
        if self.calls.contains_key(&output_index) {
            return;
        }
        if let Some(item_id) = item.get("id").and_then(Value::as_str) {
            self.item_ids.insert(item_id.to_string(), output_index);
        }
        let id = item
            .get("call_id")
            .or_else(|| item.get("id"))
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{index}"), str::to_string);
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.push_back(StreamEvent::ToolCallStart { index, id, name });
        let mut call = Call {
            index,
            streamed: false,
        };
        // Some services put the whole arguments in the added item.
        if let Some(arguments) = item.get("arguments").and_then(Value::as_str)
            && !arguments.is_empty()
        {
            call.streamed = true;
            out.push_back(StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.to_string(),
            });
        }
        self.calls.insert(output_index, call);
    }

    /// A piece of a call's arguments (`whole` false), or all of them
    /// (`whole` true), which count only when no piece came before.
    fn arguments(
        &mut self,
        data: &Value,
        text: &str,
        whole: bool,
        out: &mut VecDeque<StreamEvent>,
    ) {
        let output_index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .or_else(|| {
                data.get("item_id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.item_ids.get(id).copied())
            });
        let Some(call) = output_index.and_then(|key| self.calls.get_mut(&key)) else {
            return;
        };
        if text.is_empty() || (whole && call.streamed) {
            return;
        }
        call.streamed = true;
        out.push_back(StreamEvent::ToolCallDelta {
            index: call.index,
            arguments: text.to_string(),
        });
    }
}
