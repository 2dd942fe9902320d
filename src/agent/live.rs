//! The session in use: its log, its history, and what lives only in this
//! run (mode, remembered answers, last context use). Every item is on disk
//! before it joins history.

use crate::model::{Item, ToolCall};
use crate::policy::{Mode, SessionConsent};
use crate::session::{LogEntry, SessionLog};

pub struct LiveSession {
    pub id: String,
    pub log: SessionLog,
    pub history: Vec<Item>,
    pub mode: Mode,
    pub consent: SessionConsent,
    /// Input tokens of the last response, as the service reported them.
    pub input_tokens: u64,
    /// Calls acknowledged as interrupted when the session was opened, to be
    /// told after its banner.
    pub recovered: usize,
}

impl LiveSession {
    /// Appends `item` to the log (fsync) and then to history.
    pub fn save(&mut self, item: Item) -> Result<(), String> {
        self.log
            .append(&LogEntry::Item(item.clone()))
            .map_err(|e| e.to_string())?;
        self.history.push(item);
        Ok(())
    }

    /// Appends a non-item record (clear, compact).
    pub fn append_entry(&mut self, entry: &LogEntry) -> Result<(), String> {
        self.log.append(entry).map_err(|e| e.to_string())
    }

    /// The tool a call id belongs to, from history.
    pub fn tool_name(&self, call_id: &str) -> String {
        self.tool_call(call_id).map(|c| c.name).unwrap_or_default()
    }

    /// The call with this id, from history.
    pub fn tool_call(&self, call_id: &str) -> Option<ToolCall> {
        self.history.iter().rev().find_map(|item| match item {
            Item::Assistant { tool_calls, .. } => {
                tool_calls.iter().find(|c| c.id == call_id).cloned()
            }
            _ => None,
        })
    }
}
