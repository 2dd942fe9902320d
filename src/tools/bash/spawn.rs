//! Starting one bash call: its sandbox planned (on its own, joining the
//! session's keeper, or as the keeper), then the guard, the sandbox helper
//! or bash itself started in a process group of its own, with the hidden
//! variables removed. Never waits for the command and never decides.

use std::path::PathBuf;
use std::process::Stdio;

use rustix::process::Pid;
use tokio::process::{Child, Command};

use super::guard::GUARD;
use super::{BashCall, Group};
use crate::sandbox;
use crate::tools::ToolOutcome;

/// What the sandbox said about one call's plan: the helper's arguments,
/// the masked paths and the note about links it left alone.
pub(super) type Planned = (Vec<std::ffi::OsString>, Vec<String>, Option<String>);

/// A command started: its process (the guard, where there is one), the
/// group it is signalled through, its output pipes and its plan.
pub(super) struct Started {
    pub(super) child: Child,
    pub(super) group: Group,
    pub(super) stdout: Option<tokio::process::ChildStdout>,
    pub(super) stderr: Option<tokio::process::ChildStderr>,
    pub(super) plan: Option<Planned>,
}

/// How a call enters the sandbox: on its own, joining the session's
/// keeper, or as the keeper itself.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Entry {
    pub(super) join: Option<sandbox::Join>,
    pub(super) keeper: bool,
}

/// Plans the call's sandbox and starts it under the guard. Never waits for
/// it; an error is the call's result.
pub(super) async fn start(call: &BashCall, entry: Entry) -> Result<Started, ToolOutcome> {
    let plan = match &call.sandbox {
        Some(planner) => {
            let planner = planner.clone();
            let text = call.command.clone();
            // The network's way out, started by the first call that needs it.
            let proxy = match planner.proxy_socket() {
                None => None,
                Some(Ok(socket)) => Some(socket),
                Some(Err(e)) => {
                    return Err(ToolOutcome::error(format!("{e}; the command did not run.")));
                }
            };
            // The shell gate's own variables pass the sandbox's allow-list.
            let keep: Vec<String> = call.env.iter().map(|(k, _)| k.clone()).collect();
            match tokio::task::spawn_blocking(move || {
                let mut plan = planner.plan(&text);
                plan.keep_env.extend(keep);
                plan.proxy = proxy;
                plan.join = entry.join.filter(|_| plan.namespaces);
                plan.keeper = entry.keeper;
                plan.direct_loopback = plan.join.is_some() && planner.direct_loopback();
                let masked: Vec<String> = plan.masked().map(|p| planner.display(p)).collect();
                let links: Vec<String> = plan
                    .ignored_links
                    .iter()
                    .map(|p| planner.display(p))
                    .collect();
                (plan.to_args(), masked, sandbox::links_note(&links))
            })
            .await
            {
                Ok((Ok(args), masked, links)) => Some((args, masked, links)),
                Ok((Err(e), _, _)) => {
                    return Err(ToolOutcome::error(format!(
                        "Could not write the sandbox plan: {e}"
                    )));
                }
                Err(e) => {
                    return Err(ToolOutcome::error(format!(
                        "Could not plan the sandbox: {e}"
                    )));
                }
            }
        }
        None => None,
    };
    // What runs: bash itself, or the sandbox helper (mino's own binary)
    // that sets the sandbox up and then runs bash.
    let (program, args): (PathBuf, Vec<std::ffi::OsString>) = match (&call.sandbox, &plan) {
        (Some(planner), Some((args, _, _))) => (planner.sandbox.helper.clone(), args.clone()),
        _ => (
            PathBuf::from("bash"),
            vec!["-c".into(), call.command.clone().into()],
        ),
    };
    // Under the guard (see `guard`), mino never signals the shell
    // itself: it gives orders through the guard's stdin, and a dropped call
    // closes it, which the guard answers by killing everything. Killing the
    // guard on drop would leave its orphans behind, so it is not. The
    // guard runs the sandbox helper, which runs bash: the guard's
    // guarantees (subreaper, parent-death signal, every descendant killed)
    // hold for the helper and, through the PID namespace's end, for
    // everything inside.
    let mut command = match &call.guard {
        Some(mino) => {
            let mut command = Command::new(mino);
            command.arg(GUARD).arg("--").arg(&program).args(&args);
            command.stdin(Stdio::piped());
            command
        }
        None => {
            let mut command = Command::new(&program);
            command.args(&args).stdin(Stdio::null()).kill_on_drop(true);
            command
        }
    };
    command
        .current_dir(&call.cwd)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in &call.hidden_env {
        command.env_remove(name);
    }
    // Nor do mino's own variables (where its home is) reach a command.
    for name in crate::home::own_variables() {
        command.env_remove(name);
    }
    command.envs(call.env.iter().map(|(k, v)| (k, v)));
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Err(ToolOutcome::error(format!("Could not start bash: {e}"))),
    };
    // `process_group(0)`: the group's id is the child's pid.
    let Some(group) = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw)
        .map(|pid| Group::new(pid, child.stdin.take()))
    else {
        let _ = child.start_kill();
        return Err(ToolOutcome::error(
            "Could not start bash: it has no process id.",
        ));
    };
    Ok(Started {
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        group,
        plan,
    })
}
