//! The gate's verdict on one command, and what a judge may be told about
//! it (enums only). It carries a decision; it never makes one.

use serde::Serialize;

use super::Shell;
use super::codes::{CODES, INTERNAL, Outcome};

/// The kinds of words a judge is told about: never their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentKind {
    Option,
    Separator,
    Revision,
    Path,
    Word,
}

/// Whether every option is in the known read-only list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionRisk {
    None,
    Unlisted,
}

/// What a judge may be asked: enums only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeRequest {
    pub shell: Shell,
    pub operation: &'static str,
    pub option_risk: OptionRisk,
    pub argument_kinds: Vec<ArgumentKind>,
}

/// The gate's verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Every outcome but `allow-final` has one.
    pub code: Option<&'static str>,
    pub reason: String,
    /// The trusted executable it recognised at the start, if any.
    pub executable: Option<String>,
    /// What it recognised the command to do (`status`, `ls`, ...).
    pub operation: Option<String>,
    /// The dangerous part of the input is in the bypass guard's subset.
    pub catastrophic: bool,
    /// Denied only because its code cannot be read (`python3 -c …` with
    /// nothing the crude scan finds): mino's auto mode asks where someone
    /// can answer. The gate's own outcome (`mino gate check`) is unchanged.
    pub unseen: bool,
    /// For `unresolved-eligible`: what a judge may be told.
    pub judge: Option<JudgeRequest>,
    /// A git request that may run (allowed, or eligible for the judge):
    /// it runs with `repository::GIT_CONFIG_OVERRIDES` and `GIT_ENV`.
    pub git: bool,
}

impl Verdict {
    pub(super) fn code(code: &'static str, reason: impl Into<String>) -> Self {
        let outcome = CODES
            .iter()
            .find(|c| c.name == code)
            .map_or(Outcome::DenyFinal, |c| c.outcome);
        Self {
            outcome,
            code: Some(code),
            reason: reason.into(),
            executable: None,
            operation: None,
            catastrophic: false,
            unseen: false,
            judge: None,
            git: false,
        }
    }

    pub(super) fn with_executable(mut self, executable: Option<&str>) -> Self {
        self.executable = executable.map(str::to_string);
        self
    }
}

impl Verdict {
    /// The gate could not finish its evaluation.
    pub fn internal(reason: impl Into<String>) -> Self {
        Self::code(INTERNAL, reason)
    }

    /// What `decide` reads of it.
    pub fn for_decision(&self) -> crate::policy::GateVerdict {
        let code = self.code.unwrap_or(INTERNAL);
        match self.outcome {
            Outcome::AllowFinal => crate::policy::GateVerdict::AllowFinal,
            Outcome::DenyFinal if self.unseen && !self.catastrophic => {
                crate::policy::GateVerdict::Unresolved {
                    code,
                    reason: self.reason.clone(),
                }
            }
            Outcome::DenyFinal => crate::policy::GateVerdict::DenyFinal {
                code,
                reason: self.reason.clone(),
            },
            Outcome::UnresolvedEligible | Outcome::UnresolvedIneligible => {
                crate::policy::GateVerdict::Unresolved {
                    code,
                    reason: self.reason.clone(),
                }
            }
        }
    }

    /// One line for a dialog or a record: the outcome, the code, the reason.
    pub fn describe(&self) -> String {
        match self.code {
            Some(code) => format!("{} {code}: {}", self.outcome.as_str(), self.reason),
            None => format!("{}: {}", self.outcome.as_str(), self.reason),
        }
    }
}
