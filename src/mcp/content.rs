//! A tool call's result as the model receives it: text content as text,
//! images, audio and binary resources as a short placeholder, resource links
//! as a line naming the link, structured content (`structuredContent`) as
//! its JSON unless a text block already carries it, `isError` as an error
//! result, and the whole kept within a byte limit (a head and a tail, like
//! bash's output). Redaction follows, for every result alike (the driver).
//! Never talks to a server.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::question::TypedAnswers;
use crate::tools::ToolOutcome;

/// The result's content blocks as one text.
fn render(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        parts.push(block_text(block));
    }
    if let Some(structured) = &result.structured_content
        && !carried_as_text(structured, &result.content)
    {
        parts.push(if parts.is_empty() {
            structured.to_string()
        } else {
            format!("[structured content]\n{structured}")
        });
    }
    parts.join("\n")
}

/// One content block as text: text as itself, media and binary resources
/// as a placeholder, a resource link as a line naming it.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[image: {}, {} bytes, not shown]",
            image.mime_type,
            decoded_len(&image.data)
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, {} bytes, not shown]",
            audio.mime_type,
            decoded_len(&audio.data)
        ),
        ContentBlock::Resource(embedded) => resource_text(&embedded.resource),
        ContentBlock::ResourceLink(link) => resource_link(link),
        _ => "[content of an unknown kind, not shown]".to_string(),
    }
}

/// Whether a text block already is `structured` as JSON (the
/// specification asks servers to send both; the model needs it once).
fn carried_as_text(structured: &serde_json::Value, content: &[ContentBlock]) -> bool {
    content.iter().any(|block| match block {
        ContentBlock::Text(text) => {
            serde_json::from_str::<serde_json::Value>(&text.text)
                .ok()
                .as_ref()
                == Some(structured)
        }
        _ => false,
    })
}

/// `[resource link: NAME <URI>, MIME, SIZE bytes: DESCRIPTION]`, with only
/// the parts the server gave; the server's words, on one line.
fn resource_link(link: &rmcp::model::Resource) -> String {
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut said = format!(
        "[resource link: {} <{}>",
        one_line(&link.name),
        one_line(&link.uri)
    );
    if let Some(mime) = &link.mime_type {
        said.push_str(&format!(", {}", one_line(mime)));
    }
    if let Some(size) = link.size {
        said.push_str(&format!(", {size} bytes"));
    }
    if let Some(description) = link.description.as_deref().filter(|d| !d.trim().is_empty()) {
        said.push_str(&format!(": {}", one_line(description)));
    }
    said.push(']');
    said
}

/// The size of base64 `data` once decoded.
/// A resource's contents as text: its text under a line naming it, or a
/// placeholder for a binary one. One form for an embedded resource and a
/// resource read alike.
pub fn resource_text(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("[resource {uri}]\n{text}")
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => format!(
            "[resource {uri}: {}, {} bytes, not shown]",
            mime_type.as_deref().unwrap_or("binary"),
            decoded_len(blob)
        ),
        _ => "[resource of an unknown kind, not shown]".to_string(),
    }
}

fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// `text` kept to `limit` bytes: the first and last halves, with a marker
/// saying how much was left out.
pub fn cap(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let half = limit / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let omitted = tail_start - head_end;
    format!(
        "{}\n[... {omitted} bytes of output left out; the first and last bytes are kept ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// The outcome the model receives for `result`.
/// Answers typed into the server's questions are hidden before the cap, so
/// no cut leaves part of one.
pub fn outcome(result: &CallToolResult, limit: usize, typed: &TypedAnswers) -> ToolOutcome {
    let text = cap(&typed.hide(&render(result)), limit);
    if result.is_error == Some(true) {
        ToolOutcome::error(if text.is_empty() {
            "The tool reported an error without a message.".to_string()
        } else {
            text
        })
    } else {
        ToolOutcome::completed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolStatus;

    fn result(json: serde_json::Value) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn text_images_and_errors() {
        let r = result(serde_json::json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
            ]
        }));
        let o = outcome(&r, 1000, &TypedAnswers::default());
        assert_eq!(o.status, ToolStatus::Completed);
        assert_eq!(o.output, "hello\n[image: image/png, 5 bytes, not shown]");
        let r = result(serde_json::json!({
            "content": [{"type": "text", "text": "no such file"}],
            "isError": true
        }));
        let o = outcome(&r, 1000, &TypedAnswers::default());
        assert_eq!(o.status, ToolStatus::Error);
        assert_eq!(o.output, "no such file");
    }

    #[test]
    fn structured_content_is_text_once() {
        // Carried by a text block too (what servers are asked to do): once.
        let r = result(serde_json::json!({
            "content": [{"type": "text", "text": "{\"temperature\": 33, \"humidity\": 82}"}],
            "structuredContent": {"humidity": 82, "temperature": 33}
        }));
        assert_eq!(
            outcome(&r, 1000, &TypedAnswers::default()).output,
            "{\"temperature\": 33, \"humidity\": 82}"
        );
        // Alone, or beside other text: its JSON, marked.
        let r = result(serde_json::json!({
            "content": [], "structuredContent": {"a": [1, 2]}
        }));
        assert_eq!(
            outcome(&r, 1000, &TypedAnswers::default()).output,
            "{\"a\":[1,2]}"
        );
        let r = result(serde_json::json!({
            "content": [{"type": "text", "text": "the weather"}],
            "structuredContent": {"a": 1}
        }));
        assert_eq!(
            outcome(&r, 1000, &TypedAnswers::default()).output,
            "the weather\n[structured content]\n{\"a\":1}"
        );
        // Bounded like any output.
        let r = result(serde_json::json!({
            "content": [], "structuredContent": {"big": "x".repeat(10_000)}
        }));
        let o = outcome(&r, 200, &TypedAnswers::default());
        assert!(o.output.len() < 400, "{}", o.output.len());
        assert!(o.output.contains("bytes of output left out"));
    }

    #[test]
    fn resource_links_name_what_they_point_to_on_one_line() {
        let r = result(serde_json::json!({
            "content": [
                {"type": "resource_link", "uri": "demo://resource/static/document/1.txt",
                 "name": "Text\nResource 1", "mimeType": "text/plain", "size": 12,
                 "description": "a line\r\nand another"},
                {"type": "resource_link", "uri": "file:///b.bin", "name": "b"}
            ]
        }));
        assert_eq!(
            outcome(&r, 1000, &TypedAnswers::default()).output,
            "[resource link: Text Resource 1 <demo://resource/static/document/1.txt>, text/plain, 12 bytes: a line and another]\n[resource link: b <file:///b.bin>]"
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let text = format!("{}{}", "a".repeat(1000), "é".repeat(1000));
        let capped = cap(&text, 100);
        assert!(capped.starts_with(&"a".repeat(50)));
        assert!(capped.ends_with("é"));
        assert!(capped.contains("bytes of output left out"));
        assert!(capped.len() < 200);
    }
}
