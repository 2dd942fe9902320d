//! A file's diagnostics as the model reads them: the file handed to its
//! server, a fresh report waited for (at most 2 s), its errors and warnings
//! counted and listed as `path:LINE: severity: message [source]`. Used by
//! the `diagnostics` action and after edits. Never writes.

use std::sync::Arc;
use std::time::Duration;

use lsp_types::{Diagnostic, DiagnosticSeverity, Uri};

use super::Hub;
use super::nav::open_file;
use crate::lsp::Client;
use crate::tools::Project;

/// How long a fresh diagnostics report is waited for.
pub(super) const FRESH_REPORT: Duration = Duration::from_secs(2);

/// A file's diagnostics after its text was handed to the server, waiting
/// at most `FRESH_REPORT` for a fresh report; at most `listed` listed.
/// Also the `lsp: started` note.
pub(super) async fn diagnostics_of(
    project: &Arc<Project>,
    hub: &Hub,
    relative: &str,
    listed: usize,
) -> Result<(String, String), String> {
    let connected = hub.for_file(relative).await.map_err(|e| e.to_string())?;
    let uri = crate::lsp::uri::path_to_uri(&project.root().join(relative))
        .ok_or_else(|| format!("{relative} cannot be named as a file URI"))?;
    let seen = connected.client.reports(uri.as_str());
    let opened = open_file(project, hub, relative).await?;
    let fresh = wait_fresh(&opened.connected.client, &uri, seen).await;
    let all = opened.connected.client.diagnostics(uri.as_str());
    let shown: Vec<&Diagnostic> = all
        .iter()
        .filter(|d| {
            matches!(
                d.severity,
                None | Some(DiagnosticSeverity::ERROR) | Some(DiagnosticSeverity::WARNING)
            )
        })
        .collect();
    let server = &opened.connected.server;
    let mut text = if shown.is_empty() {
        format!("{server}: no errors or warnings in {relative}.")
    } else {
        let errors = shown
            .iter()
            .filter(|d| d.severity == Some(DiagnosticSeverity::ERROR))
            .count();
        format!(
            "{server}: {} and {} in {relative}:",
            crate::tools::wording::plural(errors, "error"),
            crate::tools::wording::plural(shown.len() - errors, "warning")
        )
    };
    for diagnostic in shown.iter().take(listed) {
        text.push('\n');
        text.push_str(&diagnostic_line(relative, diagnostic));
    }
    if shown.len() > listed {
        text.push_str(&format!("\n({} more)", shown.len() - listed));
    }
    if !fresh {
        text.push_str(&format!(
            "\n(no fresh report within {} s; this is the last one)",
            FRESH_REPORT.as_secs()
        ));
    }
    let note = if connected.first_start {
        format!("lsp: started {}\n", connected.server)
    } else {
        opened.note
    };
    Ok((text, note))
}

async fn wait_fresh(client: &Arc<Client>, uri: &Uri, seen: u64) -> bool {
    client.wait_report(uri.as_str(), seen, FRESH_REPORT).await
}

pub(super) fn diagnostic_line(relative: &str, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Some(DiagnosticSeverity::ERROR) => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "problem",
    };
    let source = d
        .source
        .as_deref()
        .map(|s| format!(" [{s}]"))
        .unwrap_or_default();
    let message = d.message.lines().next().unwrap_or_default();
    format!(
        "{relative}:{}: {severity}: {message}{source}",
        d.range.start.line + 1
    )
}
