//! MCP: the tool servers the user configured, reached through the official
//! SDK (`rmcp`) over a child process's stdin and stdout, or streamable HTTP
//! (`http.rs`). Starts them in the background, offers their tools to the
//! model as `mcp_SERVER_TOOL`, runs calls the decision allowed, and reports
//! every change of state as an `McpNotice`. Never decides, never draws
//! (the front ends do), and never lets a credential out: `env` and
//! `headers` values are never shown, logged, sent or saved, and they join
//! the secrets redacted from tool results.

pub mod catalog;
mod content;
pub mod guard;
mod http;
mod hub;
mod line_limit;
mod links;
pub mod names;
pub mod oauth;
pub mod question;
pub mod resource;
mod rounds;
mod run;
mod server;
mod tool;

use std::collections::BTreeSet;

use rmcp::model::Tool as RemoteTool;
use serde::Serialize;

pub use hub::{HubConfig, McpHub, Server, WeakHub, credentials, referenced_variables};
pub use server::{CURRENT_REVISION, FALLBACK_REVISION};

/// A chat line about a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeLine {
    Info(String),
    Warning(String),
}

/// A change of state: a line for the chat (when there is one to say) and
/// the counts for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpNotice {
    pub line: Option<NoticeLine>,
    pub status: McpStatus,
}

/// How many servers are in which state, and how many tools are offered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct McpStatus {
    pub starting: usize,
    pub running: usize,
    /// Failed to start, or stopped since.
    pub down: usize,
    pub tools: usize,
}

/// A server's state as `/mcp` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum ServerState {
    Disabled,
    Starting,
    Running,
    Failed(String),
    Stopped(String),
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Disabled => f.write_str("disabled"),
            ServerState::Starting => f.write_str("starting"),
            ServerState::Running => f.write_str("running"),
            ServerState::Failed(reason) => write!(f, "failed: {reason}"),
            ServerState::Stopped(reason) => write!(f, "stopped: {reason}"),
        }
    }
}

/// One server for `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerView {
    pub name: String,
    pub state: ServerState,
    /// The command line (never its environment).
    pub destination: String,
    pub trust_ask: bool,
    /// The MCP revision its handshake settled on, while it runs.
    pub revision: Option<String>,
    /// The names its tools are offered under.
    pub tools: Vec<String>,
}

/// What changed between two tool lists of one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Same name, another description, schema or annotations (the
    /// server's claims the decision reads).
    pub changed: Vec<String>,
}

impl ToolsDiff {
    pub fn between(old: &[RemoteTool], new: &[RemoteTool]) -> Self {
        let names = |tools: &[RemoteTool]| -> BTreeSet<String> {
            tools.iter().map(|t| t.name.to_string()).collect()
        };
        let (before, after) = (names(old), names(new));
        let changed = new
            .iter()
            .filter(|t| {
                old.iter().any(|o| {
                    o.name == t.name
                        && (o.description != t.description
                            || o.input_schema != t.input_schema
                            || o.annotations != t.annotations)
                })
            })
            .map(|t| t.name.to_string())
            .collect();
        Self {
            added: after.difference(&before).cloned().collect(),
            removed: before.difference(&after).cloned().collect(),
            changed,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// `: added a, b; changed c; removed d.`
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            ("added", &self.added),
            ("changed", &self.changed),
            ("removed", &self.removed),
        ]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| format!("{what} {}", names.join(", ")))
        .collect();
        format!(": {}.", parts.join("; "))
    }
}
