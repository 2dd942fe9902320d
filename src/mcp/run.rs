//! One server's life in the hub: started once the hub lets servers go,
//! watched until its connection ends (listing its tools again when it says
//! they changed), and started again when asked (`/mcp auth` after a new
//! token, `/mcp logout` after forgetting one). Reports every change through
//! the hub's notices. Never decides and never draws.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::Tool as RemoteTool;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::secrets::Secrets;

use super::hub::{Connection, Inner, Live, McpHub, Server, State, lock};
use super::server::{StartCx, StartError, Started, start};

/// What starting one server takes beyond the server itself.
#[derive(Clone)]
pub(super) struct Launch {
    pub hidden_env: Vec<String>,
    pub secrets: Secrets,
    pub guard: Option<PathBuf>,
    pub questions: Option<mpsc::UnboundedSender<super::question::ServerQuestion>>,
    pub project_dir: PathBuf,
    pub oauth: Option<super::oauth::TokenDir>,
    pub tokens: super::oauth::TokenValues,
}

/// How one connection ended.
enum Ended {
    /// The hub is gone: nothing more to do.
    HubGone,
    /// Failed to start, or its connection ended: wait to be asked again.
    Down,
    /// Asked to start again while it ran.
    Restart,
}

/// Starts one server once the hub lets servers go, then again whenever it
/// is asked to.
pub(super) async fn run_server(
    mut go: tokio::sync::watch::Receiver<bool>,
    hub: std::sync::Weak<Inner>,
    server: Arc<Server>,
    launch: Launch,
) {
    // The hub gone before `begin`: nothing to start.
    if go.wait_for(|go| *go).await.is_err() {
        return;
    }
    let mut first = true;
    loop {
        let ended = serve(&hub, &server, &launch, first).await;
        first = false;
        match ended {
            Ended::HubGone => return,
            Ended::Restart => {}
            Ended::Down => server.restart.notified().await,
        }
        server.set(State::Starting);
        if let Some(inner) = hub.upgrade() {
            McpHub { inner }.notify(None);
        }
    }
}

/// One connection: start, report, watch until it ends.
async fn serve(
    hub: &std::sync::Weak<Inner>,
    server: &Arc<Server>,
    launch: &Launch,
    first: bool,
) -> Ended {
    let cx = StartCx {
        name: &server.name,
        project_dir: &launch.project_dir,
        hidden_env: &launch.hidden_env,
        secrets: &launch.secrets,
        guard: launch.guard.as_deref(),
        questions: launch.questions.clone(),
        typed: server.typed.clone(),
        window: server.window.clone(),
        oauth: launch.oauth.clone(),
        tokens: launch.tokens.clone(),
    };
    let started = start(&server.config, cx).await;
    let Some(inner) = hub.upgrade() else {
        if let Ok(Started {
            group: Some(group), ..
        }) = started
        {
            group.kill();
        }
        return Ended::HubGone;
    };
    let hub = McpHub { inner };
    let started = match started {
        Ok(started) => started,
        Err(e) => {
            fail(&hub, server, &e);
            if first {
                hub.started_one();
            }
            return Ended::Down;
        }
    };
    let weak = Arc::downgrade(&hub.inner);
    let (gone, ended) = running(hub, server, started, first);
    watch(weak, server, gone, ended).await
}

/// What `running` hands the watch: the cancellation of its calls and the
/// connection with its change notices.
type Watched = (
    super::server::Client,
    mpsc::UnboundedReceiver<()>,
    Arc<std::sync::atomic::AtomicBool>,
);

/// Records a started server as running and says so.
fn running(
    hub: McpHub,
    server: &Arc<Server>,
    started: Started,
    first: bool,
) -> (CancellationToken, Watched) {
    let Started {
        client,
        tools,
        group,
        changes,
        too_long,
    } = started;
    *lock(&server.group) = group;
    let gone = CancellationToken::new();
    let peer = client.peer().clone();
    let count = tools.len();
    let revision = peer
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();
    tracing::info!(server = %server.name, %revision, "MCP server started");
    server.set(State::Running(Live {
        connection: Connection {
            peer,
            gone: gone.clone(),
            handler: client.service().clone(),
        },
        tools,
        revision,
    }));
    hub.rebuild();
    if first {
        hub.started_one();
    }
    hub.notify(Some(super::NoticeLine::Info(format!(
        "MCP server {} started: {count} tools.",
        server.name
    ))));
    (gone, (client, changes, too_long))
}

/// Watches a running server until its connection ends or it is asked to
/// start again.
async fn watch(
    weak: std::sync::Weak<Inner>,
    server: &Arc<Server>,
    gone: CancellationToken,
    (client, mut changes, too_long): Watched,
) -> Ended {
    let peer = client.peer().clone();
    let mut restart = false;
    {
        let mut ended = Box::pin(client.waiting());
        loop {
            tokio::select! {
                _ = &mut ended => break,
                _ = server.restart.notified() => {
                    restart = true;
                    break;
                }
                Some(()) = changes.recv() => {
                    let listed = peer.list_all_tools().await;
                    let Some(inner) = weak.upgrade() else { return Ended::HubGone };
                    relisted(&McpHub { inner }, server, listed);
                }
            }
        }
    }
    gone.cancel();
    server.stop_group();
    let tools = match std::mem::replace(&mut *lock(&server.state), State::Starting) {
        State::Running(live) => live.tools,
        _ => Vec::new(),
    };
    let reason = if restart {
        "mino is connecting to it again".to_string()
    } else if too_long.load(std::sync::atomic::Ordering::Relaxed) {
        format!(
            "it sent a message longer than {} MiB, and mino ended the connection",
            super::line_limit::MAX_MESSAGE_BYTES / (1024 * 1024)
        )
    } else {
        "its connection ended".to_string()
    };
    server.set(State::Stopped {
        reason: reason.clone(),
        tools,
    });
    let Some(inner) = weak.upgrade() else {
        return Ended::HubGone;
    };
    let hub = McpHub { inner };
    hub.rebuild();
    if restart {
        return Ended::Restart;
    }
    hub.notify(Some(super::NoticeLine::Warning(format!(
        "MCP server {} stopped: {reason}. Its tools are no longer offered.",
        server.name
    ))));
    Ended::Down
}

fn fail(hub: &McpHub, server: &Server, error: &StartError) {
    tracing::warn!(server = %server.name, %error, "MCP server failed to start");
    server.set(State::Failed(error.to_string()));
    let line = match error {
        StartError::NeedsAuth(name) => format!(
            "MCP server {name} needs authorization (it answered 401 without a token): run /mcp auth {name}"
        ),
        other => format!("MCP server {} failed to start: {other}", server.name),
    };
    hub.notify(Some(super::NoticeLine::Warning(line)));
}

/// A server said its tools changed: take the new list and tell the user
/// what was added, removed or changed.
fn relisted(hub: &McpHub, server: &Server, listed: Result<Vec<RemoteTool>, rmcp::ServiceError>) {
    let tools = match listed {
        Ok(tools) => tools,
        Err(e) => {
            hub.notify(Some(super::NoticeLine::Warning(format!(
                "MCP server {} said its tools changed, and listing them again failed: {e}",
                server.name
            ))));
            return;
        }
    };
    let diff = {
        let mut state = lock(&server.state);
        let State::Running(live) = &mut *state else {
            return;
        };
        let diff = super::ToolsDiff::between(&live.tools, &tools);
        live.tools = tools;
        diff
    };
    hub.rebuild();
    if !diff.is_empty() {
        hub.notify(Some(super::NoticeLine::Warning(format!(
            "MCP server {} changed its tools{}",
            server.name,
            diff.describe()
        ))));
    }
}
