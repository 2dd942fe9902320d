//! What this machine supports, found once per run by starting the helper's
//! `probe` (namespaces can only be tried in a process of their own). Never
//! changes anything outside the probe process.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// What the kernel allows here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// Unprivileged user, mount and PID namespaces work.
    pub user_namespaces: bool,
    /// Why they do not, when they do not.
    #[serde(default, rename = "error", skip_serializing_if = "Option::is_none")]
    pub namespace_error: Option<String>,
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<i32>,
}

impl Support {
    /// Starts `helper` (the mino binary) as the probe. On other platforms,
    /// or when the probe cannot run, nothing is supported.
    pub fn probe(helper: &Path) -> Support {
        if !cfg!(target_os = "linux") {
            return Support {
                namespace_error: Some("the sandbox exists on Linux only".into()),
                ..Support::default()
            };
        }
        let output = Command::new(helper)
            .arg(super::HELPER_ARG)
            .arg("probe")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        match output {
            Ok(output) => serde_json::from_slice(&output.stdout).unwrap_or_else(|e| Support {
                namespace_error: Some(format!("the probe's answer was unreadable: {e}")),
                ..Support::default()
            }),
            Err(e) => Support {
                namespace_error: Some(format!("the probe could not start: {e}")),
                ..Support::default()
            },
        }
    }
}
