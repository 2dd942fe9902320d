//! The OpenAI Responses wire format: `instructions` and `input` items
//! (`message`, `function_call`, `function_call_output`) in the body, and the
//! `response.*` events of its stream. Never retries or times out by itself
//! (`http` and `sse` do) and never asks the service to keep the conversation
//! (`store: false`; mino sends the whole history every time).

use std::collections::VecDeque;
use std::sync::Arc;

use super::sse::Event;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::config::ProviderConfig;
use super::history::wire_arguments;
use super::history::{Entry, entries};
use super::http::{HttpEndpoint, bearer_headers, error_text};
use super::sse::{Decoder, WireError, count, event_name, finish, json_data, stream_request};
use super::{
    BodyExtras, EventStream, FinishReason, ModelError, Provider, Request, RequestKind, StreamEvent,
    Usage,
};

/// A Responses API service.
#[derive(Debug)]
pub struct OpenAiResponses {
    endpoint: Arc<HttpEndpoint>,
    model: String,
    extras: BodyExtras,
}

impl OpenAiResponses {
    pub fn new(cfg: &ProviderConfig) -> Result<Self, ModelError> {
        let headers = bearer_headers(cfg)?;
        Ok(Self {
            endpoint: Arc::new(HttpEndpoint::new(cfg, "responses", headers)?),
            model: cfg.model.clone(),
            extras: cfg.extras.clone(),
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
            if self.extras.forces_tool_call(request.kind) {
                body["tool_choice"] = json!("required");
            }
        }
        self.extras
            .apply(&mut body, request.kind, "max_output_tokens");
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
                    "arguments": wire_arguments(&call.arguments),
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

    fn output_cap(&self, kind: RequestKind) -> Option<u32> {
        self.extras.cap(kind, "max_output_tokens")
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

/// The longest item id kept (services make ids of a few dozen bytes).
const MAX_ITEM_ID_BYTES: usize = 256;

/// One function call being streamed. Services name a call's events in
/// different ways: OpenAI by `output_index` and the item's `id`; llama.cpp
/// by `item_id` equal to the `call_id`, with neither in the added item.
#[derive(Debug)]
struct Call {
    /// Our index, in order of appearance.
    index: usize,
    output_index: Option<u64>,
    item_id: Option<String>,
    call_id: String,
    /// Whether its final arguments arrived (a `done` event).
    done: bool,
}

/// Reads `response.*` events up to `response.completed`.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    calls: Vec<Call>,
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
                if let Some(delta) = data.get("delta").and_then(Value::as_str)
                    && !delta.is_empty()
                    && let Some(call) = self.find(&data, None)
                {
                    out.push_back(StreamEvent::ToolCallDelta {
                        index: call.index,
                        arguments: delta.to_string(),
                    });
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(all) = data.get("arguments").and_then(Value::as_str) {
                    self.final_arguments(&data, None, all, out);
                }
            }
            "response.output_item.done" => {
                let item = data.get("item").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call")
                    && let Some(all) = item.get("arguments").and_then(Value::as_str)
                {
                    self.final_arguments(&data, Some(item), all, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                let reason = if kind == "response.incomplete" {
                    let why = data
                        .pointer("/response/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .unwrap_or("incomplete");
                    FinishReason::from_wire(why)
                } else {
                    FinishReason::Stop
                };
                out.push_back(StreamEvent::Finish(reason));
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
        let output_index = data.get("output_index").and_then(Value::as_u64);
        let given_id = item
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        // Kept to find the call's later events by; an id no service makes
        // is not kept (a response of many calls past the bound would hold
        // each), and its events are found by their output index.
        let item_id = given_id
            .filter(|id| id.len() <= MAX_ITEM_ID_BYTES)
            .map(str::to_string);
        if self.calls.iter().any(|call| {
            (output_index.is_some() && call.output_index == output_index)
                || (item_id.is_some() && call.item_id == item_id)
        }) {
            return;
        }
        let index = self.calls.len();
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .or(given_id)
            .filter(|id| !id.is_empty())
            .map_or_else(|| format!("call_{index}"), str::to_string);
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.push_back(StreamEvent::ToolCallStart {
            index,
            id: call_id.clone(),
            name,
        });
        // Some services put the whole arguments in the added item.
        if let Some(arguments) = item.get("arguments").and_then(Value::as_str)
            && !arguments.is_empty()
        {
            out.push_back(StreamEvent::ToolCallDelta {
                index,
                arguments: arguments.to_string(),
            });
        }
        self.calls.push(Call {
            index,
            output_index,
            item_id,
            call_id,
            done: false,
        });
    }

    /// The call an event is about: by its output index, by its item id
    /// (which llama.cpp sets to the call id), by the call id of a `done`
    /// item, or else the one call still open.
    fn find(&mut self, data: &Value, item: Option<&Value>) -> Option<&mut Call> {
        let output_index = data.get("output_index").and_then(Value::as_u64);
        let ids: Vec<&str> = [
            data.get("item_id"),
            item.and_then(|item| item.get("id")),
            item.and_then(|item| item.get("call_id")),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|id| !id.is_empty())
        .collect();
        let position = self
            .calls
            .iter()
            .position(|call| output_index.is_some() && call.output_index == output_index)
            .or_else(|| {
                self.calls.iter().position(|call| {
                    ids.iter()
                        .any(|id| call.item_id.as_deref() == Some(*id) || call.call_id == *id)
                })
            })
            .or_else(|| {
                let mut open = self.calls.iter().enumerate().filter(|(_, call)| !call.done);
                match (open.next(), open.next()) {
                    (Some((position, _)), None) => Some(position),
                    _ => None,
                }
            })?;
        self.calls.get_mut(position)
    }

    /// A call's whole arguments from a `done` event: final, whatever
    /// pieces came before.
    fn final_arguments(
        &mut self,
        data: &Value,
        item: Option<&Value>,
        all: &str,
        out: &mut VecDeque<StreamEvent>,
    ) {
        let Some(call) = self.find(data, item) else {
            return;
        };
        call.done = true;
        out.push_back(StreamEvent::ToolCallArguments {
            index: call.index,
            arguments: all.to_string(),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn feed(decoder: &mut ResponsesDecoder, data: Value) -> Vec<StreamEvent> {
        super::super::sse::tests::decode_one(decoder, "", &data)
    }

    #[test]
    fn an_item_id_no_service_makes_is_not_kept_and_its_events_still_find_the_call() {
        let mut decoder = ResponsesDecoder::default();
        let huge = "i".repeat(MAX_ITEM_ID_BYTES + 1);
        feed(
            &mut decoder,
            json!({"type": "response.output_item.added", "output_index": 3, "item":
                {"type": "function_call", "id": huge, "call_id": "call_1", "name": "bash"}}),
        );
        assert_eq!(decoder.calls.len(), 1);
        assert_eq!(decoder.calls[0].item_id, None, "not held");
        assert_eq!(decoder.calls[0].call_id, "call_1");
        let delta = feed(
            &mut decoder,
            json!({"type": "response.function_call_arguments.delta", "output_index": 3,
                "item_id": huge, "delta": "{\"command\":\"ls\"}"}),
        );
        assert!(
            delta.iter().any(|e| matches!(e,
                StreamEvent::ToolCallDelta { index: 0, arguments } if arguments == "{\"command\":\"ls\"}")),
            "{delta:?}"
        );
        // An id of a usual length is kept.
        let mut decoder = ResponsesDecoder::default();
        feed(
            &mut decoder,
            json!({"type": "response.output_item.added", "output_index": 0, "item":
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash"}}),
        );
        assert_eq!(decoder.calls[0].item_id.as_deref(), Some("fc_1"));
    }
}
