//! The audit log: one JSON line per decision (time, session, call, tool,
//! mode, outcome, code), appended and synced, in mino's home. It records;
//! it never decides and is never read back by the program.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::policy::Mode;

use super::events::DecisionView;

pub struct Audit {
    path: PathBuf,
    file: Mutex<File>,
}

impl Audit {
    /// Opens (creating 0600) the audit log at `path`.
    pub fn open(path: &Path) -> Result<Self, String> {
        let file = crate::home::create_private_file(path)
            .map_err(|e| format!("could not open the audit log {}: {e}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Appends one decision. A failure is returned as a sentence naming the file.
    pub fn decision(
        &self,
        session: &str,
        call_id: &str,
        tool: &str,
        mode: Mode,
        view: &DecisionView,
    ) -> Result<(), String> {
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let line = json!({
            "time": time,
            "session": session,
            "call_id": call_id,
            "tool": tool,
            "mode": mode.name(),
            "decision": view.decision,
            "unasked": view.unasked,
            "code": view.code,
        });
        let mut file = self
            .file
            .lock()
            .map_err(|_| format!("the audit log {} is unusable", self.path.display()))?;
        writeln!(file, "{line}")
            .and_then(|()| file.sync_data())
            .map_err(|e| format!("could not write the audit log {}: {e}", self.path.display()))
    }
}
