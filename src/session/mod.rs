//! Saved sessions: one append-only JSON-lines file per session,
//! `HOME/sessions/ID.jsonl` (file 0600, directory 0700), fsynced after every
//! record. Owns session ids, the record format, the store, replaying records
//! into history (`history`) and acknowledging interrupted tool calls
//! (`recover`).
//!
//! Never decides or runs a tool call, never rewrites or truncates a file, and
//! never writes a mode: a mode lives in memory only, so after a restart every
//! session starts in the start mode again.

pub mod format;
pub mod id;
pub mod model_choice;
pub mod plan;
mod read;
pub mod recover;
pub mod store;
pub mod summary;

use std::io;
use std::path::PathBuf;

use crate::model::Item;

pub use format::{CheckpointAt, CheckpointRecord, Header, Loaded, LogEntry};
pub use id::{InvalidId, SessionId};
pub use model_choice::{ModelChoice, last_model};
pub use plan::{Plan, PlanChange, PlanError, Step, StepStatus, last_plan};
pub use recover::{INTERRUPTED_OUTPUT, recover};
pub use store::{SessionLog, SessionStore, SessionSummary};

/// Why a session could not be created, saved, read or listed. Every text
/// names the file (or directory) and what failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    InvalidId(#[from] InvalidId),
    #[error("could not create a session id: the system's random source failed: {0}")]
    Random(String),
    #[error("could not create the sessions directory {}: {error}", path.display())]
    CreateDir { path: PathBuf, error: io::Error },
    #[error("could not create {}: {error}", path.display())]
    Create { path: PathBuf, error: io::Error },
    #[error(
        "no saved session id starts with {prefix:?} (in {}); /sessions --all lists every session",
        dir.display()
    )]
    NoMatch { prefix: String, dir: PathBuf },
    #[error("{prefix:?} is the start of more than one session id ({ids}); give more of the id")]
    Ambiguous { prefix: String, ids: String },
    #[error("no saved session {id} (there is no {})", path.display())]
    NotFound { id: SessionId, path: PathBuf },
    #[error("could not open {}: {error}", path.display())]
    Open { path: PathBuf, error: io::Error },
    #[error("{} is in use by another mino process; finish there first", path.display())]
    InUse { path: PathBuf },
    #[error("could not read {}: {error}", path.display())]
    Read { path: PathBuf, error: io::Error },
    #[error("could not save to {}: {error}", path.display())]
    Write { path: PathBuf, error: io::Error },
    #[error("could not save to {}: the record could not be encoded: {message}", path.display())]
    Encode { path: PathBuf, message: String },
    #[error(
        "{} line {line} is not a valid session record: {reason}. Nothing was changed; the file was left as it is.",
        path.display()
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{} is not a session file: {reason}", path.display())]
    NotSession { path: PathBuf, reason: String },
    #[error("could not delete {}: {error}", path.display())]
    Delete { path: PathBuf, error: io::Error },
    #[error("could not list the sessions in {}: {error}", path.display())]
    List { path: PathBuf, error: io::Error },
}

/// The history that `records` replay to: items in order, `Clear` empties it,
/// `Compact { summary, kept }` turns everything before the last `kept` items
/// into one `Item::Summary` (all items are kept when there are fewer),
/// `Shrink` replaces a result's output, `FullOutput` is not replayed, a
/// conversation `Rewind { to }` puts history back to what it was just
/// before the `to`-th `turn` checkpoint (checkpoints are not replayed).
pub fn history(records: &[LogEntry]) -> Vec<Item> {
    slots(records)
        .into_iter()
        .filter_map(|slot| match (slot, records.get(slot.at)) {
            (Slot { shrunk, .. }, Some(LogEntry::Item(item))) => {
                let mut item = item.clone();
                if let Some(Some(LogEntry::Shrink { output, .. })) =
                    shrunk.map(|at| records.get(at))
                {
                    set_output(&mut item, output.clone());
                }
                Some(item)
            }
            (_, Some(LogEntry::Compact { summary, .. })) => Some(Item::Summary {
                text: summary.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// [`history`], moving each item's text out of `records` instead of
/// copying it: a resumed session may hold many megabytes, and holding them
/// twice while it opens is most of what it costs.
pub fn into_history(records: Vec<LogEntry>) -> Vec<Item> {
    let slots = slots(&records);
    let mut uses = vec![0_usize; records.len()];
    for at in slots.iter().filter_map(|slot| slot.shrunk) {
        uses[at] += 1;
    }
    let mut records: Vec<Option<LogEntry>> = records.into_iter().map(Some).collect();
    let mut items = Vec::with_capacity(slots.len());
    for slot in slots {
        let output = slot
            .shrunk
            .and_then(|at| shrunk_output(&mut records, &mut uses, at));
        match records.get_mut(slot.at).and_then(Option::take) {
            Some(LogEntry::Item(mut item)) => {
                if let Some(output) = output {
                    set_output(&mut item, output);
                }
                items.push(item);
            }
            Some(LogEntry::Compact { summary, .. }) => items.push(Item::Summary { text: summary }),
            _ => {}
        }
    }
    items
}

/// The output of the `Shrink` record at `at`: moved out at its last use,
/// copied before.
fn shrunk_output(
    records: &mut [Option<LogEntry>],
    uses: &mut [usize],
    at: usize,
) -> Option<String> {
    let left = uses.get_mut(at)?;
    *left = left.saturating_sub(1);
    match records.get_mut(at)?.as_mut()? {
        LogEntry::Shrink { output, .. } if *left > 0 => Some(output.clone()),
        LogEntry::Shrink { output, .. } => Some(std::mem::take(output)),
        _ => None,
    }
}

/// Where one item of a replayed history comes from: the `Item` or
/// `Compact` record at `at`, with the output of the `Shrink` record at
/// `shrunk` when one replaced it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    at: usize,
    shrunk: Option<usize>,
}

/// The replay of [`history`], as the records each item comes from.
fn slots(records: &[LogEntry]) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    for (at, record) in records.iter().enumerate() {
        match record {
            LogEntry::Checkpoint(_) => {}
            LogEntry::Rewind {
                to,
                conversation: true,
                ..
            } => {
                let before = records.get(..at).unwrap_or_default();
                if let Some(cut) = turn_position(before, *to) {
                    slots = self::slots(before.get(..cut).unwrap_or_default());
                }
            }
            LogEntry::Rewind { .. } => {}
            LogEntry::Item(_) => slots.push(Slot { at, shrunk: None }),
            LogEntry::Clear => slots.clear(),
            LogEntry::Compact { kept, .. } => {
                let start = slots.len().saturating_sub(*kept);
                slots.drain(..start);
                slots.insert(0, Slot { at, shrunk: None });
            }
            LogEntry::FullOutput { .. } | LogEntry::Plan(_) | LogEntry::Model(_) => {}
            LogEntry::Shrink { call_id, .. } => {
                for slot in slots.iter_mut() {
                    if let Some(LogEntry::Item(Item::ToolResult { call_id: id, .. })) =
                        records.get(slot.at)
                        && id == call_id
                    {
                        slot.shrunk = Some(at);
                    }
                }
            }
        }
    }
    slots
}

/// Replaces the output of `item` when it is a tool result.
fn set_output(item: &mut Item, new: String) {
    if let Item::ToolResult { output, .. } = item {
        *output = new;
    }
}

/// The index in `records` of the `n`-th (from 1) `turn` checkpoint.
pub fn turn_position(records: &[LogEntry], n: usize) -> Option<usize> {
    records
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r, LogEntry::Checkpoint(c) if c.at == CheckpointAt::Turn))
        .nth(n.checked_sub(1)?)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(prompt: &str) -> [LogEntry; 2] {
        [
            LogEntry::Checkpoint(CheckpointRecord {
                at: CheckpointAt::Turn,
                id: "0".repeat(64),
                time: 0,
                prompt: Some(prompt.into()),
                call_id: None,
            }),
            LogEntry::Item(Item::User {
                text: prompt.into(),
            }),
        ]
    }

    #[test]
    fn a_conversation_rewind_cuts_history_before_that_prompt_and_a_code_one_does_not() {
        let mut records: Vec<LogEntry> = Vec::new();
        records.extend(turn("one"));
        records.extend(turn("two"));
        records.extend(turn("three"));
        let code_only = LogEntry::Rewind {
            to: 2,
            code: true,
            conversation: false,
        };
        let mut with_code = records.clone();
        with_code.push(code_only);
        assert_eq!(history(&with_code).len(), 3);
        records.push(LogEntry::Rewind {
            to: 2,
            code: true,
            conversation: true,
        });
        assert_eq!(history(&records), vec![Item::User { text: "one".into() }]);
        records.extend(turn("four"));
        assert_eq!(
            history(&records),
            vec![
                Item::User { text: "one".into() },
                Item::User {
                    text: "four".into()
                }
            ]
        );
        // Prompts keep their numbers: 4 is "four", and going back to it
        // keeps "one" only.
        records.push(LogEntry::Rewind {
            to: 4,
            code: false,
            conversation: true,
        });
        assert_eq!(history(&records), vec![Item::User { text: "one".into() }]);
        assert_eq!(turn_position(&records, 0), None);
        assert_eq!(turn_position(&records, 9), None);
    }

    #[test]
    fn moving_the_records_replays_them_as_copying_does() {
        let result = |id: &str, output: &str| {
            LogEntry::Item(Item::ToolResult {
                call_id: id.into(),
                status: crate::model::ResultStatus::Completed,
                output: output.into(),
            })
        };
        let shrink = |id: &str, output: &str| LogEntry::Shrink {
            call_id: id.into(),
            output: output.into(),
        };
        let mut records: Vec<LogEntry> = Vec::new();
        records.extend(turn("gone"));
        records.push(LogEntry::Clear);
        records.extend(turn("one"));
        records.push(result("a", "long a"));
        records.extend(turn("two"));
        // Two results under one id take one shrink; a later shrink wins.
        records.push(result("b", "long b"));
        records.push(result("b", "long b again"));
        records.push(shrink("b", "short b"));
        records.push(shrink("a", "short a"));
        records.push(shrink("a", "shorter a"));
        records.push(LogEntry::Compact {
            summary: "about one".into(),
            kept: 4,
        });
        records.extend(turn("three"));
        records.extend(turn("four"));
        records.push(shrink("b", "shortest b"));
        records.push(LogEntry::Rewind {
            to: 4,
            code: false,
            conversation: true,
        });
        // Back to before the fourth prompt ("three"): the later shrink of
        // b is undone with it.
        records.push(result("c", "c"));
        let copied = history(&records);
        assert_eq!(
            copied,
            vec![
                Item::Summary {
                    text: "about one".into()
                },
                Item::ToolResult {
                    call_id: "a".into(),
                    status: crate::model::ResultStatus::Completed,
                    output: "shorter a".into(),
                },
                Item::User { text: "two".into() },
                Item::ToolResult {
                    call_id: "b".into(),
                    status: crate::model::ResultStatus::Completed,
                    output: "short b".into(),
                },
                Item::ToolResult {
                    call_id: "b".into(),
                    status: crate::model::ResultStatus::Completed,
                    output: "short b".into(),
                },
                Item::ToolResult {
                    call_id: "c".into(),
                    status: crate::model::ResultStatus::Completed,
                    output: "c".into(),
                },
            ]
        );
        assert_eq!(into_history(records), copied);
    }

    #[test]
    fn items_appended_at_once_read_back_as_records_of_their_own() {
        let dir = tempfile::TempDir::new().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let mut log = store.create(dir.path(), "m").unwrap();
        let results: Vec<Item> = (0..3)
            .map(|i| Item::ToolResult {
                call_id: format!("c{i}"),
                status: crate::model::ResultStatus::NotRun,
                output: "Refused.".into(),
            })
            .collect();
        log.append_items(&[]).unwrap();
        log.append_items(&results).unwrap();
        log.append_items(&results[..1]).unwrap();
        let id = log.id().clone();
        drop(log);
        let (_, loaded) = store.open(&id).unwrap();
        let mut expected = results.clone();
        expected.push(results[0].clone());
        assert_eq!(history(&loaded.entries), expected);
        assert_eq!(loaded.warning, None);
    }
}
