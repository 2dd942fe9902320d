//! The shell gate of auto mode (DESIGN section 5, the Auto Mode Gate seed):
//! one command and the shell that will run it in, a verdict out, in the
//! seed's precedence. Pure: the evidence about a trusted executable (what a
//! stat and a SHA-256 found) is taken by the caller and handed in; the gate
//! never touches the filesystem, never resolves PATH, never expands or runs
//! anything, and never rewrites a command.

mod classify;
mod codes;
mod crude;
pub mod danger;
mod eligible;
mod lex;
pub mod list;
mod opaque;
mod other;
mod reach;
mod read;
pub mod readonly;
pub mod repository;
mod rules;
mod targets;
#[cfg(test)]
mod tests;
mod verdict;

use serde::Serialize;

pub use classify::{classify, executable_to_examine, repository_to_examine};
pub use codes::{
    AMBIGUOUS, CATASTROPHIC, DANGEROUS, IDENTITY_MISMATCH, IDENTITY_MISSING, INPUT_MALFORMED,
    INPUT_MISSING, INPUT_OVERSIZED, INTERNAL, JUDGE_CANCELLED, JUDGE_DENIED, JUDGE_ERROR,
    JUDGE_INVALID_RESPONSE, JUDGE_TIMEOUT, JUDGE_UNAVAILABLE, PROTECTED_PATH, REPOSITORY,
    UNKNOWN_SHELL,
};
pub use codes::{CODES, Code, Outcome};
pub use danger::Danger;
pub use repository::{ConfigEntry, RepositoryEvidence};
pub use rules::{Evidence, FileEvidence, Rules, Trusted};
pub use verdict::{ArgumentKind, JudgeRequest, OptionRisk, Verdict};

/// The longest command the gate reads, in bytes. Longer input is
/// `AMG_DENY_INPUT_OVERSIZED` without being looked at.
pub const MAX_INPUT_BYTES: usize = 8 * 1024;

/// The shells the gate knows. The shell that parses must be the one that
/// runs: mino's bash tool runs `bash -c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    Bash,
    Sh,
    PowerShell,
    Cmd,
}

/// The names `--shell` accepts.
pub const SHELL_NAMES: &[&str] = &["bash", "sh", "powershell", "cmd"];

impl Shell {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "bash" => Some(Shell::Bash),
            "sh" => Some(Shell::Sh),
            "powershell" | "pwsh" => Some(Shell::PowerShell),
            "cmd" => Some(Shell::Cmd),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Sh => "sh",
            Shell::PowerShell => "powershell",
            Shell::Cmd => "cmd",
        }
    }

    fn dialect(self) -> Dialect {
        match self {
            Shell::Bash | Shell::Sh => Dialect::Posix,
            Shell::PowerShell => Dialect::PowerShell,
            Shell::Cmd => Dialect::Cmd,
        }
    }
}

/// The syntax family a table row applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Posix,
    PowerShell,
    Cmd,
}
