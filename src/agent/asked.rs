//! Asked agents: `/ask-NAME` and `mino --ask NAME` start the agent NAME as a
//! child `mino acp` with `AGENT_YOLO=false`, so every call it would gate
//! comes back here as an ACP permission request. Each one is decided by
//! this agent: its mode (or the entry's own `yolo`), its session memory
//! under `NAME/tool`, its front end's question. The child is only ever told
//! "once", so it remembers nothing; its own settings file never decides.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, ToolCallContent,
    ToolKind,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use crate::config::AskedAgent;
use crate::policy::{
    CallFacts, CallKind, ConsentAnswer, Decision, Mode, RunConsent, Shown, ToolKey, decide,
    remember,
};
use crate::tools::Field;

use super::driver::Runtime;
use super::events::{AgentEvent, ConsentRequest, DecisionView};
use super::gate_step::gate;
use super::live::LiveSession;

/// Where mino's own fields travel in a permission request's `_meta`, so an
/// asking mino shows the same fields its own dialog would.
pub const META_KEY: &str = "mino";

/// How long a cancelled asked agent gets to end its turn before it is killed.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What an asked agent did, for the front ends to show as a nested block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskedEvent {
    Started {
        question: String,
    },
    Text(String),
    ToolCall {
        call_id: String,
        title: String,
    },
    ToolUpdate {
        call_id: String,
        /// `in_progress`, `completed` or `failed`, when the update says.
        status: Option<&'static str>,
        text: String,
    },
    /// The asked agent's turn ended: `stop` is `end_turn`, `cancelled`, ...
    Ended {
        answer: String,
        stop: String,
    },
}

/// Why asking failed; each names the agent and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("no asked agent named {name:?}; configured in [agents]: {known}")]
    Unknown { name: String, known: String },
    #[error("the settings file of agent {name}, {}, does not exist", config.display())]
    NoConfig { name: String, config: PathBuf },
    #[error("agent {name} could not be started: {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("agent {name} failed: {message}")]
    Protocol { name: String, message: String },
}

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
/// when set, else this session's mode.
pub fn deciding_mode(entry: &AskedAgent, session_mode: Mode) -> Mode {
    match entry.yolo {
        Some(true) => Mode::Bypass,
        Some(false) => Mode::Manual,
        None => session_mode,
    }
}

/// What kind of call an asked agent's tool kind is, for the mode table.
/// Anything but a command, an edit or a fetch is treated like an MCP call:
/// it runs unasked in bypass only.
pub fn call_kind(name: &str, kind: ToolKind) -> CallKind {
    match kind {
        ToolKind::Execute => CallKind::Shell,
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move => CallKind::FileWrite,
        ToolKind::Fetch => CallKind::Fetch,
        _ => CallKind::Mcp {
            server: name.to_string(),
            trust_ask: false,
        },
    }
}

/// The tool name, kind and fields of a permission request.
fn request_facts(
    name: &str,
    request: &RequestPermissionRequest,
) -> (ToolKey, CallKind, Vec<Field>) {
    let call = &request.tool_call;
    let tool = call
        .fields
        .name
        .clone()
        .or_else(|| call.fields.title.clone())
        .unwrap_or_else(|| "tool".to_string());
    let kind = call_kind(name, call.fields.kind.unwrap_or_default());
    let mut fields = vec![Field::text("Asked agent", name)];
    let carried = call
        .meta
        .as_ref()
        .and_then(|meta| meta.get(META_KEY))
        .and_then(|mino| mino.get("fields"))
        .and_then(|f| serde_json::from_value::<Vec<Field>>(f.clone()).ok());
    match carried {
        Some(carried) => fields.extend(carried),
        None => {
            let text = content_text(call.fields.content.as_deref().unwrap_or_default());
            if !text.is_empty() {
                fields.push(Field::text("Request", text));
            }
        }
    }
    (ToolKey::for_agent(name, &tool), kind, fields)
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
}

impl Asking<'_> {
    fn emit(&self, event: AskedEvent) {
        self.rt.emit(AgentEvent::Asked {
            agent: self.name.to_string(),
            event,
        });
    }

    fn update(&self, update: SessionUpdate, answer: &mut String) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = chunk.content {
                    answer.push_str(&t.text);
                    self.emit(AskedEvent::Text(t.text));
                }
            }
            SessionUpdate::ToolCall(call) => self.emit(AskedEvent::ToolCall {
                call_id: call.tool_call_id.0.to_string(),
                title: call.title,
            }),
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

    /// Decides one of the asked agent's calls: true to allow it once.
    async fn decide(
        &mut self,
        request: &RequestPermissionRequest,
        cancel: &CancellationToken,
    ) -> Result<bool, Interrupted> {
        let (key, kind, mut fields) = request_facts(self.name, request);
        let call_id = request.tool_call.tool_call_id.0.to_string();
        let mode = deciding_mode(self.entry, self.session.mode);
        let mut facts = CallFacts::new(key.clone(), kind);
        if facts.kind == CallKind::Shell {
            // The asked agent's command meets the same shell gate and bypass
            // guard as the asker's own: the exact command line its request
            // carries. A command that cannot be read is guarded, so bypass
            // still asks.
            facts.command = fields
                .iter()
                .find(|f| f.label == "Command")
                .map(|f| f.value.clone());
            if facts.command.is_none() {
                facts.guard = Some("the asked agent's command could not be read".into());
            }
            match gate(self.rt, &mut facts, None, mode, cancel).await {
                None => return Err(Interrupted),
                Some(Some(field)) => fields.push(field),
                Some(None) => {}
            }
        }
        let decision = decide(
            &facts,
            mode,
            &self.rt.tool_cx.protected,
            &self.session.consent,
            self.run,
            self.rt.can_ask,
        );
        let view = DecisionView::of(&decision);
        tracing::info!(session = %self.session.id, call = %call_id, tool = %key, %mode, decision = view.decision, "asked agent's call decided");
        if let Some(audit) = &self.rt.audit
            && let Err(e) = audit
                .decision(&self.session.id, &call_id, key.as_str(), mode, &view)
                .await
        {
            self.rt.emit(AgentEvent::Warning(e.to_string()));
        }
        self.rt.emit(AgentEvent::Decision {
            call_id: call_id.clone(),
            tool: key.to_string(),
            view,
        });
        match decision {
            Decision::Allow { shown } => {
                if shown != Shown::Quietly {
                    self.rt.emit(AgentEvent::Record {
                        call_id,
                        tool: key.to_string(),
                        shown,
                        fields,
                    });
                }
                Ok(true)
            }
            Decision::Deny { .. } => Ok(false),
            Decision::Ask => {
                let (reply, answer) = oneshot::channel();
                self.rt.emit(AgentEvent::Consent(ConsentRequest {
                    call_id: call_id.clone(),
                    tool: key.clone(),
                    fields,
                    reply,
                }));
                let answer = tokio::select! {
                    () = cancel.cancelled() => return Err(Interrupted),
                    answer = answer => answer.map_or(ConsentAnswer::Reject, |reply| reply.answer),
                };
                remember(answer, &key, &mut self.session.consent, self.run);
                self.rt.emit(AgentEvent::Answered {
                    call_id,
                    tool: key.to_string(),
                    answer,
                    line: answer.describe(&key),
                });
                if !matches!(answer, ConsentAnswer::AllowOnce | ConsentAnswer::Reject) {
                    self.rt.emit(AgentEvent::Permissions {
                        grants: crate::policy::grants(&self.session.consent, self.run),
                        listed: false,
                    });
                }
                Ok(answer.allows())
            }
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
            config: PathBuf::from("/x.toml"),
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
    }

    #[test]
    fn unknown_kinds_ask_like_mcp_calls() {
        assert_eq!(call_kind("jan", ToolKind::Execute), CallKind::Shell);
        assert_eq!(call_kind("jan", ToolKind::Edit), CallKind::FileWrite);
        assert!(matches!(
            call_kind("jan", ToolKind::Read),
            CallKind::Mcp { .. }
        ));
    }
}
