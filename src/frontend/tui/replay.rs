//! A resumed session's earlier conversation shown again in the chat: its
//! last items as entries, each result named by its call even when the
//! response that made it lies before them, and a run of identical results
//! as one entry with its count.

use std::collections::HashMap;

use crate::frontend::text;
use crate::model::Item;

use super::app::App;
use super::format;
use super::transcript::{EntryKind, ToolEntry};

/// The most items of a resumed session shown again.
const HISTORY_SHOWN: usize = 200;

/// A resumed session's earlier conversation, as chat entries.
pub fn history(app: &mut App, items: &[Item]) {
    let skip = items.len().saturating_sub(HISTORY_SHOWN);
    if skip > 0 {
        app.transcript.push(EntryKind::Notice(format!(
            "{skip} earlier items of this session are not shown."
        )));
    }
    let mut calls = earlier_calls(&items[..skip], &items[skip..]);
    for (item, count) in text::runs(&items[skip..]) {
        match item {
            Item::User { text } => app.transcript.push(EntryKind::User(text.clone())),
            Item::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    app.transcript.push(EntryKind::Assistant {
                        text: text.clone(),
                        streaming: false,
                    });
                    app.last_answer = Some(text.clone());
                }
                for call in tool_calls {
                    calls.insert(
                        &call.id,
                        (&call.name, format::call_summary(&call.arguments)),
                    );
                }
            }
            Item::ToolResult {
                call_id,
                status,
                output,
            } => {
                let (tool, mut summary) = calls
                    .remove(call_id.as_str())
                    .unwrap_or(("tool", String::new()));
                if let Some(note) = text::run_note(count) {
                    summary = format!("{summary} ({note})").trim_start().to_string();
                }
                let mut entry = ToolEntry::new(tool, summary);
                entry.finish(*status, output);
                app.transcript.push(EntryKind::Tool(entry));
            }
            Item::Summary { text } => app.transcript.push(EntryKind::Notice(format!(
                "Summary of the earlier conversation (lossy context):\n{text}"
            ))),
            Item::Reminder { text } => app.transcript.push(EntryKind::Notice(format!(
                "mino reminded the model: {text}"
            ))),
        }
    }
}

/// The tool and summary of each call of `earlier` items answered in `shown`
/// (a response of many calls may be far before its results).
fn earlier_calls<'a>(earlier: &'a [Item], shown: &[Item]) -> HashMap<&'a str, (&'a str, String)> {
    let answered: std::collections::HashSet<&str> = shown
        .iter()
        .filter_map(|item| match item {
            Item::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    earlier
        .iter()
        .filter_map(|item| match item {
            Item::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter(|call| answered.contains(call.id.as_str()))
        .map(|call| {
            let summary = format::call_summary(&call.arguments);
            (call.id.as_str(), (call.name.as_str(), summary))
        })
        .collect()
}
