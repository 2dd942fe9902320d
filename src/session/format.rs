//! The session file's format: one JSON object a line, each ending in `\n`.
//!
//! ```text
//! {"type":"session","id":"<32 hex>","started":<unix seconds>,"project":"<dir>","model":"<name>"}
//! {"type":"user","text":"..."}                                   history items (model::Item)
//! {"type":"assistant","text":"...","tool_calls":[{"id":..,"name":..,"arguments":".."}]}
//! {"type":"tool_result","call_id":"..","status":"completed","output":".."}
//! {"type":"summary","text":"..."}
//! {"type":"clear"}                                               history emptied, same id
//! {"type":"compact","summary":"...","kept":N}                    older history replaced by a summary, last N kept
//! {"type":"full_output","call_id":"..","output":".."}            a result's whole text, before the result cut to fit the window
//! {"type":"shrink","call_id":"..","output":".."}                 an earlier result shortened by compaction
//! {"type":"torn"}                                                the line just before this one was cut short
//! {"type":"checkpoint","at":"turn","id":"<64 hex>","time":<unix seconds>,"prompt":".."}   the project's files before a prompt
//! {"type":"checkpoint","at":"before"|"after","id":"..","time":..,"call_id":".."}          around a bash call or a write
//! {"type":"checkpoint","at":"end"|"rewind","id":"..","time":..}  what a turn or a rewind left
//! {"type":"rewind","to":N,"code":true,"conversation":true}       back to before prompt N (history cut there when conversation)
//! {"type":"plan","steps":[{"text":"..","status":"pending"}]}    the session's whole plan after a change (the last one holds)
//! {"type":"model","model":"..","preset":".."}                  /model: the session's model from here on (no preset: the settings' [model]; the last one holds)
//! ```
//!
//! The header is the first line and only there. `{"type":"torn"}` is written
//! by the store, never by a caller: when a file ends in an incomplete or
//! invalid line (mino stopped while writing it), the next append starts on a
//! fresh line with this marker, so the file stays readable without being
//! rewritten. Owns encoding, decoding and the rules for reading a whole file.
//! Never does I/O, and never holds a mode: modes are never written.

use std::path::{Path, PathBuf};

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::plan::Plan;
use super::{SessionError, SessionId, history};
use crate::model::Item;

/// The marker line that acknowledges a cut-short line just before it.
pub(crate) const TORN_MARKER: &str = r#"{"type":"torn"}"#;

/// The first line of every session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: SessionId,
    /// Unix seconds.
    pub started: u64,
    /// The project directory the session was started in.
    pub project: PathBuf,
    /// The model's name at the start.
    pub model: String,
}

#[derive(Serialize)]
struct HeaderOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a SessionId,
    started: u64,
    project: &'a Path,
    model: &'a str,
}

#[derive(Deserialize)]
struct HeaderIn {
    id: SessionId,
    started: u64,
    project: PathBuf,
    model: String,
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        HeaderOut {
            kind: "session",
            id: &self.id,
            started: self.started,
            project: &self.project,
            model: &self.model,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.get("type").and_then(Value::as_str) {
            Some("session") => {}
            _ => return Err(D::Error::custom("not a session header")),
        }
        let header: HeaderIn = serde_json::from_value(value).map_err(D::Error::custom)?;
        Ok(Header {
            id: header.id,
            started: header.started,
            project: header.project,
            model: header.model,
        })
    }
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEntry {
    /// A history item, written as the item itself (`{"type":"user",...}`).
    Item(Item),
    /// `/clear`: history emptied; the session keeps its id.
    Clear,
    /// `/compact`: everything before the last `kept` items is replaced by
    /// `summary`, which reaches the model as lossy context, never as
    /// authorization.
    Compact { summary: String, kept: usize },
    /// A tool result's whole text, written just before the result that was
    /// cut to fit the context window. Never replayed into history.
    FullOutput { call_id: String, output: String },
    /// Compaction shortened the result of `call_id`: history holds `output`
    /// from here on.
    Shrink { call_id: String, output: String },
    /// A checkpoint of the project's files (see `checkpoint`).
    Checkpoint(CheckpointRecord),
    /// `mino rewind` / `/rewind`: back to the state just before prompt `to`
    /// (numbered from 1 by the `turn` checkpoints of the file); with
    /// `conversation`, history is cut there on replay.
    Rewind {
        to: usize,
        code: bool,
        conversation: bool,
    },
    /// The session's whole plan after the `plan` tool changed it.
    Plan(Plan),
    /// `/model`: the session's model (and preset) from here on.
    Model(super::ModelChoice),
}

/// Where in a turn a checkpoint was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointAt {
    /// Before a prompt: what `rewind --to N` goes back to.
    Turn,
    /// Before a bash call or a write.
    Before,
    /// After a bash call or a write.
    After,
    /// When the turn ended: what mino last left.
    End,
    /// Before a rewind restored files (so the rewind can be taken back).
    Rewind,
}

/// One `checkpoint` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub at: CheckpointAt,
    /// The manifest's id in the project's store.
    pub id: String,
    /// Unix seconds.
    pub time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

#[derive(Serialize)]
struct CheckpointOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    record: &'a CheckpointRecord,
}

#[derive(Serialize, Deserialize)]
struct RewindLine {
    to: usize,
    code: bool,
    conversation: bool,
}

impl From<Item> for LogEntry {
    fn from(item: Item) -> Self {
        LogEntry::Item(item)
    }
}

impl Serialize for LogEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            LogEntry::Item(item) => item.serialize(serializer),
            LogEntry::Clear => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("type", "clear")?;
                map.end()
            }
            LogEntry::Compact { summary, kept } => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "compact")?;
                map.serialize_entry("summary", summary)?;
                map.serialize_entry("kept", kept)?;
                map.end()
            }
            LogEntry::FullOutput { call_id, output } | LogEntry::Shrink { call_id, output } => {
                let kind = match self {
                    LogEntry::FullOutput { .. } => "full_output",
                    _ => "shrink",
                };
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", kind)?;
                map.serialize_entry("call_id", call_id)?;
                map.serialize_entry("output", output)?;
                map.end()
            }
            LogEntry::Checkpoint(record) => CheckpointOut {
                kind: "checkpoint",
                record,
            }
            .serialize(serializer),
            LogEntry::Rewind {
                to,
                code,
                conversation,
            } => {
                let mut map = serializer.serialize_map(Some(4))?;
                map.serialize_entry("type", "rewind")?;
                map.serialize_entry("to", to)?;
                map.serialize_entry("code", code)?;
                map.serialize_entry("conversation", conversation)?;
                map.end()
            }
            LogEntry::Plan(plan) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "plan")?;
                map.serialize_entry("steps", &plan.steps)?;
                map.end()
            }
            LogEntry::Model(choice) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "model")?;
                map.serialize_entry("model", &choice.model)?;
                if let Some(preset) = &choice.preset {
                    map.serialize_entry("preset", preset)?;
                }
                map.end()
            }
        }
    }
}

#[derive(Deserialize)]
struct OutputIn {
    call_id: String,
    output: String,
}

#[derive(Deserialize)]
struct CompactIn {
    summary: String,
    kept: usize,
}

impl LogEntry {
    fn from_value(value: Value) -> Result<LogEntry, String> {
        let kind = match value.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(_) => return Err("its \"type\" is not a string".to_owned()),
            None => return Err("it has no \"type\" field".to_owned()),
        };
        match kind.as_str() {
            "user" | "assistant" | "tool_result" | "summary" => {
                serde_json::from_value::<Item>(value)
                    .map(LogEntry::Item)
                    .map_err(|e| format!("a {kind} item that does not decode: {e}"))
            }
            "clear" => Ok(LogEntry::Clear),
            "compact" => serde_json::from_value::<CompactIn>(value)
                .map(|c| LogEntry::Compact {
                    summary: c.summary,
                    kept: c.kept,
                })
                .map_err(|e| format!("a compact record that does not decode: {e}")),
            "full_output" | "shrink" => serde_json::from_value::<OutputIn>(value)
                .map(|o| {
                    if kind == "shrink" {
                        LogEntry::Shrink {
                            call_id: o.call_id,
                            output: o.output,
                        }
                    } else {
                        LogEntry::FullOutput {
                            call_id: o.call_id,
                            output: o.output,
                        }
                    }
                })
                .map_err(|e| format!("a {kind} record that does not decode: {e}")),
            "checkpoint" => serde_json::from_value::<CheckpointRecord>(value)
                .map(LogEntry::Checkpoint)
                .map_err(|e| format!("a checkpoint record that does not decode: {e}")),
            "rewind" => serde_json::from_value::<RewindLine>(value)
                .map(|r| LogEntry::Rewind {
                    to: r.to,
                    code: r.code,
                    conversation: r.conversation,
                })
                .map_err(|e| format!("a rewind record that does not decode: {e}")),
            "plan" => serde_json::from_value::<Plan>(value)
                .map(LogEntry::Plan)
                .map_err(|e| format!("a plan record that does not decode: {e}")),
            "model" => serde_json::from_value::<super::ModelChoice>(value)
                .map(LogEntry::Model)
                .map_err(|e| format!("a model record that does not decode: {e}")),
            "session" => Err("a session header, which may only be the first line".to_owned()),
            other => Err(format!("unknown record type {other:?}")),
        }
    }
}

impl<'de> Deserialize<'de> for LogEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        LogEntry::from_value(value).map_err(D::Error::custom)
    }
}

/// A session file, read and checked: the header, the records after it, and
/// a warning when an incomplete or invalid last line was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub header: Header,
    pub entries: Vec<LogEntry>,
    /// Names the file and line that was left out; say it to the user.
    pub warning: Option<String>,
}

impl Loaded {
    /// The history these records replay to (see [`history`]).
    pub fn history(&self) -> Vec<Item> {
        history(&self.entries)
    }
}

/// One decoded line.
pub(crate) enum Line {
    Header(Header),
    Entry(LogEntry),
    Torn,
}

pub(crate) fn parse_line(bytes: &[u8]) -> Result<Line, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON ({e})"))?;
    match value.get("type").and_then(Value::as_str) {
        Some("session") => serde_json::from_value::<Header>(value)
            .map(Line::Header)
            .map_err(|e| format!("a session header that does not decode: {e}")),
        Some("torn") => Ok(Line::Torn),
        _ => LogEntry::from_value(value).map(Line::Entry),
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// How a file ends, which decides how the next append starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Empty, or the last line is complete and valid: append as is.
    Clean,
    /// The last line has no newline: end it, then write the marker.
    Torn,
    /// The last line is complete but invalid: write the marker.
    Corrupt,
}

pub(crate) fn tail_of(bytes: &[u8]) -> Tail {
    match bytes.split_last() {
        None => Tail::Clean,
        Some((last, _)) if *last != b'\n' => Tail::Torn,
        Some((_, body)) => {
            let start = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let line = body.get(start..).unwrap_or_default();
            if is_blank(line) || parse_line(line).is_ok() {
                Tail::Clean
            } else {
                Tail::Corrupt
            }
        }
    }
}

/// Reads a whole session file. An incomplete last line (no newline) or an
/// invalid last line is left out with a warning; an invalid line anywhere
/// else is an error naming the file and line. A line followed by the torn
/// marker was already left out by an earlier start and is skipped quietly.
/// Blank lines carry nothing and are skipped. (The store reads a file a
/// chunk at a time through [`FileParser`]; this is the same for bytes in
/// memory.)
#[cfg(test)]
pub(crate) fn parse_file(path: &Path, bytes: &[u8]) -> Result<Loaded, SessionError> {
    let mut parser = FileParser::new(path);
    let mut pieces = bytes.split(|b| *b == b'\n');
    // What follows the last newline: empty when the file ends with one.
    let rest = pieces.next_back().unwrap_or_default();
    for line in pieces {
        parser.line(line)?;
    }
    parser.finish(rest).map(|(loaded, _)| loaded)
}

/// A session file read line by line, by the rules of [`parse_file`], so
/// that a large file is never held whole beside the records read from it.
/// Each line is judged when the next one is known (the torn marker leaves
/// out the line before it), and an invalid line is forgiven only when no
/// other line follows it.
pub(crate) struct FileParser<'a> {
    path: &'a Path,
    header: Option<Header>,
    records: Vec<LogEntry>,
    /// Complete lines seen.
    lines: usize,
    /// The last complete line that was not blank, not judged yet.
    held: Option<(usize, Result<Line, String>)>,
    /// An invalid line, an error if any line but a blank one follows.
    doubtful: Option<(usize, String)>,
    /// Whether the last complete line was blank or valid.
    last_clean: bool,
}

impl<'a> FileParser<'a> {
    pub(crate) fn new(path: &'a Path) -> Self {
        Self {
            path,
            header: None,
            records: Vec::new(),
            lines: 0,
            held: None,
            doubtful: None,
            last_clean: true,
        }
    }

    fn not_session(&self, reason: String) -> SessionError {
        SessionError::NotSession {
            path: self.path.to_owned(),
            reason,
        }
    }

    fn corrupt(&self, line: usize, reason: String) -> SessionError {
        SessionError::Corrupt {
            path: self.path.to_owned(),
            line,
            reason,
        }
    }

    /// The next complete line, without its newline.
    pub(crate) fn line(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        self.lines += 1;
        let parsed = (!is_blank(bytes)).then(|| parse_line(bytes));
        self.last_clean = parsed.as_ref().is_none_or(Result::is_ok);
        let marks_torn = matches!(parsed, Some(Ok(Line::Torn)));
        // The line before is judged now: left out when this one marks it
        // torn (a blank line between them does not).
        if let Some(before) = self.held.take()
            && !(marks_torn && before.0 + 1 == self.lines)
        {
            self.judge(before)?;
        }
        let Some(parsed) = parsed else {
            return Ok(());
        };
        if let Some((line, reason)) = self.doubtful.take() {
            return Err(self.corrupt(line, reason));
        }
        self.held = Some((self.lines, parsed));
        Ok(())
    }

    fn judge(&mut self, (number, line): (usize, Result<Line, String>)) -> Result<(), SessionError> {
        match (line, &self.header) {
            (Ok(Line::Torn), Some(_)) => {}
            (Ok(Line::Header(found)), None) => self.header = Some(found),
            (Ok(Line::Header(_)), Some(_)) => {
                return Err(self.corrupt(number, "a second session header".to_owned()));
            }
            (Ok(Line::Entry(record)), Some(_)) => self.records.push(record),
            (Err(reason), Some(_)) => self.doubtful = Some((number, reason)),
            (Err(reason), None) => {
                return Err(
                    self.not_session(format!("line {number} is not a session header: {reason}"))
                );
            }
            (Ok(_), None) => {
                return Err(self.not_session(format!("line {number} is not a session header")));
            }
        }
        Ok(())
    }

    /// The end of the file: `rest` is what follows its last newline. The
    /// records, and how the file ends (which decides how the next append
    /// starts).
    pub(crate) fn finish(mut self, rest: &[u8]) -> Result<(Loaded, Tail), SessionError> {
        let torn = !is_blank(rest);
        if let Some(last) = self.held.take() {
            self.judge(last)?;
        }
        let mut warning = None;
        if let Some((number, reason)) = self.doubtful.take() {
            if torn {
                return Err(self.corrupt(number, reason));
            }
            warning = Some(format!(
                "{} line {number} is not a valid session record ({reason}); it was left out and everything before it was kept. The file was not changed.",
                self.path.display()
            ));
        }
        let Some(header) = self.header.take() else {
            return Err(self.not_session(if torn {
                "its header line is incomplete (mino stopped while creating it)".to_owned()
            } else {
                "it is empty".to_owned()
            }));
        };
        if torn {
            warning = Some(format!(
                "{} line {} is incomplete (mino stopped while writing it); it was left out and everything before it was kept. The file was not changed.",
                self.path.display(),
                self.lines + 1
            ));
        }
        let tail = if !rest.is_empty() {
            Tail::Torn
        } else if self.last_clean {
            Tail::Clean
        } else {
            Tail::Corrupt
        };
        Ok((
            Loaded {
                header,
                entries: self.records,
                warning,
            },
            tail,
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{ResultStatus, ToolCall};

    fn id() -> SessionId {
        SessionId::parse("3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f").unwrap()
    }

    #[test]
    fn a_shrink_replaces_a_result_on_replay_and_a_full_output_is_not_replayed() {
        let result = |output: &str| {
            LogEntry::Item(Item::ToolResult {
                call_id: "c1".into(),
                status: ResultStatus::Completed,
                output: output.into(),
            })
        };
        let lines = [
            LogEntry::Item(Item::User { text: "go".into() }),
            LogEntry::FullOutput {
                call_id: "c1".into(),
                output: "the whole output".into(),
            },
            result("head [cut] tail"),
            LogEntry::Shrink {
                call_id: "c1".into(),
                output: "h [cut] t".into(),
            },
        ];
        let decoded: Vec<LogEntry> = lines
            .iter()
            .map(|entry| {
                let line = serde_json::to_string(entry).unwrap();
                serde_json::from_str(&line).unwrap()
            })
            .collect();
        assert_eq!(decoded, lines);
        assert_eq!(
            history(&decoded),
            vec![
                Item::User { text: "go".into() },
                Item::ToolResult {
                    call_id: "c1".into(),
                    status: ResultStatus::Completed,
                    output: "h [cut] t".into(),
                },
            ]
        );
    }

    #[test]
    fn lines_have_the_documented_shape() {
        let header = Header {
            id: id(),
            started: 1_700_000_000,
            project: PathBuf::from("/home/u/notes-demo"),
            model: "gpt-5-mini".to_owned(),
        };
        assert_eq!(
            serde_json::to_string(&header).unwrap(),
            r#"{"type":"session","id":"3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f","started":1700000000,"project":"/home/u/notes-demo","model":"gpt-5-mini"}"#
        );
        assert_eq!(
            serde_json::to_string(&LogEntry::Clear).unwrap(),
            r#"{"type":"clear"}"#
        );
        assert_eq!(
            serde_json::to_string(&LogEntry::Compact {
                summary: "s".into(),
                kept: 2
            })
            .unwrap(),
            r#"{"type":"compact","summary":"s","kept":2}"#
        );
        assert_eq!(
            serde_json::to_string(&LogEntry::Item(Item::User { text: "hi".into() })).unwrap(),
            r#"{"type":"user","text":"hi"}"#
        );
    }

    #[test]
    fn records_round_trip() {
        let records = vec![
            LogEntry::Item(Item::User {
                text: "a\nb".into(),
            }),
            LogEntry::Item(Item::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"command":"ls"}"#.into(),
                }],
            }),
            LogEntry::Item(Item::ToolResult {
                call_id: "c1".into(),
                status: ResultStatus::Denied,
                output: "no".into(),
            }),
            LogEntry::Item(Item::Summary { text: "s".into() }),
            LogEntry::Clear,
            LogEntry::Compact {
                summary: "t".into(),
                kept: 0,
            },
            LogEntry::Checkpoint(CheckpointRecord {
                at: CheckpointAt::Turn,
                id: "ab".repeat(32),
                time: 5,
                prompt: Some("go".into()),
                call_id: None,
            }),
            LogEntry::Rewind {
                to: 1,
                code: true,
                conversation: false,
            },
            LogEntry::Plan(Plan {
                steps: vec![super::super::plan::Step {
                    text: "fix \u{1b}[31m it".into(),
                    status: super::super::plan::StepStatus::InProgress,
                }],
            }),
        ];
        for record in records {
            let text = serde_json::to_string(&record).unwrap();
            assert!(!text.contains('\n'));
            assert_eq!(serde_json::from_str::<LogEntry>(&text).unwrap(), record);
        }
    }

    #[test]
    fn a_mode_or_unknown_type_is_not_a_record() {
        let err =
            serde_json::from_str::<LogEntry>(r#"{"type":"mode","mode":"bypass"}"#).unwrap_err();
        assert!(
            err.to_string().contains("unknown record type \"mode\""),
            "{err}"
        );
        assert!(serde_json::from_str::<LogEntry>(r#"{"text":"x"}"#).is_err());
    }

    #[test]
    fn tails() {
        assert_eq!(tail_of(b""), Tail::Clean);
        assert_eq!(tail_of(b"{\"type\":\"clear\"}\n"), Tail::Clean);
        assert_eq!(tail_of(b"{\"type\":\"clear\"}\n{\"ty"), Tail::Torn);
        assert_eq!(tail_of(b"{\"type\":\"clear\"}\n{\"ty\n"), Tail::Corrupt);
        assert_eq!(tail_of(b"{\"ty\n{\"type\":\"torn\"}\n"), Tail::Clean);
    }
}
