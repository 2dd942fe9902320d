//! Where the turn meets the hooks: the prompt a UserPromptSubmit hook may
//! block or add to, the result a PostToolUse hook may add to, and the
//! events that are only told. Everything a hook says that reaches the
//! model or the screen is redacted first, as a tool result is.

use serde_json::{Map, Value};

use crate::config::HookEvent;

use super::super::events::AgentEvent;
use super::super::live::LiveSession;
use super::super::runtime::Runtime;
use super::answer::{PermissionVerdict, PromptVerdict};
use super::{HookCx, ToolUse};

fn cx<'a>(rt: &'a Runtime, session: &'a LiveSession) -> HookCx<'a> {
    HookCx {
        session: &session.id,
        mode: session.mode,
        audit: rt.audit.as_ref(),
    }
}

/// The prompt to send, with what UserPromptSubmit hooks add to it; or
/// the (redacted) reason a hook blocked it.
pub async fn prompt(rt: &Runtime, session: &LiveSession, prompt: String) -> Result<String, String> {
    if !rt.hooks.has(HookEvent::UserPromptSubmit) {
        return Ok(prompt);
    }
    let secrets = &rt.tool_cx.secrets;
    match rt.hooks.user_prompt_submit(&cx(rt, session), &prompt).await {
        PromptVerdict::Block(reason) => Err(secrets.redact(&reason).await),
        PromptVerdict::Pass { context: None } => Ok(prompt),
        PromptVerdict::Pass {
            context: Some(context),
        } => {
            let context = secrets.redact(&context).await;
            Ok(format!(
                "{prompt}\n\n<user-prompt-submit-hook>\n{context}\n</user-prompt-submit-hook>"
            ))
        }
    }
}

/// The call's names and input (`arguments` when a PreToolUse hook changed
/// them) for a PermissionRequest or PostToolUse hook, kept from its
/// preparation; `None` when neither is configured.
pub fn remember(
    rt: &Runtime,
    call: &crate::model::ToolCall,
    arguments: Option<&Value>,
    facts: &crate::policy::CallFacts,
) -> Option<ToolUse> {
    if !rt.hooks.has(HookEvent::PostToolUse) && !rt.hooks.has(HookEvent::PermissionRequest) {
        return None;
    }
    let args = match arguments {
        Some(arguments) => arguments.clone(),
        None => serde_json::from_str(&call.arguments).unwrap_or(Value::Null),
    };
    Some(rt.hooks.tool_use(&call.id, &call.name, &args, facts))
}

/// What PermissionRequest hooks answer for the person about `call`, as
/// the answer event; `None` leaves the question to the person. Hooks are
/// asked only where a person would be: where nobody can answer, the call
/// was already rejected by the decision.
pub async fn permission(
    rt: &Runtime,
    session: &LiveSession,
    call: Option<&ToolUse>,
) -> Option<crate::agent::turn::Event> {
    let call = call.filter(|_| rt.hooks.has(HookEvent::PermissionRequest))?;
    let (verdict, warnings) = rt.hooks.permission_request(&cx(rt, session), call).await;
    let secrets = &rt.tool_cx.secrets;
    for warning in warnings {
        rt.emit(AgentEvent::Warning(format!(
            "PermissionRequest hook: {}",
            secrets.redact(&warning).await
        )));
    }
    let (answer, note) = match verdict {
        PermissionVerdict::Ask(_) => return None,
        PermissionVerdict::Allow => (crate::policy::ConsentAnswer::AllowOnce, None),
        PermissionVerdict::Deny(message) => (
            crate::policy::ConsentAnswer::Reject,
            Some(secrets.redact(&message).await),
        ),
    };
    let (verb, after) = if note.is_some() {
        ("rejected", "")
    } else {
        ("allowed", " once")
    };
    rt.emit(AgentEvent::Notice(format!(
        "A PermissionRequest hook {verb} {}{after} for you.",
        call.names[0]
    )));
    Some(crate::agent::turn::Event::Answered {
        call_id: call.call_id.clone(),
        answer,
        note,
    })
}

/// `output` (already redacted) with what PostToolUse hooks add for the
/// model about `call`, redacted too. A hook that fails is a warning.
pub async fn result(rt: &Runtime, session: &LiveSession, call: &ToolUse, output: String) -> String {
    let (context, warnings) = rt
        .hooks
        .post_tool_use(&cx(rt, session), call, &output)
        .await;
    let secrets = &rt.tool_cx.secrets;
    for warning in warnings {
        rt.emit(AgentEvent::Warning(format!(
            "PostToolUse hook: {}",
            secrets.redact(&warning).await
        )));
    }
    let mut output = output;
    for text in context {
        let text = secrets.redact(&text).await;
        output.push_str(&format!(
            "\n\n<post-tool-use-hook>\n{text}\n</post-tool-use-hook>"
        ));
    }
    output
}

/// Tells PreCompact hooks that history is about to be summarised;
/// `trigger` is `manual` (`/compact`) or `auto`.
pub fn pre_compact(rt: &Runtime, session: &LiveSession, trigger: &'static str) {
    let fields = Map::from_iter([
        ("trigger".to_string(), Value::from(trigger)),
        ("custom_instructions".to_string(), Value::from("")),
    ]);
    tell(rt, session, HookEvent::PreCompact, Some(trigger), fields);
}

/// Tells SessionStart hooks that the session began: its `source` is
/// `resume` for a session resumed at start, else `startup`.
pub fn session_start(rt: &Runtime, session: &LiveSession, resumed: bool) {
    let source = if resumed { "resume" } else { "startup" };
    let fields = Map::from_iter([("source".to_string(), Value::from(source))]);
    tell(rt, session, HookEvent::SessionStart, Some(source), fields);
}

/// Tells SessionEnd hooks that mino is leaving, and waits for them and
/// every told hook still running (within their timeouts, and the grace a
/// front end gives the agent to end).
pub async fn session_end(rt: &Runtime, session: &LiveSession) {
    rt.hooks.settle().await;
    let fields = Map::from_iter([("reason".to_string(), Value::from("exit"))]);
    tell(rt, session, HookEvent::SessionEnd, Some("exit"), fields);
    rt.hooks.settle().await;
}

/// Tells Notification hooks that a question about `tool` waits.
pub fn notify(rt: &Runtime, session: &LiveSession, tool: &str) {
    let fields = Map::from_iter([
        (
            "message".to_string(),
            Value::from(format!("mino needs your permission to use {tool}")),
        ),
        ("notification_type".to_string(), "permission_prompt".into()),
    ]);
    tell(
        rt,
        session,
        HookEvent::Notification,
        Some("permission_prompt"),
        fields,
    );
}

/// Tells `event`'s hooks, with `fields`; nothing waits for them.
pub fn tell(
    rt: &Runtime,
    session: &LiveSession,
    event: HookEvent,
    subject: Option<&str>,
    fields: Map<String, Value>,
) {
    rt.hooks.tell(
        &cx(rt, session),
        event,
        subject,
        fields,
        (rt.events.clone(), rt.tool_cx.secrets.clone()),
    )
}
