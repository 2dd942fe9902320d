//! `write_file`: creates or replaces one project file with the content the
//! model gave. Owns the tool's arguments, its facts (a file write to one
//! target), the inspection that binds the write to the file as it was read
//! (digest and diff), the atomic write, and the helpers `edit_file` shares
//! for all of that. Never decides whether it may run, never reads a file
//! while preparing, never writes without rechecking the inspected digest,
//! and never follows a symbolic link.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use similar::{Algorithm, TextDiff};
use tokio_util::sync::CancellationToken;

use super::confine::{Expected, FileContents, digest};
use super::editor::{Editor, EditorWrite, write_through};
use super::paths::{inside, locate_with_facts, shown_path};
use super::text::{count_lines, looks_binary, plural};
use super::{
    BoxFuture, ConfineError, Field, PreparedCall, Project, Tool, ToolContext, ToolError,
    ToolOutcome, ToolSpec, parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget};

const NAME: &str = "write_file";

/// The largest file a write or an edit replaces, and the largest content
/// it writes.
pub const CHANGE_LIMIT: u64 = 4 * 1024 * 1024;

/// How long the diff for a preview may take before it settles for a
/// coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// `N bytes, M lines`, as the `Resulting file` field and results say it.
pub(crate) fn size_summary(bytes: &[u8]) -> String {
    format!(
        "{}, {}",
        plural(bytes.len(), "byte"),
        plural(count_lines(bytes), "line")
    )
}

/// The fields a write's or an edit's confirmation opens with: the file and
/// the project directory it is in.
pub(crate) fn target_fields(project: &Project, target: &PathTarget) -> Vec<Field> {
    vec![
        Field::text("Path", shown_path(target)),
        Field::text("Project directory", project.root().display().to_string()),
    ]
}

/// The file a write or an edit would replace, read through the confined
/// open: `None` when it does not exist. Refuses the project directory
/// itself and files over `CHANGE_LIMIT`.
pub(crate) fn read_for_change(
    project: &Project,
    target: &PathTarget,
) -> Result<Option<FileContents>, ToolError> {
    let relative = inside(target)?;
    if relative.is_empty() {
        return Err(ConfineError::IsDirectory { path: ".".into() }.into());
    }
    let current = project.read_current(relative, CHANGE_LIMIT)?;
    if let Some(file) = &current
        && file.truncated
    {
        return Err(ToolError::Failed(format!(
            "{} is {} bytes; file tools only replace files up to {CHANGE_LIMIT} bytes.",
            shown_path(target),
            file.size
        )));
    }
    Ok(current)
}

/// A unified diff from `old` (`None` for a new file) to `new`, as a
/// confirmation shows it.
pub(crate) fn unified_diff(path: &str, old: Option<&[u8]>, new: &[u8]) -> String {
    let mut out = String::new();
    let old_text = match old {
        Some(old) if looks_binary(old) => {
            out.push_str(&format!(
                "{path} is a binary file ({}); its contents are not shown.\n",
                plural(old.len(), "byte")
            ));
            String::new()
        }
        Some(old) => String::from_utf8_lossy(old).into_owned(),
        None => String::new(),
    };
    let new_text = String::from_utf8_lossy(new);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old_text.as_str(), new_text.as_ref());
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{path}"))
        .to_string();
    if body.is_empty() {
        out.push_str("(no changes)\n");
    } else {
        out.push_str(&body);
    }
    out
}

/// Writes `bytes` to the target, bound to `expected`, off the async
/// threads: through the editor when one takes writes (after the confined
/// check), by mino's own atomic write otherwise. A cancelled call writes
/// nothing; a write that started finishes, so the result never claims an
/// interruption that did not happen.
pub(crate) fn spawn_write(
    project: Arc<Project>,
    target: PathTarget,
    bytes: Vec<u8>,
    expected: Expected,
    cancel: CancellationToken,
    done: String,
    editor: Editor,
) -> BoxFuture<ToolOutcome> {
    Box::pin(async move {
        if cancel.is_cancelled() {
            return ToolOutcome::interrupted(format!(
                "Interrupted before writing {}; nothing was written.",
                shown_path(&target)
            ));
        }
        let relative = match inside(&target) {
            Ok(relative) => relative.to_string(),
            Err(e) => return ToolOutcome::error(e.to_string()),
        };
        match write_through(
            &editor,
            Arc::clone(&project),
            relative.clone(),
            &bytes,
            expected,
        )
        .await
        {
            Ok(EditorWrite::Written { note: None }) => return ToolOutcome::completed(done),
            Ok(EditorWrite::Written { note: Some(note) }) => {
                return ToolOutcome::completed(format!("{done} {note}"));
            }
            Ok(EditorWrite::NotTaken) => {}
            Err(e) => return ToolOutcome::error(e.to_string()),
        }
        let work =
            tokio::task::spawn_blocking(move || project.write_atomic(&relative, &bytes, expected));
        match work.await {
            Ok(Ok(())) => ToolOutcome::completed(done),
            Ok(Err(e)) => ToolOutcome::error(e.to_string()),
            Err(e) => ToolOutcome::error(format!("the write failed: {e}")),
        }
    })
}

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
            name: NAME,
            description: "Create a file inside the project directory, or replace the whole \
                content of an existing one. Missing parent directories are created and an \
                existing file keeps its permissions. To change part of a file, prefer edit_file.",
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
        let (target, facts) =
            locate_with_facts(&cx.project, &args.path, NAME, CallKind::FileWrite)?;
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

    fn run(mut self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        if self.expected.is_none()
            && let Err(e) = self.inspect()
        {
            return Box::pin(std::future::ready(ToolOutcome::error(e.to_string())));
        }
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
