//! The shell gate's judge: for an `unresolved-eligible` request only, one
//! isolated request to the configured model service (no tools, no history,
//! no retries, a local deadline, cancellable) carrying only the gate's enums:
//! never the command, its values, paths, URLs, history or ids. Exactly one
//! canonical answer is accepted; anything else fails closed with a judge code.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::model::{
    FinishReason, Item, ModelError, Provider, Request, RequestKind, Response, StreamEvent,
};
use crate::policy::shell::{
    JUDGE_CANCELLED, JUDGE_DENIED, JUDGE_ERROR, JUDGE_INVALID_RESPONSE, JUDGE_TIMEOUT, JudgeRequest,
};

/// The only answers accepted, byte for byte.
pub const ALLOW: &str = r#"{"decision":"allow"}"#;
pub const DENY: &str = r#"{"decision":"deny"}"#;

/// What the judge is told about its task. It names no command.
pub const INSTRUCTIONS: &str = "You decide whether a coding agent may run one read-only git request without asking its user. The request is described only by enums: the shell, the git operation (status, diff, log or show), whether every option is on a known read-only list (option_risk none) or not (unlisted), and the kind of each argument. Allow only a request you are confident reads without writing, running other programs or reaching the network. Answer with exactly {\"decision\":\"allow\"} or {\"decision\":\"deny\"} and nothing else.";

/// The longest answer read before it is called invalid.
const MAX_ANSWER_BYTES: usize = 256;

/// A configured judge: its own provider (built with no retries) and deadline.
pub struct Judge {
    pub provider: Box<dyn Provider>,
    pub timeout: Duration,
}

/// Why the judge did not allow: a gate code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAllowed {
    pub code: &'static str,
    pub reason: String,
}

fn not_allowed(code: &'static str, reason: impl Into<String>) -> NotAllowed {
    NotAllowed {
        code,
        reason: reason.into(),
    }
}

/// The body of the one user message: the request's enums as JSON.
pub fn message(request: &JudgeRequest) -> String {
    serde_json::to_string(request).unwrap_or_default()
}

/// Judges `request`: `Ok` only for the exact allow answer in time.
pub async fn judge(
    judge: &Judge,
    request: &JudgeRequest,
    cancel: CancellationToken,
) -> Result<(), NotAllowed> {
    let body = message(request);
    if body.is_empty() {
        return Err(not_allowed(JUDGE_ERROR, "the request could not be written"));
    }
    let request = Request {
        kind: RequestKind::Isolated,
        system: INSTRUCTIONS.to_string(),
        items: std::sync::Arc::new(vec![Item::User { text: body }]),
        tools: Vec::new(),
    };
    let mut stream = judge.provider.stream(request, cancel.clone());
    let collect = async {
        let mut response = Response::default();
        while let Some(event) = stream.next().await {
            match event {
                Ok(StreamEvent::Done) => break,
                Ok(event) => {
                    response.apply(&event);
                    if response.text.len() > MAX_ANSWER_BYTES {
                        return Err(not_allowed(
                            JUDGE_INVALID_RESPONSE,
                            "the judge's answer is longer than any accepted one",
                        ));
                    }
                }
                Err(ModelError::Cancelled) => {
                    return Err(not_allowed(
                        JUDGE_CANCELLED,
                        "the judge's request was cancelled",
                    ));
                }
                Err(e @ ModelError::Malformed { .. }) => {
                    return Err(not_allowed(
                        JUDGE_INVALID_RESPONSE,
                        format!("the judge's answer is not one accepted: {e}"),
                    ));
                }
                Err(e) => {
                    return Err(not_allowed(
                        JUDGE_ERROR,
                        format!("the judge's request failed: {e}"),
                    ));
                }
            }
        }
        Ok(response)
    };
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => {
            return Err(not_allowed(JUDGE_CANCELLED, "the judge's request was cancelled"));
        }
        done = tokio::time::timeout(judge.timeout, collect) => match done {
            Ok(result) => result?,
            Err(_) => {
                cancel.cancel();
                return Err(not_allowed(
                    JUDGE_TIMEOUT,
                    format!("the judge did not answer within {} s", judge.timeout.as_secs()),
                ));
            }
        },
    };
    if response.finish != Some(FinishReason::Stop) {
        return Err(not_allowed(
            JUDGE_INVALID_RESPONSE,
            "the judge's answer did not end as complete (finish reason stop)",
        ));
    }
    if !response.tool_calls.is_empty() {
        return Err(not_allowed(
            JUDGE_INVALID_RESPONSE,
            "the judge asked for a tool",
        ));
    }
    match response.text.as_str() {
        ALLOW => Ok(()),
        DENY => Err(not_allowed(JUDGE_DENIED, "the judge answered deny")),
        _ => Err(not_allowed(
            JUDGE_INVALID_RESPONSE,
            "the judge's answer was not exactly {\"decision\":\"allow\"} or {\"decision\":\"deny\"}",
        )),
    }
}
