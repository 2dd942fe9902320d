//! `mino acp`: the Agent Client Protocol over stdio, so an editor drives
//! mino. Each editor session is one agent of its own, started for the
//! session's directory; this front end talks to it only through its events
//! and its consent port, exactly as the TUI and the line mode do. Nothing
//! but protocol messages is ever written to stdout (logs go to the log
//! file), and this front end never decides a call.

mod files;
mod prompt;
mod rewind;
mod session;
pub mod wire;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, FileSystemCapabilities, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::agent::AgentEvent;
use crate::agent::build::{Launch, launch};
use crate::agent::instructions_seen::Shown;
use crate::config::{CliOverrides, EnvOverrides, Settings};
use crate::home::Home;
use crate::policy::{BashConfinement, CanAsk, Mode};

use session::Slot;

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
    /// session's history to the client, and starts the session's pump.
    /// Returns the session id, its mode and how its bash commands are
    /// confined.
    async fn open(
        &self,
        cwd: &Path,
        resume: Option<&str>,
        cx: &ConnectionTo<Client>,
    ) -> Result<(String, Mode, BashConfinement), agent_client_protocol::Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd {} is not an absolute path; the session's directory must be one",
                cwd.display()
            )));
        }
        let settings =
            Settings::load_with_user_file(&self.home, &self.user_file, cwd, &self.env, &self.cli)
                .map_err(|e| invalid(e.to_string()))?;
        let fs = self
            .fs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let session_id = Arc::new(OnceLock::new());
        let editor = files::AcpFiles::offered(cx, &fs, Arc::clone(&session_id))
            .map(|files| Arc::new(files) as Arc<dyn crate::tools::editor::EditorFiles>);
        let mut handle = launch(Launch {
            home: &self.home,
            settings: &settings,
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
        .map_err(|e| invalid(e.to_string()))?;
        // The agent says its banner (and a resumed session's history) as it
        // starts; read those before anything else can arrive.
        let mut started = None;
        let mut history = std::sync::Arc::default();
        let mut plan = None;
        while let Ok(event) = handle.events.try_recv() {
            match event {
                AgentEvent::Session { id, mode, .. } => started = Some((id, mode)),
                AgentEvent::History(items) => history = items,
                AgentEvent::Plan(steps) => plan = Some(steps),
                AgentEvent::Warning(line) | AgentEvent::Notice(line) | AgentEvent::Error(line) => {
                    tracing::info!("{line}")
                }
                _ => {}
            }
        }
        let Some((id, mode)) = started else {
            return Err(agent_client_protocol::Error::internal_error()
                .data("the agent started without a session".to_string()));
        };
        let _ = session_id.set(id.clone());
        let confinement = handle.confinement.clone();
        session::replay(cx, &id, &history);
        // Shared with the agent, which would copy it at its next write.
        drop(history);
        if let Some(plan) = plan {
            session::send_plan(cx, &id, &plan);
        }
        let reader = prompt::PromptReader {
            root: cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf()),
            protected: Arc::new(settings.protected()),
            secrets: handle.secrets.clone(),
            limit: settings.limits.prompt_bytes,
        };
        let slot = Arc::new(Slot::new(
            id.clone(),
            cwd.to_path_buf(),
            reader,
            handle.inputs,
            handle.interrupter,
            handle.task,
        ));
        let old = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), slot.clone());
        if let Some(old) = old {
            tokio::spawn(async move { old.stop().await });
        }
        rewind::advertise(cx, &id);
        tokio::spawn(session::pump(slot, handle.events, cx.clone()));
        Ok((id, mode, confinement))
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
                    let version = request.protocol_version.min(ProtocolVersion::V1);
                    responder.respond(
                        InitializeResponse::new(version)
                            .agent_capabilities(AgentCapabilities::new().load_session(true))
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
                    .open(&request.cwd, None, &cx)
                    .await
                {
                    Ok((id, mode, bash)) => responder
                        .respond(NewSessionResponse::new(id).modes(wire::modes(mode, &bash))),
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: LoadSessionRequest, responder, cx| match server
                    .open(&request.cwd, Some(&request.session_id.0), &cx)
                    .await
                {
                    Ok((_, mode, bash)) => responder
                        .respond(LoadSessionResponse::new().modes(wire::modes(mode, &bash))),
                    Err(e) => responder.respond_with_error(e),
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
