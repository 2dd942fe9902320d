//! One editor session: a running agent, and the pump that turns its events
//! into `session/update` notifications (chunks, plans, mode and config
//! options, usage; calls through `calls.rs`) and its questions into
//! `session/request_permission` requests. The editor's answer goes back
//! through the consent port; a config change is answered once the agent is
//! done with it (inputs and `Idle`s counted). This file never decides.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentBlock, ContentChunk, Cost, CurrentModeUpdate, PromptResponse,
    SessionNotification, SessionUpdate, SetSessionConfigOptionResponse, ToolCallUpdate,
    ToolCallUpdateFields, UsageUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::agent::{AgentEvent, Input, Interrupter};
use crate::policy::Mode;

use super::config::{self, Current};
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
    /// What the waiting command says at its end when no error does.
    note: Option<String>,
    /// Inputs handed to the agent, and the `Idle`s it said: each input ends
    /// with one, so input N is done at the Nth.
    sent: u64,
    idle: u64,
    /// `session/set_config_option` requests, each waiting for its input
    /// to be done (by its number), with the error that input reported.
    waiting: Vec<Waiter>,
    /// The mode, model and models as the agent last said them.
    current: Option<Current>,
}

/// A `session/set_config_option` waiting for the agent.
struct Waiter {
    input: u64,
    error: Option<String>,
    responder: Responder<SetSessionConfigOptionResponse>,
}

/// One session: the agent's input side and what the handlers wait on.
pub struct Slot {
    pub id: String,
    pub project: PathBuf,
    /// The client draws bash calls in a terminal of its own.
    pub terminal: bool,
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
        current: Current,
    ) -> Self {
        let state = SlotState {
            current: Some(current),
            ..SlotState::default()
        };
        Self {
            id,
            project,
            terminal: false,
            reader,
            inputs,
            interrupter,
            state: Mutex::new(state),
            agent: Mutex::new(Some(agent)),
        }
    }

    /// This session's bash calls are drawn in the client's terminal.
    pub fn with_terminal(mut self, terminal: bool) -> Self {
        self.terminal = terminal;
        self
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
        let command = match super::commands::of_prompt(&text) {
            Ok(command) => command,
            Err(refused) => {
                return responder.respond_with_error(
                    agent_client_protocol::Error::invalid_params().data(refused.to_string()),
                );
            }
        };
        let input = match &command {
            Some(command) => Input::Command(command.clone()),
            None => Input::Prompt(text),
        };
        let mut state = self.state();
        let refused = if state.prompt.is_some() {
            Some(PromptError::Busy(self.id.clone()))
        } else if !self.send(&mut state, input) {
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
        state.note = None;
        state.prompt = Some(responder);
        Ok(())
    }

    /// Hands `input` to the agent, counted; false when it has stopped.
    fn send(&self, state: &mut SlotState, input: Input) -> bool {
        let sent = self.inputs.send(input).is_ok();
        if sent {
            state.sent += 1;
        }
        sent
    }

    /// Hands `input` to the agent; false when it has stopped.
    pub(super) fn send_input(&self, input: Input) -> bool {
        let mut state = self.state();
        self.send(&mut state, input)
    }

    /// `session/set_config_option`: hands the change to the agent, in
    /// order after what it was given before; `responder` answers once the
    /// agent is done with it (with the options then, or its error).
    pub fn set_config(
        &self,
        input: Input,
        responder: Responder<SetSessionConfigOptionResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        let mut state = self.state();
        if !self.send(&mut state, input) {
            drop(state);
            return responder.respond_with_error(
                agent_client_protocol::Error::invalid_params()
                    .data(PromptError::Stopped(self.id.clone()).to_string()),
            );
        }
        let input = state.sent;
        state.waiting.push(Waiter {
            input,
            error: None,
            responder,
        });
        Ok(())
    }

    /// The options as they are now.
    pub fn options(&self) -> Vec<agent_client_protocol::v1::schema::SessionConfigOption> {
        self.state()
            .current
            .as_ref()
            .map(config::options)
            .unwrap_or_default()
    }

    /// The agent said `Idle`: the config changes whose input is done are
    /// answered.
    fn idle(&self) {
        let (done, options) = {
            let mut state = self.state();
            state.idle += 1;
            let idle = state.idle;
            let (done, kept) = std::mem::take(&mut state.waiting)
                .into_iter()
                .partition(|w| w.input <= idle);
            state.waiting = kept;
            let options = state
                .current
                .as_ref()
                .map(config::options)
                .unwrap_or_default();
            (done, options)
        };
        for waiter in done {
            let _ = match waiter.error {
                Some(error) => waiter
                    .responder
                    .respond_with_error(agent_client_protocol::Error::invalid_params().data(error)),
                None => waiter
                    .responder
                    .respond(SetSessionConfigOptionResponse::new(options.clone())),
            };
        }
    }

    /// An error the agent reported: a config change whose input runs now
    /// takes it as its answer; otherwise it is the running turn's.
    fn error(&self, message: String) {
        let mut state = self.state();
        let running = state.idle + 1;
        match state.waiting.iter_mut().find(|w| w.input == running) {
            Some(waiter) => waiter.error = Some(message),
            None => state.error = Some(message),
        }
    }

    /// Applies `change` to the session's state; true when the options
    /// changed (the editor is told).
    fn change(&self, change: impl FnOnce(&mut Current)) -> bool {
        let mut state = self.state();
        let Some(current) = state.current.as_mut() else {
            return false;
        };
        let before = (current.mode, current.model.clone(), current.models.clone());
        change(current);
        before != (current.mode, current.model.clone(), current.models.clone())
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
            if !state.command {
                return;
            }
            if note.is_some() {
                state.note = note;
            }
            // A choice still open, or an input the agent has not finished
            // (a rewind answered), is not the end yet.
            if state.offer_open || state.idle < state.sent {
                return;
            }
            state.command = false;
            let said = state.error.take().or(state.note.take());
            (state.prompt.take(), said)
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

    /// Says `text` in the editor's chat while a command runs (its notices
    /// are its answer); a turn's notices go to the log only.
    fn say_in_command(&self, cx: &ConnectionTo<Client>, text: &str) {
        if self.state().command {
            update(
                cx,
                &self.id,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!("{text}\n"))),
            );
        }
    }

    /// `session/cancel`: stops the running turn at once, as Esc does.
    pub fn cancel(&self) {
        self.interrupter.interrupt();
    }

    /// `session/set_mode`: the person chose `to` in the editor's selector.
    pub fn choose_mode(&self, to: Mode) -> bool {
        self.send_input(Input::ChooseMode(to))
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

pub(super) fn call_update(
    cx: &ConnectionTo<Client>,
    session: &str,
    id: &str,
    fields: ToolCallUpdateFields,
) {
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

/// Applies `change` to the session's options; when they changed, the
/// editor gets them all again.
fn changed(cx: &ConnectionTo<Client>, slot: &Slot, change: impl FnOnce(&mut Current)) {
    if slot.change(change) {
        update(
            cx,
            &slot.id,
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(slot.options())),
        );
    }
}

/// The context in use after a response (its tokens in and out, as the
/// service counted them) against the window, with the run's cost.
pub(super) fn usage(
    cx: &ConnectionTo<Client>,
    session: &str,
    used: u64,
    size: u64,
    cost: Option<f64>,
) {
    let cost = cost.map(|usd| Cost::new(usd, "USD"));
    update(
        cx,
        session,
        SessionUpdate::UsageUpdate(UsageUpdate::new(used, size).cost(cost)),
    );
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
    // What the session's requests cost so far, where every price is known.
    let mut cost = None;
    let mut calls = super::calls::Calls::new(slot.project.clone(), slot.terminal);
    while let Some(event) = events.recv().await {
        let Some(event) = calls.take(&cx, &id, event) else {
            continue;
        };
        match event {
            AgentEvent::Consent(request) => super::question::ask(&cx, &slot, request),
            AgentEvent::AssistantDelta(text) => {
                update(
                    &cx,
                    &id,
                    SessionUpdate::AgentMessageChunk(text_chunk(&text)),
                );
            }
            AgentEvent::TurnEnd { stop, .. } => end_prompt(&slot, &stop),
            AgentEvent::ConfirmMode { to, .. } => {
                // Only the editor's own selector changes the mode here
                // (`choose_mode`); a switch asked any other way is refused.
                slot.send_input(Input::ConfirmMode { to, yes: false });
            }
            AgentEvent::ConfirmRule { .. } => {
                // An editor has no y/N line: nothing is written.
                slot.send_input(Input::ConfirmRule { yes: false });
            }
            AgentEvent::ModeChanged(mode) => {
                update(
                    &cx,
                    &id,
                    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.name())),
                );
                changed(&cx, &slot, |c| c.mode = mode);
            }
            AgentEvent::Session { mode, model, .. } => changed(&cx, &slot, |c| {
                c.mode = mode;
                c.model = model;
            }),
            AgentEvent::ModelNames(names) => changed(&cx, &slot, |c| c.models = names),
            AgentEvent::McpCatalog(catalog) => {
                super::commands::advertise(&cx, &id, &catalog.prompts)
            }
            AgentEvent::Spent { cost_usd, .. } => cost = cost_usd,
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
                context_window,
                ..
            } => {
                // 0: the service did not say; the last figure stands.
                if input_tokens > 0 {
                    usage(&cx, &id, input_tokens + output_tokens, context_window, cost);
                }
            }
            AgentEvent::Error(message) => {
                tracing::warn!(session = %id, "{message}");
                slot.error(message);
            }
            AgentEvent::Warning(line) | AgentEvent::TurnNotice { message: line, .. } => {
                tracing::warn!(session = %id, "{line}");
                slot.say_in_command(&cx, &line);
            }
            AgentEvent::Notice(line) => {
                tracing::info!(session = %id, "{line}");
                slot.say_in_command(&cx, &line);
            }
            AgentEvent::Permissions {
                grants,
                listed: true,
            } => slot.say_in_command(&cx, &crate::frontend::text::permissions(&grants)),
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
            AgentEvent::History(items) => super::replay::replay(&cx, &id, &items),
            AgentEvent::Plan(plan) => send_plan(&cx, &id, &plan),
            AgentEvent::Quit => break,
            AgentEvent::Idle => {
                slot.idle();
                slot.finish_command(&cx, None);
            }
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
            // Handed to `calls` first.
            AgentEvent::ToolCall { .. }
            | AgentEvent::ToolCallRewritten { .. }
            | AgentEvent::Record { .. }
            | AgentEvent::Answered { .. }
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::ToolResult { .. } => {}
            // A denial reaches the editor as the call's failed result.
            AgentEvent::Decision { .. }
            | AgentEvent::FileChanged { .. }
            | AgentEvent::BashChanged { .. }
            | AgentEvent::Prompt(_)
            | AgentEvent::AssistantDone
            | AgentEvent::Retrying { .. }
            | AgentEvent::Sessions { .. }
            | AgentEvent::OtherProject { .. }
            | AgentEvent::Permissions { .. }
            | AgentEvent::Asked { .. } => {}
        }
    }
    // The agent stopped: a prompt still waiting ends as cancelled, and a
    // config change still waiting with the reason.
    end_prompt(&slot, &crate::agent::TurnStop::Interrupted);
    let waiting = std::mem::take(&mut slot.state().waiting);
    for waiter in waiting {
        let _ = waiter.responder.respond_with_error(
            agent_client_protocol::Error::invalid_params()
                .data(PromptError::Stopped(slot.id.clone()).to_string()),
        );
    }
}
