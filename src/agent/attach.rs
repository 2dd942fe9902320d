//! `@path` in a prompt attaches that project file, `@server:uri` that
//! resource of the MCP server `server`. The attachment is a real
//! `read_file` (or MCP resource) call, made as the turn's first response instead of the
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

/// The call that attaches `mention`: a resource read when it starts with
/// the name of one of `servers` and a colon, else a file read.
fn attachment(mention: &str, servers: &[String]) -> (String, String) {
    if let Some((server, uri)) = mention.split_once(':')
        && !uri.is_empty()
        && servers.iter().any(|s| s == server)
    {
        return (
            crate::mcp::resource::RESOURCE_TOOL.to_string(),
            json!({ "server": server, "uri": uri }).to_string(),
        );
    }
    (
        "read_file".to_string(),
        json!({ "path": mention }).to_string(),
    )
}

/// Whether `response` reads an MCP resource.
pub fn reads_resource(response: &Response) -> bool {
    response
        .tool_calls
        .iter()
        .any(|c| c.name == crate::mcp::resource::RESOURCE_TOOL)
}

/// The response that reads every mentioned file or resource, or `None`
/// when the prompt mentions none. `salt` keeps the call ids unique within
/// the session; `servers` are the MCP servers a mention may name.
pub fn response(prompt: &str, salt: usize, servers: &[String]) -> Option<Response> {
    let paths = mentions(prompt);
    if paths.is_empty() {
        return None;
    }
    let tool_calls = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let (name, arguments) = attachment(path, servers);
            ToolCall {
                id: format!("attach-{salt}-{}", i + 1),
                name,
                arguments,
            }
        })
        .collect();
    Some(Response {
        text: String::new(),
        tool_calls,
        usage: Default::default(),
        finish: Some(FinishReason::Stop),
        past_bound: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_naming_a_server_reads_its_resource() {
        let servers = ["docs".to_string()];
        let response = response(
            "see @docs:demo://a/b.md and @other:x and @docs:",
            1,
            &servers,
        )
        .unwrap();
        let calls: Vec<(&str, &str)> = response
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("mcp-resource", r#"{"server":"docs","uri":"demo://a/b.md"}"#),
                ("read_file", r#"{"path":"other:x"}"#),
                ("read_file", r#"{"path":"docs"}"#),
            ]
        );
    }

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
        let response = response("read @a.txt and @.env", 4, &[]).unwrap();
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
        assert!(super::response("no files here", 0, &[]).is_none());
    }
}
