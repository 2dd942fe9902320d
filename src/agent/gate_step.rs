//! The shell gate's step in a turn: for a bash call, the evidence step on
//! the blocking pool, the classifier, and in auto mode the judge for an
//! eligible request; what it finds joins the call's facts. It never decides
//! (the decision reads the facts) and never runs the command.

use tokio_util::sync::CancellationToken;

use crate::policy::shell::{Outcome, Verdict};
use crate::policy::{CallFacts, CallKind, Mode};
use crate::tools::gate::examine;
use crate::tools::{Field, PreparedCall};

use super::driver::Runtime;
use super::judge::judge;

/// The shell gate for a bash call: the evidence step on the blocking pool,
/// the classifier, and in auto mode the judge for an eligible request.
/// Sets the facts' verdict (auto mode) and the bypass guard; returns the
/// line a question or a record shows, or `None` when the call was
/// interrupted. A git request the gate may let run in auto mode is set to
/// run with the hardened git environment.
pub(crate) async fn gate(
    rt: &Runtime,
    facts: &mut CallFacts,
    prepared: Option<&mut dyn PreparedCall>,
    mode: Mode,
    cancel: &CancellationToken,
) -> Option<Option<Field>> {
    let (CallKind::Shell, Some(command)) = (&facts.kind, facts.command.clone()) else {
        return Some(None);
    };
    let setup = rt.tool_cx.gate.clone();
    let cwd = rt.tool_cx.project.root().to_path_buf();
    let mut verdict = tokio::task::spawn_blocking(move || examine("bash", &command, &setup, &cwd))
        .await
        .unwrap_or_else(|e| Verdict::internal(format!("the gate's evaluation stopped: {e}")));
    if verdict.catastrophic && rt.tool_cx.gate.guard_bypass {
        facts.guard = Some(verdict.reason.clone());
    }
    match mode {
        Mode::Auto => {}
        Mode::Bypass if facts.guard.is_some() => {
            // A question, not a denial: worded as what it asks.
            let code = verdict.code.unwrap_or("AMG_DENY_CATASTROPHIC");
            return Some(Some(Field::text(
                "Bypass guard",
                format!(
                    "{code}: {}; it asks, and is allowed once or not at all",
                    verdict.reason
                ),
            )));
        }
        _ => return Some(None),
    }
    if verdict.git {
        match prepared {
            Some(prepared) => prepared.set_env(crate::tools::git_evidence::hardening_env()),
            // An asked agent runs the command in its own process, where the
            // hardened git environment cannot be set: it is not let through.
            None if verdict.outcome != Outcome::DenyFinal => {
                verdict.outcome = Outcome::UnresolvedIneligible;
                verdict.code = Some(crate::policy::shell::REPOSITORY);
                verdict.reason =
                    "an asked agent's git request cannot be run with the hardened git environment"
                        .into();
                verdict.judge = None;
            }
            None => {}
        }
    }
    if verdict.outcome == Outcome::UnresolvedEligible
        && let (Some(judge_cfg), Some(request)) = (&rt.judge, verdict.judge.clone())
    {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return None,
            answer = judge(judge_cfg, &request, cancel.child_token()) => match answer {
                Ok(()) => {
                    verdict.outcome = Outcome::AllowFinal;
                    verdict.code = None;
                    verdict.reason = format!(
                        "the judge allowed a closed read-only git {} request",
                        request.operation
                    );
                }
                Err(not) => {
                    verdict.code = Some(not.code);
                    verdict.reason = not.reason;
                }
            },
        }
    }
    tracing::info!(
        outcome = verdict.outcome.as_str(),
        code = verdict.code,
        "shell gate"
    );
    facts.gate = Some(verdict.for_decision());
    Some(Some(Field::text("Shell gate", verdict.describe())))
}
