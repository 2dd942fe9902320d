//! One editor session: a running agent, and the pump that turns its events
//! into `session/update` notifications and its questions into
//! `session/request_permission` requests. The editor's answer goes back
//! through the consent port; this file never decides.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, PromptResponse, RequestPermissionRequest,
    SessionNotification, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::agent::{AgentEvent, ConsentRequest, Input, Interrupter};
use crate::model::Item;
use crate::policy::{ConsentAnswer, Mode};

use super::wire;

/// What the pump and the request handlers share about one session.
#[derive(Default)]
struct SlotState {
    /// The `session/prompt` waiting for its turn to end.
    prompt: Option<Responder<PromptResponse>>,
    /// The last error the running turn reported.
    error: Option<String>,
    /// The waiting prompt is a command (`/rewind`): it ends when the agent
    /// is idle again, not at a turn's end.
    command: bool,
    /// A rewind's choices are before the editor: idle is not the end yet.
    offer_open: bool,
}

/// One session: the agent's input side and what the handlers wait on.
pub struct Slot {
    pub id: String,
    pub project: PathBuf,
    /// How its prompts are read (bounds, embedded resources).
    pub reader: super::prompt::PromptReader,
    inputs: mpsc::UnboundedSender<Input>,
    interrupter: Interrupter,
    state: Mutex<SlotState>,
    agent: Mutex<Option<JoinHandle<()>>>,
}

/// Why a prompt could not start.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("session {0} is already running a prompt; cancel it or wait for its end")]
    Busy(String),
    #[error("the agent of session {0} has stopped")]
    Stopped(String),
}

impl Slot {
    pub fn new(
        id: String,
        project: PathBuf,
        reader: super::prompt::PromptReader,
        inputs: mpsc::UnboundedSender<Input>,
        interrupter: Interrupter,
        agent: JoinHandle<()>,
    ) -> Self {
        Self {
            id,
            project,
            reader,
            inputs,
            interrupter,
            state: Mutex::new(SlotState::default()),
            agent: Mutex::new(Some(agent)),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a turn; `responder` answers when it ends (or at once with
    /// the reason it cannot start).
    pub fn prompt(
        &self,
        text: String,
        responder: Responder<PromptResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        let mut state = self.state();
        let command = super::rewind::command(&text);
        let input = match &command {
            Some(command) => Input::Command(command.clone()),
            None => Input::Prompt(text),
        };
        let refused = if state.prompt.is_some() {
            Some(PromptError::Busy(self.id.clone()))
        } else if self.inputs.send(input).is_err() {
            Some(PromptError::Stopped(self.id.clone()))
        } else {
            None
        };
        if let Some(refused) = refused {
            drop(state);
            return responder.respond_with_error(
                agent_client_protocol::Error::invalid_params().data(refused.to_string()),
            );
        }
        state.error = None;
        state.command = command.is_some();
        state.offer_open = false;
        state.prompt = Some(responder);
        Ok(())
    }

    /// Hands `input` to the agent; false when it has stopped.
    pub(super) fn send_input(&self, input: Input) -> bool {
        self.inputs.send(input).is_ok()
    }

    /// A rewind's choices are (or are no longer) before the editor.
    pub(super) fn set_offer_open(&self, open: bool) {
        self.state().offer_open = open;
    }

    /// Ends the waiting command prompt, when one waits and no choice is
    /// open: an error the agent reported (or `note`) is said first.
    pub(super) fn finish_command(&self, cx: &ConnectionTo<Client>, note: Option<String>) {
        let (responder, said) = {
            let mut state = self.state();
            if !state.command || state.offer_open {
                return;
            }
            state.command = false;
            (state.prompt.take(), state.error.take().or(note))
        };
        if let Some(said) = said {
            update(
                cx,
                &self.id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!("{said}\n"))),
            );
        }
        if let Some(responder) = responder {
            let _ = responder.respond(PromptResponse::new(
                agent_client_protocol::v1::schema::StopReason::EndTurn,
            ));
        }
    }

    /// `session/cancel`: stops the running turn at once, as Esc does.
    pub fn cancel(&self) {
        self.interrupter.interrupt();
    }

    /// `session/set_mode`: the person chose `to` in the editor's selector.
    pub fn choose_mode(&self, to: Mode) -> bool {
        self.inputs.send(Input::ChooseMode(to)).is_ok()
    }

    /// Stops the agent: interrupts a running turn (a question waiting for an
    /// answer is rejected) and waits for its task to end.
    pub async fn stop(&self) {
        self.interrupter.interrupt();
        let _ = self
            .inputs
            .send(Input::Command(crate::agent::Command::Quit));
        let task = self
            .agent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// Sends one update; a client that has gone away cannot be told more.
pub(super) fn update(cx: &ConnectionTo<Client>, session: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(session.to_string(), update)) {
        tracing::debug!(session, error = %e, "a session update was not sent");
    }
}

pub(super) fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_string()))
}

fn call_update(cx: &ConnectionTo<Client>, session: &str, id: &str, fields: ToolCallUpdateFields) {
    update(
        cx,
        session,
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_string(), fields)),
    );
}

/// The session's whole plan, which the editor draws in place of the last.
pub fn send_plan(cx: &ConnectionTo<Client>, session: &str, plan: &crate::session::Plan) {
    update(cx, session, SessionUpdate::Plan(wire::plan(plan)));
}

/// A resumed session's conversation, as `session/load` replays it.
pub fn replay(cx: &ConnectionTo<Client>, session: &str, items: &[Item]) {
    for item in items {
        match item {
            Item::User { text } => update(
                cx,
                session,
                SessionUpdate::UserMessageChunk(text_chunk(text)),
            ),
            Item::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    update(
                        cx,
                        session,
                        SessionUpdate::AgentMessageChunk(text_chunk(text)),
                    );
                }
                for call in tool_calls {
                    update(
                        cx,
                        session,
                        SessionUpdate::ToolCall(
                            ToolCall::new(
                                call.id.clone(),
                                wire::title(&call.name, &call.arguments),
                            )
                            .name(call.name.clone())
                            .kind(wire::kind(&call.name))
                            .raw_input(wire::raw_input(&call.arguments)),
                        ),
                    );
                }
            }
            Item::ToolResult {
                call_id,
                status,
                output,
            } => call_update(
                cx,
                session,
                call_id,
                ToolCallUpdateFields::new()
                    .status(wire::status(*status))
                    .content(vec![wire::text_content(output.clone())]),
            ),
            Item::Summary { text } => update(
                cx,
                session,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "[Summary of earlier conversation, lossy]\n{text}"
                ))),
            ),
            // mino's own line to the model; the editor saw its notice.
            Item::Reminder { .. } => {}
        }
    }
}

/// Puts one question to the editor and hands its answer back. Runs on a
/// task of its own so the pump keeps going; a client that answers
/// `cancelled`, or that goes away, rejects the call.
fn ask(cx: &ConnectionTo<Client>, slot: &Slot, request: ConsentRequest) {
    let ConsentRequest {
        call_id,
        tool,
        fields,
        offer,
        reply,
    } = request;
    // The tool's name and mino's own fields travel too, so an asking mino
    // decides under NAME/tool and shows what its own dialog would.
    let mut meta = serde_json::Map::new();
    meta.insert(
        crate::agent::asked::META_KEY.to_string(),
        serde_json::json!({ "fields": fields }),
    );
    let call = ToolCallUpdate::new(
        call_id,
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Pending)
            .title(format!("{tool} wants to run"))
            .name(tool.to_string())
            .kind(wire::kind(tool.as_str()))
            .content(
                wire::fields_content(&fields)
                    .into_iter()
                    .chain(wire::diffs(&slot.project, &fields))
                    .collect::<Vec<_>>(),
            )
            .locations(wire::locations(&slot.project, &fields)),
    )
    .meta(meta);
    let sent = cx.send_request(RequestPermissionRequest::new(
        slot.id.clone(),
        call,
        wire::options(tool.as_str(), &offer),
    ));
    tokio::spawn(async move {
        let answer = match sent.block_task().await {
            Ok(response) => wire::outcome_answer(&response.outcome),
            Err(e) => {
                tracing::info!(error = %e, "a permission request got no answer; the call is rejected");
                ConsentAnswer::Reject
            }
        };
        let _ = reply.send(answer.into());
    });
}

/// Ends the waiting prompt with the turn's stop.
fn end_prompt(slot: &Slot, stop: &crate::agent::TurnStop) {
    let (responder, error) = {
        let mut state = slot.state();
        (state.prompt.take(), state.error.take())
    };
    let Some(responder) = responder else { return };
    let sent = match wire::stop_reason(stop) {
        Ok(reason) => responder.respond(PromptResponse::new(reason)),
        Err(message) => responder.respond_with_error(
            agent_client_protocol::Error::internal_error().data(error.unwrap_or(message)),
        ),
    };
    if let Err(e) = sent {
        tracing::debug!(session = %slot.id, error = %e, "a prompt's answer was not sent");
    }
}

/// Turns the agent's events into protocol messages until the agent stops.
pub async fn pump(
    slot: Arc<Slot>,
    mut events: mpsc::UnboundedReceiver<AgentEvent>,
    cx: ConnectionTo<Client>,
) {
    let id = slot.id.clone();
    while let Some(event) = events.recv().await {
        match event {
            AgentEvent::AssistantDelta(text) => {
                update(
                    &cx,
                    &id,
                    SessionUpdate::AgentMessageChunk(text_chunk(&text)),
                );
            }
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
            } => update(
                &cx,
                &id,
                SessionUpdate::ToolCall(
                    ToolCall::new(call_id, wire::title(&tool, &arguments))
                        .name(tool.clone())
                        .kind(wire::kind(&tool))
                        .raw_input(wire::raw_input(&arguments)),
                ),
            ),
            AgentEvent::Record {
                call_id,
                tool,
                shown,
                fields,
            } => {
                let lines = crate::frontend::text::record_lines(&tool, &shown, &fields);
                let mut content = Vec::new();
                if !lines.is_empty() {
                    content.push(wire::text_content(lines.join("\n")));
                }
                content.extend(wire::diffs(&slot.project, &fields));
                call_update(
                    &cx,
                    &id,
                    &call_id,
                    ToolCallUpdateFields::new()
                        .content(content)
                        .locations(wire::locations(&slot.project, &fields)),
                );
            }
            AgentEvent::Consent(request) => ask(&cx, &slot, request),
            AgentEvent::Answered { call_id, line, .. } => call_update(
                &cx,
                &id,
                &call_id,
                ToolCallUpdateFields::new().content(vec![wire::text_content(line)]),
            ),
            AgentEvent::ToolRunning { call_id, .. } => call_update(
                &cx,
                &id,
                &call_id,
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            ),
            // A running command's last lines, replaced by its result.
            AgentEvent::ToolOutput {
                call_id, output, ..
            } => call_update(
                &cx,
                &id,
                &call_id,
                ToolCallUpdateFields::new().content(vec![wire::text_content(output)]),
            ),
            AgentEvent::ToolResult {
                call_id,
                status,
                output,
                ..
            } => call_update(
                &cx,
                &id,
                &call_id,
                ToolCallUpdateFields::new()
                    .status(wire::status(status))
                    .content(vec![wire::text_content(output)]),
            ),
            AgentEvent::TurnEnd { stop, .. } => end_prompt(&slot, &stop),
            AgentEvent::ConfirmMode { to, .. } => {
                // Only the editor's own selector changes the mode here
                // (`choose_mode`); a switch asked any other way is refused.
                let _ = slot.inputs.send(Input::ConfirmMode { to, yes: false });
            }
            AgentEvent::ConfirmRule { .. } => {
                // An editor has no y/N line: nothing is written.
                let _ = slot.inputs.send(Input::ConfirmRule { yes: false });
            }
            AgentEvent::ModeChanged(mode) => update(
                &cx,
                &id,
                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.name())),
            ),
            AgentEvent::Error(message) => {
                tracing::warn!(session = %id, "{message}");
                slot.state().error = Some(message);
            }
            AgentEvent::Warning(line) | AgentEvent::TurnNotice { message: line, .. } => {
                tracing::warn!(session = %id, "{line}")
            }
            AgentEvent::Notice(line) => tracing::info!(session = %id, "{line}"),
            AgentEvent::McpStatus(status) => {
                tracing::info!(session = %id, status = ?status, "MCP server state");
            }
            // ACP has no question of this shape: declined by dropping it.
            AgentEvent::ServerQuestion(question) => {
                tracing::info!(session = %id, server = %question.server, "an MCP server's question declined");
            }
            AgentEvent::Models { current, entries } => update(
                &cx,
                &id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "{}\n",
                    crate::frontend::text::models(&current, &entries)
                ))),
            ),
            AgentEvent::SessionDiff { changes, diffs } => update(
                &cx,
                &id,
                SessionUpdate::AgentMessageChunk(text_chunk(&crate::frontend::text::session_diff(
                    &changes, &diffs,
                ))),
            ),
            AgentEvent::McpServers(list) => update(
                &cx,
                &id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "{}\n",
                    crate::frontend::text::mcp_servers(&list)
                ))),
            ),
            AgentEvent::History(items) => replay(&cx, &id, &items),
            AgentEvent::Plan(plan) => send_plan(&cx, &id, &plan),
            AgentEvent::Quit => break,
            AgentEvent::Idle => slot.finish_command(&cx, None),
            AgentEvent::RewindPrompts(prompts) => update(
                &cx,
                &id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "{}\n",
                    crate::frontend::rewind_words::prompts_text(&prompts)
                ))),
            ),
            AgentEvent::RewindOffer(offer) => super::rewind::offer(&cx, &slot, offer),
            AgentEvent::Rewound { line, .. } => update(
                &cx,
                &id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!("{line}\n"))),
            ),
            AgentEvent::Cleared => {}
            // A denial reaches the editor as the call's failed result.
            AgentEvent::Session { .. }
            | AgentEvent::Decision { .. }
            | AgentEvent::FileChanged { .. }
            | AgentEvent::BashChanged { .. }
            | AgentEvent::Prompt(_)
            | AgentEvent::AssistantDone
            | AgentEvent::Usage { .. }
            | AgentEvent::Spent { .. }
            | AgentEvent::ModelNames(_)
            | AgentEvent::McpCatalog(_)
            | AgentEvent::Retrying { .. }
            | AgentEvent::Sessions { .. }
            | AgentEvent::OtherProject { .. }
            | AgentEvent::Permissions { .. }
            | AgentEvent::Asked { .. } => {}
        }
    }
    // The agent stopped: a prompt still waiting ends as cancelled.
    end_prompt(&slot, &crate::agent::TurnStop::Interrupted);
}
