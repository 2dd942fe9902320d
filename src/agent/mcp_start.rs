//! Starting the MCP servers of a run: the hub, in the background, and the
//! tasks that carry its questions, its notices and what its servers offer
//! the person (prompts and resources) to the front end.

use tokio::sync::mpsc;

use crate::config::Settings;
use crate::mcp::{HubConfig, McpHub, McpNotice, NoticeLine, WeakHub};
use crate::tools::ToolContext;

use super::build::key_variables;
use super::events::AgentEvent;

/// Starts the enabled MCP servers in the background (returns at once) and
/// forwards their notices to the front end. None when none is configured.
pub(super) fn start_mcp(
    settings: &Settings,
    tool_cx: &ToolContext,
    events: &super::events::EventSender,
    deferred: bool,
) -> Option<McpHub> {
    if settings.mcp_servers.is_empty() {
        return None;
    }
    let (notices, mut notices_rx) = mpsc::unbounded_channel::<McpNotice>();
    let (questions, mut questions_rx) = mpsc::unbounded_channel();
    let hub = McpHub::start(
        HubConfig {
            servers: &settings.mcp_servers,
            project_dir: tool_cx.project.root(),
            hidden_env: key_variables(settings),
            output_limit: settings.limits.bash_output_bytes,
            guard: tool_cx.bash_guard.clone(),
            deferred,
            questions: Some(questions),
            home: settings.mino_home.clone(),
        },
        notices,
    );
    // A question the front end drops, or one left when it is gone, is declined.
    let asked = events.clone();
    tokio::spawn(async move {
        while let Some(question) = questions_rx.recv().await {
            if asked.send(AgentEvent::ServerQuestion(question)).is_err() {
                break;
            }
        }
    });
    let events = events.clone();
    let weak = hub.downgrade();
    tokio::spawn(async move {
        let mut listed = None;
        while let Some(notice) = notices_rx.recv().await {
            // Once no server is starting, what the running ones offer the
            // person is listed again when the set of running ones changed.
            let running = (notice.status.starting == 0).then_some(notice.status.running);
            if running.is_some() && running != listed {
                listed = running;
                list_catalog(&weak, &events);
            }
            let line = match notice.line {
                Some(NoticeLine::Info(text)) => Some(AgentEvent::Notice(text)),
                Some(NoticeLine::Warning(text)) => Some(AgentEvent::Warning(text)),
                None => None,
            };
            let sent = line.is_none_or(|event| events.send(event).is_ok())
                && events.send(AgentEvent::McpStatus(notice.status)).is_ok();
            if !sent {
                break;
            }
        }
    });
    Some(hub)
}

/// Lists what the running servers offer the person, on a task of its own,
/// and sends it to the front end (nothing when the hub is gone).
fn list_catalog(weak: &WeakHub, events: &super::events::EventSender) {
    let Some(hub) = weak.upgrade() else {
        return;
    };
    let events = events.clone();
    tokio::spawn(async move {
        let catalog = crate::mcp::catalog::catalog(&hub).await;
        let _ = events.send(AgentEvent::McpCatalog(std::sync::Arc::new(catalog)));
    });
}
