//! `read_file`: reads one project file through the confined open and hands
//! the model its lines, numbered. Owns the tool's arguments, its facts (a
//! confined read of one target) and the shape of its result. Never decides
//! whether it may run, never reads a file while preparing, never follows a
//! symbolic link, and never writes.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::run_blocking;
use super::editor::{Editor, overlay_read};
use super::fs::confine::{EntryKind, FileContents};
use super::fs::near;
use super::fs::paths::{inside, locate_with_facts, shown_path};
use super::wording::{count_lines, looks_binary, plural};
use super::{
    BoxFuture, ConfineError, Field, PreparedCall, Project, Tool, ToolContext, ToolError,
    ToolOutcome, ToolSpec, parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};
use crate::tools::FieldRole;

pub(crate) const NAME: &str = "read_file";

/// The most bytes of one file that a read takes in.
pub const READ_LIMIT: u64 = 1024 * 1024;

/// The most bytes of numbered lines one result carries, so a single read
/// cannot fill the model's context; the rest is reached with `start_line`.
pub const OUTPUT_LIMIT: usize = 128 * 1024;

/// How much of a file is probed for a NUL byte before it is called binary
/// (shared with the other tools; still named here, where it was published).
pub use super::wording::BINARY_PROBE;

/// Reads a project file, whole or a range of its lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
}

impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Read a text file inside the project directory. Returns its lines \
                numbered from 1 under a header giving the path, the range shown and the total. \
                Give start_line and end_line (1-based, inclusive) to read part of a long file. \
                Binary files are not shown; files over 1 MiB are read only in part."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path of the file, relative to the project directory."
                    },
                    "start_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "First line to show (1-based). Default: 1."
                    },
                    "end_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Last line to show, inclusive. Default: the last line."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: NAME,
            message,
        };
        if args.start_line == Some(0) {
            return Err(invalid("start_line must be 1 or more".into()));
        }
        if args.end_line == Some(0) {
            return Err(invalid("end_line must be 1 or more".into()));
        }
        if let (Some(start), Some(end)) = (args.start_line, args.end_line)
            && end < start
        {
            return Err(invalid(format!(
                "end_line ({end}) is before start_line ({start})"
            )));
        }
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &args.path,
            NAME,
            CallKind::ConfinedRead,
        )?;
        Ok(Box::new(ReadCall {
            project: Arc::clone(&cx.project),
            target,
            facts,
            start_line: args.start_line,
            end_line: args.end_line,
            editor: cx.editor.clone(),
            protected: Arc::clone(&cx.protected),
        }))
    }
}

struct ReadCall {
    project: Arc<Project>,
    /// For the close matches of a path that does not exist.
    protected: Arc<ProtectedPaths>,
    target: PathTarget,
    facts: CallFacts,
    start_line: Option<u64>,
    end_line: Option<u64>,
    editor: Editor,
}

impl ReadCall {
    fn execute(&self) -> ToolOutcome {
        match self.read() {
            Ok(file) => self.render(&file),
            Err(e) => ToolOutcome::error(self.explain(&e)),
        }
    }

    /// What a failed read says; a missing file names its close matches.
    fn explain(&self, error: &ConfineError) -> String {
        match (error, inside(&self.target)) {
            (ConfineError::NotFound { .. }, Ok(relative)) => format!(
                "{error}.{}",
                near::hint(&self.project, &self.protected, relative, EntryKind::File)
            ),
            _ => error.to_string(),
        }
    }

    /// The file through the confined open.
    fn read(&self) -> Result<FileContents, ConfineError> {
        self.project.read(inside(&self.target)?, READ_LIMIT)
    }

    fn render(&self, file: &FileContents) -> ToolOutcome {
        render(
            &shown_path(&self.target),
            file,
            self.start_line,
            self.end_line,
        )
    }
}

impl PreparedCall for ReadCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::named(FieldRole::Path, shown_path(&self.target))]
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        if !self.editor.as_ref().is_some_and(|e| e.reads()) {
            return run_blocking(cancel, NAME, "read_file was interrupted.", move || {
                self.execute()
            });
        }
        // An editor sees unsaved buffers: the file is read through the
        // confined open first (only a file mino may read is ever asked for),
        // then the editor's text of it replaces the disk's.
        Box::pin(async move {
            const INTERRUPTED: &str = "read_file was interrupted.";
            if cancel.is_cancelled() {
                return ToolOutcome::interrupted(INTERRUPTED);
            }
            let call = Arc::new(*self);
            let read = {
                let call = Arc::clone(&call);
                tokio::task::spawn_blocking(move || call.read().map_err(|e| call.explain(&e)))
            };
            let file = tokio::select! {
                biased;
                () = cancel.cancelled() => return ToolOutcome::interrupted(INTERRUPTED),
                joined = read => match joined {
                    Ok(Ok(file)) => file,
                    Ok(Err(message)) => return ToolOutcome::error(message),
                    Err(e) => return ToolOutcome::error(format!("{NAME} failed: {e}")),
                },
            };
            let Ok(relative) = inside(&call.target) else {
                return ToolOutcome::error("read_file lost its target.");
            };
            let file = overlay_read(
                &call.editor,
                &call.project,
                relative,
                READ_LIMIT,
                file,
                &cancel,
            )
            .await;
            if cancel.is_cancelled() {
                return ToolOutcome::interrupted(INTERRUPTED);
            }
            call.render(&file)
        })
    }
}

/// The text the model receives for a file that was read.
fn render(path: &str, file: &FileContents, start: Option<u64>, end: Option<u64>) -> ToolOutcome {
    if looks_binary(&file.bytes) {
        return ToolOutcome::completed(format!(
            "{path}: binary file, {}, not shown.",
            plural(usize::try_from(file.size).unwrap_or(usize::MAX), "byte")
        ));
    }
    let mut bytes: &[u8] = &file.bytes;
    if file.truncated {
        // The limit cut the last line short: keep only whole lines, or, for
        // one line longer than the limit, its whole characters.
        if let Some(at) = bytes.iter().rposition(|&b| b == b'\n') {
            bytes = &bytes[..=at];
        } else if let Err(e) = std::str::from_utf8(bytes)
            && e.error_len().is_none()
        {
            bytes = &bytes[..e.valid_up_to()];
        }
    }
    if bytes.is_empty() && !file.truncated {
        return ToolOutcome::completed(format!("{path} is empty (0 bytes)."));
    }
    let (text, lossy) = match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => (Cow::Borrowed(text), false),
        Cow::Owned(text) => (Cow::Owned(text), true),
    };
    let total = count_lines(bytes);
    let total_u64 = u64::try_from(total).unwrap_or(u64::MAX);
    let start = start.unwrap_or(1);
    if start > total_u64 {
        return ToolOutcome::error(if file.truncated {
            format!(
                "start_line {start} is past the part of {path} that read_file can show: \
                 the first {READ_LIMIT} of its {} bytes, lines 1-{total}.",
                file.size
            )
        } else {
            format!(
                "start_line {start} is past the end of {path}, which has {}.",
                plural(total, "line")
            )
        });
    }
    let end = end.map_or(total_u64, |end| end.min(total_u64));
    let mut out = if file.truncated {
        format!(
            "{path}: lines {start}-{end} of at least {total} (only the first {READ_LIMIT} of {} bytes were read; later lines are not shown)\n",
            file.size
        )
    } else {
        format!("{path}: lines {start}-{end} of {total}\n")
    };
    if lossy {
        out.push_str(&format!(
            "[{path} is not valid UTF-8; invalid bytes are shown as \u{FFFD}.]\n"
        ));
    }
    for (number, line) in (1u64..).zip(text.split_inclusive('\n')) {
        if number < start {
            continue;
        }
        if number > end {
            break;
        }
        let line = line.strip_suffix('\n').unwrap_or(line);
        if out.len() + line.len() > OUTPUT_LIMIT && number > start {
            out.push_str(&format!(
                "[output stopped before line {number} to keep this result under {OUTPUT_LIMIT} bytes; \
                 read on with start_line {number}]\n"
            ));
            break;
        }
        out.push_str(&format!("{number:>6}\t{line}\n"));
    }
    ToolOutcome::completed(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn contents(bytes: &[u8]) -> FileContents {
        FileContents {
            bytes: bytes.to_vec(),
            mode: 0o644,
            truncated: false,
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn a_long_file_is_cut_with_a_note_saying_where_to_read_on() {
        let text: String = (1..=20_000)
            .map(|n| format!("line {n} of a long file\n"))
            .collect();
        let out = render("big.txt", &contents(text.as_bytes()), None, None);
        assert!(
            out.output.len() < OUTPUT_LIMIT + 200,
            "{}",
            out.output.len()
        );
        let note = out.output.lines().last().unwrap();
        let next: u64 = note
            .split("read on with start_line ")
            .nth(1)
            .unwrap()
            .trim_end_matches(']')
            .parse()
            .unwrap();
        assert!(
            out.output
                .contains(&format!("{:>6}\tline {} of", next - 1, next - 1))
        );
        assert!(!out.output.contains(&format!("\tline {next} of")));
        let rest = render("big.txt", &contents(text.as_bytes()), Some(next), None);
        assert!(rest.output.contains(&format!("{next:>6}\tline {next} of")));
    }

    #[test]
    fn renders_a_range_with_numbers() {
        let out = render(
            "f.txt",
            &contents(b"one\ntwo\nthree\nfour\n"),
            Some(2),
            Some(3),
        );
        assert_eq!(
            out.output,
            "f.txt: lines 2-3 of 4\n     2\ttwo\n     3\tthree\n"
        );
    }

    #[test]
    fn truncated_file_drops_the_cut_line() {
        let mut file = contents(b"one\ntwo\nthr");
        file.truncated = true;
        file.size = 100;
        let out = render("f.txt", &file, None, None);
        assert!(out.output.starts_with("f.txt: lines 1-2 of at least 2"));
        assert!(!out.output.contains("thr"));
    }

    #[test]
    fn truncated_single_line_keeps_whole_characters() {
        let mut file = contents("ab\u{e9}".as_bytes());
        file.bytes.pop();
        file.truncated = true;
        let out = render("f.txt", &file, None, None);
        assert!(!out.output.contains("not valid UTF-8"), "{}", out.output);
        assert!(out.output.contains("\tab\n"));
    }
}
