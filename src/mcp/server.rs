//! Starting one server: a streamable-HTTP one by connecting to it
//! (`http.rs`); a stdio one under mino's guard (`guard.rs`) in a process
//! group of its own, so stopping it, or mino dying, stops everything it
//! started, with its environment (credentials set, the model key and other
//! servers' credentials removed) and its stderr logged line by line with
//! secrets redacted. Then the handshake (`server/discover` at 2026-07-28,
//! else `initialize` at 2025-11-25) and the first tool list within the
//! startup timeout. Never decides anything and never shows
//! anything.

use std::path::Path;
use std::process::Stdio;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
    Tool as RemoteTool,
};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, RoleClient};
use rustix::process::{Pid, Signal, getpid, kill_process_group};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;

use crate::config::{EnvValue, McpServer};
use crate::secrets::Secrets;

use super::guard::MCP_GUARD;
use super::line_limit::{LineLimit, MAX_MESSAGE_BYTES};
use super::question::{self, AskWindow, QuestionAnswer, ServerQuestion, TypedAnswers};

/// The longest stderr line logged as one record.
const STDERR_LINE_LIMIT: usize = 4096;

/// How much of one server's stderr goes to the log in a run; the rest is
/// read and dropped, so a server that floods it fills neither the pipe nor
/// the disk.
const STDERR_LOG_BUDGET: usize = 1024 * 1024;

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the variable {variable} (referenced by {key}) is not set")]
    MissingVariable { key: String, variable: String },
    #[error("the value of headers.{name} cannot be sent in an HTTP header")]
    Header { name: String },
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
    #[error("{command} could not be started: not found (as a path, or on PATH), or not executable")]
    NotFound { command: String },
    #[error("{command} could not be started: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error(
        "mino cannot find its own binary (/proc/self/exe), which every MCP server runs under so it stops with mino"
    )]
    NoGuard,
    #[error(
        "no answer to the handshake (server/discover, then initialize) within {0} s (startup_timeout_secs)"
    )]
    Timeout(u64),
    #[error("the handshake (server/discover, then initialize) failed: {0}")]
    Handshake(String),
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    #[error("it needs authorization (it answered 401): run /mcp auth {0}")]
    NeedsAuth(String),
    #[error("its stored OAuth token could not be used: {0}")]
    StoredToken(String),
}

/// Receives what a server tells or asks mino unasked: that its tool list
/// changed, which the hub answers by listing again, and its questions
/// (elicitation), which go to the person through `questions` or are
/// declined.
#[derive(Clone)]
pub struct Handler {
    changed: mpsc::UnboundedSender<()>,
    server: String,
    /// Marked `ask`: its questions are declined.
    trust_ask: bool,
    /// Where questions go; `None` where nobody can answer.
    questions: Option<mpsc::UnboundedSender<ServerQuestion>>,
    /// The answers given, hidden from its results.
    typed: TypedAnswers,
    /// Whether it may ask now.
    window: AskWindow,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let _ = self.changed.send(());
        std::future::ready(())
    }

    /// Form questions only (a URL question is declined: mino opens no
    /// address a server names).
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new().with_schema_validation(true)),
        );
        ClientConfig::new(
            capabilities,
            Implementation::new("mino", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        Ok(self.ask(request).await)
    }
}

impl Handler {
    /// Puts a form question to the person, or declines it: a server marked
    /// `ask`, nobody to answer, a URL question, a schema mino cannot show.
    /// Asked by `elicitation/create` (earlier revisions) and by an
    /// `input_required` result (`rounds.rs`).
    pub(super) async fn ask(&self, request: ElicitRequestParams) -> ElicitResult {
        let decline = ElicitResult::new(ElicitationAction::Decline);
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return decline;
        };
        let Some(questions) = self.questions.as_ref().filter(|_| !self.trust_ask) else {
            return decline;
        };
        let Some(_asking) = self.window.open() else {
            return decline;
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let Ok(fields) = question::fields(&schema, requested_schema.property_order.as_deref())
        else {
            return decline;
        };
        let (reply, answered) = tokio::sync::oneshot::channel();
        let asked = ServerQuestion {
            server: self.server.clone(),
            message: question::one_line(&message),
            fields: fields.clone(),
            reply,
        };
        if questions.send(asked).is_err() {
            return decline;
        }
        match answered.await {
            Ok(QuestionAnswer::Accept(content)) => {
                self.typed.remember(&fields, &content);
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(serde_json::Value::Object(content));
                result
            }
            Ok(QuestionAnswer::Cancel) => ElicitResult::new(ElicitationAction::Cancel),
            Ok(QuestionAnswer::Decline) | Err(_) => decline,
        }
    }
}

pub type Client = RunningService<RoleClient, Handler>;

/// A server that answered `initialize` and listed its tools.
pub struct Started {
    pub client: Client,
    pub tools: Vec<RemoteTool>,
    /// Its process group (the leader's pid).
    pub group: Option<ProcessGroupId>,
    /// One message per `notifications/tools/list_changed`.
    pub changes: mpsc::UnboundedReceiver<()>,
    /// Set when it sent a message over `MAX_MESSAGE_BYTES`, which ended
    /// the connection.
    pub too_long: Arc<AtomicBool>,
}

/// A server's process group: its guard (the leader), the server and what
/// it started without leaving the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroupId(Pid);

impl ProcessGroupId {
    /// SIGTERM to the group: the guard then kills the server and every
    /// process below it, wherever they moved, and exits.
    pub fn kill(self) {
        // The group may have ended already; nothing is left to stop then.
        let _ = kill_process_group(self.0, Signal::TERM);
    }
}

/// One `env` value: the literal, or the referenced variable's value when set.
pub fn resolve_value(value: &EnvValue) -> Option<String> {
    match value {
        EnvValue::Literal(text) => Some(text.clone()),
        EnvValue::Variable(variable) => std::env::var(variable).ok(),
    }
}

/// A server's `env` (the environment it starts with, beyond mino's own) or
/// `headers`, resolved. Values read from references are credentials too.
fn resolve_all(
    values: &std::collections::BTreeMap<String, EnvValue>,
    table: &str,
) -> Result<Vec<(String, String)>, StartError> {
    values
        .iter()
        .map(|(key, value)| {
            resolve_value(value)
                .map(|v| (key.clone(), v))
                .ok_or_else(|| StartError::MissingVariable {
                    key: format!("{table}.{key}"),
                    variable: match value {
                        EnvValue::Variable(name) => name.clone(),
                        EnvValue::Literal(_) => String::new(),
                    },
                })
        })
        .collect()
}

/// A server's `args`, each `$NAME` or `${NAME}` replaced by the variable's
/// value (a credential, like an `env` value); the destination shows the
/// reference, never the value.
fn resolve_args(args: &[String]) -> Result<Vec<String>, StartError> {
    args.iter()
        .enumerate()
        .map(|(at, arg)| match crate::config::env_value(arg) {
            Some(EnvValue::Variable(variable)) => {
                std::env::var(&variable).map_err(|_| StartError::MissingVariable {
                    key: format!("args[{at}]"),
                    variable,
                })
            }
            _ => Ok(arg.clone()),
        })
        .collect()
}

/// What starting a server needs besides its settings.
pub struct StartCx<'a> {
    pub name: &'a str,
    pub project_dir: &'a Path,
    /// Variables removed from its environment (the model key's, other
    /// servers' referenced credentials).
    pub hidden_env: &'a [String],
    /// Redacted from its stderr before logging.
    pub secrets: &'a Secrets,
    /// mino's own binary, which the server runs under (`__mcp-guard`).
    pub guard: Option<&'a Path>,
    /// Where its questions go; `None` where nobody can answer them.
    pub questions: Option<mpsc::UnboundedSender<ServerQuestion>>,
    /// Its answers, remembered for hiding them from its results.
    pub typed: TypedAnswers,
    /// Whether it may ask now (a call of its runs, no question is open).
    pub window: AskWindow,
    /// Where a remote server's OAuth tokens are kept; `None` without a home.
    pub oauth: Option<super::oauth::TokenDir>,
    /// The token values of this run, hidden from results.
    pub tokens: super::oauth::TokenValues,
}

/// Connects to the server (a process mino starts, or a streamable-HTTP
/// address) and completes the handshake within the startup timeout. On
/// failure nothing of it is left running.
pub async fn start(config: &McpServer, cx: StartCx<'_>) -> Result<Started, StartError> {
    match &config.url {
        Some(url) => {
            let (client, tools, changes) = start_remote(url, config, &cx).await?;
            Ok(Started {
                client,
                tools,
                group: None,
                changes,
                too_long: Arc::new(AtomicBool::new(false)),
            })
        }
        None => start_process(config, cx).await,
    }
}

/// Connects to a streamable-HTTP server, with its stored OAuth token when
/// there is one.
async fn start_remote(
    url: &str,
    config: &McpServer,
    cx: &StartCx<'_>,
) -> Result<(Client, Vec<RemoteTool>, mpsc::UnboundedReceiver<()>), StartError> {
    let headers = resolve_all(&config.headers, "headers")?;
    let (client, settings) = super::http::parts(url, &headers)?;
    let timeout = config.startup_timeout;
    let stored = match &cx.oauth {
        Some(dir) => {
            let store = super::oauth::ResourceStore {
                dir: dir.clone(),
                resource: url.to_string(),
                values: cx.tokens.clone(),
            };
            tokio::time::timeout(
                timeout,
                super::oauth::stored_client(url, client.clone(), store),
            )
            .await
            .map_err(|_| StartError::Timeout(timeout.as_secs()))?
            .map_err(|e| StartError::StoredToken(e.to_string()))?
        }
        None => None,
    };
    match stored {
        Some(auth) => handshake(super::http::transport(auth, settings), config, cx, timeout).await,
        None => {
            handshake(
                super::http::transport(client, settings),
                config,
                cx,
                timeout,
            )
            .await
        }
    }
}

/// The revision mino speaks first (`server/discover`, stateless).
pub const CURRENT_REVISION: ProtocolVersion = ProtocolVersion::V_2026_07_28;
/// The revision of the `initialize` handshake mino falls back to for a
/// server that answers `server/discover` with an error (as every server
/// of an earlier revision does: the method is unknown to it).
pub const FALLBACK_REVISION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// `server/discover` at the current revision first, `initialize` at the
/// fallback revision for a server that rejects it. A server that answers
/// neither is bounded by the startup timeout around the whole handshake.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![CURRENT_REVISION],
        legacy_version: Some(FALLBACK_REVISION),
    }
}

/// `server/discover` (or `initialize`) and the first tool list, within
/// `timeout`.
async fn handshake<T, E, A>(
    transport: T,
    config: &McpServer,
    cx: &StartCx<'_>,
    timeout: std::time::Duration,
) -> Result<(Client, Vec<RemoteTool>, mpsc::UnboundedReceiver<()>), StartError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (changed, changes) = mpsc::unbounded_channel();
    let work = async {
        let handler = Handler {
            changed,
            server: cx.name.to_string(),
            trust_ask: config.trust_ask,
            questions: cx.questions.clone(),
            typed: cx.typed.clone(),
            window: cx.window.clone(),
        };
        let client = handler
            .serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| {
                if e.is_authorization_required() || e.auth_challenge().is_some() {
                    StartError::NeedsAuth(cx.name.to_string())
                } else {
                    StartError::Handshake(describe(&e))
                }
            })?;
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| StartError::ListTools(e.to_string()))?;
        Ok::<_, StartError>((client, tools))
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok((client, tools))) => Ok((client, tools, changes)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(StartError::Timeout(timeout.as_secs())),
    }
}

/// A failed handshake in words, both attempts when the fallback failed too.
fn describe(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            format!("server/discover: {discover}; initialize: {fallback}")
        }
        other => other.to_string(),
    }
}

/// Spawns the server under its guard and completes the handshake.
async fn start_process(config: &McpServer, cx: StartCx<'_>) -> Result<Started, StartError> {
    let env = resolve_all(&config.env, "env")?;
    let args = resolve_args(&config.args)?;
    let cwd = config.cwd.as_deref().unwrap_or(cx.project_dir);
    let guard = cx.guard.ok_or(StartError::NoGuard)?;
    // Found here, with the PATH the server gets, so a missing program is
    // said as such rather than as a handshake its guard could not start.
    let path = env
        .iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| std::ffi::OsString::from(value))
        .or_else(|| std::env::var_os("PATH"));
    let program =
        which::which_in(&config.command, path, cwd).map_err(|_| StartError::NotFound {
            command: config.command.clone(),
        })?;
    let mino = getpid().as_raw_nonzero().get().to_string();
    // Stopped through its guard (SIGTERM to the group), never by dropping:
    // a SIGKILL to the guard would leave what the server moved out of its
    // group behind.
    let mut command = CommandWrap::with_new(guard, |cmd| {
        cmd.arg(MCP_GUARD)
            .arg(&mino)
            .arg("--")
            .arg(&program)
            .args(&args)
            .current_dir(cwd);
        for name in cx.hidden_env {
            cmd.env_remove(name);
        }
        // mino's own variables are no server's business (a server's own
        // `env` may still set one).
        for name in crate::home::own_variables() {
            cmd.env_remove(name);
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    });
    command.wrap(ProcessGroup::leader());
    let spawn_error = |source| StartError::Spawn {
        command: config.command.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let group = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(Pid::from_raw)
        .map(ProcessGroupId);
    let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
        if let Some(group) = group {
            group.kill();
        }
        return Err(spawn_error(std::io::Error::other(
            "its stdin or stdout is not a pipe",
        )));
    };
    if let Some(stderr) = child.stderr().take() {
        tokio::spawn(log_stderr(cx.name.to_string(), stderr, cx.secrets.clone()));
    }
    // Reaped when it exits; stopped through its guard, never by a drop.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let (stdout, too_long) = LineLimit::new(stdout, MAX_MESSAGE_BYTES);
    let transport = AsyncRwTransport::new_client(stdout, stdin)
        .with_max_line_length(MAX_MESSAGE_BYTES.saturating_add(1));
    match handshake(transport, config, &cx, config.startup_timeout).await {
        Ok((client, tools, changes)) => Ok(Started {
            client,
            tools,
            group,
            changes,
            too_long,
        }),
        Err(e) => {
            if let Some(group) = group {
                group.kill();
            }
            Err(e)
        }
    }
}

/// Logs the server's stderr a line at a time, never to the screen, up to
/// `STDERR_LOG_BUDGET` bytes.
async fn log_stderr<R: AsyncRead + Unpin>(server: String, mut stderr: R, secrets: Secrets) {
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 8192];
    let mut logged = 0usize;
    let mut emit = |bytes: &[u8]| {
        if logged > STDERR_LOG_BUDGET {
            return;
        }
        logged += bytes.len() + 1;
        if logged > STDERR_LOG_BUDGET {
            tracing::warn!(
                target: "mino::mcp::stderr",
                server = %server,
                "more than {} KiB of stderr; the rest is not logged",
                STDERR_LOG_BUDGET / 1024
            );
            return;
        }
        let line = String::from_utf8_lossy(bytes);
        let line = secrets.redact(line.trim_end()).text;
        tracing::info!(target: "mino::mcp::stderr", server = %server, "{line}");
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            emit(&pending[..end]);
            pending.drain(..=end);
        }
        if pending.len() > STDERR_LINE_LIMIT {
            emit(&pending);
            pending.clear();
        }
    }
    if !pending.is_empty() {
        emit(&pending);
    }
}
