//! The session's keeper: a sandbox that runs nothing and holds a network
//! namespace, started by the session's first background call. While it
//! lives, every sandboxed bash call of the session enters its network (a
//! later `curl localhost:3000` reaches the dev server a background call
//! started); each call still gets a mount and PID namespace of its own,
//! built from its own plan. It runs under the bash guard like any command,
//! so it dies with its lifeline: dropped with the session's shells, or with
//! mino, however mino ends. Never runs the model's command.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::time::timeout;

use super::{BashCall, Entry, Group, Started, start};
use crate::process_guard::proc_entry;
use crate::sandbox::{HELPER_ARG, Join, KEEPER_AT, KEEPER_READY, PUBLISH_READY};

/// How long the keeper may take to set its namespace up.
const READY_WAIT: Duration = Duration::from_secs(15);

/// A running keeper. Dropping it kills it (and its namespace).
pub(super) struct Keeper {
    child: Child,
    /// Dropped last: its drop kills the keeper through the guard.
    _group: Group,
    /// Held so the keeper never writes into a closed pipe.
    _stdout: BufReader<tokio::process::ChildStdout>,
    _stderr: Option<ChildStderr>,
    /// What forwards `[sandbox] publish` ports to the host (killed on drop).
    _publisher: Option<Child>,
    pub(super) join: Join,
    /// What the first background call says about the published ports.
    pub(super) note: Option<String>,
}

impl Keeper {
    /// Starts a keeper with `call`'s sandbox and waits until its namespace
    /// is ready. The error is the call's result text.
    pub(super) async fn start(call: &BashCall) -> Result<Self, String> {
        let entry = Entry {
            join: None,
            keeper: true,
        };
        let Started {
            child,
            group,
            stdout,
            mut stderr,
            ..
        } = start(call, entry).await.map_err(|outcome| outcome.output)?;
        let Some(stdout) = stdout else {
            return Err("Could not read from the session's sandbox keeper.".to_string());
        };
        let mut stdout = BufReader::new(stdout);
        let ready = timeout(READY_WAIT, read_ready(&mut stdout)).await;
        match ready {
            Ok(Some(pid)) => {
                let Some(entry) = proc_entry(pid) else {
                    return Err("The session's sandbox keeper ended as it started.".to_string());
                };
                let join = Join {
                    pid,
                    start: entry.start,
                };
                let (publisher, note) = match call.sandbox.as_ref() {
                    Some(planner) if !planner.sandbox.settings.publish.is_empty() => {
                        publish(
                            &planner.sandbox.helper,
                            join,
                            &planner.sandbox.settings.publish,
                        )
                        .await
                    }
                    _ => (None, None),
                };
                Ok(Self {
                    child,
                    _group: group,
                    _stdout: stdout,
                    _stderr: stderr,
                    _publisher: publisher,
                    join,
                    note,
                })
            }
            Ok(None) | Err(_) => {
                let mut said = String::new();
                if let Some(stderr) = stderr.as_mut() {
                    let _ = timeout(
                        Duration::from_millis(500),
                        stderr.take(64 * 1024).read_to_string(&mut said),
                    )
                    .await;
                }
                Err(format!(
                    "Could not set up the session's shared sandbox for background processes, so \
                     the command did not run.\n{}",
                    said.trim_end()
                ))
            }
        }
    }

    /// Whether the keeper still runs.
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// Starts the helper that forwards `ports` of the host's loopback into
/// the keeper's network, and what to tell the model about it.
async fn publish(helper: &Path, join: Join, ports: &[u16]) -> (Option<Child>, Option<String>) {
    let mut command = Command::new(helper);
    command
        .arg(HELPER_ARG)
        .arg("publish")
        .arg(join.pid.to_string())
        .arg(join.start.to_string())
        .args(ports.iter().map(u16::to_string))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let list = ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                None,
                Some(format!(
                    "[sandbox] publish: could not start forwarding {list}: {e}"
                )),
            );
        }
    };
    let mut line = String::new();
    let ready = match child.stdout.take() {
        Some(stdout) => {
            let mut stdout = BufReader::new(stdout);
            timeout(READY_WAIT, stdout.read_line(&mut line))
                .await
                .is_ok()
                && line.trim_end() == PUBLISH_READY
        }
        None => false,
    };
    if ready {
        return (
            Some(child),
            Some(format!(
                "Forwarded to the host ([sandbox] publish): {list} there reaches the same port here."
            )),
        );
    }
    let mut said = String::new();
    if let Some(stderr) = child.stderr.as_mut() {
        let _ = timeout(
            Duration::from_millis(500),
            stderr.take(64 * 1024).read_to_string(&mut said),
        )
        .await;
    }
    (
        None,
        Some(format!(
            "[sandbox] publish: could not forward {list} to the host: {}",
            said.trim_end()
        )),
    )
}

/// Reads the keeper's two lines: where it is, then that it is ready.
/// `None` when it ended first or said something else.
async fn read_ready(stdout: &mut BufReader<tokio::process::ChildStdout>) -> Option<i32> {
    let mut line = String::new();
    stdout.read_line(&mut line).await.ok()?;
    let pid = line
        .trim_end()
        .strip_prefix(KEEPER_AT)?
        .trim()
        .parse::<i32>()
        .ok()?;
    line.clear();
    stdout.read_line(&mut line).await.ok()?;
    (line.trim_end() == KEEPER_READY).then_some(pid)
}
