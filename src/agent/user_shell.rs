//! `!command`: a shell command the user runs themselves from the input box.
//! It is not a model call and asks no question (the person typed it), but
//! it runs exactly as the model's bash runs: prepared and run by the bash
//! tool, so the sandbox, the timeout, the hidden variables and the output
//! cap all apply. Its output is shown like a tool result and added to the
//! conversation as a user message, so the model sees what the user saw.
//! Never decides and never starts a model request.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::model::{Item, ResultStatus};
use crate::tools::bash::Bash;
use crate::tools::{Tool, ToolStatus};

use super::driver::Runtime;
use super::events::AgentEvent;
use super::live::LiveSession;
use super::turn::TurnStop;

/// The tool name the chat shows for a user's command.
pub const SHOWN_AS: &str = "bash";

/// The history item that tells the model what the user ran and saw.
pub fn history_text(command: &str, status: ResultStatus, output: &str) -> String {
    format!(
        "I ran this shell command myself in the project directory (not a tool call of yours; \
         it is here for context):\n$ {command}\nStatus: {}\n{output}",
        status.as_str()
    )
}

/// Runs `command` as the user's own, reports it as a prompt with one call,
/// and saves what it printed to the conversation. Always ends with one
/// `TurnEnd` (no request, no tool call of the model's).
pub async fn run(
    rt: &Runtime,
    session: &mut LiveSession,
    command: String,
    cancel: &CancellationToken,
) -> TurnStop {
    let call_id = format!("user-shell-{}", session.history.len());
    rt.emit(AgentEvent::Prompt(format!("!{command}")));
    let arguments = json!({ "command": command });
    rt.emit(AgentEvent::ToolCall {
        call_id: call_id.clone(),
        tool: SHOWN_AS.into(),
        arguments: arguments.to_string(),
    });
    let (status, output) = match Bash.prepare(&arguments, &rt.tool_cx) {
        Err(e) => (ResultStatus::Error, e.to_string()),
        Ok(prepared) => {
            rt.emit(AgentEvent::ToolRunning {
                call_id: call_id.clone(),
                tool: SHOWN_AS.into(),
            });
            let live = prepared.live_output();
            let running = prepared.run(cancel.child_token());
            let watching = super::live_output::forward(rt, &call_id, SHOWN_AS, live);
            let outcome = tokio::select! {
                outcome = running => outcome,
                never = watching => match never {},
            };
            let status = match outcome.status {
                ToolStatus::Completed => ResultStatus::Completed,
                ToolStatus::Error => ResultStatus::Error,
                ToolStatus::Interrupted => ResultStatus::Interrupted,
            };
            (status, outcome.output)
        }
    };
    // The secrets mino holds never reach the chat or the model.
    let output = rt.tool_cx.secrets.redact_result(&output).await;
    let saved = session
        .save(Item::User {
            text: history_text(&command, status, &output),
        })
        .await;
    rt.emit(AgentEvent::ToolResult {
        call_id,
        tool: SHOWN_AS.into(),
        status,
        output,
    });
    let stop = match saved {
        Err(e) => {
            let message = e.to_string();
            rt.emit(AgentEvent::Error(message.clone()));
            TurnStop::SaveFailed(message)
        }
        Ok(()) if status == ResultStatus::Interrupted => TurnStop::Interrupted,
        Ok(()) => TurnStop::Completed,
    };
    rt.emit(AgentEvent::TurnEnd {
        requests: 0,
        tool_calls: 0,
        stop: stop.clone(),
    });
    stop
}
