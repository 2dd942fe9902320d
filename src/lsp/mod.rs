//! The language servers of this run (DESIGN: the `lsp` tool): which server
//! covers a file (the user's `[lsp.NAME]` entries, then the built-in ones
//! whose program is on `PATH`), starting it on first use for its workspace
//! root (one per project and language), restarting it once after a crash
//! and calling it unavailable after that, and stopping every server (with
//! everything it started) when mino stops. Never decides and never reads a
//! file itself: the tool hands it the text of files it read confined.

pub mod client;
pub mod framing;
mod spawn;
pub mod uri;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use client::{Client, RpcError};
pub use spawn::Launch;

use crate::config::{LspServer, LspSettings};
use spawn::Group;

/// How often a server that crashed is started again before it is called
/// unavailable.
const RESTARTS: u32 = 1;

/// Why no server could answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    #[error(
        "no language server covers {path}: the ones configured cover {covered}; add [lsp.NAME] with command and extensions to the settings"
    )]
    NoServer { path: String, covered: String },
    #[error(
        "the language server {server} ({command}) is not installed: {command} is not on PATH; install it or set [lsp.{server}] command"
    )]
    NotInstalled { server: String, command: String },
    #[error("the language server {server} could not be started: {message}")]
    Start { server: String, message: String },
    #[error("the language server {server} is unavailable: {reason}")]
    Unavailable { server: String, reason: String },
    #[error("{0}")]
    Rpc(#[from] RpcError),
}

/// One server's state in this run.
enum Slot {
    Running {
        client: Arc<Client>,
        group: Group,
        starts: u32,
    },
    Unavailable(String),
}

/// A connection handed to a caller.
pub struct Connected {
    pub client: Arc<Client>,
    pub server: String,
    /// This call started the server for the first time in the run: the
    /// result says so (`lsp: started NAME`).
    pub first_start: bool,
    pub language_id: String,
}

/// The servers of one project.
pub struct LspHub {
    settings: LspSettings,
    project: PathBuf,
    launch: Launch,
    servers: tokio::sync::Mutex<HashMap<(String, PathBuf), Slot>>,
}

impl std::fmt::Debug for LspHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspHub")
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

/// The file name extension of `relative`, lower-cased.
fn extension(relative: &str) -> Option<String> {
    let name = relative.rsplit('/').next()?;
    let (_, ext) = name.rsplit_once('.')?;
    (!ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// The LSP language id for a file's extension.
pub fn language_id(ext: &str, server: &str) -> String {
    let id = match ext {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        _ => server,
    };
    id.to_string()
}

impl LspHub {
    pub fn new(settings: LspSettings, project: PathBuf, launch: Launch) -> Self {
        Self {
            settings,
            project,
            launch,
            servers: tokio::sync::Mutex::default(),
        }
    }

    pub fn diagnostics_after_edit(&self) -> bool {
        self.settings.diagnostics_after_edit
    }

    /// The server entry for `relative` and its program, or why none.
    fn pick(&self, relative: &str) -> Result<(&LspServer, PathBuf, String), LspError> {
        let ext = extension(relative);
        let covering: Vec<&LspServer> = self
            .settings
            .servers
            .iter()
            .filter(|s| {
                ext.as_deref()
                    .is_some_and(|ext| s.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
            })
            .collect();
        let Some(ext) = ext.filter(|_| !covering.is_empty()) else {
            let mut covered: Vec<String> = self
                .settings
                .servers
                .iter()
                .flat_map(|s| s.extensions.iter().map(|e| format!(".{e}")))
                .collect();
            covered.dedup();
            return Err(LspError::NoServer {
                path: relative.to_string(),
                covered: covered.join(" "),
            });
        };
        for server in &covering {
            if let Ok(program) =
                which::which_in(&server.command, std::env::var_os("PATH"), &self.project)
            {
                return Ok((server, program, language_id(&ext, &server.name)));
            }
            if !server.builtin {
                return Err(LspError::NotInstalled {
                    server: server.name.clone(),
                    command: server.command.clone(),
                });
            }
        }
        let names: Vec<&str> = covering.iter().map(|s| s.command.as_str()).collect();
        Err(LspError::NotInstalled {
            server: covering.first().map(|s| s.name.clone()).unwrap_or_default(),
            command: names.join(" or "),
        })
    }

    /// The workspace root for `relative`: the nearest directory (inside the
    /// project) holding one of `markers`, else the project.
    fn root_for(&self, relative: &str, markers: &[String]) -> PathBuf {
        let mut dir = Path::new(relative).parent();
        while let Some(at) = dir {
            if at.as_os_str().is_empty() {
                break;
            }
            let full = self.project.join(at);
            if markers
                .iter()
                .any(|m| full.join(m).symlink_metadata().is_ok())
            {
                return full;
            }
            dir = at.parent();
        }
        self.project.clone()
    }

    /// The running server for the project file `relative`, started when
    /// this is its first use, started again once after a crash.
    pub async fn for_file(&self, relative: &str) -> Result<Connected, LspError> {
        let (server, program, language_id) = self.pick(relative)?;
        let root = self.root_for(relative, &server.root_markers);
        let key = (server.name.clone(), root.clone());
        let mut servers = self.servers.lock().await;
        let starts = match servers.get(&key) {
            Some(Slot::Running { client, starts, .. }) if !client.is_closed() => {
                return Ok(Connected {
                    client: Arc::clone(client),
                    server: server.name.clone(),
                    first_start: false,
                    language_id,
                });
            }
            Some(Slot::Running { starts, .. }) if *starts > RESTARTS => {
                let reason = format!("it stopped {starts} times in this run");
                servers.insert(key, Slot::Unavailable(reason.clone()));
                return Err(LspError::Unavailable {
                    server: server.name.clone(),
                    reason,
                });
            }
            Some(Slot::Running { starts, .. }) => *starts,
            Some(Slot::Unavailable(reason)) => {
                return Err(LspError::Unavailable {
                    server: server.name.clone(),
                    reason: reason.clone(),
                });
            }
            None => 0,
        };
        let started = spawn::start(
            &self.launch,
            &server.name,
            &program,
            &server.args,
            &root,
            server.initialization_options.clone(),
        );
        match started.await {
            Ok((client, group)) => {
                let client = Arc::new(client);
                servers.insert(
                    key,
                    Slot::Running {
                        client: Arc::clone(&client),
                        group,
                        starts: starts + 1,
                    },
                );
                Ok(Connected {
                    client,
                    server: server.name.clone(),
                    first_start: starts == 0,
                    language_id,
                })
            }
            Err(e) if starts >= RESTARTS => {
                servers.insert(key, Slot::Unavailable(e.to_string()));
                Err(e)
            }
            Err(e) => {
                // Counted as a start that crashed: one more try is left.
                servers.insert(key, Slot::Unavailable(e.to_string()));
                Err(e)
            }
        }
    }

    /// Every running server with its open documents (`diagnostics` without
    /// a path).
    pub async fn running(&self) -> Vec<(String, Arc<Client>)> {
        let servers = self.servers.lock().await;
        servers
            .iter()
            .filter_map(|((name, _), slot)| match slot {
                Slot::Running { client, .. } if !client.is_closed() => {
                    Some((name.clone(), Arc::clone(client)))
                }
                _ => None,
            })
            .collect()
    }

    /// Asks every server to shut down, then ends their process groups.
    pub async fn stop_all(&self) {
        let mut servers = self.servers.lock().await;
        for slot in servers.values_mut() {
            if let Slot::Running { client, group, .. } = slot {
                client.shutdown().await;
                group.stop();
            }
        }
        servers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_language_ids() {
        assert_eq!(extension("src/a.PY").as_deref(), Some("py"));
        assert_eq!(extension("Makefile"), None);
        assert_eq!(extension("dir.d/file"), None);
        assert_eq!(language_id("tsx", "x"), "typescriptreact");
        assert_eq!(language_id("zig", "zls"), "zls");
    }
}
