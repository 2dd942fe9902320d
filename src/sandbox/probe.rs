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
    /// The Landlock-only fallback's unix-socket filter (seccomp) can be
    /// installed here.
    #[serde(default)]
    pub socket_filter: bool,
    /// Why it cannot, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_filter_error: Option<String>,
}

/// The probe's answer, once found in this run.
static PROBED: std::sync::OnceLock<Support> = std::sync::OnceLock::new();

impl Support {
    /// What this machine supports, probed once per run (every session of
    /// the run, ACP's included, reuses the first answer; a second caller
    /// meanwhile waits for it). `helper` is the mino binary.
    pub fn probe_once(helper: &Path) -> Support {
        PROBED.get_or_init(|| Support::probe(helper)).clone()
    }

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

/// The sysctl through which AppArmor (Ubuntu 24.04 and later) restricts
/// unprivileged user namespaces.
pub const APPARMOR_SYSCTL: &str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";

/// When AppArmor restricts user namespaces here: the exact setting and the
/// one-line profile that lifts it for mino alone.
pub fn apparmor_hint() -> Option<String> {
    let value = std::fs::read_to_string(APPARMOR_SYSCTL).ok()?;
    if value.trim() != "1" {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    Some(format!(
        ". AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1). \
         Either run `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`, or allow mino alone with \
         the profile /etc/apparmor.d/mino: `abi <abi/4.0>, include <tunables/global> profile mino {} flags=(unconfined) {{ userns, }}` \
         and `sudo apparmor_parser -r /etc/apparmor.d/mino`",
        exe.display()
    ))
}
