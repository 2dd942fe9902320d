//! Recovery of an interrupted tool turn, before the next request: every tool
//! call of the current turn that has no paired result gets an `interrupted`
//! result saying its outcome is unknown and that it was not run again. Calls
//! that have results are replayed as they are.
//!
//! Owns only that computation. Never runs, reruns or re-decides a call, never
//! reads a file: it returns the items to append, and the caller saves them.

use std::collections::HashSet;

use crate::model::{Item, ResultStatus};

/// The output the model receives for a call whose outcome is unknown.
pub const INTERRUPTED_OUTPUT: &str = "Interrupted: mino stopped before this call finished, so its outcome is unknown. It was not run again. Check the current state before relying on it.";

/// The items to append so `history` is well-formed before the next request:
/// one `ToolResult { status: Interrupted }` for each call of the current turn
/// (the assistant items after the last user prompt or summary) that has no
/// result, in the order the calls were made. Empty when nothing is missing,
/// so running it again after saving its items adds nothing.
pub fn recover(history: &[Item]) -> Vec<Item> {
    let start = history
        .iter()
        .rposition(|item| matches!(item, Item::User { .. } | Item::Summary { .. }))
        .map_or(0, |index| index + 1);
    let turn = history.get(start..).unwrap_or_default();
    let answered: HashSet<&str> = turn
        .iter()
        .filter_map(|item| match item {
            Item::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut acknowledged = HashSet::new();
    turn.iter()
        .filter_map(|item| match item {
            Item::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter(|call| {
            !answered.contains(call.id.as_str()) && acknowledged.insert(call.id.as_str())
        })
        .map(|call| Item::ToolResult {
            call_id: call.id.clone(),
            status: ResultStatus::Interrupted,
            output: INTERRUPTED_OUTPUT.to_owned(),
        })
        .collect()
}
