//! Asked agents: `/ask-NAME` and `mino --ask NAME` start the agent NAME as a
//! child `mino acp` with `AGENT_YOLO=false`, so every call it would gate
//! comes back here as an ACP permission request. Each one enters this
//! agent's turn machine as `Event::ExternalCall` with the tool and arguments
//! the child announced, is prepared by this agent's own tools (so its kind,
//! the shell gate and the bypass guard are this agent's), and is decided and
//! remembered there under `NAME/tool`: its mode (or the entry's own
//! `yolo`), its session memory, its front end's question. The child is only
//! ever told "once", so it remembers nothing; its own settings file never
//! decides, and its wording of the request is never read.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, ToolCallContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use crate::config::AskedAgent;
use crate::model::ToolCall;
use crate::policy::{Mode, RunConsent, ToolKey};
use crate::tools::Field;

use super::announce::{announce_answer, announce_decision};
use super::driver::{Runtime, Slot, inspect};
use super::events::AgentEvent;
use super::live::LiveSession;
use super::prepare::{Caller, prepare};
use super::turn::{DecideCx, Effect, Event, Turn};

/// Where mino's own fields travel in a permission request's `_meta`, so an
/// asking mino shows the same fields its own dialog would.
pub const META_KEY: &str = "mino";

/// How long a cancelled asked agent gets to end its turn before it is killed.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

mod told;
pub use told::{AskError, AskedEvent};

/// What the protocol side hands to the loop that decides.
enum FromChild {
    Update(Box<SessionUpdate>),
    Permission(
        Box<(
            RequestPermissionRequest,
            Responder<RequestPermissionResponse>,
        )>,
    ),
}

/// The names of the configured agents, for error messages.
fn known(rt: &Runtime) -> String {
    if rt.agents.is_empty() {
        "none".to_string()
    } else {
        rt.agents.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// The mode that decides the asked agent's calls: the entry's own `yolo`
/// when set, else this session's mode. A session in plan mode holds its
/// asked agents to plan mode too, whatever their `yolo` says: only reads
/// run while the person plans.
pub fn deciding_mode(entry: &AskedAgent, session_mode: Mode) -> Mode {
    if session_mode == Mode::Plan {
        return Mode::Plan;
    }
    match entry.yolo {
        Some(true) => Mode::Bypass,
        Some(false) => Mode::Manual,
        None => session_mode,
    }
}

fn content_text(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One asking: the runtime, the session whose memory answers, the asked
/// agent's name and entry.
struct Asking<'a> {
    rt: &'a Runtime,
    session: &'a mut LiveSession,
    run: &'a mut RunConsent,
    name: &'a str,
    entry: &'a AskedAgent,
    /// The tool and arguments of each call the asked agent announced, by
    /// id: what its permission requests are decided on.
    calls: HashMap<String, (String, String)>,
    /// How much of the answer went out as text. An end that could be the
    /// start of a secret waits for the next piece: a value split across
    /// two pieces is redacted whole, never shown in halves.
    shown: usize,
}

impl Asking<'_> {
    fn emit(&self, event: AskedEvent) {
        self.rt.emit(AgentEvent::Asked {
            agent: self.name.to_string(),
            event,
        });
    }

    /// Sends the answer's text from what went out up to `end` (a
    /// character boundary), redacted on its way.
    fn flush(&mut self, answer: &str, end: usize) {
        if let Some(text) = answer.get(self.shown..end).filter(|t| !t.is_empty()) {
            self.emit(AskedEvent::Text(text.to_string()));
            self.shown = end;
        }
    }

    fn update(&mut self, update: SessionUpdate, answer: &mut String) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = chunk.content {
                    answer.push_str(&t.text);
                    let unsettled = &answer[self.shown.min(answer.len())..];
                    let held = self.rt.tool_cx.secrets.now().unfinished_len(unsettled);
                    self.flush(answer, answer.len() - held);
                }
            }
            SessionUpdate::ToolCall(call) => {
                let call_id = call.tool_call_id.0.to_string();
                if let (Some(tool), Some(input)) = (&call.name, &call.raw_input) {
                    let arguments = match input {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    self.calls
                        .insert(call_id.clone(), (tool.clone(), arguments));
                }
                self.emit(AskedEvent::ToolCall {
                    call_id,
                    title: call.title,
                })
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let status = update.fields.status.map(|s| match s {
                    agent_client_protocol::v1::schema::ToolCallStatus::InProgress => "in_progress",
                    agent_client_protocol::v1::schema::ToolCallStatus::Completed => "completed",
                    agent_client_protocol::v1::schema::ToolCallStatus::Failed => "failed",
                    _ => "pending",
                });
                self.emit(AskedEvent::ToolUpdate {
                    call_id: update.tool_call_id.0.to_string(),
                    status,
                    text: content_text(update.fields.content.as_deref().unwrap_or_default()),
                });
            }
            _ => {}
        }
    }

    /// Decides one of the asked agent's calls: true to allow it once. The
    /// call enters the turn machine as `ExternalCall` with the tool and
    /// arguments the asked agent announced, and is prepared by this agent's
    /// own tools: its facts are this agent's, never the asked agent's words.
    async fn decide(
        &mut self,
        request: &RequestPermissionRequest,
        cancel: &CancellationToken,
    ) -> Result<bool, Interrupted> {
        let call_id = request.tool_call.tool_call_id.0.to_string();
        let Some((tool, arguments)) = self.calls.get(&call_id).cloned() else {
            self.rt.emit(AgentEvent::Warning(format!(
                "agent {}'s call {call_id:?} was refused: it asked about a call it never announced",
                self.name
            )));
            return Ok(false);
        };
        let call = ToolCall {
            id: call_id,
            name: tool,
            arguments,
        };
        let mode = deciding_mode(self.entry, self.session.mode);
        let mut turn = Turn::external();
        let mut slot: Option<Slot> = None;
        let mut queue: VecDeque<Effect> =
            self.feed(&mut turn, Event::ExternalCall(call), mode).into();
        while let Some(effect) = queue.pop_front() {
            let event = match effect {
                Effect::Reply { allow, why, .. } => {
                    if let Some(why) = why {
                        self.rt.emit(AgentEvent::Warning(format!(
                            "agent {}'s call was refused: {why}",
                            self.name
                        )));
                    }
                    return Ok(allow);
                }
                Effect::End(_) => return Err(Interrupted),
                effect => self.perform(effect, &mut slot, mode, cancel).await,
            };
            if let Some(event) = event {
                queue.extend(self.feed(&mut turn, event, mode));
            }
        }
        Ok(false)
    }

    fn feed(&mut self, turn: &mut Turn, event: Event, mode: Mode) -> Vec<Effect> {
        let mut cx = DecideCx {
            mode,
            protected: &self.rt.tool_cx.protected,
            session: &mut self.session.consent,
            run: self.run,
            can_ask: self.rt.can_ask,
        };
        turn.on(event, &mut cx)
    }

    /// Performs one effect of the external turn, as the driver does for
    /// the model's own calls; the held call is never run here.
    async fn perform(
        &mut self,
        effect: Effect,
        slot: &mut Option<Slot>,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> Option<Event> {
        match effect {
            Effect::Prepare(call) => Some(
                match prepare(
                    self.rt,
                    &call,
                    (&self.session.id, mode),
                    Caller::Model,
                    cancel,
                )
                .await
                {
                    Ok((event, prepared, gate, rewritten)) => {
                        // Remembered under the key the asker's own call has
                        // (a private fetch apart from fetch_content), for jan.
                        let key = ToolKey::for_agent(self.name, prepared.facts().tool.as_str());
                        *slot = Some(Slot {
                            call_id: call.id,
                            tool: ToolKey::for_agent(self.name, &call.name).to_string(),
                            key: key.clone(),
                            prepared,
                            lead: std::iter::once(Field::text("Asked agent", self.name))
                                .chain(super::prepare::lead_fields(&event, rewritten.as_ref()))
                                .collect(),
                            gate,
                        });
                        match event {
                            Event::Prepared {
                                call_id,
                                mut facts,
                                inspect,
                            } => {
                                facts.tool = key;
                                Event::Prepared {
                                    call_id,
                                    facts,
                                    inspect,
                                }
                            }
                            other => other,
                        }
                    }
                    Err(event) => event,
                },
            ),
            Effect::AnnounceDecision {
                call_id, decision, ..
            } => {
                let tool = slot.as_ref().map_or_else(String::new, |s| s.tool.clone());
                announce_decision(self.rt, self.session, mode, &call_id, &tool, &decision).await;
                None
            }
            Effect::Inspect { call_id } => Some(match slot.take() {
                Some(held) if held.call_id == call_id => {
                    let (back, event) = inspect(held).await;
                    *slot = back;
                    event
                }
                _ => Event::Internal(format!("no prepared call with id {call_id:?} to inspect")),
            }),
            Effect::Ask { call_id, offer } => Some(match Slot::get(slot, &call_id) {
                Some(held) => super::driver::ask(self.rt, held, offer, cancel).await,
                None => Event::Internal(format!("no prepared call with id {call_id:?} to ask")),
            }),
            Effect::AnnounceAnswer {
                call_id,
                key,
                answer,
                note,
                ..
            } => {
                let gated = Slot::get(slot, &call_id).is_some_and(|s| s.gate.is_some());
                let call = (call_id, key.to_string());
                announce_answer(
                    self.rt,
                    self.session,
                    self.run,
                    gated,
                    call,
                    &key,
                    (answer, note),
                );
                None
            }
            Effect::Record { call_id, shown, .. } => {
                if let Some(held) = Slot::get(slot, &call_id) {
                    self.rt.emit(AgentEvent::Record {
                        call_id,
                        tool: held.tool.clone(),
                        shown,
                        fields: held.fields(&self.rt.tool_cx.secrets.now()),
                    });
                }
                None
            }
            other => Some(Event::Internal(format!(
                "an asked agent's call cannot {other:?}"
            ))),
        }
    }

    /// The asking loop: starts the session, sends the question, and decides
    /// every permission request until the asked agent's turn ends.
    async fn converse(
        &mut self,
        cx: ConnectionTo<Agent>,
        question: String,
        from_child: &mut mpsc::UnboundedReceiver<FromChild>,
        cancel: &CancellationToken,
    ) -> Result<(String, StopReason), agent_client_protocol::Error> {
        cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await?;
        let project = self.rt.tool_cx.project.root().to_path_buf();
        let created = cx
            .send_request(NewSessionRequest::new(project))
            .block_task()
            .await?;
        let session_id = created.session_id;
        let prompt = cx
            .send_request(PromptRequest::new(
                session_id.clone(),
                vec![ContentBlock::from(question)],
            ))
            .block_task();
        tokio::pin!(prompt);
        let mut answer = String::new();
        let mut cancelled = false;
        let grace = tokio::time::sleep(std::time::Duration::MAX / 4);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                biased;
                result = &mut prompt => {
                    while let Ok(FromChild::Update(update)) = from_child.try_recv() {
                        self.update(*update, &mut answer);
                    }
                    return result.map(|r| (answer, r.stop_reason));
                }
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    let _ = cx.send_notification(CancelNotification::new(session_id.clone()));
                    grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                }
                () = &mut grace => return Ok((answer, StopReason::Cancelled)),
                message = from_child.recv() => match message {
                    Some(FromChild::Update(update)) => self.update(*update, &mut answer),
                    Some(FromChild::Permission(asked)) => {
                        let (request, responder) = *asked;
                        let allowed = if cancelled {
                            false
                        } else {
                            match self.decide(&request, cancel).await {
                                Ok(allowed) => allowed,
                                Err(Interrupted) => {
                                    cancelled = true;
                                    let _ = cx.send_notification(CancelNotification::new(session_id.clone()));
                                    grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                                    false
                                }
                            }
                        };
                        let option = if allowed { "allow_once" } else { "reject_once" };
                        let _ = responder.respond(RequestPermissionResponse::new(
                            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option)),
                        ));
                    }
                    None => {}
                },
            }
        }
    }
}

/// The user interrupted while a question was open.
struct Interrupted;

/// The words a stop reason has on the wire.
fn stop_word(stop: StopReason) -> String {
    serde_json::to_value(stop)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "other".to_string())
}

/// Starts the asked agent `name` in this project and asks it `question`.
/// Returns its answer; every step is reported as `AgentEvent::Asked`.
pub async fn ask(
    rt: &Runtime,
    session: &mut LiveSession,
    run: &mut RunConsent,
    name: &str,
    question: String,
    cancel: &CancellationToken,
) -> Result<String, AskError> {
    let Some(entry) = rt.agents.get(name).cloned() else {
        return Err(AskError::Unknown {
            name: name.to_string(),
            known: known(rt),
        });
    };
    if !entry.config.is_file() {
        return Err(AskError::NoConfig {
            name: name.to_string(),
            config: entry.config.clone(),
        });
    }
    let mut child = spawn_child(&entry.config, rt.tool_cx.project.root()).map_err(|source| {
        AskError::Spawn {
            name: name.to_string(),
            source,
        }
    })?;
    let (Some(stdin), Some(stdout), stderr) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(AskError::Protocol {
            name: name.to_string(),
            message: "its standard streams could not be opened".to_string(),
        });
    };
    let said = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(stderr) = stderr {
            let _ = stderr.take(16 * 1024).read_to_string(&mut text).await;
        }
        text
    });
    let (tx, mut from_child) = mpsc::unbounded_channel();
    let updates = tx.clone();
    let mut asking = Asking {
        rt,
        session,
        run,
        name,
        entry: &entry,
        calls: HashMap::new(),
        shown: 0,
    };
    asking.emit(AskedEvent::Started {
        question: question.clone(),
    });
    let outcome = Client
        .v1()
        .name("mino-asking")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let _ = updates.send(FromChild::Update(Box::new(notification.update)));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                // Decided by the asking loop; a loop that has ended drops the
                // responder, which answers with an error (a rejection).
                let _ = tx.send(FromChild::Permission(Box::new((request, responder))));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            ByteStreams::new(stdin.compat_write(), stdout.compat()),
            async |cx| asking.converse(cx, question, &mut from_child, cancel).await,
        )
        .await;
    // The asked agent remembers nothing and outlives nothing.
    let _ = child.start_kill();
    let _ = child.wait().await;
    let stderr = said.await.unwrap_or_default();
    match outcome {
        Ok((answer, stop)) => {
            // What was held back goes out now: nothing more can follow it.
            asking.flush(&answer, answer.len());
            asking.emit(AskedEvent::Ended {
                answer: answer.clone(),
                stop: stop_word(stop),
            });
            Ok(answer)
        }
        Err(e) => {
            let mut message = e.to_string();
            let said = stderr.trim();
            if !said.is_empty() {
                message = format!("{message}; it said: {said}");
            }
            asking.emit(AskedEvent::Ended {
                answer: String::new(),
                stop: format!("error: {message}"),
            });
            Err(AskError::Protocol {
                name: name.to_string(),
                message,
            })
        }
    }
}

/// `mino --settings CONFIG --cd PROJECT acp`, with `AGENT_YOLO=false`.
fn spawn_child(config: &Path, project: &Path) -> std::io::Result<tokio::process::Child> {
    let exe = std::env::current_exe()?;
    tokio::process::Command::new(exe)
        .arg("--settings")
        .arg(config)
        .arg("--cd")
        .arg(project)
        .arg("acp")
        .env(crate::config::AGENT_YOLO, "false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entrys_yolo_decides_instead_of_the_sessions_mode() {
        let entry = |yolo| AskedAgent {
            config: std::path::PathBuf::from("/x.toml"),
            yolo,
        };
        assert_eq!(deciding_mode(&entry(None), Mode::Auto), Mode::Auto);
        assert_eq!(
            deciding_mode(&entry(Some(true)), Mode::Manual),
            Mode::Bypass
        );
        assert_eq!(
            deciding_mode(&entry(Some(false)), Mode::Bypass),
            Mode::Manual
        );
        // Plan mode is never loosened by an entry.
        for yolo in [None, Some(true), Some(false)] {
            assert_eq!(deciding_mode(&entry(yolo), Mode::Plan), Mode::Plan);
        }
    }
}
