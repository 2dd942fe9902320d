//! Starting one language server as a child process: under the MCP
//! servers' guard (`mcp::guard`: nothing it starts outlives mino, even
//! one killed with SIGKILL) and inside the same sandbox as bash (same root,
//! same network setting), with its stdio as the connection. Owns the
//! server's process group; never decides and never reads its traffic.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal, getpid, kill_process_group};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::LspError;
use super::client::Client;
use crate::mcp::guard::MCP_GUARD;
use crate::sandbox::{Level, Planner};

/// How long `initialize` may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How mino starts servers in this run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The sandbox bash commands run in, and the plans for them.
    pub sandbox: Arc<Planner>,
    /// mino's own binary, for the guard; `None` starts the server
    /// directly in a process group of its own.
    pub guard: Option<PathBuf>,
    /// Variables no child process sees (the model service's key).
    pub hidden_env: Vec<String>,
}

/// A running server's process group; the group is ended when this is
/// dropped.
#[derive(Debug)]
pub struct Group(Option<Pid>);

impl Group {
    pub fn stop(&mut self) {
        if let Some(pid) = self.0.take() {
            // SIGTERM to the guard's group: it kills the server and every
            // process below it, wherever they moved, then exits.
            let _ = kill_process_group(pid, Signal::TERM);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `text` quoted for bash.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Starts `program args` for the workspace `root` and connects to it.
pub async fn start(
    launch: &Launch,
    name: &str,
    program: &Path,
    args: &[String],
    root: &Path,
    options: Option<serde_json::Value>,
) -> Result<(Client, Group), LspError> {
    let planner = &launch.sandbox;
    let (program, args): (PathBuf, Vec<OsString>) = if planner.sandbox.level == Level::None {
        (
            program.to_path_buf(),
            args.iter().map(OsString::from).collect(),
        )
    } else {
        let mut line = format!("exec {}", quote(&program.to_string_lossy()));
        for arg in args {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        let planner = Arc::clone(planner);
        let proxy = match planner.proxy_socket() {
            None => None,
            Some(Ok(socket)) => Some(socket),
            Some(Err(e)) => {
                return Err(LspError::Start {
                    server: name.to_string(),
                    message: e.to_string(),
                });
            }
        };
        let plan = tokio::task::spawn_blocking(move || {
            let mut plan = planner.plan(&line);
            plan.proxy = proxy;
            plan.pass_stdin = true;
            plan.to_args()
        })
        .await;
        match plan {
            Ok(Ok(args)) => (launch.sandbox.sandbox.helper.clone(), args),
            Ok(Err(e)) => {
                return Err(LspError::Start {
                    server: name.to_string(),
                    message: format!("could not write the sandbox plan: {e}"),
                });
            }
            Err(e) => {
                return Err(LspError::Start {
                    server: name.to_string(),
                    message: format!("could not plan the sandbox: {e}"),
                });
            }
        }
    };
    let mut command = match &launch.guard {
        Some(mino) => {
            let mut command = Command::new(mino);
            command
                .arg(MCP_GUARD)
                .arg(getpid().as_raw_nonzero().get().to_string())
                .arg("--")
                .arg(&program)
                .args(&args);
            command
        }
        None => {
            let mut command = Command::new(&program);
            command.args(&args).kill_on_drop(true);
            command
        }
    };
    command
        .current_dir(root)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in &launch.hidden_env {
        command.env_remove(variable);
    }
    for variable in crate::home::own_variables() {
        command.env_remove(variable);
    }
    let mut child = command.spawn().map_err(|e| LspError::Start {
        server: name.to_string(),
        message: format!("could not start {}: {e}", program.display()),
    })?;
    let group = Group(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw),
    );
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(LspError::Start {
            server: name.to_string(),
            message: "its stdin or stdout is not a pipe".into(),
        });
    };
    if let Some(stderr) = child.stderr.take() {
        let name = name.to_string();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "{line}");
            }
        });
    }
    // Reaped when it exits; stopped through its group.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let client = Client::start(stdout, stdin, root, options, START_TIMEOUT)
        .await
        .map_err(|e| LspError::Start {
            server: name.to_string(),
            message: e.to_string(),
        })?;
    Ok((client, group))
}
