//! Preparing one call before the decision: validates its arguments, lets
//! the tool resolve what it touches (on the blocking pool), runs the
//! PreToolUse hooks (a hook's `updatedInput` is prepared anew, so the
//! decision reads the facts of what will run) and then the shell gate, and
//! asks the prepared call whether it needs inspection. Never decides.

use tokio_util::sync::CancellationToken;

use crate::model::ToolCall;
use crate::policy::{CallFacts, CallKind, Mode, PathTarget, Surfaces};
use crate::tools::{Field, PreparedCall};

use super::driver::Runtime;
use super::gate_step::gate;
use super::hooks::{HookCx, PreToolOutcome};
use super::turn::Event;
use crate::config::HookEvent;

/// Whose call is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    /// A model's (the session's or an asked agent's): the PreToolUse hooks
    /// and the shell gate weigh in.
    Model,
    /// The person's own `!command`: no hook is asked and no gate (or
    /// judge) weighs a command the person typed; the decision lets it run.
    Person,
}

/// A call whose input a PreToolUse hook changed: what it runs with.
#[derive(Debug, Clone)]
pub(super) struct Rewritten {
    /// The arguments it runs with, in mino's fields.
    pub(super) arguments: serde_json::Value,
    /// The last hook that changed them.
    pub(super) key: String,
}

impl Rewritten {
    /// The field a question and a record show first.
    pub(super) fn field(&self) -> Field {
        Field::warning(format!(
            "The hook {} changed this call's input; what is shown is what runs.",
            self.key
        ))
    }

    /// The line the model reads before the call's result.
    pub(super) fn note(&self) -> String {
        format!(
            "A PreToolUse hook ({}) changed this call's input before it was decided; it ran with {}.\n\n",
            self.key, self.arguments
        )
    }
}

/// A prepared call, with the gate's line and what a hook changed.
pub(super) type Ready = (
    Event,
    Box<dyn PreparedCall>,
    Option<Field>,
    Option<Rewritten>,
);

/// Prepares `call`, then runs the shell gate on it (a call the hook denies
/// is never judged). The prepared call, the gate's line and a hook's new
/// input come back with the event; an error is the event alone.
pub(super) async fn prepare(
    rt: &Runtime,
    call: &ToolCall,
    (session, mode): (&str, Mode),
    caller: Caller,
    cancel: &CancellationToken,
) -> Result<Ready, Event> {
    let hook_cx = HookCx {
        session,
        mode,
        audit: rt.audit.as_ref(),
    };
    let (event, mut prepared, rewritten) = prepare_tool(rt, call, &hook_cx, caller, cancel).await?;
    if caller == Caller::Person {
        return Ok((event, prepared, None, rewritten));
    }
    let Event::Prepared {
        call_id,
        mut facts,
        inspect,
    } = event
    else {
        return Ok((event, prepared, None, rewritten));
    };
    if let Some(crate::policy::HookVerdict::Deny { .. }) = facts.hook {
        let event = Event::Prepared {
            call_id,
            facts,
            inspect,
        };
        return Ok((event, prepared, None, rewritten));
    }
    match gate(rt, &mut facts, Some(prepared.as_mut()), mode, cancel).await {
        Some(field) => Ok((
            Event::Prepared {
                call_id,
                facts,
                inspect,
            },
            prepared,
            field,
            rewritten,
        )),
        None => Err(Event::InterruptedBeforeRun),
    }
}

/// Validates and prepares `call`, runs the PreToolUse hooks, and asks the
/// prepared call whether it must be inspected. The prepared call comes back
/// with the event (and a hook's new input); an error is the event alone.
async fn prepare_tool(
    rt: &Runtime,
    call: &ToolCall,
    hook_cx: &HookCx<'_>,
    caller: Caller,
    cancel: &CancellationToken,
) -> Result<(Event, Box<dyn PreparedCall>, Option<Rewritten>), Event> {
    let failed = |message: String| Event::PrepareFailed {
        call_id: call.id.clone(),
        message,
    };
    let Some(tool) = rt.registry.get(&call.name) else {
        return Err(failed(format!(
            "There is no tool named {:?}. Available tools: {}.",
            call.name,
            rt.registry.names().join(", ")
        )));
    };
    let args: serde_json::Value = if call.arguments.trim().is_empty() {
        serde_json::Value::Object(Default::default())
    } else {
        serde_json::from_str(&call.arguments).map_err(|e| {
            failed(format!(
                "This call to {} did not run: its arguments are not complete JSON ({e}); the answer was probably cut off at the output limit. Call the tool again with complete arguments; for long content, write it in smaller parts.",
                call.name
            ))
        })?
    };
    let mut prepared = prepare_with(rt, &tool, &args, cancel)
        .await?
        .map_err(failed)?;
    let mut facts = prepared.facts().clone();
    planted(&rt.surfaces, &mut facts);
    let mut rewritten: Option<Rewritten> = None;
    if caller == Caller::Model && rt.hooks.has(HookEvent::PreToolUse) {
        let mut from = 0;
        let mut args = args;
        loop {
            // The hooks' verdict joins the facts the decision reads.
            let outcome =
                rt.hooks
                    .pre_tool_use(hook_cx, (&call.id, &call.name), &args, &facts, from);
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(Event::InterruptedBeforeRun),
                outcome = outcome => outcome,
            };
            match outcome {
                Some(PreToolOutcome::Rewrite { at, arguments, key }) => {
                    // The new input is prepared anew: the decision reads
                    // what will run, never what the model asked for.
                    prepared = prepare_with(rt, &tool, &arguments, cancel)
                        .await?
                        .map_err(|e| {
                            failed(format!(
                                "The hook {key} changed this call's input, and {} refused the new input: {e}",
                                call.name
                            ))
                        })?;
                    facts = prepared.facts().clone();
                    planted(&rt.surfaces, &mut facts);
                    args = arguments.clone();
                    rewritten = Some(Rewritten { arguments, key });
                    from = at + 1;
                }
                Some(PreToolOutcome::Verdict(verdict)) => {
                    facts.hook = Some(verdict);
                    break;
                }
                None => break,
            }
        }
        // The hook's words (its stderr is the reason) reach the model and
        // the screen: redacted as a tool result is.
        if let Some(crate::policy::HookVerdict::Deny { reason }) = &mut facts.hook {
            *reason = rt.tool_cx.secrets.redact(reason).await;
        }
    }
    let inspect = prepared.needs_inspection();
    Ok((
        Event::Prepared {
            call_id: call.id.clone(),
            facts,
            inspect,
        },
        prepared,
        rewritten,
    ))
}

/// Lets `tool` prepare `args` on the blocking pool (preparing resolves
/// paths and may read the disk). An interrupt does not wait for it (an
/// lsp rename asks its server while it prepares): the work is left to
/// finish unseen. The outer error is the event the turn reads.
async fn prepare_with(
    rt: &Runtime,
    tool: &std::sync::Arc<dyn crate::tools::Tool>,
    args: &serde_json::Value,
    cancel: &CancellationToken,
) -> Result<Result<Box<dyn PreparedCall>, String>, Event> {
    let (cx, shared_args, tool) = (rt.tool_cx.clone(), args.clone(), tool.clone());
    let work = tokio::task::spawn_blocking(move || tool.prepare(&shared_args, &cx));
    let joined = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Event::InterruptedBeforeRun),
        joined = work => joined,
    };
    Ok(match joined {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(e) => Err(format!("preparing stopped: {e}")),
    })
}

/// A file write to an execution surface is its own kind: code written
/// there runs later, so it asks in every mode.
fn planted(surfaces: &Surfaces, facts: &mut CallFacts) {
    if facts.kind != CallKind::FileWrite {
        return;
    }
    let surface = facts.targets.iter().find_map(|target| match target {
        PathTarget::Inside { relative, .. } => surfaces.surface(relative),
        PathTarget::Outside { .. } => None,
    });
    if let Some(surface) = surface {
        facts.kind = CallKind::SurfaceWrite { why: surface.why };
    }
}

/// The fields a question and a record show before the call's own: that a
/// hook changed the input, and why a write to an execution surface asks.
pub(super) fn lead_fields(event: &Event, rewritten: Option<&Rewritten>) -> Vec<Field> {
    let mut fields: Vec<Field> = rewritten.map(Rewritten::field).into_iter().collect();
    fields.extend(surface_fields(event));
    fields
}

fn surface_fields(event: &Event) -> Vec<Field> {
    match event {
        Event::Prepared { facts, .. } => match &facts.kind {
            CallKind::SurfaceWrite { why } => vec![Field::warning(
                crate::policy::Surface { why: why.clone() }.sentence(),
            )],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}
