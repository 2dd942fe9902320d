//! A session's background processes (`bash` with `background: true`): the
//! table of them, how one is started and watched until it ends, what
//! `bash_output` and `bash_kill` and `/shells` read and do, and the
//! session's keeper whose network they and every later call share. At
//! most `limit` run at once. Everything here dies with the session's
//! `Shells` (`kill_all` on `/new`, `/resume` and exit) and with mino
//! however it ends: each process runs under the bash guard, whose lifeline
//! is mino. Never decides whether anything runs.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use tokio::process::Child;
use tokio::time::{sleep, timeout};
use tokio_util::sync::CancellationToken;

use super::keeper::Keeper;
use super::log::Log;
use super::output::{Pipes, Sink};
use super::{BashCall, CANCEL_DRAIN, DRAIN_GRACE, Entry, Group, REAP_WAIT, Started, start, status};
use crate::sandbox::{self, HELPER_PREFIX, Join, Level, SETUP_FAILED};
use crate::secrets::HeldSecrets;
use crate::tools::{ToolError, ToolOutcome};

/// How many background processes a session runs at once by default.
pub const DEFAULT_LIMIT: usize = crate::config::DEFAULT_BACKGROUND_SHELLS;

/// How long a background call waits for the first line of output before
/// it returns.
const FIRST_OUTPUT_WAIT: Duration = Duration::from_secs(2);

/// How long `bash_kill` and `kill_all` wait for a killed process to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The session's background processes.
pub struct Shells {
    procs: Mutex<Vec<Arc<Background>>>,
    next: AtomicU32,
    limit: usize,
    /// The session's keeper, once a background call started one.
    keeper: Mutex<Option<Keeper>>,
    /// Held while a keeper starts, so two calls never start two.
    starting: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Shells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shells")
            .field("running", &self.running())
            .field("limit", &self.limit)
            .finish()
    }
}

impl Default for Shells {
    fn default() -> Self {
        Self::new(DEFAULT_LIMIT)
    }
}

/// How a background process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    /// `Exit code: N`, or the signal.
    Exited(String),
    Killed,
    Failed(String),
}

impl End {
    fn words(&self) -> String {
        match self {
            End::Exited(status) => format!("has ended ({status})"),
            End::Killed => "was stopped, with everything it started".to_string(),
            End::Failed(why) => format!("could not be watched: {why}"),
        }
    }
}

/// One background process.
pub struct Background {
    pub id: u32,
    pub command: String,
    started: Instant,
    log: Mutex<Log>,
    end: Mutex<Option<End>>,
    /// Cancelled to kill it.
    stop: CancellationToken,
    /// Cancelled once it is gone and its output read to the end.
    done: CancellationToken,
    secrets: HeldSecrets,
}

/// One line of `/shells`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLine {
    pub id: u32,
    pub command: String,
    pub uptime: Duration,
    pub running: bool,
    pub last_line: String,
}

impl Background {
    fn lock_log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn end(&self) -> Option<End> {
        self.end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn running(&self) -> bool {
        self.end().is_none()
    }

    /// What it printed since the model last read, and how it stands.
    pub async fn read_new(&self) -> String {
        let secrets = self.secrets.get().await;
        let end = self.end();
        let new = self.lock_log().take_new(&secrets, end.is_some());
        let state = match &end {
            None => format!(
                "Background process {} is still running ({} s).",
                self.id,
                self.started.elapsed().as_secs()
            ),
            Some(end) => format!("Background process {} {}.", self.id, end.words()),
        };
        let new = if new.is_empty() {
            "(no new output)".to_string()
        } else {
            new
        };
        format!("{state}\nCommand: {}\nNew output:\n{new}", self.command)
    }

    /// Everything still kept of its output, for a person (`/shells ID`).
    pub fn kept_output(&self) -> String {
        self.lock_log().kept_text()
    }
}

struct LogSink<'a>(&'a Background);

impl Sink for LogSink<'_> {
    fn push(&self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.0.lock_log().push(bytes);
        }
    }
}

impl Shells {
    pub fn new(limit: usize) -> Self {
        Self {
            procs: Mutex::new(Vec::new()),
            next: AtomicU32::new(1),
            limit,
            keeper: Mutex::new(None),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    fn procs(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Background>>> {
        self.procs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(&self) -> usize {
        self.procs().iter().filter(|p| p.running()).count()
    }

    /// Whether the session has a background process to read or stop: the
    /// two tools are offered only then.
    pub fn is_empty(&self) -> bool {
        self.procs().is_empty()
    }

    /// The error a background call gets when `limit` already run.
    pub fn check_room(&self) -> Result<(), ToolError> {
        if self.running() >= self.limit {
            return Err(ToolError::Failed(self.full()));
        }
        Ok(())
    }

    fn full(&self) -> String {
        format!(
            "The command did not start: {} background processes are running already, the most \
             this session allows ([limits] background_shells = {}). Stop one with bash_kill first.",
            self.limit, self.limit
        )
    }

    pub fn get(&self, id: u32) -> Option<Arc<Background>> {
        self.procs().iter().find(|p| p.id == id).cloned()
    }

    /// The ids in the table, for an error naming what exists.
    pub fn ids(&self) -> Vec<u32> {
        self.procs().iter().map(|p| p.id).collect()
    }

    /// The table for `/shells`.
    pub fn list(&self) -> Vec<ShellLine> {
        self.procs()
            .iter()
            .map(|p| ShellLine {
                id: p.id,
                command: p.command.clone(),
                uptime: p.started.elapsed(),
                running: p.running(),
                last_line: p.lock_log().last_line(),
            })
            .collect()
    }

    /// The network a sandboxed call joins: the keeper's while it lives.
    pub(super) fn join_target(&self) -> Option<Join> {
        let mut keeper = self.keeper.lock().unwrap_or_else(PoisonError::into_inner);
        let k = keeper.as_mut()?;
        k.alive().then_some(k.join)
    }

    /// The keeper for a background call in the full sandbox, started the
    /// first time; `None` where commands share the host's network anyway
    /// (Landlock alone, no sandbox).
    /// With it, what the keeper's start says (the published ports).
    async fn keeper_for(&self, call: &BashCall) -> Result<(Option<Join>, Option<String>), String> {
        let full = call
            .sandbox
            .as_ref()
            .is_some_and(|planner| planner.sandbox.level == Level::Full);
        if !full {
            return Ok((None, None));
        }
        let _starting = self.starting.lock().await;
        if let Some(join) = self.join_target() {
            return Ok((Some(join), None));
        }
        let keeper = Keeper::start(call).await?;
        let join = keeper.join;
        let note = keeper.note.clone();
        *self.keeper.lock().unwrap_or_else(PoisonError::into_inner) = Some(keeper);
        Ok((Some(join), note))
    }

    /// A new entry in the table, when there is room.
    fn add(
        &self,
        command: &str,
        limit: usize,
        secrets: HeldSecrets,
    ) -> Result<Arc<Background>, String> {
        let mut procs = self.procs();
        if procs.iter().filter(|p| p.running()).count() >= self.limit {
            return Err(self.full());
        }
        // Ended ones wait for the model to read them, but never more than
        // `limit` of them: memory stays bounded however many are started.
        while procs.iter().filter(|p| !p.running()).count() >= self.limit {
            let Some(oldest) = procs.iter().position(|p| !p.running()) else {
                break;
            };
            procs.remove(oldest);
        }
        let bg = Arc::new(Background {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            command: command.to_string(),
            started: Instant::now(),
            log: Mutex::new(Log::new(limit)),
            end: Mutex::new(None),
            stop: CancellationToken::new(),
            done: CancellationToken::new(),
            secrets,
        });
        procs.push(bg.clone());
        Ok(bg)
    }

    /// Takes `id` out of the table once it has ended and the model read
    /// all it printed.
    pub fn forget_if_done(&self, id: u32) {
        self.procs()
            .retain(|p| p.id != id || p.running() || p.lock_log().has_unread());
    }

    /// Stops `id` with everything it started, waits until it is gone, and
    /// takes it out of the table. `None` when there is no such process.
    pub async fn kill(&self, id: u32) -> Option<String> {
        let bg = self.get(id)?;
        let was_running = bg.running();
        bg.stop.cancel();
        let _ = timeout(KILL_WAIT, bg.done.cancelled()).await;
        let rest = bg.read_new().await;
        self.procs().retain(|p| p.id != id);
        Some(if was_running {
            format!("Stopped background process {id}, with everything it started.\n{rest}")
        } else {
            format!("Background process {id} had already ended; it is now forgotten.\n{rest}")
        })
    }

    /// Stops every background process and the keeper (the session ends):
    /// returns once they are gone (or after a bound).
    pub async fn kill_all(&self) -> usize {
        let procs: Vec<Arc<Background>> = std::mem::take(&mut *self.procs());
        for bg in &procs {
            bg.stop.cancel();
        }
        for bg in &procs {
            let _ = timeout(KILL_WAIT, bg.done.cancelled()).await;
        }
        let keeper = self
            .keeper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(keeper);
        procs.len()
    }
}

/// `bash` with `background: true`: start the command, register it, return
/// with its id and its first lines.
pub(super) async fn run(call: BashCall, cancel: CancellationToken) -> ToolOutcome {
    if cancel.is_cancelled() {
        return ToolOutcome::interrupted("Interrupted before the command started; nothing ran.");
    }
    let shells = call.shells.clone();
    if let Err(e) = shells.check_room() {
        return ToolOutcome::error(e.to_string());
    }
    let (join, published) = match shells.keeper_for(&call).await {
        Ok(found) => found,
        Err(why) => return ToolOutcome::error(why),
    };
    let bg = match shells.add(&call.command, call.output_limit, call.secrets.clone()) {
        Ok(bg) => bg,
        Err(why) => return ToolOutcome::error(why),
    };
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
    let entry = Entry {
        join,
        keeper: false,
    };
    let started = match start(&call, entry).await {
        Ok(started) => started,
        Err(outcome) => {
            shells.procs().retain(|p| p.id != bg.id);
            return outcome;
        }
    };
    tokio::spawn(watch(bg.clone(), started, before));
    first_output(&bg, &cancel).await;
    let secrets = bg.secrets.get().await;
    let end = bg.end();
    let first = bg.lock_log().take_new(&secrets, end.is_some());
    let setup_failed = End::Exited(format!("Exit code: {SETUP_FAILED}"));
    if call.sandbox.is_some()
        && end.as_ref() == Some(&setup_failed)
        && first.contains(HELPER_PREFIX)
    {
        shells.procs().retain(|p| p.id != bg.id);
        return ToolOutcome::error(format!(
            "The sandbox could not be set up, so the command did not run.\n{first}"
        ));
    }
    let id = bg.id;
    let first = if first.is_empty() {
        "(no output yet)".to_string()
    } else {
        first
    };
    let state = match &end {
        None => format!(
            "Started background process {id}; it keeps running after this call. Read what it \
             prints with bash_output {{\"id\": {id}}}, stop it with bash_kill {{\"id\": {id}}}. \
             Later bash calls reach what it serves on localhost."
        ),
        Some(end) => format!("Background process {id} {} already.", end.words()),
    };
    if end.is_some() {
        shells.forget_if_done(id);
    }
    let published = published
        .map(|note| format!("\n{note}"))
        .unwrap_or_default();
    ToolOutcome::completed(format!("{state}{published}\nFirst output:\n{first}"))
}

/// Waits for a first whole line, the end, a cancel, or the bound.
async fn first_output(bg: &Background, cancel: &CancellationToken) {
    let deadline = Instant::now() + FIRST_OUTPUT_WAIT;
    while Instant::now() < deadline && !cancel.is_cancelled() {
        if bg.done.is_cancelled() || bg.lock_log().has_line() {
            return;
        }
        sleep(Duration::from_millis(20)).await;
    }
}

/// Follows one background process until it ends or is stopped.
async fn watch(
    bg: Arc<Background>,
    started: Started,
    before: Option<sandbox::call_check::CallCheck>,
) {
    let Started {
        mut child,
        mut group,
        stdout,
        stderr,
        ..
    } = started;
    let mut pipes = Pipes::new(stdout, stderr);
    let sink = LogSink(&bg);
    let status = loop {
        tokio::select! {
            biased;
            () = bg.stop.cancelled() => break None,
            status = child.wait() => break Some(status),
            () = pipes.pump(&sink), if pipes.is_open() => {}
        }
    };
    let end = finish(&mut child, &mut group, &mut pipes, &sink, status).await;
    if let Some(before) = before
        && let Ok(Some(note)) = tokio::task::spawn_blocking(move || before.restore()).await
    {
        sink.push(format!("\n{note}\n").as_bytes());
    }
    *bg.end.lock().unwrap_or_else(PoisonError::into_inner) = Some(end);
    bg.done.cancel();
}

/// Kills what is left of the process's group, reads what is left in the
/// pipes, reaps it; how it ended.
async fn finish(
    child: &mut Child,
    group: &mut Group,
    pipes: &mut Pipes,
    sink: &LogSink<'_>,
    status: Option<std::io::Result<std::process::ExitStatus>>,
) -> End {
    group.signal(Signal::KILL);
    let drain = if status.is_some() {
        DRAIN_GRACE
    } else {
        CANCEL_DRAIN
    };
    let _ = pipes.drain(sink, drain).await;
    if status.is_none() {
        let _ = timeout(REAP_WAIT, child.wait()).await;
    }
    group.disarm();
    match status {
        None => End::Killed,
        Some(Ok(status)) => End::Exited(status::describe(status)),
        Some(Err(e)) => End::Failed(e.to_string()),
    }
}
