//! `lsp` `rename`: a write prepared as one call over every file the
//! server's workspace edit touches. Preparing asks the server for the edit
//! and names every file in the facts (so the decision refuses the whole
//! rename when one is protected, through a link or outside the project);
//! a file that is an execution surface refuses it here, named. Inspection
//! reads each file, takes its digest and builds one multi-file diff; the
//! run rechecks every digest before it writes anything and writes each
//! file atomically. Never follows a link.

use std::collections::BTreeMap;
use std::sync::Arc;

use lsp_types::request::Rename;
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, RenameParams, TextDocumentPositionParams,
    TextEdit, Uri, WorkDoneProgressParams, WorkspaceEdit,
};
use tokio_util::sync::CancellationToken;

use super::nav::{open_file, position_of};
use super::position::apply_edits;
use super::{At, Hub, NAME};
use crate::lsp::uri::uri_to_path;
use crate::policy::{CallFacts, CallKind, PathTarget, Surfaces, ToolKey};
use crate::tools::FieldRole;
use crate::tools::fs::change::{read_for_change, unified_diff};
use crate::tools::fs::confine::{Expected, digest};
use crate::tools::fs::paths::{inside, shown_path};
use crate::tools::{BoxFuture, Field, PreparedCall, Project, ToolContext, ToolError, ToolOutcome};

/// The most files one rename may change.
const FILES_LIMIT: usize = 200;

/// One file of the rename as inspection bound it.
struct Inspected {
    relative: String,
    expected: Expected,
    result: Vec<u8>,
    diff: String,
}

struct RenameCall {
    project: Arc<Project>,
    facts: CallFacts,
    at: At,
    new_name: String,
    /// Each file's edits, by its target (in the order of `facts.targets`).
    edits: Vec<(PathTarget, Vec<TextEdit>)>,
    inspected: Option<Vec<Inspected>>,
    /// `lsp: started NAME` when preparing started the server.
    note: String,
}

fn failed(message: impl Into<String>) -> ToolError {
    ToolError::Failed(message.into())
}

/// Asks the server for the rename and prepares the call over its files.
pub(super) fn prepare(
    cx: &ToolContext,
    hub: Hub,
    target: PathTarget,
    at: At,
    new_name: String,
) -> Result<Box<dyn PreparedCall>, ToolError> {
    let _ = inside(&target)?;
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| failed("lsp rename needs mino's runtime"))?;
    let (project, query_at, query_name) = (Arc::clone(&cx.project), at.clone(), new_name.clone());
    // Preparing is synchronous (on the blocking pool); the server is asked
    // from a thread of its own, which may always wait for the runtime.
    let asked = std::thread::scope(|scope| {
        scope
            .spawn(|| handle.block_on(ask(project, hub, query_at, query_name)))
            .join()
    })
    .map_err(|_| failed("lsp rename stopped while asking the server"))?;
    let (edit, note) = asked.map_err(failed)?;
    let per_file = files_of(edit)?;
    if per_file.is_empty() {
        return Err(failed(format!(
            "The language server found nothing to rename for {} at {}:{}.",
            at.symbol,
            at.relative,
            at.line + 1
        )));
    }
    let mut facts = CallFacts::new(ToolKey::new(NAME), CallKind::FileWrite);
    let mut edits: Vec<(PathTarget, Vec<TextEdit>)> = Vec::new();
    for (uri, list) in per_file {
        let target = match uri_to_path(&uri) {
            Some(path) => cx.project.locate(&path.to_string_lossy())?,
            None => PathTarget::Outside {
                given: uri.as_str().to_string(),
            },
        };
        refuse_surface(&cx.surfaces, &target)?;
        // Two URIs for one file (`%61.py` and `a.py`) are one file's edits:
        // written once, bound to one digest.
        match edits.iter_mut().find(|(known, _)| *known == target) {
            Some((_, known)) => known.extend(list),
            None => {
                facts = facts.with_target(target.clone());
                edits.push((target, list));
            }
        }
    }
    Ok(Box::new(RenameCall {
        project: Arc::clone(&cx.project),
        facts,
        at,
        new_name,
        edits,
        inspected: None,
        note,
    }))
}

/// A rename never writes where code runs later: refused whole, the file
/// named.
fn refuse_surface(surfaces: &Surfaces, target: &PathTarget) -> Result<(), ToolError> {
    if let PathTarget::Inside { relative, .. } = target
        && let Some(surface) = surfaces.surface(relative)
    {
        return Err(failed(format!(
            "The rename was refused whole: it would change {relative}, an execution surface ({}); \
             lsp rename never writes there. Change that file with edit_file instead.",
            surface.why
        )));
    }
    Ok(())
}

async fn ask(
    project: Arc<Project>,
    hub: Hub,
    at: At,
    new_name: String,
) -> Result<(WorkspaceEdit, String), String> {
    let opened = open_file(&project, &hub, &at.relative).await?;
    let position = position_of(&opened.text, &at)?;
    let edit = opened
        .connected
        .client
        .request::<Rename>(RenameParams {
            text_document_position: TextDocumentPositionParams {
                text_document: lsp_types::TextDocumentIdentifier {
                    uri: opened.uri.clone(),
                },
                position,
            },
            new_name,
            work_done_progress_params: WorkDoneProgressParams::default(),
        })
        .await
        .map_err(|e| e.to_string())?;
    Ok((edit.unwrap_or_default(), opened.note))
}

/// The text edits of a workspace edit, per file. Creating, renaming or
/// deleting files is refused.
fn files_of(edit: WorkspaceEdit) -> Result<Vec<(Uri, Vec<TextEdit>)>, ToolError> {
    let mut files: BTreeMap<String, (Uri, Vec<TextEdit>)> = BTreeMap::new();
    let mut add = |uri: Uri, list: Vec<TextEdit>| {
        files
            .entry(uri.as_str().to_string())
            .or_insert_with(|| (uri, Vec::new()))
            .1
            .extend(list);
    };
    match edit.document_changes {
        Some(DocumentChanges::Edits(list)) => {
            for doc in list {
                add(doc.text_document.uri, plain(doc.edits));
            }
        }
        Some(DocumentChanges::Operations(list)) => {
            for op in list {
                match op {
                    DocumentChangeOperation::Edit(doc) => {
                        add(doc.text_document.uri, plain(doc.edits))
                    }
                    DocumentChangeOperation::Op(_) => {
                        return Err(failed(
                            "The language server's rename would create, rename or delete files; lsp rename only changes text in existing files.",
                        ));
                    }
                }
            }
        }
        None => {
            for (uri, list) in edit.changes.unwrap_or_default() {
                add(uri, list);
            }
        }
    }
    if files.len() > FILES_LIMIT {
        return Err(failed(format!(
            "The rename would change {} files; lsp rename changes at most {FILES_LIMIT}.",
            files.len()
        )));
    }
    Ok(files.into_values().collect())
}

fn plain(edits: Vec<OneOf<TextEdit, lsp_types::AnnotatedTextEdit>>) -> Vec<TextEdit> {
    edits
        .into_iter()
        .map(|e| match e {
            OneOf::Left(edit) => edit,
            OneOf::Right(annotated) => annotated.text_edit,
        })
        .collect()
}

impl PreparedCall for RenameCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let files: Vec<String> = self.edits.iter().map(|(t, _)| shown_path(t)).collect();
        let mut fields = vec![
            Field::named(FieldRole::Path, files.join(", ")),
            Field::text(
                "Project directory",
                self.project.root().display().to_string(),
            ),
            Field::text("Rename", format!("{} to {}", self.at.symbol, self.new_name)),
        ];
        if let Some(inspected) = &self.inspected {
            let diff: String = inspected.iter().map(|i| i.diff.as_str()).collect();
            fields.push(Field::diff(diff));
        }
        fields
    }

    fn needs_inspection(&self) -> bool {
        true
    }

    fn inspect(&mut self) -> Result<(), ToolError> {
        let mut inspected = Vec::new();
        for (target, edits) in &self.edits {
            let path = shown_path(target);
            let relative = inside(target)?.to_string();
            let Some(file) = read_for_change(&self.project, target)? else {
                return Err(failed(format!(
                    "The rename would change {path}, which does not exist; nothing was written."
                )));
            };
            let text = String::from_utf8(file.bytes.clone())
                .map_err(|_| failed(format!("{path} is not UTF-8 text; nothing was written.")))?;
            let result = apply_edits(&text, edits).ok_or_else(|| {
                failed(format!(
                    "The language server's edits for {path} do not fit the file; nothing was written."
                ))
            })?;
            let diff = unified_diff(&path, Some(&file.bytes), result.as_bytes());
            inspected.push(Inspected {
                relative,
                expected: Expected::Digest(digest(&file.bytes)),
                result: result.into_bytes(),
                diff,
            });
        }
        self.inspected = Some(inspected);
        Ok(())
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return ToolOutcome::interrupted(
                    "Interrupted before the rename; nothing was written.",
                );
            }
            let RenameCall {
                project,
                inspected,
                note,
                at,
                new_name,
                ..
            } = *self;
            let Some(inspected) = inspected else {
                return ToolOutcome::error("The rename was not inspected; nothing was written.");
            };
            let work = tokio::task::spawn_blocking(move || apply(&project, &inspected));
            match work.await {
                Ok(Ok(files)) => ToolOutcome::completed(format!(
                    "{note}Renamed {} to {new_name} in {}: {}.",
                    at.symbol,
                    crate::tools::wording::plural(files.len(), "file"),
                    files.join(", ")
                )),
                Ok(Err(message)) => ToolOutcome::error(message),
                Err(e) => ToolOutcome::error(format!("The rename failed: {e}")),
            }
        })
    }
}

/// Rechecks every file's digest, then writes each atomically. Nothing is
/// written when any file changed since inspection.
fn apply(project: &Project, inspected: &[Inspected]) -> Result<Vec<String>, String> {
    for file in inspected {
        if let Err(e) = project.check_replace(&file.relative, file.expected) {
            return Err(format!(
                "Nothing was written: {} changed since the rename was inspected ({e}).",
                file.relative
            ));
        }
    }
    let mut written = Vec::new();
    for file in inspected {
        if let Err(e) = project.write_atomic(&file.relative, &file.result, file.expected) {
            let done = if written.is_empty() {
                "nothing was written".to_string()
            } else {
                format!("already written: {}", written.join(", "))
            };
            return Err(format!(
                "The rename stopped at {}: {e}; {done}.",
                file.relative
            ));
        }
        written.push(file.relative.clone());
    }
    Ok(written)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn inside(relative: &str) -> PathTarget {
        PathTarget::Inside {
            relative: relative.into(),
            through_link: None,
            hard_linked: false,
        }
    }

    #[test]
    fn a_rename_never_writes_an_execution_surface() {
        let surfaces = Surfaces::new(None);
        for surface in [".github/workflows/ci.yml", "AGENTS.md", ".mino/config.toml"] {
            let refused = refuse_surface(&surfaces, &inside(surface)).unwrap_err();
            assert!(
                refused
                    .to_string()
                    .contains(&format!("would change {surface}")),
                "{refused}"
            );
            assert!(refused.to_string().contains("refused whole"), "{refused}");
        }
        assert!(refuse_surface(&surfaces, &inside("src/app.py")).is_ok());
    }

    #[test]
    fn file_operations_are_refused_and_edits_gathered_per_file() {
        let edit: WorkspaceEdit = serde_json::from_value(serde_json::json!({
            "documentChanges": [
                {"textDocument": {"uri": "file:///p/a.py", "version": 1},
                 "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "b"}]},
                {"kind": "delete", "uri": "file:///p/c.py"}
            ]
        }))
        .unwrap();
        assert!(
            files_of(edit)
                .unwrap_err()
                .to_string()
                .contains("create, rename or delete")
        );
        let edit: WorkspaceEdit = serde_json::from_value(serde_json::json!({
            "changes": {"file:///p/a.py": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "b"}
            ]}
        }))
        .unwrap();
        let files = files_of(edit).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].1.len(), 1);
    }
}
