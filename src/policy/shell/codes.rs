//! The shell gate's outcomes and its one table of stable codes, in the
//! precedence of the Auto Mode Gate seed. The README's table is this one.

use serde::Serialize;

/// What the gate concluded about one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Provably read-only through a trusted executable: runs without asking.
    AllowFinal,
    /// Denied outright; no question, no judge.
    DenyFinal,
    /// Not allowed; only a person may let it through.
    UnresolvedIneligible,
    /// Not allowed; a closed read-only git request a judge may consider.
    UnresolvedEligible,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::AllowFinal => "allow-final",
            Outcome::DenyFinal => "deny-final",
            Outcome::UnresolvedIneligible => "unresolved-ineligible",
            Outcome::UnresolvedEligible => "unresolved-eligible",
        }
    }
}

/// One stable code: its name, the precedence level it belongs to (1 is
/// checked first), the outcome it carries and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub name: &'static str,
    pub level: u8,
    pub outcome: Outcome,
    pub meaning: &'static str,
}

pub const INTERNAL: &str = "AMG_DENY_INTERNAL";
pub const UNKNOWN_SHELL: &str = "AMG_DENY_UNKNOWN_SHELL";
pub const INPUT_MISSING: &str = "AMG_DENY_INPUT_MISSING";
pub const INPUT_OVERSIZED: &str = "AMG_DENY_INPUT_OVERSIZED";
pub const INPUT_MALFORMED: &str = "AMG_DENY_INPUT_MALFORMED";
pub const CATASTROPHIC: &str = "AMG_DENY_CATASTROPHIC";
pub const DANGEROUS: &str = "AMG_DENY_DANGEROUS";
pub const IDENTITY_MISSING: &str = "AMG_DENY_IDENTITY_MISSING";
pub const IDENTITY_MISMATCH: &str = "AMG_DENY_IDENTITY_MISMATCH";
pub const REPOSITORY: &str = "AMG_DENY_REPOSITORY";
pub const AMBIGUOUS: &str = "AMG_DENY_AMBIGUOUS";
pub const PROTECTED_PATH: &str = "AMG_DENY_PROTECTED_PATH";
pub const JUDGE_UNAVAILABLE: &str = "AMG_DENY_JUDGE_UNAVAILABLE";
pub const JUDGE_DENIED: &str = "AMG_DENY_JUDGE_DENIED";
pub const JUDGE_TIMEOUT: &str = "AMG_DENY_JUDGE_TIMEOUT";
pub const JUDGE_CANCELLED: &str = "AMG_DENY_JUDGE_CANCELLED";
pub const JUDGE_INVALID_RESPONSE: &str = "AMG_DENY_JUDGE_INVALID_RESPONSE";
pub const JUDGE_ERROR: &str = "AMG_DENY_JUDGE_ERROR";

/// Every code the gate and its judge can give, in precedence order.
pub const CODES: &[Code] = &[
    Code {
        name: INTERNAL,
        level: 1,
        outcome: Outcome::DenyFinal,
        meaning: "the gate could not evaluate the command",
    },
    Code {
        name: UNKNOWN_SHELL,
        level: 2,
        outcome: Outcome::DenyFinal,
        meaning: "the shell (or the action) is not one the gate knows",
    },
    Code {
        name: INPUT_MISSING,
        level: 3,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "the command is empty",
    },
    Code {
        name: INPUT_OVERSIZED,
        level: 3,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "the command is longer than the gate reads",
    },
    Code {
        name: INPUT_MALFORMED,
        level: 3,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "a NUL or control character, an unclosed quote or substitution, or unbalanced parentheses",
    },
    Code {
        name: CATASTROPHIC,
        level: 4,
        outcome: Outcome::DenyFinal,
        meaning: "removes or truncates /, ~, the project or .git, makes a file system, writes a device, pushes anything but a plain fast-forward push, or changes modes under / or ~ (asks even in bypass)",
    },
    Code {
        name: DANGEROUS,
        level: 4,
        outcome: Outcome::DenyFinal,
        meaning: "a dangerous command or option anywhere in the input (rm -rf, sudo, dd, sh -c, eval, curl uploads, writes to protected paths, ...)",
    },
    Code {
        name: IDENTITY_MISSING,
        level: 5,
        outcome: Outcome::DenyFinal,
        meaning: "a trusted executable is not a regular file, or no evidence about it was taken",
    },
    Code {
        name: IDENTITY_MISMATCH,
        level: 5,
        outcome: Outcome::DenyFinal,
        meaning: "a trusted executable is group- or world-writable, owned by someone else, or its SHA-256 differs",
    },
    Code {
        name: REPOSITORY,
        level: 5,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "a git request in a repository whose own configuration sets a key not known to be inert (it may name a program git runs), that has a submodule or a post-index-change hook, or that git could not read",
    },
    Code {
        name: AMBIGUOUS,
        level: 6,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "anything not provably one simple read-only command of a trusted executable",
    },
    Code {
        name: PROTECTED_PATH,
        level: 6,
        outcome: Outcome::UnresolvedIneligible,
        meaning: "an argument names a protected path or mino's home",
    },
    Code {
        name: JUDGE_UNAVAILABLE,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "a closed read-only git request, and no judge is enabled",
    },
    Code {
        name: JUDGE_DENIED,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "the judge answered deny",
    },
    Code {
        name: JUDGE_TIMEOUT,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "the judge did not answer before its deadline",
    },
    Code {
        name: JUDGE_CANCELLED,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "the judge's request was cancelled",
    },
    Code {
        name: JUDGE_INVALID_RESPONSE,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "the judge's answer was not exactly {\"decision\":\"allow\"} or {\"decision\":\"deny\"}",
    },
    Code {
        name: JUDGE_ERROR,
        level: 6,
        outcome: Outcome::UnresolvedEligible,
        meaning: "the judge's request failed",
    },
];
