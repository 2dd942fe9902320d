//! `decide`: the one decision every tool call goes through, in the order of
//! DESIGN section 2, step 4, with the mode table of section 3.

use serde::Serialize;

use super::{
    CallFacts, CallKind, DO_NOT_RETRY, GateVerdict, HookVerdict, Mode, PathTarget, ProtectedPaths,
    Protection, RunConsent, SessionConsent, command_scoped,
};

/// Whether the front end has somebody who can answer a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanAsk {
    Yes,
    No,
}

/// How an allowed call is made visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Shown {
    /// A confined read: its result is the trace.
    Quietly,
    /// `[Tool: NAME, allowed without confirmation in MODE mode]`.
    ByMode(Mode),
    /// `[Tool: NAME, allowed for this session]`.
    ForSession,
    /// `[Tool: NAME, allowed by rule 3 (cargo test)]`: a saved rule.
    ByRule(String),
}

/// Stable codes for every denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DenyCode {
    ProtectedPath,
    /// mino's own home (settings, sessions, logs, audit) inside the project.
    MinoHome,
    /// An MCP call's string argument names a protected file.
    ProtectedArgument,
    SymbolicLink,
    OutsideProject,
    HardLink,
    Hook,
    Never,
    /// A saved rule with `decision = "deny"`.
    Rule,
    NobodyToAsk,
    /// Plan mode: only confined reads (and asked fetches) run.
    PlanMode,
    /// A shell gate code (`AMG_DENY_...`).
    Gate(&'static str),
}

impl DenyCode {
    pub fn as_str(self) -> &'static str {
        match self {
            DenyCode::ProtectedPath => "MINO_DENY_PROTECTED_PATH",
            DenyCode::MinoHome => "MINO_DENY_MINO_HOME",
            DenyCode::ProtectedArgument => "MINO_DENY_PROTECTED_ARGUMENT",
            DenyCode::SymbolicLink => "MINO_DENY_SYMBOLIC_LINK",
            DenyCode::OutsideProject => "MINO_DENY_OUTSIDE_PROJECT",
            DenyCode::HardLink => "MINO_DENY_HARD_LINK",
            DenyCode::Hook => "MINO_DENY_HOOK",
            DenyCode::Never => "MINO_DENY_NEVER",
            DenyCode::Rule => "MINO_DENY_RULE",
            DenyCode::NobodyToAsk => "MINO_DENY_NOBODY_TO_ASK",
            DenyCode::PlanMode => "MINO_DENY_PLAN_MODE",
            DenyCode::Gate(code) => code,
        }
    }
}

/// The outcome for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow { shown: Shown },
    Ask,
    Deny { code: DenyCode, reason: String },
}

fn deny(code: DenyCode, what: String) -> Decision {
    Decision::Deny {
        code,
        reason: blocked(&what),
    }
}

/// `Blocked by policy: REASON. Do not retry…`, the reason's sentence ended
/// with a full stop where it has none (the gate's reasons do not).
fn blocked(reason: &str) -> String {
    let reason = reason.trim_end();
    let stop = if reason.ends_with(['.', '!', '?']) {
        ""
    } else {
        "."
    };
    format!("Blocked by policy: {reason}{stop} {DO_NOT_RETRY}")
}

/// Steps 1 and 2: protected paths and mino's home first (every target),
/// then links, escapes and hard links.
fn check_paths(targets: &[PathTarget], protected: &ProtectedPaths) -> Option<Decision> {
    for target in targets {
        let PathTarget::Inside { relative, .. } = target else {
            continue;
        };
        match protected.protection(relative) {
            Some(Protection::MinoHome) => {
                return Some(deny(
                    DenyCode::MinoHome,
                    format!(
                        "{} is mino's own home (settings, sessions, logs); file tools never read or write it.",
                        if relative.is_empty() { "." } else { relative }
                    ),
                ));
            }
            Some(Protection::Pattern) => {
                return Some(deny(
                    DenyCode::ProtectedPath,
                    format!("{relative} is a protected path; file tools never read or write it."),
                ));
            }
            None => {}
        }
    }
    for target in targets {
        match target {
            PathTarget::Outside { given } => {
                return Some(deny(
                    DenyCode::OutsideProject,
                    format!(
                        "{given} is outside the project directory; file tools only reach files inside it."
                    ),
                ));
            }
            PathTarget::Inside {
                relative,
                through_link: Some(link),
                ..
            } => {
                return Some(deny(
                    DenyCode::SymbolicLink,
                    format!(
                        "{relative} passes through the symbolic link {link}; file tools only follow real directories and files."
                    ),
                ));
            }
            PathTarget::Inside {
                relative,
                hard_linked: true,
                ..
            } => {
                return Some(deny(
                    DenyCode::HardLink,
                    format!(
                        "{relative} has more than one hard link, and its other name may be protected; file tools refuse it."
                    ),
                ));
            }
            PathTarget::Inside { .. } => {}
        }
    }
    None
}

/// Longest argument quoted back in a denial.
const QUOTED_ARGUMENT_CHARS: usize = 200;

/// After step 1, for MCP calls: a string argument that names a protected
/// file, in any mode, before the call leaves mino.
fn check_arguments(strings: &[String], protected: &ProtectedPaths) -> Option<Decision> {
    let named = strings.iter().find(|s| protected.names_protected(s))?;
    let mut quoted: String = named.chars().take(QUOTED_ARGUMENT_CHARS).collect();
    if quoted.len() < named.len() {
        quoted.push_str("...");
    }
    Some(deny(
        DenyCode::ProtectedArgument,
        format!(
            "the argument {quoted:?} names a protected file; it is never sent to a tool server."
        ),
    ))
}

/// The reason every call plan mode refuses carries, exactly.
pub const PLAN_MODE_REASON: &str = "Plan mode: only reads run now; present a plan instead. Do not retry or work around this with another tool.";

/// Step 5: the mode's row of the table.
fn by_mode(facts: &CallFacts, mode: Mode) -> Decision {
    let shown = Decision::Allow {
        shown: Shown::ByMode(mode),
    };
    match (&facts.kind, mode) {
        (CallKind::ConfinedRead, _) => Decision::Allow {
            shown: Shown::Quietly,
        },
        // A plan is what plan mode asks the model for; the panel shows it.
        (CallKind::PlanChange, Mode::Plan) => Decision::Allow {
            shown: Shown::Quietly,
        },
        (CallKind::PlanChange, Mode::Manual) => Decision::Ask,
        (CallKind::PlanChange, _) => shown,
        // Plan mode: a fetch without output asks as in manual; everything
        // else that is not a confined read is refused.
        (CallKind::Fetch | CallKind::FetchPrivate, Mode::Plan) => Decision::Ask,
        // A tool the user trusts its server to call read-only: a read that
        // leaves mino, so plan mode asks as for a fetch.
        // A server marked `ask` is refused there, whatever its claims.
        (
            CallKind::Mcp {
                claims,
                trust_ask: false,
                ..
            },
            Mode::Plan,
        ) if claims.trusted_read_only() => Decision::Ask,
        (_, Mode::Plan) => Decision::Deny {
            code: DenyCode::PlanMode,
            reason: PLAN_MODE_REASON.to_string(),
        },
        (
            CallKind::Mcp {
                trust_ask: true, ..
            },
            _,
        ) => Decision::Ask,
        // A claim of harm changes no cell here (every MCP call asks outside
        // bypass already); it keeps a saved rule from allowing the call
        // (`by_rule`). A claim of harmlessness loosens only when trusted.
        (CallKind::Mcp { claims, .. }, Mode::AcceptEdits | Mode::Auto)
            if claims.trusted_read_only() =>
        {
            shown
        }
        (CallKind::Shell, Mode::Bypass) if facts.guard.is_some() => Decision::Ask,
        (CallKind::FetchPrivate | CallKind::SurfaceWrite { .. }, _) => Decision::Ask,
        (CallKind::UnsandboxedShell { run_in_bypass }, Mode::Bypass) => {
            if *run_in_bypass {
                shown
            } else {
                Decision::Ask
            }
        }
        (CallKind::UnsandboxedShell { .. }, _) => Decision::Ask,
        (_, Mode::Bypass) => shown,
        (CallKind::FileWrite | CallKind::ShellKill, Mode::Manual) => Decision::Ask,
        (CallKind::ShellKill, _) => shown,
        (CallKind::FileWrite, _) => shown,
        (CallKind::Shell, Mode::Auto) => match &facts.gate {
            Some(GateVerdict::AllowFinal) => shown,
            Some(GateVerdict::DenyFinal { code, reason }) => Decision::Deny {
                code: DenyCode::Gate(code),
                reason: blocked(reason),
            },
            Some(GateVerdict::Unresolved { .. }) | None => Decision::Ask,
        },
        (CallKind::Shell | CallKind::Fetch | CallKind::Mcp { .. }, _) => Decision::Ask,
    }
}

/// Step 4b: a saved rule. A deny holds in every mode; an ask makes the call
/// ask in every mode (plan mode's and the gate's refusals stay refusals);
/// an allow replaces only a question, and never one the mode table asks in
/// every mode (leaving the sandbox, planting code, a private destination,
/// the bypass guard, a server marked `ask`, a tool its server calls
/// destructive), nor in plan mode. `Err` when
/// the rule changes nothing.
fn by_rule(facts: &CallFacts, mode: Mode, ruling: super::saved::Ruling) -> Result<Decision, ()> {
    use super::saved::RuleDecision;
    match ruling.decision {
        RuleDecision::Deny => {
            let why = match &ruling.reason {
                Some(reason) => format!("{} refuses this call: {reason}", ruling.label),
                None => format!("{} of the user's settings refuses this call", ruling.label),
            };
            Ok(deny(DenyCode::Rule, why))
        }
        RuleDecision::Ask => match by_mode(facts, mode) {
            denied @ Decision::Deny { .. } => Ok(denied),
            _ => Ok(Decision::Ask),
        },
        RuleDecision::Allow => {
            let always_asks = matches!(
                facts.kind,
                CallKind::UnsandboxedShell { .. }
                    | CallKind::SurfaceWrite { .. }
                    | CallKind::FetchPrivate
                    | CallKind::Mcp {
                        trust_ask: true,
                        ..
                    }
            ) || matches!(&facts.kind, CallKind::Mcp { claims, .. } if claims.destructive)
                || facts.guard.is_some()
                || mode == Mode::Plan;
            match by_mode(facts, mode) {
                Decision::Ask if !always_asks => Ok(Decision::Allow {
                    shown: Shown::ByRule(ruling.label),
                }),
                _ => Err(()),
            }
        }
    }
}

/// Decides one call. `session` is what this session's answers allow; `run`
/// holds the tools refused with "never" for every session of this run.
pub fn decide(
    facts: &CallFacts,
    mode: Mode,
    protected: &ProtectedPaths,
    session: &SessionConsent,
    run: &RunConsent,
    can_ask: CanAsk,
) -> Decision {
    // The person's own `!command`: they typed it, so it is never put to
    // them, never refused by what they told the model's tools, and never
    // echoed back as a record; it runs in the sandbox like any bash call.
    if facts.typed_by_person && facts.kind == CallKind::Shell {
        return Decision::Allow {
            shown: Shown::Quietly,
        };
    }
    if let Some(denied) = check_paths(&facts.targets, protected) {
        return denied;
    }
    if let Some(denied) = check_arguments(&facts.argument_strings, protected) {
        return denied;
    }
    if let Some(HookVerdict::Deny { reason }) = &facts.hook {
        return deny(
            DenyCode::Hook,
            format!("a PreToolUse hook refused this call: {reason}"),
        );
    }
    if run.refuses(&facts.tool) {
        return Decision::Deny {
            code: DenyCode::Never,
            reason: format!(
                "The user chose never to allow {} while mino runs. {DO_NOT_RETRY}",
                facts.tool
            ),
        };
    }
    let decision = match run.rules().ruling(facts) {
        Some(ruling) => match by_rule(facts, mode, ruling) {
            Ok(decision) => decision,
            Err(()) => by_mode(facts, mode),
        },
        None => by_mode(facts, mode),
    };
    if decision != Decision::Ask {
        return decision;
    }
    // Leaving the sandbox and planting code are asked each time, whatever
    // the session allowed.
    let unsandboxed = matches!(
        facts.kind,
        CallKind::UnsandboxedShell { .. } | CallKind::SurfaceWrite { .. }
    );
    let allowed = !unsandboxed
        && match command_scoped(facts, mode) {
            // The bypass guard is passed only by this exact command line; a gated
            // call in auto mode also by bash allowed for the whole session.
            Some(command) => {
                session.allows_command(&facts.tool, command)
                    || (mode == Mode::Auto && session.allows(&facts.tool))
            }
            None => session.allows(&facts.tool),
        };
    if allowed {
        return Decision::Allow {
            shown: Shown::ForSession,
        };
    }
    match can_ask {
        CanAsk::Yes => Decision::Ask,
        CanAsk::No => match (&facts.gate, &facts.guard) {
            (Some(GateVerdict::Unresolved { code, reason }), _) if mode == Mode::Auto => {
                Decision::Deny {
                    code: DenyCode::Gate(code),
                    reason: blocked(reason),
                }
            }
            (_, Some(reason)) if mode == Mode::Bypass => Decision::Deny {
                code: DenyCode::Gate(super::shell::CATASTROPHIC),
                reason: format!(
                    "Blocked by policy: {reason}; the bypass guard asks about this even in bypass mode, and nobody can answer here. {DO_NOT_RETRY}"
                ),
            },
            _ => Decision::Deny {
                code: DenyCode::NobodyToAsk,
                reason: format!(
                    "Blocked by policy: {} needs the user's confirmation, and nobody can answer here. {DO_NOT_RETRY}",
                    facts.tool
                ),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ToolKey;

    /// The person's own command runs quietly in every mode, whatever the
    /// run refuses, the hook says or the guard would ask; the same command
    /// from the model, or a person's mark on another kind, is decided as
    /// always.
    #[test]
    fn only_the_persons_own_shell_command_runs_unasked_in_every_mode() {
        let protected = ProtectedPaths::builtin();
        let session = SessionConsent::default();
        let mut run = RunConsent::default();
        let bash = ToolKey::new("bash");
        run.never(bash.clone());
        let mut facts = CallFacts::new(bash, CallKind::Shell);
        facts.command = Some("rm -rf ~".into());
        facts.guard = Some("deletes the home".into());
        facts.hook = Some(HookVerdict::Deny {
            reason: "no".into(),
        });
        let mut person = facts.clone();
        person.typed_by_person = true;
        for mode in [
            Mode::Plan,
            Mode::Manual,
            Mode::AcceptEdits,
            Mode::Auto,
            Mode::Bypass,
        ] {
            for can_ask in [CanAsk::Yes, CanAsk::No] {
                let quiet = Decision::Allow {
                    shown: Shown::Quietly,
                };
                assert_eq!(
                    decide(&person, mode, &protected, &session, &run, can_ask),
                    quiet
                );
                assert!(matches!(
                    decide(&facts, mode, &protected, &session, &run, can_ask),
                    Decision::Deny { .. }
                ));
            }
        }
        let mut write = CallFacts::new(ToolKey::new("write_file"), CallKind::FileWrite);
        write.typed_by_person = true;
        assert_eq!(
            decide(
                &write,
                Mode::Manual,
                &protected,
                &session,
                &run,
                CanAsk::Yes
            ),
            Decision::Ask
        );
    }

    #[test]
    fn a_denial_ends_its_reason_before_do_not_retry() {
        assert_eq!(
            blocked("the command is ambiguous"),
            "Blocked by policy: the command is ambiguous. Do not retry or work around this with another tool."
        );
        assert_eq!(
            blocked("done."),
            "Blocked by policy: done. Do not retry or work around this with another tool."
        );
    }
}
