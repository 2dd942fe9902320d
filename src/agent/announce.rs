//! What a decision and a person's answer become outside the turn
//! machine: a log line, an audit line and an event for the front end,
//! for a turn's own calls and an asked agent's alike. Never decides.

use crate::policy::{ConsentAnswer, Decision, RunConsent, ToolKey};

use super::events::{AgentEvent, DecisionView};
use super::live::LiveSession;
use super::runtime::Runtime;

/// Reports a decision made in `mode`: to the log, the audit log and the
/// front end.
pub(crate) async fn announce_decision(
    rt: &Runtime,
    session: &LiveSession,
    mode: crate::policy::Mode,
    call_id: &str,
    tool: &str,
    decision: &Decision,
) {
    let view = DecisionView::of(decision);
    tracing::info!(
        session = %session.id,
        call = %call_id,
        tool = %tool,
        %mode,
        decision = view.decision,
        code = view.code.unwrap_or(""),
        "decision"
    );
    if let Some(audit) = &rt.audit
        && let Err(e) = audit
            .decision(&session.id, call_id, tool, mode, &view)
            .await
    {
        rt.emit(AgentEvent::Warning(e.to_string()));
    }
    rt.emit(AgentEvent::Decision {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        view,
    });
}

/// Reports the user's answer about a call, and the grants it changed.
/// `gated`: the shell gate ran on it, so "for this session" is that exact
/// command line.
pub(crate) fn announce_answer(
    rt: &Runtime,
    session: &LiveSession,
    run: &RunConsent,
    gated: bool,
    (call_id, tool): (String, String),
    key: &ToolKey,
    (answer, note): (ConsentAnswer, Option<String>),
) {
    let line = match (answer, &note) {
        (ConsentAnswer::AllowForSession, _) if gated => {
            format!("Allowed this exact {key} command line for this session.")
        }
        (ConsentAnswer::Reject, Some(note)) => {
            format!("Rejected this {key} call with a note: {note}")
        }
        _ => answer.describe(key),
    };
    rt.emit(AgentEvent::Answered {
        call_id,
        tool,
        answer,
        line,
    });
    if matches!(
        answer,
        ConsentAnswer::AllowForSession | ConsentAnswer::NeverThisRun
    ) {
        rt.emit(AgentEvent::Permissions {
            grants: crate::policy::grants(&session.consent, run),
            listed: false,
        });
    }
}
