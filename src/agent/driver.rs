//! Performs one turn's effects: compacts, streams requests, saves records,
//! prepares, inspects, asks and runs calls, and feeds the outcomes back into
//! the pure `Turn`. It holds one prepared call, checked by id against every
//! effect on it. The turn's cancellation token (Esc, Ctrl-C) stops the
//! stream or the running tool at once, through child tokens. Never decides.

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

use crate::mcp::McpHub;
use crate::model::{Item, RequestKind};
use crate::policy::RunConsent;
use crate::session::LogEntry;

use super::announce::{announce_answer, announce_decision};
use super::compact::CompactError;
use super::events::{AgentEvent, NoticeKind};
use super::held::run_call;
pub(super) use super::held::{Slot, ask, inspect};
use super::live::LiveSession;
use super::prepare::{Caller, prepare};
use super::request::Fit;
pub use super::runtime::Runtime;
use super::turn::{DecideCx, Effect, Event, Turn, TurnStop};

/// Runs one turn for `prompt` and returns why it ended. The turn-end event
/// is emitted exactly once, before returning. Cancelling `cancel` interrupts
/// the turn. Its `@` mentions are attached only when `attach` (the person
/// wrote them; an MCP server's prompt text attaches nothing).
pub async fn run_turn(
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
    (prompt, attach): (String, bool),
    cancel: &CancellationToken,
) -> TurnStop {
    rt.emit(AgentEvent::Prompt(prompt.clone()));
    let prompt_text = prompt.clone();
    // A UserPromptSubmit hook may keep the prompt from the model.
    let prompt = match super::hooks::turn::prompt(rt, session, prompt).await {
        Ok(prompt) => prompt,
        Err(reason) => {
            let stop = TurnStop::PromptBlocked(reason);
            end(rt, session, &Turn::new(rt.limits), &stop);
            return stop;
        }
    };
    super::checkpoints::turn(rt, session, &prompt).await;
    let first = match session.save(Item::User { text: prompt }).await {
        Ok(()) => Event::Begin,
        Err(e) => Event::SaveFailed(e.to_string()),
    };
    let turn = new_turn(rt, session, attach.then_some(prompt_text.as_str()), cancel).await;
    let mut driver = Driver {
        rt,
        session,
        run,
        cancel,
        turn,
        slot: None,
        hooked: None,
        rewritten: None,
    };
    let stop = driver.drive(first).await;
    end(rt, driver.session, &driver.turn, &stop);
    if !matches!(stop, TurnStop::Interrupted) {
        let fields = serde_json::Map::from_iter([("stop_hook_active".into(), false.into())]);
        super::hooks::turn::tell(
            rt,
            driver.session,
            crate::config::HookEvent::Stop,
            None,
            fields,
        );
    }
    stop
}

/// Runs the person's own `!command` through the turn machine as the one
/// bash call of a turn of its own: prepared, decided (the person typed it:
/// it runs unasked), checkpointed and run in the sandbox like the model's,
/// its result saved as what they ran and saw. Emits one `TurnEnd`.
pub async fn run_person_shell(
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
    command: String,
    cancel: &CancellationToken,
) -> TurnStop {
    rt.emit(AgentEvent::Prompt(format!("!{command}")));
    let call = crate::model::ToolCall {
        id: format!("user-shell-{}", session.history.len()),
        name: super::user_shell::SHOWN_AS.into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    };
    let mut driver = Driver {
        rt,
        session,
        run,
        cancel,
        turn: Turn::person(),
        slot: None,
        hooked: None,
        rewritten: None,
    };
    let stop = driver.drive(Event::PersonShell { call, command }).await;
    end(rt, driver.session, &driver.turn, &stop);
    stop
}

/// The turn for `prompt`: the tools it offers (once the MCP servers
/// started, so theirs are among them), and the calls its `@` mentions make
/// in place of the first response.
async fn new_turn(
    rt: &Runtime,
    session: &LiveSession,
    prompt: Option<&str>,
    cancel: &CancellationToken,
) -> Turn {
    if let Some(hub) = &rt.mcp {
        tokio::select! {
            _ = hub.ready() => {}
            _ = cancel.cancelled() => {}
        }
    }
    let servers = rt
        .mcp
        .as_ref()
        .map(McpHub::server_names)
        .unwrap_or_default();
    let tools = super::request::offered(rt, &super::turn::Offer::All)
        .into_iter()
        .map(|s| s.name.into_owned())
        .collect();
    Turn::new(rt.limits).with_tools(tools).attaching(
        prompt.and_then(|prompt| super::attach::response(prompt, session.history.len(), &servers)),
    )
}

/// Performs one turn's effects and feeds their outcomes back into the
/// turn, until it ends. Holds the one prepared call, and the call a
/// PostToolUse hook is told about.
struct Driver<'a> {
    rt: &'a Runtime,
    session: &'a mut LiveSession,
    run: &'a mut RunConsent,
    cancel: &'a CancellationToken,
    turn: Turn,
    slot: Option<Slot>,
    hooked: Option<super::hooks::ToolUse>,
    /// The held call's id and the line telling the model a hook changed
    /// its input.
    rewritten: Option<(String, String)>,
}

impl Driver<'_> {
    /// Feeds `first`, then performs every effect in order.
    async fn drive(&mut self, first: Event) -> TurnStop {
        let mut queue: VecDeque<Effect> = self.feed(first).into();
        loop {
            let Some(effect) = queue.pop_front() else {
                // The machine promises an effect that answers, or an end.
                return TurnStop::Internal(format!(
                    "the turn stopped without an end while {}",
                    self.turn.phase().name()
                ));
            };
            if let Effect::End(stop) = effect {
                return stop;
            }
            if let Some(event) = self.perform(effect).await {
                queue.extend(self.feed(event));
            }
        }
    }

    fn feed(&mut self, event: Event) -> Vec<Effect> {
        feed(&mut self.turn, event, self.rt, self.session, self.run)
    }

    /// Performs one effect; the event it answers with, if it answers.
    async fn perform(&mut self, effect: Effect) -> Option<Event> {
        let (rt, cancel) = (self.rt, self.cancel);
        match effect {
            Effect::End(stop) => Some(Event::Internal(format!(
                "the turn's end ({}) was performed as an effect",
                stop.as_str()
            ))),
            Effect::Compact => Some(compact(rt, self.session, cancel).await),
            Effect::CompactToRetry => {
                rt.emit(AgentEvent::TurnNotice {
                    kind: NoticeKind::Compaction,
                    message: "The service says the request is larger than the model's context; compacting and trying once more.".to_string(),
                });
                Some(compact(rt, self.session, cancel).await)
            }
            Effect::Request { first, offer } => {
                let kind = if first {
                    RequestKind::TurnFirst
                } else {
                    RequestKind::TurnNext
                };
                Some(super::request::request(rt, self.session, kind, &offer, cancel).await)
            }
            Effect::Remind { tool } => {
                rt.emit(AgentEvent::TurnNotice {
                    kind: NoticeKind::Reminder,
                    message: super::turn::text_call_notice(&tool),
                });
                None
            }
            Effect::Answer(text) => {
                rt.emit(AgentEvent::AssistantDelta(text));
                rt.emit(AgentEvent::AssistantDone);
                None
            }
            Effect::SaveResponse(item) => Some(save(self.session, item).await),
            Effect::SaveResult {
                call_id,
                tool,
                status,
                output,
            } => Some(self.save_result(call_id, tool, status, output).await),
            Effect::SaveFitted {
                call_id,
                tool,
                status,
                output,
            } => Some(self.save_fitted(call_id, tool, status, output).await),
            Effect::SaveRefusals {
                bound,
                calls,
                output,
            } => Some(save_refusals(rt, self.session, bound, calls, output).await),
            Effect::SaveFullOutput { call_id, output } => {
                let entry = LogEntry::FullOutput { call_id, output };
                Some(match self.session.append_entry(entry).await {
                    Ok(()) => Event::Saved,
                    Err(e) => Event::SaveFailed(e.to_string()),
                })
            }
            Effect::SaveShellResult {
                call_id,
                command,
                status,
                output,
            } => Some(
                self.save_shell_result(call_id, command, status, output)
                    .await,
            ),
            Effect::AnnounceCall(call) => {
                rt.emit(AgentEvent::ToolCall {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
                None
            }
            Effect::Prepare(call) => Some(self.prepare(call).await),
            Effect::AnnounceDecision {
                call_id,
                tool,
                decision,
            } => {
                let mode = self.session.mode;
                announce_decision(rt, self.session, mode, &call_id, &tool, &decision).await;
                None
            }
            Effect::Inspect { call_id } => Some(self.inspect(call_id).await),
            Effect::Ask { call_id, offer } => Some(self.ask(call_id, offer).await),
            Effect::AnnounceAnswer {
                call_id,
                tool,
                key,
                answer,
                note,
            } => {
                let gated = Slot::get(&self.slot, &call_id).is_some_and(|s| s.gate.is_some());
                let who = (call_id, tool);
                announce_answer(rt, self.session, self.run, gated, who, &key, (answer, note));
                None
            }
            Effect::Record {
                call_id,
                tool,
                shown,
            } => {
                let secrets = rt.tool_cx.secrets.get().await;
                let fields = Slot::get(&self.slot, &call_id)
                    .map_or_else(Vec::new, |held| held.fields(&secrets));
                rt.emit(AgentEvent::Record {
                    call_id,
                    tool,
                    shown,
                    fields,
                });
                None
            }
            Effect::Run { call_id } => Some(match self.slot.take() {
                Some(held) if held.call_id == call_id => {
                    run_call(rt, self.session, held, cancel).await
                }
                _ => Event::Internal(format!("no prepared call with id {call_id:?} to run")),
            }),
            Effect::Reply { call_id, .. } => Some(Event::Internal(format!(
                "a reply to call {call_id:?} in a turn of the model's own"
            ))),
        }
    }

    /// Redacts, tells the PostToolUse hooks, fits and saves a call's
    /// result, then shows it.
    async fn save_result(
        &mut self,
        call_id: String,
        tool: String,
        status: crate::model::ResultStatus,
        output: String,
    ) -> Event {
        let rt = self.rt;
        self.release(&call_id);
        // Every secret mino holds leaves a tool result here, before the
        // result is saved, shown or sent.
        let output = match self.rewritten.take_if(|(id, _)| *id == call_id) {
            Some((_, note)) => format!("{note}{output}"),
            None => output,
        };
        let output = rt.tool_cx.secrets.redact_result(&output).await;
        let output = match &rt.mcp {
            Some(hub) => hub.hide_tokens(&output),
            None => output,
        };
        let told = self.hooked.take_if(|c| c.call_id == call_id);
        let output = match told {
            Some(call) if status == crate::model::ResultStatus::Completed => {
                super::hooks::turn::result(rt, self.session, &call, output).await
            }
            _ => output,
        };
        match super::request::fit_result(rt, self.session, &tool, output) {
            Fit::Whole(output) => self.save_fitted(call_id, tool, status, output).await,
            Fit::Cut { full, cut } => Event::ResultCut {
                call_id,
                tool,
                status,
                full,
                cut,
            },
        }
    }

    /// Lets go of the held call once its result is being saved.
    fn release(&mut self, call_id: &str) {
        if self.slot.as_ref().is_some_and(|s| s.call_id == call_id) {
            self.slot = None;
        }
    }

    /// Saves a result that is redacted, told and fitted, then shows it.
    async fn save_fitted(
        &mut self,
        call_id: String,
        tool: String,
        status: crate::model::ResultStatus,
        output: String,
    ) -> Event {
        let item = Item::ToolResult {
            call_id: call_id.clone(),
            status,
            output: output.clone(),
        };
        let event = save(self.session, item).await;
        if matches!(event, Event::Saved) {
            self.rt.emit(AgentEvent::ToolResult {
                call_id,
                tool,
                status,
                output,
            });
        }
        event
    }

    /// Saves what the person's own command printed as what they ran and
    /// saw (redacted, like any result), and shows it.
    async fn save_shell_result(
        &mut self,
        call_id: String,
        command: String,
        status: crate::model::ResultStatus,
        output: String,
    ) -> Event {
        self.release(&call_id);
        let output = self.rt.tool_cx.secrets.redact_result(&output).await;
        let text = super::user_shell::history_text(&command, status, &output);
        let event = save(self.session, Item::User { text }).await;
        if matches!(event, Event::Saved) {
            self.rt.emit(AgentEvent::ToolResult {
                call_id,
                tool: super::user_shell::SHOWN_AS.into(),
                status,
                output,
            });
        }
        event
    }

    /// Prepares `call` and holds it.
    async fn prepare(&mut self, call: crate::model::ToolCall) -> Event {
        let rt = self.rt;
        let mode = self.session.mode;
        let caller = if self.turn.is_persons() {
            Caller::Person
        } else {
            Caller::Model
        };
        match prepare(rt, &call, (&self.session.id, mode), caller, self.cancel).await {
            Ok((event, prepared, gate, rewritten)) => {
                let arguments = rewritten.as_ref().map(|r| &r.arguments);
                self.hooked = match caller {
                    Caller::Model => {
                        super::hooks::turn::remember(rt, &call, arguments, prepared.facts())
                    }
                    Caller::Person => None,
                };
                self.rewritten = rewritten.as_ref().map(|r| (call.id.clone(), r.note()));
                if let Some(r) = &rewritten {
                    // A hook's words: redacted before they are shown.
                    let arguments = rt.tool_cx.secrets.redact(&r.arguments.to_string()).await;
                    rt.emit(AgentEvent::ToolCallRewritten {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        arguments,
                    });
                }
                self.slot = Some(Slot {
                    call_id: call.id,
                    key: prepared.facts().tool.clone(),
                    tool: call.name,
                    prepared,
                    lead: super::prepare::lead_fields(&event, rewritten.as_ref()),
                    gate,
                });
                event
            }
            Err(event) => event,
        }
    }

    /// Inspects the held call `call_id`.
    async fn inspect(&mut self, call_id: String) -> Event {
        match self.slot.take() {
            Some(held) if held.call_id == call_id => {
                let (back, event) = inspect(held).await;
                self.slot = back;
                event
            }
            other => {
                self.slot = other;
                Event::Internal(format!("no prepared call with id {call_id:?} to inspect"))
            }
        }
    }

    /// Puts the held call `call_id` to the user, unless a
    /// PermissionRequest hook answers for them.
    async fn ask(&mut self, call_id: String, offer: crate::policy::Offer) -> Event {
        if Slot::get(&self.slot, &call_id).is_none() {
            return Event::Internal(format!("no prepared call with id {call_id:?} to ask"));
        }
        let hooked = self.hooked.as_ref().filter(|c| c.call_id == call_id);
        let answered = super::hooks::turn::permission(self.rt, self.session, hooked);
        // An interrupt does not wait for the hook: the call is not run.
        let answered = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Event::Interrupted { partial: None },
            answered = answered => answered,
        };
        if let Some(event) = answered {
            return event;
        }
        match Slot::get(&self.slot, &call_id) {
            Some(held) => {
                super::hooks::turn::notify(self.rt, self.session, held.key.as_str());
                ask(self.rt, held, offer, self.cancel).await
            }
            None => Event::Internal(format!("no prepared call with id {call_id:?} to ask")),
        }
    }
}

/// Says why the turn ended: the log, a line for the user, and the one
/// `TurnEnd`.
fn end(rt: &Runtime, session: &LiveSession, turn: &Turn, stop: &TurnStop) {
    tracing::info!(
        session = %session.id,
        requests = turn.requests(),
        tool_calls = turn.tool_calls(),
        stop = stop.as_str(),
        "turn ended"
    );
    if let Some(message) = stop.message() {
        match stop {
            TurnStop::Interrupted | TurnStop::Repeated(_) | TurnStop::TextCallRepeated(_) => {
                rt.emit(AgentEvent::Notice(message))
            }
            TurnStop::Length => rt.emit(AgentEvent::TurnNotice {
                kind: NoticeKind::CutOff,
                message,
            }),
            _ => rt.emit(AgentEvent::Error(message)),
        }
    }
    rt.emit(AgentEvent::TurnEnd {
        requests: turn.requests(),
        tool_calls: turn.tool_calls(),
        stop: stop.clone(),
    });
}

fn feed(
    turn: &mut Turn,
    event: Event,
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
) -> Vec<Effect> {
    let mut cx = DecideCx {
        mode: session.mode,
        protected: &rt.tool_cx.protected,
        session: &mut session.consent,
        run,
        can_ask: rt.can_ask,
    };
    turn.on(event, &mut cx)
}

async fn compact(rt: &Runtime, session: &mut LiveSession, cancel: &CancellationToken) -> Event {
    match super::compact::compact_if_needed(rt, session, cancel).await {
        Ok(()) => Event::Compacted,
        Err(CompactError::Interrupted) => Event::Interrupted { partial: None },
        Err(CompactError::Failed(e)) => {
            rt.emit(AgentEvent::Warning(e));
            Event::Compacted
        }
    }
}

/// Saves a `not_run` result of `output` for each of `calls` (past the
/// bound on calls) in one batch, and says so in one line.
async fn save_refusals(
    rt: &Runtime,
    session: &mut LiveSession,
    bound: usize,
    calls: Vec<crate::model::ToolCall>,
    output: String,
) -> Event {
    let message = super::turn::past_bound_notice(bound, &calls);
    let items = calls
        .into_iter()
        .map(|call| Item::ToolResult {
            call_id: call.id,
            status: crate::model::ResultStatus::NotRun,
            output: output.clone(),
        })
        .collect();
    match session.save_all(items).await {
        Ok(()) => {
            rt.emit(AgentEvent::TurnNotice {
                kind: NoticeKind::CallsRefused,
                message,
            });
            Event::Saved
        }
        Err(e) => Event::SaveFailed(e.to_string()),
    }
}

async fn save(session: &mut LiveSession, item: Item) -> Event {
    match session.save(item).await {
        Ok(()) => Event::Saved,
        Err(e) => Event::SaveFailed(e.to_string()),
    }
}
