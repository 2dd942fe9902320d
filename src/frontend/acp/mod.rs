//! `mino acp`: the Agent Client Protocol over stdio, so an editor drives
//! mino. Each editor session is one agent of its own, started for the
//! session's directory; this front end talks to it only through its events
//! and its consent port, exactly as the TUI and the line mode do. Nothing
//! but protocol messages is ever written to stdout (logs go to the log
//! file), and this front end never decides a call.

mod auth;
mod calls;
mod commands;
mod config;
mod files;
mod manage;
mod prompt;
mod question;
mod replay;
mod rewind;
mod session;
mod terminal;
pub mod wire;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, CancelNotification, CloseSessionRequest,
    DeleteSessionRequest, FileSystemCapabilities, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionConfigOption,
    SessionDeleteCapabilities, SessionListCapabilities, SessionModeState,
    SessionResumeCapabilities, SetSessionConfigOptionRequest, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::agent::AgentEvent;
use crate::agent::build::{Launch, launch};
use crate::agent::instructions_seen::Shown;
use crate::config::{CliOverrides, EnvOverrides, Settings};
use crate::home::Home;
use crate::policy::{CanAsk, Mode};

use session::Slot;

/// A session as `session/new`, `session/load` and `session/resume` answer
/// with it.
struct Opened {
    id: String,
    modes: SessionModeState,
    options: Vec<SessionConfigOption>,
}

/// What the agent said as it started, before anything else could arrive.
#[derive(Default)]
struct Started {
    session: Option<(String, Mode, String)>,
    models: Vec<String>,
    history: std::sync::Arc<Vec<crate::model::Item>>,
    plan: Option<crate::session::Plan>,
    /// Its context use (a resumed session's estimate) and window.
    usage: Option<(u64, u64)>,
    /// The MCP servers' prompts, when they were listed already.
    prompts: Vec<crate::mcp::catalog::PromptEntry>,
}

/// What every handler shares: how to start an agent, and the sessions.
struct Server {
    home: Home,
    /// The user's settings file (the home's, or `--settings`).
    user_file: PathBuf,
    env: EnvOverrides,
    cli: CliOverrides,
    sessions: Mutex<HashMap<String, Arc<Slot>>>,
    /// What the client said at `initialize` about serving its files.
    fs: Mutex<FileSystemCapabilities>,
    /// The client draws a terminal from mino's output (`terminal.rs`).
    terminal: std::sync::atomic::AtomicBool,
}

fn invalid(message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(message.into())
}

impl Server {
    fn slot(&self, id: &str) -> Result<Arc<Slot>, agent_client_protocol::Error> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "unknown session {id:?}; start one with session/new"
                ))
            })
    }

    /// Starts an agent for `cwd` (resuming `resume`), replays a resumed
    /// session's history to the client when `replay` (`session/load`; a
    /// `session/resume` continues without it), and starts the session's
    /// pump. A model service whose key variable is unset is refused as
    /// `auth_required`, naming the variable.
    async fn open(
        &self,
        cwd: &Path,
        resume: Option<&str>,
        replay: bool,
        cx: &ConnectionTo<Client>,
    ) -> Result<Opened, agent_client_protocol::Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd {} is not an absolute path; the session's directory must be one",
                cwd.display()
            )));
        }
        let settings =
            Settings::load_with_user_file(&self.home, &self.user_file, cwd, &self.env, &self.cli)
                .map_err(|e| invalid(e.to_string()))?;
        auth::check(&settings.model, &self.user_file)
            .map_err(|e| agent_client_protocol::Error::auth_required().data(e.to_string()))?;
        // A session open here holds its file: it is stopped before the
        // new agent opens it again.
        if let Some(id) = resume {
            self.stop_one(id).await;
        }
        let session_id = Arc::new(OnceLock::new());
        let mut handle = self
            .launch(&settings, cwd, resume, cx, Arc::clone(&session_id))
            .await?;
        // The agent says its banner (and a resumed session's history) as it
        // starts; read those before anything else can arrive.
        let mut started = Started::default();
        while let Ok(event) = handle.events.try_recv() {
            started.take(event);
        }
        let Some((id, mode, model)) = started.session else {
            return Err(agent_client_protocol::Error::internal_error()
                .data("the agent started without a session".to_string()));
        };
        let _ = session_id.set(id.clone());
        let current = config::Current {
            mode,
            model,
            models: started.models,
            bash: handle.confinement.clone(),
        };
        if replay {
            replay::replay(cx, &id, &started.history);
        }
        // Shared with the agent, which would copy it at its next write.
        drop(started.history);
        if let Some(plan) = started.plan {
            session::send_plan(cx, &id, &plan);
        }
        let reader = prompt::PromptReader {
            root: cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
            protected: Arc::new(settings.protected()),
            secrets: handle.secrets.clone(),
            limit: settings.limits.prompt_bytes,
        };
        let slot = Arc::new(
            Slot::new(
                id.clone(),
                cwd.to_path_buf(),
                reader,
                handle.inputs,
                handle.interrupter,
                handle.task,
                current.clone(),
            )
            .with_terminal(self.terminal.load(std::sync::atomic::Ordering::Relaxed)),
        );
        self.stop_one(&id).await;
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), slot.clone());
        commands::advertise(cx, &id, &started.prompts);
        if let Some((used, size)) = started.usage {
            session::usage(cx, &id, used, size, None);
        }
        tokio::spawn(session::pump(slot, handle.events, cx.clone()));
        Ok(Opened {
            id,
            modes: wire::modes(current.mode, &current.bash),
            options: config::options(&current),
        })
    }

    /// Starts the agent of a session in `cwd` (resuming `resume`), with
    /// the editor's files when it offers them.
    async fn launch(
        &self,
        settings: &Settings,
        cwd: &Path,
        resume: Option<&str>,
        cx: &ConnectionTo<Client>,
        session_id: Arc<OnceLock<String>>,
    ) -> Result<crate::agent::AgentHandle, agent_client_protocol::Error> {
        let fs = self
            .fs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let editor = files::AcpFiles::offered(cx, &fs, session_id)
            .map(|files| Arc::new(files) as Arc<dyn crate::tools::editor::EditorFiles>);
        launch(Launch {
            home: &self.home,
            settings,
            project_dir: cwd,
            can_ask: CanAsk::Yes,
            resume,
            editor,
            defer_mcp: false,
            // The client logs notices; no person is known to read them.
            notices: Shown::ToNobody,
            never: Vec::new(),
        })
        .await
        .map_err(|e| invalid(e.to_string()))
    }

    /// Stops the agent of session `id` when it is open here; false when it
    /// is not.
    async fn stop_one(&self, id: &str) -> bool {
        let open = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        match open {
            Some(open) => {
                open.stop().await;
                true
            }
            None => false,
        }
    }

    /// Stops every session's agent: a turn still running is interrupted,
    /// and a question still open is rejected.
    async fn stop_all(&self) {
        let slots: Vec<Arc<Slot>> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, slot)| slot)
            .collect();
        for slot in slots {
            slot.stop().await;
        }
    }
}

impl Started {
    fn take(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::Session {
                id, mode, model, ..
            } => self.session = Some((id, mode, model)),
            AgentEvent::ModelNames(names) => self.models = names,
            AgentEvent::McpCatalog(catalog) => self.prompts = catalog.prompts.clone(),
            AgentEvent::History(items) => self.history = items,
            AgentEvent::Plan(steps) => self.plan = Some(steps),
            AgentEvent::Usage {
                input_tokens,
                context_window,
                ..
            } => self.usage = Some((input_tokens, context_window)),
            AgentEvent::Warning(line) | AgentEvent::Notice(line) | AgentEvent::Error(line) => {
                tracing::info!("{line}")
            }
            _ => {}
        }
    }
}

/// Serves one client on stdin and stdout until it closes its end. Returns
/// the exit status.
pub async fn serve(home: Home, user_file: PathBuf, env: EnvOverrides, cli: CliOverrides) -> i32 {
    let server = Arc::new(Server {
        home,
        user_file,
        env,
        cli,
        sessions: Mutex::new(HashMap::new()),
        fs: Mutex::new(FileSystemCapabilities::default()),
        terminal: std::sync::atomic::AtomicBool::new(false),
    });
    let transport = ByteStreams::new(
        tokio::io::stdout().compat_write(),
        tokio::io::stdin().compat(),
    );
    let result = Agent
        .v1()
        .name("mino")
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: InitializeRequest, responder, _cx| {
                    *server.fs.lock().unwrap_or_else(PoisonError::into_inner) =
                        request.client_capabilities.fs.clone();
                    server.terminal.store(
                        terminal::offered(request.client_capabilities.meta.as_ref()),
                        std::sync::atomic::Ordering::Relaxed,
                    );
                    let version = request.protocol_version.min(ProtocolVersion::V1);
                    let sessions = SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .delete(SessionDeleteCapabilities::new())
                        .resume(SessionResumeCapabilities::new())
                        .close(SessionCloseCapabilities::new());
                    let variable = server.key_variable();
                    responder.respond(
                        InitializeResponse::new(version)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .load_session(true)
                                    .session_capabilities(sessions),
                            )
                            .auth_methods(auth::methods(variable.as_deref()))
                            .agent_info(Implementation::new("mino", env!("CARGO_PKG_VERSION"))),
                    )
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: NewSessionRequest, responder, cx| match server
                    .open(&request.cwd, None, false, &cx)
                    .await
                {
                    Ok(opened) => responder.respond(
                        NewSessionResponse::new(opened.id)
                            .modes(opened.modes)
                            .config_options(opened.options),
                    ),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: LoadSessionRequest, responder, cx| match server
                    .open(&request.cwd, Some(&request.session_id.0), true, &cx)
                    .await
                {
                    Ok(opened) => responder.respond(
                        LoadSessionResponse::new()
                            .modes(opened.modes)
                            .config_options(opened.options),
                    ),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: ResumeSessionRequest, responder, cx| match server
                    .open(&request.cwd, Some(&request.session_id.0), false, &cx)
                    .await
                {
                    Ok(opened) => responder.respond(
                        ResumeSessionResponse::new()
                            .modes(opened.modes)
                            .config_options(opened.options),
                    ),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: ListSessionsRequest, responder, _cx| match server
                    .list(request.cwd.as_deref())
                    .await
                {
                    Ok(list) => responder.respond(list),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: CloseSessionRequest, responder, _cx| match server
                    .close(&request.session_id.0)
                    .await
                {
                    Ok(closed) => responder.respond(closed),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: DeleteSessionRequest, responder, _cx| match server
                    .delete(&request.session_id.0)
                    .await
                {
                    Ok(deleted) => responder.respond(deleted),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: AuthenticateRequest, responder, _cx| match server
                    .authenticate(&request.method_id.0)
                {
                    Ok(done) => responder.respond(done),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                    let slot = match server.slot(&request.session_id.0) {
                        Ok(slot) => slot,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    match config::input_for(&request.config_id.0, &request.value) {
                        Ok(input) => slot.set_config(input, responder),
                        Err(e) => responder.respond_with_error(invalid(e.to_string())),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: PromptRequest, responder, _cx| {
                    let slot = match server.slot(&request.session_id.0) {
                        Ok(slot) => slot,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    match slot.reader.read(&request.prompt).await {
                        Ok(text) => slot.prompt(text, responder),
                        Err(why) => responder.respond_with_error(invalid(why)),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: SetSessionModeRequest, responder, _cx| {
                    let slot = match server.slot(&request.session_id.0) {
                        Ok(slot) => slot,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    let mode = match request.mode_id.0.parse::<Mode>() {
                        Ok(mode) => mode,
                        Err(e) => return responder.respond_with_error(invalid(e.to_string())),
                    };
                    if slot.choose_mode(mode) {
                        responder.respond(SetSessionModeResponse::new())
                    } else {
                        responder.respond_with_error(invalid(format!(
                            "the agent of session {} has stopped",
                            slot.id
                        )))
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let server = server.clone();
                async move |notification: CancelNotification, _cx| {
                    if let Ok(slot) = server.slot(&notification.session_id.0) {
                        slot.cancel();
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    server.stop_all().await;
    match result {
        Ok(()) => 0,
        Err(e) if agent_client_protocol::is_incoming_transport_closed(&e) => 0,
        Err(e) => {
            tracing::error!(error = %e, "the ACP connection failed");
            eprintln!("mino acp: the connection failed: {e}");
            1
        }
    }
}
