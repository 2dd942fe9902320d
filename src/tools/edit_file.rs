//! `edit_file`: replaces one exact occurrence of `old_string` in a project
//! file with `new_string`. Owns the tool's arguments, its facts (a file
//! write to one target), finding the one occurrence meant (or saying why
//! there is none, or more than one), the preview fields, and the result
//! text. Never decides whether it may run, never reads a file while
//! preparing, never writes without rechecking the inspected digest, and
//! never follows a symbolic link.

use crate::tools::FieldRole;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::inspected;
use super::editor::Editor;
use super::fs::change::{
    CHANGE_LIMIT, read_for_change, size_summary, spawn_write, target_fields, unified_diff,
};
use super::fs::confine::{EntryKind, Expected, digest};
use super::fs::near;
use super::fs::paths::{inside, locate_with_facts, shown_path};
use super::wording::{looks_binary, noun};
use super::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};

pub(crate) const NAME: &str = "edit_file";

/// How many lines an error lists where `old_string` occurs.
const LINES_LISTED: usize = 20;

/// Replaces one exact occurrence of a string in a project file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    start_line: Option<u64>,
}

impl Tool for EditFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Replace one exact occurrence of old_string with new_string in a file \
                inside the project directory. old_string must match the file byte for byte, \
                including whitespace and line breaks, and must occur once; if it occurs more \
                than once, give start_line, the line where the intended occurrence starts, or \
                include more surrounding text."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path of the file, relative to the project directory."
                    },
                    "old_string": {
                        "type": "string",
                        "description": "The exact text to replace. Must not be empty."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "The text to put in its place."
                    },
                    "start_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The line (1-based) where the intended occurrence of old_string starts."
                    }
                },
                "required": ["path", "old_string", "new_string"],
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
        if args.old_string.is_empty() {
            return Err(invalid(
                "old_string is empty; give the exact text to replace (use write_file to create a file)"
                    .into(),
            ));
        }
        if args.old_string == args.new_string {
            return Err(invalid(
                "old_string and new_string are the same; there is nothing to change".into(),
            ));
        }
        if args.start_line == Some(0) {
            return Err(invalid("start_line must be 1 or more".into()));
        }
        let longest = args.old_string.len().max(args.new_string.len()) as u64;
        if longest > CHANGE_LIMIT {
            return Err(invalid(format!(
                "old_string and new_string may be at most {CHANGE_LIMIT} bytes each"
            )));
        }
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &args.path,
            NAME,
            CallKind::FileWrite,
        )?;
        Ok(Box::new(EditCall {
            project: Arc::clone(&cx.project),
            protected: Arc::clone(&cx.protected),
            target,
            facts,
            old: args.old_string,
            new: args.new_string,
            start_line: args.start_line,
            inspection: None,
            editor: cx.editor.clone(),
        }))
    }
}

/// What inspection found and bound the edit to.
struct Inspection {
    /// The digest of the file as read; the write rechecks it.
    expected: Expected,
    /// The line where the replaced occurrence starts.
    line: usize,
    /// The whole file after the edit.
    result: Vec<u8>,
    diff: String,
}

struct EditCall {
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
    target: PathTarget,
    facts: CallFacts,
    old: String,
    new: String,
    start_line: Option<u64>,
    inspection: Option<Inspection>,
    editor: Editor,
}

impl PreparedCall for EditCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = target_fields(&self.project, &self.target);
        if let Some(inspection) = &self.inspection {
            fields.push(Field::named(
                FieldRole::StartingLine,
                inspection.line.to_string(),
            ));
        }
        fields.push(Field::text("Remove", self.old.clone()).with_role(FieldRole::SaidByDiff));
        fields.push(Field::text("Insert", self.new.clone()).with_role(FieldRole::SaidByDiff));
        if let Some(inspection) = &self.inspection {
            fields.push(Field::text(
                "Resulting file",
                size_summary(&inspection.result),
            ));
            fields.push(Field::diff(inspection.diff.clone()));
        }
        fields
    }

    fn needs_inspection(&self) -> bool {
        true
    }

    fn inspect(&mut self) -> Result<(), ToolError> {
        let path = shown_path(&self.target);
        let Some(file) = read_for_change(&self.project, &self.target)? else {
            let hint = inside(&self.target)
                .map(|relative| {
                    near::hint(&self.project, &self.protected, relative, EntryKind::File)
                })
                .unwrap_or_default();
            return Err(ToolError::Failed(format!(
                "{path} does not exist; edit_file only changes existing files (use write_file to create one).{hint}"
            )));
        };
        if looks_binary(&file.bytes) {
            return Err(ToolError::Failed(format!(
                "{path} is a binary file; edit_file only changes text."
            )));
        }
        let (at, line) = locate_match(&path, &file.bytes, self.old.as_bytes(), self.start_line)?;
        let mut result = Vec::with_capacity(file.bytes.len() - self.old.len() + self.new.len());
        result.extend_from_slice(&file.bytes[..at]);
        result.extend_from_slice(self.new.as_bytes());
        result.extend_from_slice(&file.bytes[at + self.old.len()..]);
        let diff = unified_diff(&path, Some(&file.bytes), &result);
        self.inspection = Some(Inspection {
            expected: Expected::Digest(digest(&file.bytes)),
            line,
            result,
            diff,
        });
        Ok(())
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let already = self.inspection.is_some();
            match inspected(self, already, "edit_file").await {
                Ok(call) => call.write(cancel).await,
                Err(outcome) => outcome,
            }
        })
    }
}

impl EditCall {
    /// Writes the inspected call.
    fn write(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let EditCall {
            project,
            target,
            inspection,
            editor,
            ..
        } = *self;
        let Some(inspection) = inspection else {
            return Box::pin(std::future::ready(ToolOutcome::error(
                "edit_file was not inspected; nothing was written.",
            )));
        };
        let done = format!(
            "Edited {} at line {} ({}).",
            shown_path(&target),
            inspection.line,
            size_summary(&inspection.result)
        );
        spawn_write(
            project,
            target,
            inspection.result,
            inspection.expected,
            cancel,
            done,
            editor,
        )
    }
}

/// Every offset where `needle` starts in `hay`, overlapping ones included.
fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let Some(&first) = needle.first() else {
        return found;
    };
    if needle.len() > hay.len() {
        return found;
    }
    let last_start = hay.len() - needle.len();
    let mut from = 0;
    while from <= last_start {
        let Some(offset) = hay[from..=last_start].iter().position(|&b| b == first) else {
            break;
        };
        let at = from + offset;
        if hay[at..at + needle.len()] == *needle {
            found.push(at);
        }
        from = at + 1;
    }
    found
}

/// The 1-based line each offset falls on; `offsets` ascending.
fn lines_of(hay: &[u8], offsets: &[usize]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(offsets.len());
    let mut line = 1;
    let mut scanned = 0;
    for &at in offsets {
        line += hay[scanned..at].iter().filter(|&&b| b == b'\n').count();
        scanned = at;
        lines.push(line);
    }
    lines
}

/// `2, 5 and 9`, listing at most `LINES_LISTED` distinct lines.
fn list_lines(lines: &[usize]) -> String {
    let mut distinct = lines.to_vec();
    distinct.dedup();
    let extra = distinct.len().saturating_sub(LINES_LISTED);
    distinct.truncate(LINES_LISTED);
    let mut names: Vec<String> = distinct.iter().map(ToString::to_string).collect();
    if extra > 0 {
        names.push(format!("{extra} more"));
    }
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The offset and line of the one occurrence of `old` meant, or why there
/// is none.
fn locate_match(
    path: &str,
    hay: &[u8],
    old: &[u8],
    start_line: Option<u64>,
) -> Result<(usize, usize), ToolError> {
    let offsets = find_all(hay, old);
    if offsets.is_empty() {
        let shown = std::str::from_utf8(old)
            .ok()
            .and_then(|old| super::edit_nearest::shown(hay, old));
        let mut message = format!(
            "old_string was not found in {path}. {} and copy the text exactly, including \
             whitespace and line breaks.",
            if shown.is_some() {
                "Take old_string from the file's text below"
            } else {
                "Read the file again"
            }
        );
        if old.contains(&b'\n') && hay.windows(2).any(|pair| pair == b"\r\n") {
            message.push_str(" The file uses CRLF (\\r\\n) line endings.");
        }
        message.push_str(shown.as_deref().unwrap_or_default());
        return Err(ToolError::Failed(message));
    }
    let lines = lines_of(hay, &offsets);
    let plural_lines = |lines: &[usize]| {
        let mut distinct = lines.to_vec();
        distinct.dedup();
        noun(distinct.len(), "line", "lines")
    };
    let Some(wanted) = start_line else {
        if let ([at], [line]) = (offsets.as_slice(), lines.as_slice()) {
            return Ok((*at, *line));
        }
        return Err(ToolError::Failed(format!(
            "old_string occurs {} times in {path}, starting on {} {}. Give start_line with the \
             line of the occurrence to replace, or include more surrounding text so it matches once.",
            offsets.len(),
            plural_lines(&lines),
            list_lines(&lines)
        )));
    };
    let on_line: Vec<(usize, usize)> = offsets
        .iter()
        .zip(&lines)
        .filter(|(_, line)| u64::try_from(**line).is_ok_and(|line| line == wanted))
        .map(|(at, line)| (*at, *line))
        .collect();
    match on_line.as_slice() {
        [one] => Ok(*one),
        [] => Err(ToolError::Failed(format!(
            "old_string does not start on line {wanted} of {path}; it occurs starting on {} {}.",
            plural_lines(&lines),
            list_lines(&lines)
        ))),
        several => Err(ToolError::Failed(format!(
            "old_string occurs {} times on line {wanted} of {path}; include more surrounding \
             text so it matches once.",
            several.len()
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn finds_overlapping_occurrences() {
        assert_eq!(find_all(b"aaa", b"aa"), vec![0, 1]);
        assert_eq!(find_all(b"abcabc", b"bc"), vec![1, 4]);
        assert_eq!(find_all(b"ab", b"abc"), Vec::<usize>::new());
        assert_eq!(find_all(b"ab", b""), Vec::<usize>::new());
    }

    #[test]
    fn lines_of_offsets() {
        let hay = b"x\ny x\n\nx";
        let offsets = find_all(hay, b"x");
        assert_eq!(lines_of(hay, &offsets), vec![1, 2, 4]);
    }

    #[test]
    fn lists_lines_readably() {
        assert_eq!(list_lines(&[3]), "3");
        assert_eq!(list_lines(&[2, 5, 9]), "2, 5 and 9");
        assert_eq!(list_lines(&[2, 2, 5]), "2 and 5");
        let many: Vec<usize> = (1..=25).collect();
        assert!(list_lines(&many).ends_with("20 and 5 more"));
    }

    #[test]
    fn ambiguous_and_wrong_line_name_the_lines() {
        let hay = b"let a = 1;\nlet b = 1;\nlet a = 1;\n";
        let err = locate_match("f.rs", hay, b"let a", None).unwrap_err();
        assert!(
            err.to_string()
                .contains("occurs 2 times in f.rs, starting on lines 1 and 3")
        );
        let err = locate_match("f.rs", hay, b"let a", Some(2)).unwrap_err();
        assert!(
            err.to_string()
                .contains("does not start on line 2 of f.rs; it occurs starting on lines 1 and 3")
        );
        assert_eq!(
            locate_match("f.rs", hay, b"let a", Some(3)).unwrap(),
            (22, 3)
        );
    }

    #[test]
    fn several_on_the_requested_line_stay_ambiguous() {
        let err = locate_match("f", b"x x\n", b"x", Some(1)).unwrap_err();
        assert!(err.to_string().contains("occurs 2 times on line 1 of f"));
    }
}
