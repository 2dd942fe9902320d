//! `write_file`: creates or replaces one project file with the content the
//! model gave. Owns the tool's arguments, its facts (a file write to one
//! target), its inspection (digest and diff, through `fs::change`) and its
//! result text. Never decides whether it may run, never reads a file
//! while preparing, never writes without rechecking the inspected digest,
//! and never follows a symbolic link.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::inspected;
use super::editor::Editor;
use super::fs::change::{
    CHANGE_LIMIT, read_for_change, size_summary, spawn_write, target_fields, unified_diff,
};
use super::fs::confine::{Expected, digest};
use super::fs::paths::{locate_with_facts, shown_path};
use super::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget};

pub(crate) const NAME: &str = "write_file";

/// Creates or replaces a project file with given content.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Create a file inside the project directory, or replace the whole \
                content of an existing one. Missing parent directories are created and an \
                existing file keeps its permissions. To change part of a file, prefer edit_file."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path of the file, relative to the project directory."
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file."
                    }
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        if args.content.len() as u64 > CHANGE_LIMIT {
            return Err(ToolError::InvalidArguments {
                tool: NAME,
                message: format!(
                    "content is {} bytes; write_file writes at most {CHANGE_LIMIT}",
                    args.content.len()
                ),
            });
        }
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &args.path,
            NAME,
            CallKind::FileWrite,
        )?;
        Ok(Box::new(WriteCall {
            project: Arc::clone(&cx.project),
            target,
            facts,
            content: args.content,
            expected: None,
            diff: String::new(),
            editor: cx.editor.clone(),
        }))
    }
}

struct WriteCall {
    project: Arc<Project>,
    target: PathTarget,
    facts: CallFacts,
    content: String,
    /// What the write is bound to; `None` until inspected.
    expected: Option<Expected>,
    diff: String,
    editor: Editor,
}

impl PreparedCall for WriteCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = target_fields(&self.project, &self.target);
        if self.expected.is_some() {
            fields.push(Field::text(
                "Resulting file",
                size_summary(self.content.as_bytes()),
            ));
            fields.push(Field::diff(self.diff.clone()));
        }
        fields
    }

    fn needs_inspection(&self) -> bool {
        true
    }

    fn inspect(&mut self) -> Result<(), ToolError> {
        let current = read_for_change(&self.project, &self.target)?;
        let path = shown_path(&self.target);
        let (expected, diff) = match current {
            None => (
                Expected::Absent,
                unified_diff(&path, None, self.content.as_bytes()),
            ),
            Some(file) => (
                Expected::Digest(digest(&file.bytes)),
                unified_diff(&path, Some(&file.bytes), self.content.as_bytes()),
            ),
        };
        self.expected = Some(expected);
        self.diff = diff;
        Ok(())
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let already = self.expected.is_some();
            match inspected(self, already, "write_file").await {
                Ok(call) => call.write(cancel).await,
                Err(outcome) => outcome,
            }
        })
    }
}

impl WriteCall {
    /// Writes the inspected call.
    fn write(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let Some(expected) = self.expected else {
            return Box::pin(std::future::ready(ToolOutcome::error(
                "write_file was not inspected; nothing was written.",
            )));
        };
        let verb = match expected {
            Expected::Absent => "Created",
            Expected::Digest(_) => "Wrote",
        };
        let done = format!(
            "{verb} {} ({}).",
            shown_path(&self.target),
            size_summary(self.content.as_bytes())
        );
        let WriteCall {
            project,
            target,
            content,
            editor,
            ..
        } = *self;
        spawn_write(
            project,
            target,
            content.into_bytes(),
            expected,
            cancel,
            done,
            editor,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_bytes_and_lines() {
        assert_eq!(size_summary(b"a\nb\n"), "4 bytes, 2 lines");
        assert_eq!(size_summary(b"x"), "1 byte, 1 line");
        assert_eq!(size_summary(b""), "0 bytes, 0 lines");
    }

    #[test]
    fn new_file_diff_is_all_added() {
        let diff = unified_diff("n.txt", None, b"one\ntwo\n");
        assert!(
            diff.starts_with("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n"),
            "{diff}"
        );
        assert!(diff.contains("+one\n+two\n"));
    }

    #[test]
    fn unchanged_content_says_so() {
        assert_eq!(
            unified_diff("n.txt", Some(b"same\n"), b"same\n"),
            "(no changes)\n"
        );
    }

    #[test]
    fn binary_old_content_is_not_shown() {
        let diff = unified_diff("b.bin", Some(b"\0secret"), b"text\n");
        assert!(diff.contains("binary file"));
        assert!(!diff.contains("secret"));
    }
}
