//! The chat completions chunk almost every event of a streamed answer is:
//! one choice, the first, whose delta holds text and perhaps the reason it
//! finished. It is read straight into these fields, the text borrowed
//! where it has no escapes, rather than into a JSON tree of ordered maps,
//! which cost more than the rest of the event's handling. Anything else a
//! chunk may say (an error, usage, tool calls, reasoning, a second choice,
//! a field of an unexpected type) is not read here: such a chunk is left
//! to the general reading, which decides what it means.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;

/// A chunk that says text and nothing else `ChatDecoder` acts on.
#[derive(Debug, PartialEq, Eq)]
pub struct TextChunk<'a> {
    pub text: Option<Cow<'a, str>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    choices: [Choice<'a>; 1],
    /// An error, even a null one, is for the general reading.
    #[serde(default, deserialize_with = "present")]
    error: bool,
    /// Usage that is not null is for the general reading.
    usage: Option<IgnoredAny>,
}

/// True for a field that is there, whatever its value.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

#[derive(Deserialize)]
struct Choice<'a> {
    index: Option<u64>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    /// Any of these, not null, is for the general reading.
    tool_calls: Option<IgnoredAny>,
    reasoning_content: Option<IgnoredAny>,
    reasoning: Option<IgnoredAny>,
}

impl<'a> TextChunk<'a> {
    /// `data` read as a text chunk, or `None` when it is something else
    /// (or not JSON at all: the general reading names the fault).
    pub fn read(data: &'a str) -> Option<Self> {
        let chunk: Chunk<'a> = serde_json::from_str(data).ok()?;
        let [choice] = chunk.choices;
        if chunk.error || chunk.usage.is_some() || choice.index.unwrap_or(0) != 0 {
            return None;
        }
        let text = match choice.delta {
            Some(delta) => {
                if delta.tool_calls.is_some()
                    || delta.reasoning_content.is_some()
                    || delta.reasoning.is_some()
                {
                    return None;
                }
                delta.content
            }
            None => None,
        };
        Some(Self {
            text,
            finish_reason: choice.finish_reason,
        })
    }
}
