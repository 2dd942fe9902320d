//! A tool call the model wrote as text in its answer instead of through the
//! tool-call format (small local models do this): a JSON object, bare or in
//! a fence, whose `name` is a tool offered to the request and which has
//! `arguments`. The turn answers it with one reminder. Pure: no I/O; never
//! runs what it finds.

use serde_json::Value;

/// How many `{` of an answer are tried as the start of a call, so a huge
/// answer full of braces costs a bounded time.
const STARTS_TRIED: usize = 200;

/// The tool named by the first call written as text in `text`, when its
/// name is in `offered`.
pub fn written_call(text: &str, offered: &[String]) -> Option<String> {
    text.match_indices('{')
        .take(STARTS_TRIED)
        .find_map(|(at, _)| call_at(&text[at..], offered))
}

/// The call the JSON value at the start of `text` is, if it is one.
fn call_at(text: &str, offered: &[String]) -> Option<String> {
    let value = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    let name = value.get("name")?.as_str()?;
    let has_arguments = matches!(
        value.get("arguments"),
        Some(Value::Object(_) | Value::String(_))
    );
    (has_arguments && offered.iter().any(|tool| tool == name)).then(|| name.to_string())
}

/// The user-side line that answers a call written as text.
pub fn reminder(tool: &str) -> String {
    format!(
        "Your answer wrote a call to {tool} as text; nothing ran. To use a tool, call it through the tool-call format."
    )
}

/// The notice the front ends show.
pub fn notice(tool: &str) -> String {
    format!(
        "The model wrote a call to {tool} as text instead of calling it; nothing ran, and it was reminded to use the tool-call format."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["read_file".to_string(), "bash".to_string()]
    }

    #[test]
    fn a_fenced_or_bare_call_of_an_offered_tool_is_found() {
        let fenced = "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n```";
        assert_eq!(
            written_call(fenced, &offered()).as_deref(),
            Some("read_file")
        );
        let bare = r#"<tool_call>{"name":"bash","arguments":"{\"command\":\"ls\"}"}</tool_call>"#;
        assert_eq!(written_call(bare, &offered()).as_deref(), Some("bash"));
    }

    #[test]
    fn other_json_and_unknown_tools_are_not_calls() {
        for text in [
            "Done. The config is {\"name\": \"read_file\"} now.",
            r#"{"name": "write_file", "arguments": {"path": "x"}}"#,
            r#"{"name": "read_file", "arguments": 3}"#,
            r#"{"name": "read_file", "arguments": {"path": "#,
            "No JSON here at all.",
        ] {
            assert_eq!(written_call(text, &offered()), None, "{text}");
        }
        let braces = "{".repeat(100_000);
        assert_eq!(written_call(&braces, &offered()), None);
    }
}
