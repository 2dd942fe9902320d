//! `final_answer`: the small profile's way to end a turn whose every
//! request forces a tool call. Its one argument is the answer shown to the
//! person. The turn machine ends the turn with it when it is a response's
//! only call with a text answer; it is never decided, asked or run, and it
//! changes nothing. A call it cannot end a turn with gets an error result
//! saying how to call it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{PreparedCall, Tool, ToolContext, ToolError, ToolSpec, parse_args};

/// The tool's name, as the model calls it.
pub const NAME: &str = "final_answer";

/// The `final_answer` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct FinalAnswer;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    answer: String,
}

/// The answer of a `final_answer` call with `arguments` (its raw JSON
/// text), when they hold a non-empty `answer` and nothing else.
pub fn answer(arguments: &str) -> Option<String> {
    let value: Value = serde_json::from_str(arguments).ok()?;
    let args: Args = serde_json::from_value(value).ok()?;
    (!args.answer.trim().is_empty()).then_some(args.answer)
}

impl Tool for FinalAnswer {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "End the turn with your answer to the user: what you did, or why it \
                could not be done."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "answer": {"type": "string", "description": "The answer shown to the user."}
                },
                "required": ["answer"],
                "additionalProperties": false
            }),
        }
    }

    /// Reached only by a call the turn could not end with (beside other
    /// calls, or without an answer): nothing runs, the model is told how.
    fn prepare(&self, args: &Value, _cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        if args.answer.trim().is_empty() {
            return Err(ToolError::InvalidArguments {
                tool: NAME,
                message: "answer is empty; give the answer text".into(),
            });
        }
        Err(ToolError::Failed(
            "Not run: final_answer ends the turn only as the only call of a response. Call it again alone once the other calls' results are in.".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_text_answer_and_nothing_else_is_an_answer() {
        assert_eq!(answer(r#"{"answer":"Done."}"#).as_deref(), Some("Done."));
        assert_eq!(answer(r#"{"answer":"  "}"#), None);
        assert_eq!(answer(r#"{"answer":3}"#), None);
        assert_eq!(answer(r#"{"answer":"a","extra":1}"#), None);
        assert_eq!(answer(r#"{}"#), None);
        assert_eq!(answer("not json"), None);
        assert!(FinalAnswer.spec().description.len() < 120);
    }
}
