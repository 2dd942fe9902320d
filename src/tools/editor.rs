//! The editor's side of files, for a front end that has one (an ACP client
//! offering `fs/read_text_file` and `fs/write_text_file`): reads see the
//! editor's unsaved buffers and writes land in its buffers, so the person
//! sees and can undo them there. Owns the port and the two steps that use
//! it around mino's own confined read and write. The editor is asked only
//! after the decision and after mino's own confinement has proved the target
//! (a regular project file, no link, not changed since inspection); it is
//! never asked instead of them, and never decides anything.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::BoxFuture;
use super::fs::confine::{Expected, FileContents, Project, digest};

/// What an editor answered instead of a file's text or a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the editor refused: {0}")]
pub struct EditorError(pub String);

/// The files of an editor that drives mino.
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// True when the editor serves reads (`fs/read_text_file`).
    fn reads(&self) -> bool;
    /// True when the editor takes writes (`fs/write_text_file`).
    fn writes(&self) -> bool;
    /// The editor's text of the file at the absolute `path` (its buffer,
    /// saved or not).
    fn read(&self, path: PathBuf) -> BoxFuture<Result<String, EditorError>>;
    /// Puts `content` into the file at the absolute `path` through the editor.
    fn write(&self, path: PathBuf, content: String) -> BoxFuture<Result<(), EditorError>>;
}

/// A shared editor port, if the front end has one.
pub type Editor = Option<Arc<dyn EditorFiles>>;

/// Replaces `file`'s bytes with the editor's text of the same file, when the
/// editor serves reads. `file` was read through mino's confined open first,
/// so only a file mino itself may read is ever asked for; an editor that
/// fails or is interrupted leaves the disk's contents in place.
pub(crate) async fn overlay_read(
    editor: &Editor,
    project: &Project,
    relative: &str,
    limit: u64,
    file: FileContents,
    cancel: &CancellationToken,
) -> FileContents {
    let Some(editor) = editor.as_ref().filter(|e| e.reads()) else {
        return file;
    };
    let path = project.root().join(relative);
    let answer = tokio::select! {
        biased;
        () = cancel.cancelled() => return file,
        answer = editor.read(path) => answer,
    };
    match answer {
        Ok(text) => {
            let size = u64::try_from(text.len()).unwrap_or(u64::MAX);
            let mut bytes = text.into_bytes();
            let truncated = size > limit;
            bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            FileContents {
                bytes,
                mode: file.mode,
                truncated,
                size,
            }
        }
        Err(e) => {
            tracing::info!(path = relative, error = %e, "the editor did not serve a read; the disk's contents are used");
            file
        }
    }
}

/// How a write through the editor went.
pub(crate) enum EditorWrite {
    /// The editor wrote it; `note` says what differs on disk, if anything.
    Written { note: Option<String> },
    /// The editor does not take writes, the content is not text, or it
    /// refused: mino writes the file itself.
    NotTaken,
}

/// Writes `bytes` through the editor, when it takes writes and the bytes are
/// text. Runs after mino's decision; `project.check_replace` proves first,
/// through the confined open, that the target is what inspection saw (a
/// regular file with the expected contents, or absent) and not a link, and
/// the file is read back afterwards the same way.
pub(crate) async fn write_through(
    editor: &Editor,
    project: Arc<Project>,
    relative: String,
    bytes: &[u8],
    expected: Expected,
) -> Result<EditorWrite, super::ConfineError> {
    let Some(editor) = editor.as_ref().filter(|e| e.writes()) else {
        return Ok(EditorWrite::NotTaken);
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(EditorWrite::NotTaken);
    };
    let checked = {
        let project = Arc::clone(&project);
        let relative = relative.clone();
        tokio::task::spawn_blocking(move || project.check_replace(&relative, expected)).await
    };
    match checked {
        Ok(result) => result?,
        Err(e) => {
            return Err(super::ConfineError::Io {
                path: relative,
                message: e.to_string(),
            });
        }
    }
    let path = project.root().join(&relative);
    if let Err(e) = editor.write(path, text.to_string()).await {
        tracing::info!(path = %relative, error = %e, "the editor did not take a write; mino writes the file itself");
        return Ok(EditorWrite::NotTaken);
    }
    let want = digest(bytes);
    let limit = u64::try_from(bytes.len())
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let after = tokio::task::spawn_blocking(move || project.read_current(&relative, limit)).await;
    let note = match after {
        Ok(Ok(Some(file))) if !file.truncated && digest(&file.bytes) == want => None,
        Ok(Ok(Some(file))) => Some(format!(
            "The editor saved the file with changes of its own ({} bytes on disk).",
            file.size
        )),
        Ok(Ok(None)) => Some("The editor took the text but has not saved it to disk yet.".into()),
        Ok(Err(e)) => Some(format!("After the editor's write, {e}")),
        Err(e) => Some(format!(
            "After the editor's write, the file could not be checked: {e}"
        )),
    };
    Ok(EditorWrite::Written { note })
}
