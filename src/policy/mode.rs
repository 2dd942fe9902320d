//! The permission modes, their names, their order from tight to loose, and the
//! warning a loosening prints. Never decides a call; `decide.rs` does.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A session's permission mode, ordered from tight to loose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Plan,
    Manual,
    AcceptEdits,
    Auto,
    Bypass,
}

/// The names `/mode NAME`, `--mode` and `default_mode` accept.
pub const MODE_NAMES: &str = "plan, manual, accept-edits, auto, bypass (or yolo)";

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Plan,
        Mode::Manual,
        Mode::AcceptEdits,
        Mode::Auto,
        Mode::Bypass,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Manual => "manual",
            Mode::AcceptEdits => "accept-edits",
            Mode::Auto => "auto",
            Mode::Bypass => "bypass",
        }
    }

    /// The mode Shift+Tab moves to: plan, manual, accept-edits, then plan
    /// again. Auto and bypass are never reached this way (they keep their
    /// question); from either, the cycle starts over at plan.
    pub fn cycled(self) -> Mode {
        match self {
            Mode::Plan => Mode::Manual,
            Mode::Manual => Mode::AcceptEdits,
            Mode::AcceptEdits | Mode::Auto | Mode::Bypass => Mode::Plan,
        }
    }

    /// True when switching from `self` to `to` widens what runs unasked, so
    /// the switch needs its own question.
    pub fn is_loosening(self, to: Mode) -> bool {
        to > self
    }

    /// The warning printed before `Switch to this mode? [y/N]`. `bash` is
    /// how this run's Bash commands are confined, as the caller that set
    /// the sandbox up knows it.
    pub fn warning(self, bash: &BashConfinement) -> String {
        match self {
            Mode::Plan => {
                "In this session, plan mode runs only confined reads; every write, Bash command and MCP call is refused, and fetches still ask.".into()
            }
            Mode::Manual => {
                "In this session, manual mode asks before every write, Bash command, fetch and MCP call.".into()
            }
            Mode::AcceptEdits => {
                "In this session, accept-edits mode writes and edits project files without asking. Bash and MCP calls still ask; protected files stay refused.".into()
            }
            Mode::Auto => {
                "In this session, auto mode writes and edits project files without asking, and runs Bash commands that the shell gate finds safe (trusted executables only); other commands still ask. Fetches and MCP calls still ask; protected files stay refused.".into()
            }
            Mode::Bypass => format!(
                "In this session, bypass mode runs every call without asking: {}, and MCP arguments sent to their servers. Servers marked ask still ask; protected files stay refused.",
                bash.bypass_wording()
            ),
        }
    }
}

/// How this run's Bash commands are confined: a fact the caller (which set
/// the sandbox up) passes in; policy only words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashConfinement {
    /// No sandbox: commands run with the user's account permissions.
    Unconfined,
    /// In the sandbox. `summary` is the sandbox's own one-line account of
    /// it; `outside_asks` when a command the model asks to run outside it
    /// still asks in bypass.
    Sandboxed { summary: String, outside_asks: bool },
}

impl BashConfinement {
    fn bypass_wording(&self) -> String {
        match self {
            BashConfinement::Unconfined => {
                "Bash commands with your account permissions (no sandbox)".into()
            }
            BashConfinement::Sandboxed {
                summary,
                outside_asks: true,
            } => format!(
                "Bash commands in the sandbox ({summary}; a command asked to run outside it still asks)"
            ),
            BashConfinement::Sandboxed {
                summary,
                outside_asks: false,
            } => format!(
                "Bash commands in the sandbox ({summary}; a command asked to run outside it runs with your account permissions)"
            ),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown mode name; its text says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode {given:?}; accepted: {MODE_NAMES}")]
pub struct UnknownMode {
    pub given: String,
}

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plan" => Ok(Mode::Plan),
            "manual" => Ok(Mode::Manual),
            "accept-edits" => Ok(Mode::AcceptEdits),
            "auto" => Ok(Mode::Auto),
            "bypass" | "yolo" => Ok(Mode::Bypass),
            other => Err(UnknownMode {
                given: other.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_yolo_is_bypass() {
        for mode in Mode::ALL {
            assert_eq!(mode.name().parse::<Mode>(), Ok(mode));
        }
        assert_eq!("yolo".parse::<Mode>(), Ok(Mode::Bypass));
        assert!("Manual".parse::<Mode>().is_err());
        assert!("Plan".parse::<Mode>().is_err());
        assert!("plan ".parse::<Mode>().is_err());
        assert!("bypass now".parse::<Mode>().is_err());
    }

    #[test]
    fn the_bypass_warning_says_how_bash_commands_are_confined() {
        let unconfined = Mode::Bypass.warning(&BashConfinement::Unconfined);
        assert!(
            unconfined.contains("Bash commands with your account permissions (no sandbox)"),
            "{unconfined}"
        );
        let sandboxed = Mode::Bypass.warning(&BashConfinement::Sandboxed {
            summary: "project writable, secrets masked, network on".into(),
            outside_asks: true,
        });
        assert!(
            sandboxed.contains(
                "Bash commands in the sandbox (project writable, secrets masked, network on; a command asked to run outside it still asks)"
            ),
            "{sandboxed}"
        );
        assert!(!sandboxed.contains("account permissions"), "{sandboxed}");
        let outside_runs = Mode::Bypass.warning(&BashConfinement::Sandboxed {
            summary: "project writable".into(),
            outside_asks: false,
        });
        assert!(
            outside_runs.contains("outside it runs with your account permissions"),
            "{outside_runs}"
        );
        // The other modes do not depend on it.
        for mode in [Mode::Plan, Mode::Manual, Mode::AcceptEdits, Mode::Auto] {
            assert_eq!(
                mode.warning(&BashConfinement::Unconfined),
                mode.warning(&BashConfinement::Sandboxed {
                    summary: String::new(),
                    outside_asks: true
                })
            );
        }
    }

    #[test]
    fn the_cycle_never_reaches_auto_or_bypass() {
        assert_eq!(Mode::Plan.cycled(), Mode::Manual);
        assert_eq!(Mode::Manual.cycled(), Mode::AcceptEdits);
        assert_eq!(Mode::AcceptEdits.cycled(), Mode::Plan);
        assert_eq!(Mode::Auto.cycled(), Mode::Plan);
        assert_eq!(Mode::Bypass.cycled(), Mode::Plan);
        for mode in Mode::ALL {
            assert!(mode.cycled() <= Mode::AcceptEdits, "{mode}");
        }
    }

    #[test]
    fn order_is_tight_to_loose() {
        assert!(Mode::Plan.is_loosening(Mode::Manual));
        assert!(!Mode::Manual.is_loosening(Mode::Plan));
        assert!(!Mode::Bypass.is_loosening(Mode::Plan));
        assert!(Mode::Manual.is_loosening(Mode::AcceptEdits));
        assert!(Mode::AcceptEdits.is_loosening(Mode::Auto));
        assert!(Mode::Auto.is_loosening(Mode::Bypass));
        assert!(!Mode::Bypass.is_loosening(Mode::Manual));
        assert!(!Mode::Manual.is_loosening(Mode::Manual));
    }
}
