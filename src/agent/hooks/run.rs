//! Runs one hook command as Claude Code does: `/bin/sh -c COMMAND` in the
//! project directory with `CLAUDE_PROJECT_DIR` set, the event as JSON on
//! stdin, stdout and stderr read at once and bounded, all within the
//! command's timeout (past it, the hook's process group is killed). Without
//! mino's own `MINO_*` variables. Reports what happened; never judges it.

use std::path::Path;
use std::process::Stdio;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::config::HookCommand;

/// The most of a hook's stdout, and of its stderr, that is read.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

/// How a hook command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this status (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It could not be started.
    Failed(String),
    /// It ran past its timeout and was killed.
    TimedOut,
}

/// What a hook command did and said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub outcome: Outcome,
    pub stdout: String,
    /// More than `OUTPUT_LIMIT` bytes came on stdout.
    pub stdout_cut: bool,
    pub stderr: String,
}

/// Runs `hook` in `project` with `input` on its stdin.
pub async fn run(hook: &HookCommand, project: &Path, input: &str) -> Ran {
    match tokio::time::timeout(hook.timeout, run_unbounded(hook, project, input)).await {
        Ok(Ok(ran)) => ran,
        Ok(Err(e)) => Ran {
            outcome: Outcome::Failed(e.to_string()),
            stdout: String::new(),
            stdout_cut: false,
            stderr: String::new(),
        },
        Err(_) => Ran {
            outcome: Outcome::TimedOut,
            stdout: String::new(),
            stdout_cut: false,
            stderr: String::new(),
        },
    }
}

async fn run_unbounded(hook: &HookCommand, project: &Path, input: &str) -> std::io::Result<Ran> {
    let mut command = tokio::process::Command::new("/bin/sh");
    // mino's own variables are no hook's business.
    for name in crate::home::own_variables() {
        command.env_remove(name);
    }
    let mut child = command
        .arg("-c")
        .arg(&hook.command)
        .current_dir(project)
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        // A group of its own, so what it started dies with it.
        .process_group(0)
        .spawn()?;
    let mut group = Group(
        child
            .id()
            .and_then(|id| Pid::from_raw(i32::try_from(id).ok()?)),
    );
    let stdin = child.stdin.take();
    let write = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input still gets to answer.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
    };
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let ((), (stdout, stdout_cut), (stderr, _)) =
        tokio::join!(write, bounded(stdout), bounded(stderr));
    let status = child.wait().await?;
    // It answered in time: what it left running in the background is its
    // own business, as in Claude Code.
    group.0 = None;
    Ok(Ran {
        outcome: Outcome::Exited(status.code()),
        stdout,
        stdout_cut,
        stderr: stderr.trim().to_string(),
    })
}

/// A hook's process group, killed when its run is dropped unfinished (a
/// timeout, an interrupt): a child that still holds its pipes dies too.
struct Group(Option<Pid>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

/// Up to `OUTPUT_LIMIT` bytes of `pipe` as text, and whether there was
/// more (which is read and dropped, so the writer never blocks).
async fn bounded(pipe: Option<impl AsyncRead + Unpin>) -> (String, bool) {
    let Some(mut pipe) = pipe else {
        return (String::new(), false);
    };
    let mut buf = Vec::new();
    let _ = (&mut pipe)
        .take(OUTPUT_LIMIT as u64 + 1)
        .read_to_end(&mut buf)
        .await;
    let cut = buf.len() > OUTPUT_LIMIT;
    if cut {
        buf.truncate(OUTPUT_LIMIT);
        let _ = tokio::io::copy(&mut pipe, &mut tokio::io::sink()).await;
    }
    (String::from_utf8_lossy(&buf).into_owned(), cut)
}
