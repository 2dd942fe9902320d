//! `@path` in a prompt attaches that project file. The attachment is a real
//! `read_file` call, made as the turn's first response instead of the
//! model's: it is announced, decided (a protected path is denied, a path
//! through a link or outside the project refused, as for any call), run,
//! shown in the chat and saved with its result, so the model reads the
//! file the way it would have read it itself. Only parses the prompt; never
//! opens a file.

use serde_json::json;

use crate::model::{FinishReason, Response, ToolCall};

/// At most this many files are attached from one prompt.
pub const MAX_ATTACHED: usize = 8;

/// The paths a prompt mentions as `@path`, in order, each once: a word
/// that starts with `@` (at the start or after whitespace), without the
/// punctuation that ends a sentence.
pub fn mentions(prompt: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', ';', ':', '.', '!', '?', ')', '"', '\'', '`']);
        if path.is_empty() || path.contains('@') || paths.iter().any(|p| p == path) {
            continue;
        }
        paths.push(path.to_string());
        if paths.len() == MAX_ATTACHED {
            break;
        }
    }
    paths
}

/// The response that reads every mentioned file, or `None` when the prompt
/// mentions none. `salt` keeps the call ids unique within the session.
pub fn response(prompt: &str, salt: usize) -> Option<Response> {
    let paths = mentions(prompt);
    if paths.is_empty() {
        return None;
    }
    let tool_calls = paths
        .iter()
        .enumerate()
        .map(|(i, path)| ToolCall {
            id: format!("attach-{salt}-{}", i + 1),
            name: "read_file".into(),
            arguments: json!({ "path": path }).to_string(),
        })
        .collect();
    Some(Response {
        text: String::new(),
        tool_calls,
        usage: Default::default(),
        finish: Some(FinishReason::Stop),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_that_start_with_at() {
        assert_eq!(
            mentions("Compare @src/a.rs with @notes.md, and @src/a.rs again."),
            vec!["src/a.rs", "notes.md"]
        );
        assert!(mentions("mail me at bob@example.com or @ alone").is_empty());
        assert_eq!(mentions("(see @README.md)"), vec!["README.md"]);
    }

    #[test]
    fn the_response_reads_each_file_once() {
        let response = response("read @a.txt and @.env", 4).unwrap();
        let calls: Vec<(&str, &str, &str)> = response
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("attach-4-1", "read_file", r#"{"path":"a.txt"}"#),
                ("attach-4-2", "read_file", r#"{"path":".env"}"#),
            ]
        );
        assert!(super::response("no files here", 0).is_none());
    }
}
