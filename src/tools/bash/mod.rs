//! The `bash` tool: runs one command with `bash -c` in the project directory
//! and hands back its exit status and its output.
//!
//! It owns the whole life of that command: its own process group, stdin from
//! /dev/null, the hidden variables removed from its environment, the timeout
//! and the cancel (both kill the whole group), and the clean-up of anything
//! the command left running in its group after it exits. Reading and keeping
//! its output (stdout and stderr together, head and tail, bounded memory) is
//! `output`'s.
//!
//! On Linux the command runs in the sandbox (`crate::sandbox`): the mino
//! binary is started as the sandbox helper with the plan on its stdin, and
//! the helper runs `bash -c`. With `sandbox: false` (its own kind of call,
//! which asks) or where no sandbox exists, bash runs with the user's account
//! permissions, as the dialog says.
//!
//! With `background: true` the call is prepared and decided the same way;
//! it is started the same way too (`spawn`) and handed to `background`,
//! the session's table, which watches it until it ends or is stopped.
//! While the session has a keeper (`keeper`), every sandboxed call enters
//! its network.
//!
//! It never decides whether the command may run (`policy` does), never runs
//! anything in `prepare`, and never inspects or rewrites the command.

use crate::tools::FieldRole;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin};
use tokio::time::{Instant, sleep, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

mod args;
pub mod background;
pub mod guard;
mod keeper;
mod log;
mod output;
mod spawn;
mod status;

use args::Args;
pub use background::Shells;
pub use output::LiveOutput;
use output::{Pipes, SharedCapture};
use spawn::{Entry, Started, start};

use crate::model::ToolSpec;
use crate::policy::{CallFacts, CallKind, ToolKey};
use crate::process_guard::{kill_strays, proc_entry};
use crate::sandbox::{self, HELPER_PREFIX, Level, Planner, SETUP_FAILED, UnsandboxedInBypass};
use crate::tools::{BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome};

/// The tool's name, as the model calls it and as its session answers are keyed.
pub const NAME: &str = "bash";

/// The longest command accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// The warning a confirmation shows under the command.
pub const NOT_A_SANDBOX: &str = "Runs with your account permissions; this is not a sandbox.";

/// After SIGTERM on timeout, how long the command may take to exit before
/// the group gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// After the group was killed, how long to keep reading what is left in the
/// pipes. Only a process that left the group can hold them open that long.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// The same on cancel, where the user is waiting.
const CANCEL_DRAIN: Duration = Duration::from_millis(200);

/// How long to wait for the killed main process to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// How long to keep killing processes a killed guard left to mino.
const STRAY_SWEEP: Duration = Duration::from_secs(2);

/// Appended when the pipes were still open after the grace.
const HELD_OPEN: &str = "[Stopped reading: a process outside the command's process group \
still holds its output open.]";

const DESCRIPTION: &str = "Runs a shell command with `bash -c` in the project directory and returns \
its exit code and its output (stdout and stderr together, in the order they arrived). Stdin is \
empty. Long output keeps its beginning and its end, with a marker saying how many bytes were left \
out. The command is stopped, with everything it started, when the timeout passes; background jobs \
are killed when the command exits. It runs in a sandbox: only the project, /tmp and the build \
caches are writable, secrets (.env, keys, ~/.ssh, ...) read as empty files, and git hooks, \
.git/config, .mino and shell start-up files are read-only. If a command truly needs to go beyond \
that, call again with `sandbox: false` and a `reason`: the user is asked every time.";

/// The last sentence of the description where no call may leave the
/// sandbox (nobody can be asked, and the settings do not let it run).
const SANDBOX_ONLY: &str = "Nobody can be asked here, so a command cannot leave the sandbox.";

/// `spec` with the sentence naming the trusted executables `paths`: a
/// command that starts with one, written with that path, with no operator,
/// needs no question in auto mode. The list is the same in every mode, so
/// it tells the model nothing about the mode. A sentence already there is
/// replaced.
pub fn trusting(mut spec: ToolSpec, paths: &[String]) -> ToolSpec {
    let base = spec
        .description
        .split(" Trusted executables: ")
        .next()
        .unwrap_or_default()
        .to_string();
    spec.description = format!(
        "{base} Trusted executables: {}. A read-only command that starts with one of these paths, written with that path and without operators, redirections or substitutions, can be decided without asking.",
        paths.join(", ")
    )
    .into();
    spec
}

/// The `bash` tool.
pub struct Bash;

impl Bash {
    /// The spec where no call can leave the sandbox: without the
    /// `sandbox` and `reason` fields, which small models otherwise fill in
    /// (copying their descriptions) and so ask for a call that can only be
    /// refused. A call that still sends them is handled as before.
    pub fn sandbox_only_spec() -> ToolSpec {
        let mut spec = Bash.spec();
        if let Some(properties) = spec.parameters["properties"].as_object_mut() {
            properties.remove("sandbox");
            properties.remove("reason");
        }
        let kept = DESCRIPTION
            .split_once(" If a command truly needs")
            .map_or(DESCRIPTION, |(head, _)| head);
        spec.description = format!("{kept} {SANDBOX_ONLY}").into();
        spec
    }
}

impl Tool for Bash {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: DESCRIPTION.into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The shell command, run with `bash -c` in the project directory."
                    },
                    "timeout_secs": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Seconds before the command is stopped. Can only shorten the configured timeout."
                    },
                    "sandbox": {
                        "type": "boolean",
                        "description": "false runs the command outside the sandbox, with the user's account permissions; the user is asked every time. Default: true."
                    },
                    "reason": {
                        "type": "string",
                        "description": "With sandbox: false, why the command needs to leave the sandbox; shown to the user."
                    },
                    "background": {
                        "type": "boolean",
                        "description": "true starts a long-running command (a dev server, a watcher) and returns at once with its id and first lines of output; read more with bash_output, stop it with bash_kill. Later bash calls reach what it serves on localhost. Default: false."
                    }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args = Args::parse(args, cx.bash_timeout)?;
        let timeout = match args.timeout_secs {
            Some(secs) => cx.bash_timeout.min(Duration::from_secs(secs)),
            None => cx.bash_timeout,
        };
        let planner = &cx.sandbox;
        let settings = &planner.sandbox.settings;
        let exists = planner.sandbox.level != Level::None;
        let missing = planner.sandbox.missing();
        if settings.required && (!exists || !args.sandboxed || !missing.is_empty()) {
            return Err(ToolError::Failed(format!(
                "The command did not run: the user's settings require the sandbox ([sandbox] \
                 required = true), and {}. {}",
                if !exists {
                    "this machine offers neither user namespaces nor Landlock".to_string()
                } else if !args.sandboxed {
                    "sandbox: false asks to leave it".to_string()
                } else {
                    format!("the sandbox here lacks: {}", missing.join("; "))
                },
                crate::policy::DO_NOT_RETRY
            )));
        }
        if args.background {
            cx.shells.check_room()?;
        }
        let (kind, sandbox) = match (exists, args.sandboxed) {
            (true, true) => (CallKind::Shell, Some(planner.clone())),
            (true, false) => (
                CallKind::UnsandboxedShell {
                    run_in_bypass: settings.unsandboxed_in_bypass == UnsandboxedInBypass::Run,
                },
                None,
            ),
            // No sandbox to leave: every call is the plain kind.
            (false, _) => (CallKind::Shell, None),
        };
        let mut facts = CallFacts::new(ToolKey::new(NAME), kind);
        facts.command = Some(args.command.clone());
        Ok(Box::new(BashCall {
            facts,
            command: args.command,
            cwd: cx.project.root().to_path_buf(),
            timeout,
            capture: SharedCapture::new(cx.bash_output_limit, cx.secrets.clone()),
            hidden_env: cx.hidden_env.clone(),
            env: Vec::new(),
            guard: cx.bash_guard.clone(),
            reason: args.reason,
            no_sandbox: sandbox::summary(&planner.sandbox),
            sandbox,
            background: args.background,
            secrets: cx.secrets.clone(),
            output_limit: cx.bash_output_limit,
            shells: cx.shells.clone(),
        }))
    }
}

/// One prepared bash call: the command and everything it will run with.
struct BashCall {
    facts: CallFacts,
    command: String,
    cwd: PathBuf,
    timeout: Duration,
    /// What the command prints, bounded by the output limit; shared with
    /// whoever watches it run.
    capture: SharedCapture,
    hidden_env: Vec<String>,
    /// Set on top of the inherited environment (after the hidden ones are
    /// removed): the shell gate's hardened git environment.
    env: Vec<(String, String)>,
    /// mino's own binary, to run the command under its guard.
    guard: Option<PathBuf>,
    /// The sandbox it runs in; `None` runs bash with the user's account.
    sandbox: Option<Arc<Planner>>,
    /// Why the model asked to leave the sandbox.
    reason: Option<String>,
    /// What the `Sandbox` field says when it runs without one.
    no_sandbox: String,
    /// `background: true`: started, registered with the session's shells,
    /// and left running.
    background: bool,
    /// The values redaction hides (a background process's log holds back
    /// their pieces).
    secrets: crate::secrets::HeldSecrets,
    /// Bytes of output kept.
    output_limit: usize,
    /// The session's background processes (and the keeper whose network
    /// a sandboxed call joins while one exists).
    shells: Arc<Shells>,
}

impl PreparedCall for BashCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = vec![
            Field::text("Command", self.command.clone()).with_role(FieldRole::Command),
            Field::text("Working directory", self.cwd.to_string_lossy())
                .with_role(FieldRole::Place),
        ];
        if self.background {
            fields.push(Field::text(
                "Runs",
                "in the background, until it ends, is stopped, or the session ends",
            ));
        }
        match (&self.sandbox, &self.reason) {
            (Some(planner), _) => {
                fields.push(
                    Field::text("Sandbox", sandbox::summary(&planner.sandbox))
                        .with_role(FieldRole::Place),
                );
            }
            (None, Some(reason)) if self.facts.kind != CallKind::Shell => {
                fields.push(Field::text(
                    "Sandbox",
                    "none: the model asks to run this outside the sandbox",
                ));
                fields.push(Field::text("Reason", reason.clone()));
                fields.push(Field::warning(NOT_A_SANDBOX));
            }
            (None, _) => {
                fields.push(
                    Field::text("Sandbox", self.no_sandbox.clone()).with_role(FieldRole::Place),
                );
                fields.push(Field::warning(NOT_A_SANDBOX));
            }
        }
        fields
    }

    fn set_env(&mut self, vars: Vec<(String, String)>) {
        self.env = vars;
    }

    fn live_output(&self) -> Option<LiveOutput> {
        Some(self.capture.reader())
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(run(*self, cancel))
    }
}

/// The command, then the sandbox's check of the repository: whatever the
/// call left that the user's own git would run is undone and said so, on
/// every way the call ends.
async fn run(call: BashCall, cancel: CancellationToken) -> ToolOutcome {
    if call.background {
        return background::run(call, cancel).await;
    }
    let before = match &call.sandbox {
        Some(planner) => {
            let planner = planner.clone();
            let project = call.cwd.clone();
            tokio::task::spawn_blocking(move || {
                sandbox::call_check::CallCheck::capture(&planner, &project)
            })
            .await
            .ok()
        }
        None => None,
    };
    let mut outcome = run_command(call, cancel).await;
    if let Some(before) = before
        && let Ok(Some(note)) = tokio::task::spawn_blocking(move || before.restore()).await
    {
        if !outcome.output.ends_with('\n') {
            outcome.output.push('\n');
        }
        outcome.output.push_str(&note);
    }
    outcome
}

async fn run_command(call: BashCall, cancel: CancellationToken) -> ToolOutcome {
    if cancel.is_cancelled() {
        return ToolOutcome::interrupted("Interrupted before the command started; nothing ran.");
    }
    let entry = Entry {
        join: call.shells.join_target(),
        keeper: false,
    };
    let Started {
        mut child,
        mut group,
        stdout,
        stderr,
        plan,
    } = match start(&call, entry).await {
        Ok(started) => started,
        Err(outcome) => return outcome,
    };
    let mut pipes = Pipes::new(stdout, stderr);
    let capture = &call.capture;

    let deadline = sleep_until(Instant::now() + call.timeout);
    tokio::pin!(deadline);
    let status = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return interrupt(&mut child, &mut group, &mut pipes, capture).await;
            }
            () = &mut deadline => {
                return time_out(&mut child, &mut group, &mut pipes, capture, call.timeout, &cancel)
                    .await;
            }
            status = child.wait() => break status,
            () = pipes.pump(capture), if pipes.is_open() => {}
        }
    };

    // The main process is gone; so is anything it left running in its group
    // (a background job holding the pipes open would otherwise hang the read).
    group.signal(Signal::KILL);
    let closed = pipes.drain(capture, DRAIN_GRACE).await;
    group.disarm();
    match status {
        Ok(status) => {
            let output = capture.render().await;
            if plan.is_some()
                && status.code() == Some(SETUP_FAILED)
                && output.contains(HELPER_PREFIX)
            {
                return ToolOutcome::error(format!(
                    "The sandbox could not be set up, so the command did not run.\n{output}"
                ));
            }
            let mut text = format!("{}\n{output}", status::describe(status));
            let mut notes = Vec::new();
            if !closed {
                notes.push(HELD_OPEN.to_string());
            }
            if let Some((_, masked, links)) = &plan {
                notes.extend(links.clone());
                notes.extend(sandbox::masked_note(&call.command, masked));
                notes.extend(sandbox::network_note(&output));
                if let Some(planner) = &call.sandbox {
                    notes.extend(sandbox::result_note(&output, planner.sandbox.level));
                }
            }
            for note in notes {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&note);
            }
            ToolOutcome::completed(text)
        }
        Err(e) => {
            let output = capture.render().await;
            ToolOutcome::error(format!("Could not wait for bash: {e}\n{output}"))
        }
    }
}

/// Cancel: kill the group at once, keep what had already arrived.
async fn interrupt(
    child: &mut Child,
    group: &mut Group,
    pipes: &mut Pipes,
    capture: &SharedCapture,
) -> ToolOutcome {
    kill_and_reap(child, group, pipes, capture, CANCEL_DRAIN).await;
    let output = capture.render().await;
    ToolOutcome::interrupted(format!(
        "Interrupted by the user; the command's process group was killed.\n{output}"
    ))
}

/// Timeout: SIGTERM to the group, a short grace while still reading (so a
/// command cleaning up is not blocked on a full pipe), then SIGKILL to the
/// group whether or not anything is left.
async fn time_out(
    child: &mut Child,
    group: &mut Group,
    pipes: &mut Pipes,
    capture: &SharedCapture,
    after: Duration,
    cancel: &CancellationToken,
) -> ToolOutcome {
    group.signal(Signal::TERM);
    let grace = sleep(TERM_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            () = &mut grace => break,
            _ = child.wait() => break,
            () = pipes.pump(capture), if pipes.is_open() => {}
        }
    }
    kill_and_reap(child, group, pipes, capture, DRAIN_GRACE).await;
    let output = capture.render().await;
    ToolOutcome::error(format!(
        "Timed out after {} s; the command's process group was killed.\n{output}",
        seconds(after)
    ))
}

/// How a cancel and a timeout both end: SIGKILL to the group, what is left in
/// the pipes read for at most `drain`, the main process reaped.
async fn kill_and_reap(
    child: &mut Child,
    group: &mut Group,
    pipes: &mut Pipes,
    capture: &SharedCapture,
    drain: Duration,
) {
    group.signal(Signal::KILL);
    pipes.drain(capture, drain).await;
    let _ = timeout(REAP_WAIT, child.wait()).await;
    group.disarm();
}

/// A duration in seconds as a person reads it: `30`, `1.5`.
pub(super) fn seconds(duration: Duration) -> String {
    duration.as_secs_f64().to_string()
}

/// The command's process group, or the guard it runs under. Dropping it
/// while armed (the run future was dropped mid-way) kills the group, so
/// nothing outlives an abandoned call.
struct Group {
    pid: Pid,
    /// The guard's stdin: orders go through it, and its end kills all.
    lifeline: Option<ChildStdin>,
    /// When the guard started (clock ticks after boot), to find what it
    /// left reparented to mino if it was killed itself.
    started: Option<u64>,
    armed: bool,
}

impl Group {
    fn new(pid: Pid, lifeline: Option<ChildStdin>) -> Self {
        let started = lifeline
            .as_ref()
            .and_then(|_| proc_entry(pid.as_raw_nonzero().get()))
            .map(|entry| entry.start);
        Self {
            pid,
            lifeline,
            started,
            armed: true,
        }
    }

    fn signal(&self, signal: Signal) {
        if !self.armed {
            return;
        }
        match &self.lifeline {
            // A guard that has exited makes this EPIPE: nothing is left.
            Some(lifeline) => {
                let order: &[u8] = if signal == Signal::TERM { b"T" } else { b"K" };
                let _ = rustix::io::write(lifeline, order);
            }
            // ESRCH (nobody left in the group) is the common, fine case.
            None => {
                let _ = kill_process_group(self.pid, signal);
            }
        }
    }

    /// After the final kill: the id may be reused once the group is empty.
    /// A guard that was itself killed left its orphans to mino (a
    /// subreaper): they are killed here.
    fn disarm(&mut self) {
        self.armed = false;
        self.lifeline = None;
        if let Some(started) = self.started {
            kill_strays(started, None, STRAY_SWEEP);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal(Signal::KILL);
    }
}
