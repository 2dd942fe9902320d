//! The OpenAI chat completions wire format (also Ollama, llama.cpp's server,
//! vLLM, LM Studio, OpenRouter): the request body and the reading of its
//! `chat.completion.chunk` events. Never retries or times out by itself
//! (`http` and `sse` do) and never sends a key it was not given.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::sse::Event;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::chat_chunk::TextChunk;
use super::config::{MaxTokensField, ProviderConfig};
use super::history::wire_arguments;
use super::history::{Entry, entries};
use super::http::{HttpEndpoint, bearer_headers, error_text};
use super::sse::{Decoder, WireError, count, event_name, finish, json_data, stream_request};
use super::{
    BodyExtras, EventStream, FinishReason, ModelError, Provider, Request, RequestKind, StreamEvent,
    Usage,
};

/// A chat completions service.
#[derive(Debug)]
pub struct OpenAiChat {
    endpoint: Arc<HttpEndpoint>,
    model: String,
    extras: BodyExtras,
    /// The field the output cap goes in.
    cap_field: MaxTokensField,
}

impl OpenAiChat {
    pub fn new(cfg: &ProviderConfig) -> Result<Self, ModelError> {
        let headers = bearer_headers(cfg)?;
        Ok(Self {
            endpoint: Arc::new(HttpEndpoint::new(cfg, "chat/completions", headers)?),
            model: cfg.model.clone(),
            extras: cfg.extras.clone(),
            cap_field: cfg
                .max_tokens_field
                .unwrap_or_else(|| MaxTokensField::for_base_url(&cfg.base_url)),
        })
    }

    /// The JSON body for `request`.
    pub fn body(&self, request: &Request) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for entry in entries(&request.items) {
            messages.push(message(entry));
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        },
                    })
                })
                .collect();
            body["tools"] = Value::Array(tools);
            if self.extras.forces_tool_call(request.kind) {
                body["tool_choice"] = json!("required");
            }
        }
        self.extras
            .apply(&mut body, request.kind, self.cap_field.as_str());
        body
    }
}

fn message(entry: Entry<'_>) -> Value {
    match entry {
        Entry::User(text) => json!({"role": "user", "content": text}),
        Entry::Assistant { text, calls: [] } => {
            json!({"role": "assistant", "content": text})
        }
        Entry::Assistant { text, calls } => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": wire_arguments(&call.arguments)},
                    })
                })
                .collect();
            let content = if text.is_empty() {
                Value::Null
            } else {
                Value::String(text.to_string())
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Entry::Result {
            call_id, output, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": output}),
    }
}

impl Provider for OpenAiChat {
    fn model(&self) -> &str {
        &self.model
    }

    fn output_cap(&self, kind: RequestKind) -> Option<u32> {
        self.extras.cap(kind, self.cap_field.as_str())
    }

    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream {
        let body = self.body(&request);
        let sent = self.cap_field;
        let decoder = ChatDecoder {
            strict: self.endpoint.strict(),
            ..ChatDecoder::default()
        };
        let events = stream_request(self.endpoint.clone(), body, decoder, cancel);
        Box::pin(events.map(move |event| event.map_err(|error| cap_field_hint(error, sent))))
    }
}

/// A 400 that refuses the output cap's field and names the other one gets
/// the setting that sends the other one.
fn cap_field_hint(error: ModelError, sent: MaxTokensField) -> ModelError {
    let other = match sent {
        MaxTokensField::MaxTokens => MaxTokensField::MaxCompletionTokens,
        MaxTokensField::MaxCompletionTokens => MaxTokensField::MaxTokens,
    };
    match error {
        ModelError::Status {
            service,
            status: 400,
            message,
        } if message.contains(&format!("'{}'", sent.as_str()))
            && message.contains(&format!("'{}'", other.as_str())) =>
        {
            ModelError::Status {
                service,
                status: 400,
                message: format!(
                    "{message} (mino sent the output cap as {}; set `[model] max_tokens_field = \"{}\"` in the settings to send it as the service asks)",
                    sent.as_str(),
                    other.as_str()
                ),
            }
        }
        other => other,
    }
}

/// Reads `chat.completion.chunk` events up to `[DONE]`.
#[derive(Debug, Default)]
pub struct ChatDecoder {
    /// The service's tool call index → ours, in order of appearance.
    calls: HashMap<u64, usize>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    /// `ProviderConfig::strict`: a second choice, or reasoning text, is
    /// malformed.
    strict: bool,
}

impl Decoder for ChatDecoder {
    fn completion_event(&self) -> &'static str {
        "[DONE]"
    }

    fn decode(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<(), WireError> {
        if event.data.trim() == "[DONE]" {
            self.push_finish(out);
            finish(self.usage.take(), out);
            return Ok(());
        }
        if let Some(chunk) = TextChunk::read(&event.data) {
            if let Some(text) = chunk.text.filter(|text| !text.is_empty()) {
                out.push_back(StreamEvent::TextDelta(text.into_owned()));
            }
            if let Some(reason) = chunk.finish_reason {
                self.finish_reason = Some(reason.into_owned());
            }
            return Ok(());
        }
        let chunk = json_data(event)?;
        self.decode_value(event, &chunk, out)
    }

    /// Some servers end the body after `finish_reason` without `[DONE]`;
    /// the response is whole then.
    fn body_ended(&mut self, out: &mut VecDeque<StreamEvent>) -> bool {
        if self.finish_reason.is_none() {
            return false;
        }
        self.push_finish(out);
        finish(self.usage.take(), out);
        true
    }
}

impl ChatDecoder {
    /// A chunk read whole as JSON: anything `TextChunk` does not cover.
    fn decode_value(
        &mut self,
        event: &Event,
        chunk: &Value,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), WireError> {
        if let Some(error) = chunk.get("error") {
            return Err(WireError::Service(error_text(error)));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = Some(Usage {
                input_tokens: count(usage.get("prompt_tokens")),
                output_tokens: count(usage.get("completion_tokens")),
            });
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        if self.strict {
            strict_choices(event, choices.map_or(&[][..], Vec::as_slice))?;
        }
        let Some(choice) = choices.and_then(|choices| choices.first()) else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push_back(StreamEvent::TextDelta(text.to_string()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.tool_call(position, call, out);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }
}

/// A strict answer's choices: at most one, the first (index 0), with no
/// reasoning text.
fn strict_choices(event: &Event, choices: &[Value]) -> Result<(), WireError> {
    let malformed = |message: &str| WireError::Malformed {
        event: event_name(event).to_string(),
        message: message.to_string(),
    };
    if choices.len() > 1 {
        return Err(malformed("the answer holds more than one choice"));
    }
    let Some(choice) = choices.first() else {
        return Ok(());
    };
    if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
        return Err(malformed("the answer holds a second choice"));
    }
    let delta = choice.get("delta");
    for field in ["reasoning_content", "reasoning"] {
        let said = delta.and_then(|d| d.get(field));
        if said.is_some_and(|r| r.as_str().is_none_or(|t| !t.is_empty()) && !r.is_null()) {
            return Err(malformed("the answer holds reasoning text"));
        }
    }
    Ok(())
}

impl ChatDecoder {
    fn push_finish(&mut self, out: &mut VecDeque<StreamEvent>) {
        if let Some(reason) = self.finish_reason.take() {
            out.push_back(StreamEvent::Finish(FinishReason::from_wire(&reason)));
        }
    }

    fn tool_call(&mut self, position: usize, call: &Value, out: &mut VecDeque<StreamEvent>) {
        let key = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let function = call.get("function");
        let next = self.calls.len();
        let index = *self.calls.entry(key).or_insert_with(|| {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{next}"), str::to_string);
            let name = function
                .and_then(|function| function.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            out.push_back(StreamEvent::ToolCallStart {
                index: next,
                id,
                name,
            });
            next
        });
        let arguments = function.and_then(|function| function.get("arguments"));
        let arguments = match arguments {
            Some(Value::String(text)) => text.clone(),
            // A few servers send the arguments as an object.
            Some(value @ Value::Object(_)) => value.to_string(),
            _ => String::new(),
        };
        if !arguments.is_empty() {
            out.push_back(StreamEvent::ToolCallDelta { index, arguments });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// What the decoder makes of `data`, and what the general reading
    /// alone makes of it, each from a fresh decoder.
    fn both_ways(
        strict: bool,
        data: &str,
    ) -> (
        Result<Vec<StreamEvent>, String>,
        Result<Vec<StreamEvent>, String>,
    ) {
        let event = Event {
            event: String::new(),
            data: data.to_string(),
        };
        let run = |general: bool| {
            let mut decoder = ChatDecoder {
                strict,
                ..ChatDecoder::default()
            };
            let mut out = VecDeque::new();
            let decoded = if general {
                json_data(&event).and_then(|chunk| decoder.decode_value(&event, &chunk, &mut out))
            } else {
                decoder.decode(&event, &mut out)
            };
            decoded.map_err(|e| format!("{e:?}"))?;
            // What the chunk left to say when the body ends.
            decoder.body_ended(&mut out);
            Ok(out.into_iter().collect())
        };
        (run(false), run(true))
    }

    #[test]
    fn a_text_chunk_read_directly_means_what_the_general_reading_says() {
        let chunks = [
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi "},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"delta":{"content":"a \"quoted\"\nline \u00e9"}}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"delta":null,"finish_reason":"length"}]}"#,
            r#"{"choices":[{"index":null,"delta":{"content":"x","tool_calls":null,"reasoning_content":null}}]}"#,
            // Each of these is for the general reading.
            r#"{"choices":[{"delta":{"content":"x"}}],"error":null}"#,
            r#"{"choices":[{"delta":{"content":"x"}}],"error":{"message":"overloaded"}}"#,
            r#"{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
            r#"{"choices":[{"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"y"}}]}"#,
            r#"{"choices":[{"index":"0","delta":{"content":"y"}}]}"#,
            r#"{"choices":[{"delta":{"content":"x","reasoning_content":"hmm"}}]}"#,
            r#"{"choices":[{"delta":{"content":"x","reasoning":""}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"t","function":{"name":"read","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"content":7}}]}"#,
            r#"{"choices":[{"delta":{"content":"x"},"finish_reason":1}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1}}"#,
            r#"{"choices":{"delta":"x"}}"#,
            r#"{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}"#,
            r#"[1,2]"#,
            r#"{"choices":[{"delta":{"content":"cut"#,
        ];
        for strict in [false, true] {
            for data in chunks {
                let (direct, general) = both_ways(strict, data);
                assert_eq!(direct, general, "strict {strict}: {data}");
            }
        }
        // The common chunk is read directly, the others are not.
        assert!(TextChunk::read(chunks[0]).is_some());
        assert!(TextChunk::read(chunks[2]).is_some());
        for data in &chunks[6..] {
            assert_eq!(TextChunk::read(data), None, "{data}");
        }
    }
}
