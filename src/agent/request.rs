//! One model request of a turn and what the context budget does around it:
//! the request's estimate, calibrated from the service's count when the
//! answer comes; a service that says the request exceeds the context gets
//! one compaction and one retry, then an error naming `context_window`; a
//! tool result cut to the room left before it is saved. Never decides.

use tokio_util::sync::CancellationToken;

use crate::model::{FinishReason, ModelError, Request, RequestKind, StreamEvent};

use super::budget;
use super::driver::Runtime;
use super::events::{AgentEvent, NoticeKind};
use super::live::LiveSession;
use super::stream::{Collected, collect};
use super::turn::{Event, Offer};

/// The tools a request offers, as the turn's `offer` says.
pub fn offered(rt: &Runtime, offer: &Offer) -> Vec<crate::tools::ToolSpec> {
    let mut tools = rt.registry.specs();
    tools.retain(|s| offer.offers(&s.name));
    tools
}

/// One request of the turn; `kind` says whether it is the turn's first,
/// `offer` which of the tools it offers.
pub async fn request(
    rt: &Runtime,
    session: &mut LiveSession,
    kind: RequestKind,
    offer: &Offer,
    cancel: &CancellationToken,
) -> Event {
    if let Some(hub) = &rt.mcp {
        // Servers still starting would be missing from the request's tools.
        tokio::select! {
            () = cancel.cancelled() => return Event::Interrupted { partial: None },
            () = hub.ready() => {}
        }
    }
    let estimate = rt.estimate(&session.history);
    let request = Request {
        kind,
        system: rt.system.clone(),
        items: std::sync::Arc::clone(&session.history),
        tools: offered(rt, offer),
    };
    let collected = collect(rt.provider.as_ref(), request, cancel, |event| match event {
        StreamEvent::TextDelta(text) => rt.emit(AgentEvent::AssistantDelta(text.clone())),
        StreamEvent::Retrying { delay, reason } => rt.emit(AgentEvent::Retrying {
            delay: *delay,
            reason: reason.clone(),
        }),
        _ => {}
    })
    .await;
    let (Collected::Done(response)
    | Collected::Failed(_, response)
    | Collected::Interrupted(response)) = &collected;
    if !response.text.is_empty() {
        rt.emit(AgentEvent::AssistantDone);
    }
    match collected {
        Collected::Done(response) => {
            session.spent.add(response.usage, rt.price());
            rt.emit_spent(session);
            if response.usage.input_tokens > 0 {
                session.input_tokens = response.usage.input_tokens;
                let mut budget = rt.budget(session);
                budget.calibrate(estimate, response.usage.input_tokens);
                session.calibration = budget.calibration;
            }
            rt.emit(AgentEvent::Usage {
                input_tokens: response.usage.input_tokens,
                output_tokens: response.usage.output_tokens,
                context_window: rt.context_window,
                finish_reason: response.finish.as_ref().map(|f| f.as_str().to_string()),
            });
            if response.finish == Some(FinishReason::Length) && !response.tool_calls.is_empty() {
                rt.emit(AgentEvent::TurnNotice {
                    kind: NoticeKind::CutOff,
                    message: "The model's answer was cut off at its output limit (`[model] max_output_tokens`); a call whose arguments are incomplete does not run.".to_string(),
                });
            }
            Event::ModelDone(response)
        }
        Collected::Failed(error, _) if error.says_context_exceeded() => {
            tracing::warn!(session = %session.id, %error, estimate, "the request exceeded the context");
            let mut budget = rt.budget(session);
            let before = budget.window;
            budget.exceeded(estimate, error.counted_tokens(), error.stated_window());
            session.calibration = budget.calibration;
            if budget.window < before {
                rt.emit(AgentEvent::TurnNotice {
                    kind: NoticeKind::Budget,
                    message: format!(
                        "The service says its context holds {} tokens; mino counts with that for the rest of this session (`[model] context_window` is {}).",
                        budget.window, rt.context_window
                    ),
                });
            }
            Event::ContextExceeded {
                error: ModelError::ContextExceeded {
                    message: error.to_string(),
                    window: rt.context_window,
                },
                first: kind == RequestKind::TurnFirst,
            }
        }
        Collected::Failed(error, partial) => {
            tracing::warn!(session = %session.id, %error, "model request failed");
            if partial.text.is_empty() || matches!(error, ModelError::Cancelled) {
                return Event::ModelFailed(error);
            }
            Event::ModelCutOff { error, partial }
        }
        Collected::Interrupted(response) => Event::Interrupted {
            partial: Some(response),
        },
    }
}

/// A tool result as it fits the room the context window has left: whole,
/// or cut (head and tail kept, the cut said) with the whole text to keep in
/// the session log first.
pub enum Fit {
    Whole(String),
    Cut { full: String, cut: String },
}

/// Fits `output` of `tool` to the context window, and says when it cut.
pub fn fit_result(rt: &Runtime, session: &LiveSession, tool: &str, output: String) -> Fit {
    let budget = rt.budget(session);
    let mut room = budget.room_for_result(rt.estimate(&session.history));
    if rt.profile.is_small() {
        // A small model reads a long result worse than a short one, and
        // in a small window each one crowds out the rest of the turn.
        room = room.min(budget.small_result_room());
    }
    let size = budget::tokens(&output);
    if size <= room {
        return Fit::Whole(output);
    }
    let cut = budget::cut(
        &output,
        room,
        "to fit the context window (`[model] context_window`); the whole output is in the session log",
    );
    rt.emit(AgentEvent::TurnNotice {
        kind: NoticeKind::Budget,
        message: format!(
            "The result of {tool} was cut to fit the context window: about {} of {size} tokens kept, head and tail.",
            budget::tokens(&cut)
        ),
    });
    Fit::Cut { full: output, cut }
}
