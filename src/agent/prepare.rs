//! Preparing one call before the decision: validates its arguments, lets
//! the tool resolve what it touches (on the blocking pool), runs the
//! PreToolUse hooks and then the shell gate, and asks the prepared call
//! whether it needs inspection. Never decides.

use tokio_util::sync::CancellationToken;

use crate::model::ToolCall;
use crate::policy::{CallFacts, CallKind, Mode, PathTarget, Surfaces};
use crate::tools::{Field, PreparedCall};

use super::driver::Runtime;
use super::gate_step::gate;
use super::hooks::HookCx;
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

/// Prepares `call`, then runs the shell gate on it (a call the hook denies
/// is never judged). The prepared call and the gate's line come back with
/// the event; an error is the event alone.
pub(super) async fn prepare(
    rt: &Runtime,
    call: &ToolCall,
    (session, mode): (&str, Mode),
    caller: Caller,
    cancel: &CancellationToken,
) -> Result<(Event, Box<dyn PreparedCall>, Option<Field>), Event> {
    let hook_cx = HookCx {
        session,
        mode,
        audit: rt.audit.as_ref(),
    };
    let (event, mut prepared) = prepare_tool(rt, call, &hook_cx, caller, cancel).await?;
    if caller == Caller::Person {
        return Ok((event, prepared, None));
    }
    let Event::Prepared {
        call_id,
        mut facts,
        inspect,
    } = event
    else {
        return Ok((event, prepared, None));
    };
    if let Some(crate::policy::HookVerdict::Deny { .. }) = facts.hook {
        let event = Event::Prepared {
            call_id,
            facts,
            inspect,
        };
        return Ok((event, prepared, None));
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
        )),
        None => Err(Event::InterruptedBeforeRun),
    }
}

/// Validates and prepares `call`, runs the PreToolUse hooks, and asks the
/// prepared call whether it must be inspected. The prepared call comes back
/// with the event; an error is the event alone.
async fn prepare_tool(
    rt: &Runtime,
    call: &ToolCall,
    hook_cx: &HookCx<'_>,
    caller: Caller,
    cancel: &CancellationToken,
) -> Result<(Event, Box<dyn PreparedCall>), Event> {
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
    // Preparing resolves paths and may read the disk: the blocking pool.
    let (cx, shared_args) = (rt.tool_cx.clone(), args.clone());
    // An interrupt does not wait for it (an lsp rename asks its server
    // while it prepares): the work is left to finish unseen.
    let work = tokio::task::spawn_blocking(move || tool.prepare(&shared_args, &cx));
    let prepared = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Event::InterruptedBeforeRun),
        joined = work => joined,
    }
    .map_err(|e| failed(format!("preparing {} stopped: {e}", call.name)))?
    .map_err(|e| failed(e.to_string()))?;
    let mut facts = prepared.facts().clone();
    planted(&rt.surfaces, &mut facts);
    if caller == Caller::Model && rt.hooks.has(HookEvent::PreToolUse) {
        // The hooks' verdict joins the facts the decision reads.
        let verdict = rt
            .hooks
            .pre_tool_use(hook_cx, &call.id, &call.name, &args, &facts);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Event::InterruptedBeforeRun),
            verdict = verdict => facts.hook = verdict,
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
    ))
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

/// The fields a question and a record show before the call's own: why a
/// write to an execution surface asks.
pub(super) fn lead_fields(event: &Event) -> Vec<Field> {
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
