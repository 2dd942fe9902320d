//! The change machinery the writing tools share (`write_file`, `edit_file`,
//! `fetch_content`'s `output`): the size limit of a change, reading the file
//! a change would replace, the preview diff, and the atomic write bound to
//! what inspection saw. Never decides, never writes without the inspected
//! digest, never follows a symbolic link.

use std::sync::Arc;
use std::time::Duration;

use similar::{Algorithm, TextDiff};
use tokio_util::sync::CancellationToken;

use super::confine::{Expected, FileContents, Project};
use super::paths::{inside, shown_path};
use crate::policy::PathTarget;
use crate::tools::FieldRole;
use crate::tools::editor::{Editor, EditorWrite, write_through};
use crate::tools::wording::{count_lines, looks_binary, plural};
use crate::tools::{BoxFuture, ConfineError, Field, ToolError, ToolOutcome};

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
        Field::named(FieldRole::Path, shown_path(target)),
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
