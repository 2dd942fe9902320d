//! A tool call's result as the model receives it: text content as text,
//! images, audio and binary resources as a short placeholder, `isError` as
//! an error result, and the whole kept within a byte limit (a head and a
//! tail, like bash's output). Never talks to a server.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::tools::ToolOutcome;

/// The result's content blocks as one text.
fn render(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        parts.push(match block {
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
            ContentBlock::Resource(embedded) => match &embedded.resource {
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
            },
            ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
            _ => "[content of an unknown kind, not shown]".to_string(),
        });
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    parts.join("\n")
}

/// The size of base64 `data` once decoded.
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
pub fn outcome(result: &CallToolResult, limit: usize) -> ToolOutcome {
    let text = cap(&render(result), limit);
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
        let o = outcome(&r, 1000);
        assert_eq!(o.status, ToolStatus::Completed);
        assert_eq!(o.output, "hello\n[image: image/png, 5 bytes, not shown]");
        let r = result(serde_json::json!({
            "content": [{"type": "text", "text": "no such file"}],
            "isError": true
        }));
        let o = outcome(&r, 1000);
        assert_eq!(o.status, ToolStatus::Error);
        assert_eq!(o.output, "no such file");
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
