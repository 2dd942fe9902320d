//! Diagnostics after edits: when a language server covers a file that
//! `edit_file`, `write_file` or an `lsp` rename just changed, the call's
//! result ends with the server's errors and warnings for it (their count
//! and the first five, after at most 2 s for a fresh report), so the model
//! sees a broken build without running it. `[lsp] diagnostics_after_edit
//! = false` turns it off. A file no server covers, or whose server cannot
//! start, adds nothing.

use std::time::Duration;

use super::diagnostics::diagnostics_of;
use crate::lsp::LspError;
use crate::policy::{CallFacts, CallKind, PathTarget};
use crate::tools::ToolContext;

/// How many diagnostics of each file are listed.
const LISTED: usize = 5;

/// How long starting a server (and handing it the file) may add to an edit.
const START_WAIT: Duration = Duration::from_secs(20);

/// The project files a call of `tool` with `facts` changes, when it is one
/// whose result ends with diagnostics.
pub fn edited_files(tool: &str, facts: &CallFacts) -> Vec<String> {
    let writes = matches!(
        facts.kind,
        CallKind::FileWrite | CallKind::SurfaceWrite { .. }
    );
    if !writes || !matches!(tool, "edit_file" | "write_file" | super::NAME) {
        return Vec::new();
    }
    facts
        .targets
        .iter()
        .filter_map(|t| match t {
            PathTarget::Inside {
                relative,
                through_link: None,
                hard_linked: false,
            } => Some(relative.clone()),
            _ => None,
        })
        .collect()
}

/// The servers' report on `files`, or `None` when there is nothing to say.
pub async fn after_edit(cx: &ToolContext, files: &[String]) -> Option<String> {
    let hub = cx.lsp.as_ref()?;
    if files.is_empty() || !hub.diagnostics_after_edit() {
        return None;
    }
    let mut reports = Vec::new();
    for relative in files {
        if cx.protected.protection(relative).is_some() {
            continue;
        }
        let work = diagnostics_of(&cx.project, hub, relative, LISTED);
        match tokio::time::timeout(START_WAIT, work).await {
            Ok(Ok((text, note))) => reports.push(format!("{note}{text}")),
            Ok(Err(message)) if covered(hub, relative).await => {
                reports.push(format!("No diagnostics for {relative}: {message}"));
            }
            Ok(Err(_)) | Err(_) => {}
        }
    }
    (!reports.is_empty()).then(|| reports.join("\n"))
}

/// Whether a server covers `relative` and is installed (a failure then is
/// worth saying).
async fn covered(hub: &crate::lsp::LspHub, relative: &str) -> bool {
    !matches!(
        hub.for_file(relative).await,
        Err(LspError::NoServer { .. } | LspError::NotInstalled { .. })
    )
}
