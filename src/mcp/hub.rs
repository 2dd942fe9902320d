//! The servers of this run: each one's settings, destination and state
//! (starting, running with its tools, failed, stopped, disabled), started in
//! parallel in the background, watched for exit and for changed tool lists,
//! and stopped (their process groups) with mino. Offers the running
//! servers' tools to the registry as one table. Never decides and never
//! draws: it reports through `McpNotice`s.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use rmcp::RoleClient;
use rmcp::model::Tool as RemoteTool;
use rmcp::service::Peer;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::McpServer;
use crate::secrets::Secrets;
use crate::tools::{Tool, ToolSource, ToolSpec};

use super::names::Namer;
use super::oauth::{TokenDir, TokenValues};
use super::question::TypedAnswers;
use super::run::{Launch, run_server};
use super::server::{Handler, ProcessGroupId, resolve_value};
use super::tool::McpTool;
use super::{McpNotice, McpStatus, ServerState, ServerView};

/// What a running server holds.
pub(super) struct Live {
    pub connection: Connection,
    pub tools: Vec<RemoteTool>,
    /// The revision the handshake settled on.
    pub revision: String,
}

/// What a call to a running server needs.
#[derive(Clone)]
pub struct Connection {
    pub peer: Peer<RoleClient>,
    /// Cancelled when the server's connection ends.
    pub gone: CancellationToken,
    /// Answers its questions (`input_required` results, `rounds.rs`).
    pub handler: Handler,
}

pub(super) enum State {
    Disabled,
    Starting,
    Running(Live),
    Failed(String),
    /// Its connection ended; `tools` are what it offered, kept so a call to
    /// one is refused with the reason rather than as an unknown tool.
    Stopped {
        reason: String,
        tools: Vec<RemoteTool>,
    },
}

/// One configured server.
pub struct Server {
    pub name: String,
    pub config: McpServer,
    /// Where a call goes: the command line of a stdio server.
    pub destination: String,
    pub(super) state: Mutex<State>,
    pub(super) group: Mutex<Option<ProcessGroupId>>,
    /// Asks its runner to start it again.
    pub(super) restart: tokio::sync::Notify,
    /// What people typed into its questions: hidden from its results.
    pub typed: super::question::TypedAnswers,
    /// Whether it may ask a question now.
    pub window: super::question::AskWindow,
}

impl Server {
    /// The connection of a running server, or what it is instead.
    pub fn peer(&self) -> Result<Connection, String> {
        match &*lock(&self.state) {
            State::Running(live) => Ok(live.connection.clone()),
            other => Err(describe(other)),
        }
    }

    pub(super) fn set(&self, state: State) {
        *lock(&self.state) = state;
    }

    pub(super) fn stop_group(&self) {
        if let Some(group) = lock(&self.group).take() {
            group.kill();
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn describe(state: &State) -> String {
    match state {
        State::Disabled => "disabled".into(),
        State::Starting => "starting".into(),
        State::Running(_) => "running".into(),
        State::Failed(reason) => format!("failed ({reason})"),
        State::Stopped { reason, .. } => format!("stopped ({reason})"),
    }
}

/// The tools of every running server, named for the model.
#[derive(Default)]
struct Table {
    specs: Vec<ToolSpec>,
    by_name: HashMap<String, Arc<McpTool>>,
    /// Per server, its tools' offered names, in the server's order.
    names: BTreeMap<String, Vec<String>>,
}

pub(super) struct Inner {
    servers: Vec<Arc<Server>>,
    /// How many servers are still starting.
    starting: tokio::sync::watch::Sender<usize>,
    table: RwLock<Arc<Table>>,
    /// Every name given this run, kept so a name keeps its meaning.
    namer: Mutex<Namer>,
    notices: mpsc::UnboundedSender<McpNotice>,
    output_limit: usize,
    /// `true` once the servers may start (see `HubConfig::deferred`).
    go: tokio::sync::watch::Sender<bool>,
    /// Where remote servers' OAuth tokens are kept; `None` without a home.
    oauth: Option<TokenDir>,
    /// The token values of this run, hidden from results.
    tokens: TokenValues,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for server in &self.servers {
            server.stop_group();
        }
    }
}

/// The MCP servers of this run. Cloning shares them.
#[derive(Clone)]
pub struct McpHub {
    pub(super) inner: Arc<Inner>,
}

/// A hub that does not keep its servers running (for a task the hub's own
/// notices feed, which must not outlive it).
#[derive(Clone)]
pub struct WeakHub(std::sync::Weak<Inner>);

impl WeakHub {
    pub fn upgrade(&self) -> Option<McpHub> {
        self.0.upgrade().map(|inner| McpHub { inner })
    }
}

/// What starting the hub needs.
pub struct HubConfig<'a> {
    pub servers: &'a BTreeMap<String, McpServer>,
    pub project_dir: &'a Path,
    /// Variables no server inherits (the model key's).
    pub hidden_env: Vec<String>,
    /// Bytes of one tool result kept (bash's limit).
    pub output_limit: usize,
    /// mino's own binary: every stdio server runs under its guard.
    pub guard: Option<PathBuf>,
    /// Hold the servers back until `begin` (the full screen calls it once
    /// its first frame is drawn, so starting them never delays it).
    pub deferred: bool,
    /// Where the servers' questions go; `None` declines every one.
    pub questions: Option<mpsc::UnboundedSender<super::question::ServerQuestion>>,
    /// mino's home, where remote servers' OAuth tokens are kept.
    pub home: Option<PathBuf>,
}

/// Every credential the servers' settings hold, as (name, value): literal
/// `env` values and the values of referenced variables that are set.
pub fn credentials(servers: &BTreeMap<String, McpServer>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, server) in servers {
        for (at, arg) in server.args.iter().enumerate() {
            if let Some(crate::config::EnvValue::Variable(variable)) = crate::config::env_value(arg)
                && let Ok(value) = std::env::var(variable)
            {
                out.push((format!("mcp.servers.{name}.args[{at}]"), value));
            }
        }
        let tables = [("env", &server.env), ("headers", &server.headers)];
        for (table, values) in tables {
            for (key, value) in values {
                if let Some(value) = resolve_value(value) {
                    out.push((format!("mcp.servers.{name}.{table}.{key}"), value));
                }
            }
        }
    }
    out
}

/// Variables referenced by any server's `env` (`$NAME`): no child of mino
/// but the server that names it inherits them.
pub fn referenced_variables(servers: &BTreeMap<String, McpServer>) -> Vec<String> {
    let mut names: Vec<String> = servers
        .values()
        .flat_map(|s| {
            let args = s.args.iter().filter_map(|a| crate::config::env_value(a));
            s.env
                .values()
                .chain(s.headers.values())
                .cloned()
                .chain(args)
                .collect::<Vec<_>>()
        })
        .filter_map(|v| match v {
            crate::config::EnvValue::Variable(name) => Some(name.clone()),
            crate::config::EnvValue::Literal(_) => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn destination(config: &McpServer) -> String {
    if let Some(url) = &config.url {
        return url.clone();
    }
    std::iter::once(&config.command)
        .chain(&config.args)
        .map(|word| {
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,%".contains(c))
            {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl McpHub {
    /// Creates the hub and starts every enabled server in the background;
    /// returns at once. `notices` hears every change of state.
    pub fn start(config: HubConfig<'_>, notices: mpsc::UnboundedSender<McpNotice>) -> Self {
        let tokens = TokenValues::default();
        let oauth = config.home.as_deref().map(TokenDir::new);
        let servers: Vec<Arc<Server>> = config
            .servers
            .iter()
            .map(|(name, server)| {
                Arc::new(Server {
                    name: name.clone(),
                    config: server.clone(),
                    destination: destination(server),
                    state: Mutex::new(if server.enabled {
                        State::Starting
                    } else {
                        State::Disabled
                    }),
                    group: Mutex::new(None),
                    restart: tokio::sync::Notify::new(),
                    typed: TypedAnswers::with_tokens(tokens.clone()),
                    window: Default::default(),
                })
            })
            .collect();
        let hub = Self {
            inner: Arc::new(Inner {
                starting: tokio::sync::watch::Sender::new(
                    servers.iter().filter(|s| s.config.enabled).count(),
                ),
                servers,
                table: RwLock::new(Arc::new(Table::default())),
                namer: Mutex::new(Namer::default()),
                notices,
                output_limit: config.output_limit,
                go: tokio::sync::watch::Sender::new(!config.deferred),
                oauth,
                tokens,
            }),
        };
        if hub.inner.servers.is_empty() {
            return hub;
        }
        hub.notify(None);
        let mut secrets = Secrets::new();
        for (name, value) in credentials(config.servers) {
            secrets.add(&name, &value);
        }
        let referenced = referenced_variables(config.servers);
        for server in hub.inner.servers.iter().filter(|s| s.config.enabled) {
            let mut hidden = config.hidden_env.clone();
            // Another server's credentials are not this one's business.
            let own: Vec<String> = referenced_variables(&BTreeMap::from([(
                server.name.clone(),
                server.config.clone(),
            )]));
            hidden.extend(referenced.iter().filter(|v| !own.contains(v)).cloned());
            tokio::spawn(run_server(
                hub.inner.go.subscribe(),
                Arc::downgrade(&hub.inner),
                server.clone(),
                Launch {
                    hidden_env: hidden,
                    secrets: secrets.clone(),
                    guard: config.guard.clone(),
                    questions: config.questions.clone(),
                    project_dir: config.project_dir.to_path_buf(),
                    oauth: hub.inner.oauth.clone(),
                    tokens: hub.inner.tokens.clone(),
                },
            ));
        }
        hub
    }

    /// `/mcp auth NAME`: the browser flow for a remote server, in the
    /// background (its steps are said as notices), then the server is
    /// connected again with its new token.
    pub fn authorize(&self, name: &str) -> Result<(), String> {
        let (server, dir) = self.remote(name)?;
        let Some(url) = server.config.url.clone() else {
            return Err(format!("{name} is not a remote server"));
        };
        let hub = Arc::downgrade(&self.inner);
        let store = super::oauth::ResourceStore {
            dir,
            resource: url.clone(),
            values: self.inner.tokens.clone(),
        };
        let say = move |hub: &std::sync::Weak<Inner>, line: super::NoticeLine| {
            if let Some(inner) = hub.upgrade() {
                McpHub { inner }.notify(Some(line));
            }
        };
        tokio::spawn(async move {
            let tell = |line: String| {
                say(
                    &hub,
                    super::NoticeLine::Info(format!("MCP server {}: {line}", server.name)),
                )
            };
            match super::oauth::authorize(&url, store, tell).await {
                Ok(()) => {
                    say(
                        &hub,
                        super::NoticeLine::Info(format!(
                            "MCP server {} is authorized; connecting to it again.",
                            server.name
                        )),
                    );
                    server.restart.notify_one();
                }
                Err(e) => say(
                    &hub,
                    super::NoticeLine::Warning(format!(
                        "Authorizing the MCP server {} failed: {e}",
                        server.name
                    )),
                ),
            }
        });
        Ok(())
    }

    /// `/mcp logout NAME`: forgets a remote server's tokens and connects to
    /// it again (without a token); what was forgotten, in words.
    pub fn logout(&self, name: &str) -> Result<String, String> {
        let (server, dir) = self.remote(name)?;
        let url = server.config.url.clone().unwrap_or_default();
        let removed = dir
            .remove(&url)
            .map_err(|e| format!("the OAuth token file in mino's home: {e}"))?;
        server.restart.notify_one();
        Ok(if removed {
            format!(
                "Forgot the OAuth tokens of the MCP server {name}; connecting to it again without them."
            )
        } else {
            format!("No OAuth token was kept for the MCP server {name}.")
        })
    }

    /// The remote server `name` and where its tokens live.
    fn remote(&self, name: &str) -> Result<(Arc<Server>, TokenDir), String> {
        let server = self
            .inner
            .servers
            .iter()
            .find(|s| s.name == name && s.config.enabled)
            .ok_or_else(|| {
                format!(
                    "no enabled MCP server is named {name:?}; servers: {}",
                    self.server_names().join(", ")
                )
            })?;
        if server.config.url.is_none() {
            return Err(format!(
                "the MCP server {name} runs as a command, not at a URL: OAuth is for remote servers"
            ));
        }
        let dir = self
            .inner
            .oauth
            .clone()
            .ok_or_else(|| "mino has no home to keep tokens in".to_string())?;
        Ok((server.clone(), dir))
    }

    /// Lets servers held back by `HubConfig::deferred` start (no effect
    /// when they were not, or on a second call).
    pub fn begin(&self) {
        self.inner.go.send_replace(true);
    }

    /// Every server as `/mcp` shows it.
    /// The names of the enabled servers (what `@server:uri` may name).
    pub fn server_names(&self) -> Vec<String> {
        self.inner
            .servers
            .iter()
            .filter(|s| s.config.enabled)
            .map(|s| s.name.clone())
            .collect()
    }

    /// `text` with every OAuth token this run has seen replaced: for every
    /// call's result, whichever tool made it (a token got during the run
    /// is not among the secrets loaded at start).
    pub fn hide_tokens(&self, text: &str) -> String {
        self.inner.tokens.hide(text)
    }

    pub fn downgrade(&self) -> WeakHub {
        WeakHub(Arc::downgrade(&self.inner))
    }

    /// The configured server named `name`.
    pub fn server(&self, name: &str) -> Option<Arc<Server>> {
        self.inner.servers.iter().find(|s| s.name == name).cloned()
    }

    /// Every configured server, in the settings' order.
    pub fn all(&self) -> Vec<Arc<Server>> {
        self.inner.servers.clone()
    }

    pub fn servers(&self) -> Vec<ServerView> {
        let table = self.table();
        self.inner
            .servers
            .iter()
            .map(|server| {
                let held = lock(&server.state);
                let revision = match &*held {
                    State::Running(live) => Some(live.revision.clone()),
                    _ => None,
                };
                let state = match &*held {
                    State::Disabled => ServerState::Disabled,
                    State::Starting => ServerState::Starting,
                    State::Running(_) => ServerState::Running,
                    State::Failed(reason) => ServerState::Failed(reason.clone()),
                    State::Stopped { reason, .. } => ServerState::Stopped(reason.clone()),
                };
                drop(held);
                ServerView {
                    revision,
                    name: server.name.clone(),
                    state,
                    destination: server.destination.clone(),
                    trust_ask: server.config.trust_ask,
                    tools: table.names.get(&server.name).cloned().unwrap_or_default(),
                }
            })
            .collect()
    }

    /// Counts for the status bar.
    pub fn status(&self) -> McpStatus {
        let mut status = McpStatus::default();
        for server in &self.inner.servers {
            match &*lock(&server.state) {
                State::Disabled => {}
                State::Starting => status.starting += 1,
                State::Running(_) => status.running += 1,
                State::Failed(_) | State::Stopped { .. } => status.down += 1,
            }
        }
        status.tools = self.table().specs.len();
        status
    }

    /// Waits until no server is starting any more (each start is bounded by
    /// its startup timeout), so a request offers every tool that will come.
    pub async fn ready(&self) {
        let mut starting = self.inner.starting.subscribe();
        // The sender lives as long as `self`; an error cannot happen here.
        let _ = starting.wait_for(|n| *n == 0).await;
    }

    /// Stops every server's process group now.
    pub fn shutdown(&self) {
        for server in &self.inner.servers {
            server.stop_group();
        }
    }

    fn table(&self) -> Arc<Table> {
        self.inner
            .table
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// One server left the starting state.
    pub(super) fn started_one(&self) {
        self.inner
            .starting
            .send_modify(|n| *n = n.saturating_sub(1));
    }

    pub(super) fn notify(&self, line: Option<super::NoticeLine>) {
        let _ = self.inner.notices.send(McpNotice {
            line,
            status: self.status(),
        });
    }

    /// Builds the table again from the running servers, in name order.
    pub(super) fn rebuild(&self) {
        let mut namer = lock(&self.inner.namer);
        let mut table = Table::default();
        for server in &self.inner.servers {
            let state = lock(&server.state);
            let (tools, offered) = match &*state {
                State::Running(live) => (&live.tools, true),
                State::Stopped { tools, .. } => (tools, false),
                _ => continue,
            };
            let mut names = Vec::new();
            for remote in tools {
                let name = namer.name(&server.name, &remote.name);
                let tool = Arc::new(McpTool::new(
                    name.clone(),
                    server.clone(),
                    remote,
                    self.inner.output_limit,
                ));
                if offered {
                    table.specs.push(tool.spec());
                    names.push(name.clone());
                }
                table.by_name.insert(name, tool);
            }
            table.names.insert(server.name.clone(), names);
        }
        *self.inner.table.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(table);
    }
}

impl ToolSource for McpHub {
    fn specs(&self) -> Vec<ToolSpec> {
        self.table().specs.clone()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if name == super::resource::RESOURCE_TOOL {
            return Some(Arc::new(super::resource::ResourceTool {
                servers: self.inner.servers.clone(),
                output_limit: self.inner.output_limit,
            }));
        }
        self.table()
            .by_name
            .get(name)
            .map(|t| t.clone() as Arc<dyn Tool>)
    }
}
