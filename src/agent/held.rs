//! The one prepared call the driver holds between `Prepare` and `Run`, and
//! what is done with it: inspected on the blocking pool, put to the person
//! (the question is sent at once; the answer comes back as an event), and
//! run with its checkpoints, live output, language servers' report and
//! plan. Every function takes the held call by its id's owner; none decides.

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::policy::{ConsentAnswer, ToolKey};
use crate::tools::{Field, FieldKind, FieldRole, PreparedCall, ToolStatus};

use super::driver::Runtime;
use super::events::{AgentEvent, ConsentRequest};
use super::live::LiveSession;
use super::turn::Event;

/// The one prepared call the driver holds, between `Prepare` and `Run`.
pub(super) struct Slot {
    pub(super) call_id: String,
    /// The name the model called it by.
    pub(super) tool: String,
    /// What the answers are remembered under (`agent/tool` for an asked
    /// agent's call).
    pub(super) key: ToolKey,
    pub(super) prepared: Box<dyn PreparedCall>,
    /// Fields shown before the call's own (who asks, for an asked agent).
    pub(super) lead: Vec<Field>,
    /// The shell gate's line, shown in a question and a record.
    pub(super) gate: Option<Field>,
}

impl Slot {
    /// The prepared call with `call_id`, if the driver holds it.
    pub(super) fn get<'a>(slot: &'a Option<Slot>, call_id: &str) -> Option<&'a Slot> {
        slot.as_ref().filter(|held| held.call_id == call_id)
    }

    /// The fields a question and a record show, with every secret mino
    /// holds redacted: a hook's new input may carry one the model never saw.
    pub(super) fn fields(&self, secrets: &crate::secrets::Secrets) -> Vec<Field> {
        let mut fields = self.lead.clone();
        fields.extend(with_gate(self.prepared.fields(), self.gate.as_ref()));
        for field in &mut fields {
            if secrets.holds(field.value.as_bytes()) {
                field.value = secrets.redact(&field.value).text;
            }
        }
        fields
    }
}

/// The fields of a call with the shell gate's line before its warning.
fn with_gate(mut fields: Vec<Field>, gate: Option<&Field>) -> Vec<Field> {
    if let Some(gate) = gate {
        let at = fields
            .iter()
            .position(|f| f.kind == FieldKind::Warning)
            .unwrap_or(fields.len());
        fields.insert(at, gate.clone());
    }
    fields
}

/// Inspects the held call on the blocking pool (it reads the file and
/// builds the diff), and hands it back.
pub(super) async fn inspect(mut held: Slot) -> (Option<Slot>, Event) {
    let call_id = held.call_id.clone();
    let work = tokio::task::spawn_blocking(move || {
        let result = held.prepared.inspect();
        (held, result)
    });
    match work.await {
        Ok((held, Ok(()))) => (Some(held), Event::Inspected { call_id }),
        Ok((held, Err(e))) => (
            Some(held),
            Event::InspectFailed {
                call_id,
                message: e.to_string(),
            },
        ),
        Err(e) => (
            None,
            Event::Internal(format!("inspecting call {call_id:?} stopped: {e}")),
        ),
    }
}

/// Puts the held call to the user. The question is sent at once; the
/// future waits for the answer and holds nothing of the call but its id.
pub(super) fn ask<'a>(
    rt: &Runtime,
    held: &Slot,
    offer: crate::policy::Offer,
    cancel: &'a CancellationToken,
) -> impl Future<Output = Event> + Send + 'a {
    let call_id = held.call_id.clone();
    let (reply, answer) = oneshot::channel();
    rt.emit(AgentEvent::Consent(ConsentRequest {
        call_id: call_id.clone(),
        tool: held.key.clone(),
        fields: held.fields(&rt.tool_cx.secrets.now()),
        offer,
        reply,
    }));
    async move {
        tokio::select! {
            _ = cancel.cancelled() => Event::Interrupted { partial: None },
            reply = answer => {
                let reply = reply.unwrap_or_else(|_| ConsentAnswer::Reject.into());
                Event::Answered {
                    call_id,
                    answer: reply.answer,
                    note: reply.note,
                }
            }
        }
    }
}

pub(super) async fn run_call(
    rt: &Runtime,
    session: &mut LiveSession,
    held: Slot,
    cancel: &CancellationToken,
) -> Event {
    let Slot {
        call_id,
        tool,
        mut prepared,
        ..
    } = held;
    prepared.give_plan(&session.plan);
    // An interrupt pressed while the call was prepared or inspected stops
    // it before it starts.
    if cancel.is_cancelled() {
        return Event::InterruptedBeforeRun;
    }
    let change = applied_change(&prepared.fields());
    let before = super::checkpoints::before(rt, session, &call_id, &tool).await;
    rt.emit(AgentEvent::ToolRunning {
        call_id: call_id.clone(),
        tool: tool.clone(),
    });
    let live = prepared.live_output();
    let edited = crate::tools::lsp::edited_files(&tool, prepared.facts());
    let mut running = prepared.run(cancel.child_token());
    tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            // The tool stops at once (a killed process group, a dropped
            // request) through its child token; wait for it so nothing
            // outlives the turn, and keep what it printed.
            let outcome = running.await;
            super::checkpoints::interrupted(rt, session, &call_id, &tool).await;
            Event::Stopped { call_id, outcome }
        }
        mut outcome = &mut running => {
            super::checkpoints::after_call(rt, session, &call_id, &tool, before, &mut outcome)
                .await;
            // The language servers' word on what the call changed; an
            // interrupt does not wait for it.
            let report = if outcome.status == ToolStatus::Completed {
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => None,
                    report = crate::tools::lsp::after_edit(&rt.tool_cx, &edited) => report,
                }
            } else {
                None
            };
            if let Some(report) = report {
                outcome.output.push_str("\n\n");
                outcome.output.push_str(&report);
            }
            if outcome.status == ToolStatus::Completed
                && let Some((path, diff)) = change
            {
                rt.emit(AgentEvent::FileChanged {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    path,
                    diff,
                });
            }
            if let Some(plan) = outcome.plan.take() {
                keep_plan(rt, session, plan, &mut outcome).await;
            }
            Event::Ran { call_id, outcome }
        }
        never = super::live_output::forward(rt, &call_id, &tool, live) => match never {},
    }
}

/// Saves the plan a `plan` call made as the session's, then shows it; a
/// plan that cannot be saved is not the session's, and the call fails.
async fn keep_plan(
    rt: &Runtime,
    session: &mut LiveSession,
    plan: crate::session::Plan,
    outcome: &mut crate::tools::ToolOutcome,
) {
    match session.save_plan(plan.clone()).await {
        Ok(()) => rt.emit(AgentEvent::Plan(plan)),
        Err(e) => {
            *outcome = crate::tools::ToolOutcome::error(format!(
                "The plan was not changed: it could not be saved with the session ({e})."
            ));
        }
    }
}

/// The path and diff of a write the call would apply, from its fields.
fn applied_change(fields: &[Field]) -> Option<(String, String)> {
    let diff = fields.iter().find(|f| f.kind == FieldKind::Diff)?;
    let path = Field::find(fields, FieldRole::Path)?;
    Some((path.to_string(), diff.value.clone()))
}
