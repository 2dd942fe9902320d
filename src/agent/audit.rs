//! The audit log: one JSON line per decision (time, session, call, tool,
//! mode, outcome, code) and per verdict of a hook that decides, appended
//! and synced, in mino's home. It records; it never decides and is never
//! read back by the program. Appends run on the blocking pool.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::policy::Mode;

use super::error::AgentError;
use super::events::DecisionView;

#[derive(Debug, Clone)]
pub struct Audit {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

/// Seconds since the epoch, for a line's `time`.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Audit {
    /// Opens (creating 0600) the audit log at `path`.
    pub fn open(path: &Path) -> Result<Self, AgentError> {
        let file =
            crate::home::create_private_file(path).map_err(|source| AgentError::AuditOpen {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Appends one decision. A failure names the file.
    pub async fn decision(
        &self,
        session: &str,
        call_id: &str,
        tool: &str,
        mode: Mode,
        view: &DecisionView,
    ) -> Result<(), AgentError> {
        self.write(json!({
            "time": now(),
            "session": session,
            "call_id": call_id,
            "tool": tool,
            "mode": mode.name(),
            "decision": view.decision,
            "unasked": view.unasked,
            "code": view.code,
            "rule": view.rule,
        }))
        .await
    }

    /// Appends one hook's verdict: the event, the call it was about (its
    /// id and tool), where the hook is written, and its word (`none`,
    /// `allow`, `ask`, `deny`; `pass`, `block` for a prompt).
    pub async fn hook(
        &self,
        session: &str,
        event: &str,
        call: Option<(&str, &str)>,
        key: &str,
        verdict: &str,
    ) -> Result<(), AgentError> {
        self.write(json!({
            "time": now(),
            "session": session,
            "hook_event": event,
            "call_id": call.map(|c| c.0),
            "tool": call.map(|c| c.1),
            "hook": key,
            "verdict": verdict,
        }))
        .await
    }

    /// Appends `line` on the blocking pool.
    async fn write(&self, line: serde_json::Value) -> Result<(), AgentError> {
        let audit = self.clone();
        tokio::task::spawn_blocking(move || audit.append(&line.to_string()))
            .await
            .map_err(|e| AgentError::Blocking(e.to_string()))?
    }

    fn append(&self, line: &str) -> Result<(), AgentError> {
        let mut file = self.file.lock().map_err(|_| AgentError::AuditPoisoned {
            path: self.path.clone(),
        })?;
        writeln!(file, "{line}")
            .and_then(|()| file.sync_data())
            .map_err(|source| AgentError::AuditWrite {
                path: self.path.clone(),
                source,
            })
    }
}
