//! The scripted model: plays the responses of a JSON script file, one per
//! request, streamed in small chunks like a real service, for the demo and
//! for tests. Never touches the network and never improvises: when the
//! script runs out it says so.
//!
//! ```json
//! {"responses": [
//!   {"after_prompt": "notes", "text": "Reading it.",
//!    "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.md"}}]},
//!   {"text": "It has 18 lines.", "chunk_chars": 4, "delay_ms": 20}
//! ]}
//! ```
//!
//! A request whose newest item is a user prompt containing some response's
//! `after_prompt` jumps to the first such response; any other request takes
//! the next one in order.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use futures_util::stream;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{EventStream, FinishReason, Item, ModelError, Provider, Request, StreamEvent, Usage};
use crate::small_file::{Links, read_text};

/// The largest script accepted.
const SCRIPT_LIMIT: u64 = 16 * 1024 * 1024;

/// Text is streamed in pieces of this many characters unless a response
/// says otherwise.
pub const DEFAULT_CHUNK_CHARS: usize = 16;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    responses: Vec<ScriptedResponse>,
}

/// One scripted model response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedResponse {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// Characters per text delta (default 16; 0 sends the text whole).
    pub chunk_chars: Option<usize>,
    /// A pause before each delta, in milliseconds.
    pub delay_ms: Option<u64>,
    /// Playback jumps here when a new user prompt contains this text.
    pub after_prompt: Option<String>,
    /// Why the response ends, in any wire's word (`stop`, `length`, ...);
    /// `length` plays an answer cut off at the output limit.
    pub finish_reason: Option<String>,
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Generated (`call_N`) when absent.
    pub id: Option<String>,
    pub name: String,
    /// Usually an object; a string is sent as the raw argument text (so a
    /// script can send arguments that are not valid JSON).
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Where playback stands.
#[derive(Debug, Default)]
struct Playback {
    next: usize,
    calls_made: u64,
}

/// A provider that plays a script.
#[derive(Debug)]
pub struct Scripted {
    origin: PathBuf,
    model: String,
    responses: Vec<ScriptedResponse>,
    playback: Mutex<Playback>,
}

impl Scripted {
    /// Reads and checks the script at `path`. Errors name the file and,
    /// for invalid JSON, the line and column.
    pub fn from_file(path: &Path, model: &str) -> Result<Self, ModelError> {
        let text = match read_text(path, SCRIPT_LIMIT, Links::Follow) {
            Ok(Some(text)) => text,
            Ok(None) => {
                return Err(ModelError::Setup(format!(
                    "cannot read the script {}: it does not exist",
                    path.display()
                )));
            }
            Err(err) => return Err(ModelError::Setup(format!("the script: {err}"))),
        };
        Self::parse(&text, path, model)
    }

    /// Checks a script's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path, model: &str) -> Result<Self, ModelError> {
        let invalid = |what: String| {
            ModelError::Setup(format!(
                "the script {} is not valid: {what}",
                origin.display()
            ))
        };
        let script: ScriptFile =
            serde_json::from_str(text).map_err(|err| invalid(err.to_string()))?;
        for (number, response) in script.responses.iter().enumerate() {
            let number = number + 1;
            if response.after_prompt.as_deref() == Some("") {
                return Err(invalid(format!(
                    "response {number}: `after_prompt` is empty"
                )));
            }
            if response
                .tool_calls
                .iter()
                .any(|call| call.name.trim().is_empty())
            {
                return Err(invalid(format!(
                    "response {number}: a tool call has no name"
                )));
            }
        }
        let model = if model.trim().is_empty() {
            "scripted"
        } else {
            model
        };
        Ok(Self {
            origin: origin.to_path_buf(),
            model: model.to_string(),
            responses: script.responses,
            playback: Mutex::new(Playback::default()),
        })
    }

    /// Picks the response for `request` and moves playback on.
    fn next_response(&self, request: &Request) -> (ScriptedResponse, u64) {
        let mut playback = self
            .playback
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(prompt) = new_prompt(request) {
            let jump = self.responses.iter().position(|response| {
                response
                    .after_prompt
                    .as_deref()
                    .is_some_and(|wanted| prompt.contains(wanted))
            });
            if let Some(index) = jump {
                playback.next = index;
            }
        }
        let response = match self.responses.get(playback.next) {
            Some(response) => {
                playback.next += 1;
                response.clone()
            }
            None => ScriptedResponse {
                text: format!(
                    "The script has ended: {} has no more responses.",
                    self.origin.display()
                ),
                tool_calls: Vec::new(),
                chunk_chars: None,
                delay_ms: None,
                after_prompt: None,
                finish_reason: None,
            },
        };
        let first_call = playback.calls_made;
        playback.calls_made += response.tool_calls.len() as u64;
        (response, first_call)
    }
}

/// The prompt of a request that starts a turn: its newest item is the
/// user's. Requests that carry tool results continue the current section.
fn new_prompt(request: &Request) -> Option<&str> {
    match request.items.last() {
        Some(Item::User { text }) => Some(text),
        _ => None,
    }
}

impl Provider for Scripted {
    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: Request, cancel: CancellationToken) -> EventStream {
        let (response, first_call) = self.next_response(&request);
        let events = events(&response, first_call, input_size(&request));
        let delay = Duration::from_millis(response.delay_ms.unwrap_or(0));
        let state = Some((events, cancel));
        Box::pin(stream::unfold(state, move |state| async move {
            let (mut events, cancel) = state?;
            let event = events.pop_front()?;
            if cancel.is_cancelled() {
                return Some((Err(ModelError::Cancelled), None));
            }
            if !delay.is_zero()
                && !matches!(
                    event,
                    StreamEvent::Usage(_) | StreamEvent::Finish(_) | StreamEvent::Done
                )
            {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Some((Err(ModelError::Cancelled), None)),
                    () = tokio::time::sleep(delay) => {}
                }
            }
            Some((Ok(event), Some((events, cancel))))
        }))
    }
}

/// The stream a response plays as: text deltas, each tool call's start and
/// argument pieces, usage, `Done`.
fn events(
    response: &ScriptedResponse,
    first_call: u64,
    input_chars: usize,
) -> VecDeque<StreamEvent> {
    let chunk = response.chunk_chars.unwrap_or(DEFAULT_CHUNK_CHARS);
    let mut out = VecDeque::new();
    for piece in pieces(&response.text, chunk) {
        out.push_back(StreamEvent::TextDelta(piece));
    }
    let mut output_chars = response.text.chars().count();
    for (index, call) in response.tool_calls.iter().enumerate() {
        let id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{}", first_call + index as u64 + 1));
        out.push_back(StreamEvent::ToolCallStart {
            index,
            id,
            name: call.name.clone(),
        });
        let arguments = match &call.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        output_chars += arguments.chars().count();
        for piece in pieces(&arguments, chunk) {
            out.push_back(StreamEvent::ToolCallDelta {
                index,
                arguments: piece,
            });
        }
    }
    if let Some(reason) = &response.finish_reason {
        out.push_back(StreamEvent::Finish(FinishReason::from_wire(reason)));
    }
    out.push_back(StreamEvent::Usage(Usage {
        input_tokens: estimate_tokens(input_chars),
        output_tokens: estimate_tokens(output_chars),
    }));
    out.push_back(StreamEvent::Done);
    out
}

/// `text` in pieces of `chunk` characters (whole when `chunk` is 0).
fn pieces(text: &str, chunk: usize) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    if chunk == 0 {
        return vec![text.to_string()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(chunk)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// Roughly what a service would count: four characters a token.
fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

fn input_size(request: &Request) -> usize {
    let items: usize = request
        .items
        .iter()
        .map(|item| match item {
            Item::User { text } | Item::Summary { text } | Item::Reminder { text } => text.len(),
            Item::Assistant { text, tool_calls } => {
                text.len()
                    + tool_calls
                        .iter()
                        .map(|call| call.name.len() + call.arguments.len())
                        .sum::<usize>()
            }
            Item::ToolResult { output, .. } => output.len(),
        })
        .sum();
    request.system.len() + items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_on_characters() {
        assert_eq!(pieces("héllo", 2), vec!["hé", "ll", "o"]);
        assert_eq!(pieces("abc", 0), vec!["abc"]);
        assert!(pieces("", 3).is_empty());
    }

    #[test]
    fn string_arguments_are_sent_raw() {
        let response = ScriptedResponse {
            text: String::new(),
            tool_calls: vec![ScriptedCall {
                id: None,
                name: "bash".into(),
                arguments: Value::String("{not json".into()),
            }],
            chunk_chars: Some(0),
            delay_ms: None,
            after_prompt: None,
            finish_reason: None,
        };
        let events: Vec<_> = events(&response, 4, 0).into_iter().collect();
        assert_eq!(
            events[0],
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_5".into(),
                name: "bash".into()
            }
        );
        assert_eq!(
            events[1],
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{not json".into()
            }
        );
    }
}
