//! The full-screen front end: sets the terminal up, runs the event loop and
//! restores the terminal on every way out. The loop sleeps until a terminal
//! event, an agent event or a signal arrives (a tick exists only while a
//! turn runs), drains everything queued, and draws at most once per frame,
//! and only when something changed. It draws and reads keys; it never
//! decides: a dialog only collects an answer and hands it back.

pub mod app;
pub mod arming;
pub mod composer;
pub mod consent;
pub mod format;
pub mod from_agent;
pub mod highlight;
pub mod keymap;
pub mod markdown;
pub mod msg;
pub mod term;
pub mod transcript;
pub mod update;
pub mod view;
pub mod wrap;

#[cfg(test)]
mod tests;

use std::future::poll_fn;
use std::path::{Path, PathBuf};
use std::task::Poll;
use std::time::{Duration, Instant};

use crossterm::event::EventStream;
use futures_util::StreamExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;
use tokio::time::{Interval, MissedTickBehavior};

use super::{finish_agent, next_signal};
use crate::agent::{AgentEvent, AgentHandle};

use app::App;
use msg::{Action, Msg};
use term::Tui;

/// At most one frame per this long.
const FRAME: Duration = Duration::from_millis(16);
/// While an answer streams and no key waits to be shown, at most one frame
/// per this long: text arriving 25 times a second reads as smoothly, and
/// each frame draws the growing answer again.
const STREAM_FRAME: Duration = Duration::from_millis(40);
/// The spinner's and elapsed time's tick, while a turn runs.
const TICK: Duration = Duration::from_millis(100);
/// Terminal events handled before the screen gets a chance to draw.
const BATCH: usize = 1024;
/// How long quitting waits for an interrupted turn to end.
const QUIT_GRACE: Duration = Duration::from_secs(2);

/// Why the loop ended.
enum Exit {
    Quit,
    Signal(i32),
    AgentGone,
}

/// Runs the full-screen front end until the user quits. Returns the exit
/// status.
pub async fn run(handle: AgentHandle, project_dir: &Path, history: Option<PathBuf>) -> i32 {
    let project = project_dir.file_name().map_or_else(
        || project_dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut guard = match term::enter() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("mino: the full-screen view could not start: {e}; try --line");
            return 2;
        }
    };
    let mut handle = handle;
    let kept = match history.clone() {
        Some(path) => tokio::task::spawn_blocking(move || crate::prompt_history::load(&path))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e))),
        None => Ok(Vec::new()),
    };
    let writer = history.and_then(|path| crate::prompt_history::Writer::spawn(path).ok());
    let kept = kept.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the prompt history could not be read");
        Vec::new()
    });
    let result = event_loop(
        &mut guard.terminal,
        &mut handle,
        &project,
        kept,
        writer.as_ref(),
    )
    .await;
    if let Some(writer) = writer {
        // Every prompt sent is on disk before mino leaves.
        let _ = tokio::task::spawn_blocking(move || writer.finish()).await;
    }
    drop(guard);
    let code = match result {
        Ok(Exit::Quit) => 0,
        Ok(Exit::Signal(signal)) => 128 + signal,
        Ok(Exit::AgentGone) => {
            eprintln!("mino: the agent stopped unexpectedly; see the log under mino's home.");
            1
        }
        Err(e) => {
            eprintln!("mino: the terminal failed: {e}");
            1
        }
    };
    finish_agent(handle, code).await
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

async fn next_tick(ticker: &mut Option<Interval>) {
    match ticker {
        Some(ticker) => {
            ticker.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The project's files, when a listing runs; pending otherwise.
async fn listed_files(task: &mut Option<JoinHandle<Vec<String>>>) -> Vec<String> {
    let Some(running) = task.as_mut() else {
        return std::future::pending().await;
    };
    let files = running.await.unwrap_or_default();
    *task = None;
    files
}

async fn event_loop(
    terminal: &mut Tui,
    handle: &mut AgentHandle,
    project: &str,
    kept: Vec<String>,
    writer: Option<&crate::prompt_history::Writer>,
) -> std::io::Result<Exit> {
    let mut app = App::new(project, Instant::now());
    app.history.entries = kept;
    app.status.sandbox = handle.sandbox_badge;
    let mut terminal_events = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate()).ok();
    let mut sighup = signal(SignalKind::hangup()).ok();
    let mut ticker: Option<Interval> = None;
    let mut files_task: Option<JoinHandle<Vec<String>>> = None;
    let mut dirty = true;
    // A key (or another terminal event) changed what shows since the last
    // frame: it is drawn at the full rate.
    let mut keyed = false;
    let mut last_draw: Option<Instant> = None;
    loop {
        let frame = if !keyed && app.streaming() {
            STREAM_FRAME
        } else {
            FRAME
        };
        if dirty && last_draw.is_none_or(|at| at.elapsed() >= frame) {
            app.now = Instant::now();
            terminal.draw(|frame| view::draw(&app, frame))?;
            if last_draw.is_none() {
                // After the first frame: the highlighter's syntaxes load on a
                // thread of their own, so the first code block need not wait.
                let _ = std::thread::Builder::new()
                    .name("mino-syntaxes".into())
                    .spawn(highlight::preload);
            }
            last_draw = Some(Instant::now());
            dirty = false;
            keyed = false;
        }
        let frame_due = last_draw.map_or_else(Instant::now, |at| at + frame);
        // A question that is not armed yet is drawn again when it arms.
        let arms_at = app.arms_at();
        let mut msgs = Vec::new();
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    keyed = true;
                    msgs.extend(keymap::map(&app, &event));
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(Exit::Quit),
            },
            event = handle.events.recv() => match event {
                Some(event) => msgs.push(Msg::Agent(event)),
                None => return Ok(Exit::AgentGone),
            },
            () = next_tick(&mut ticker) => msgs.push(Msg::Tick),
            files = listed_files(&mut files_task) => msgs.push(Msg::Files(files)),
            () = tokio::time::sleep_until(frame_due.into()), if dirty => {}
            () = sleep_until_some(arms_at) => dirty = true,
            () = next_signal(&mut sigterm) => return Ok(Exit::Signal(15)),
            () = next_signal(&mut sighup) => return Ok(Exit::Signal(1)),
        }
        app.now = Instant::now();
        let mut exit = false;
        // Apply what arrived, then everything else already queued. Keys
        // are mapped one at a time: what a key means depends on what the
        // previous one opened.
        let mut pending_terminal = BATCH;
        let mut budget = 16 * BATCH;
        loop {
            budget = budget.saturating_sub(msgs.len());
            for msg in msgs.drain(..) {
                dirty = true;
                for action in update::update(&mut app, msg) {
                    if let Action::KeepPrompt(prompt) = &action {
                        if let Some(writer) = writer {
                            writer.keep(prompt);
                        }
                        continue;
                    }
                    if let Action::ListFiles = action {
                        // Listing walks the disk: on the blocking pool.
                        if let (None, Some(lister)) = (&files_task, &handle.project_files) {
                            let lister = lister.clone();
                            files_task = Some(tokio::task::spawn_blocking(move || lister.list()));
                        }
                        continue;
                    }
                    exit |= perform(terminal, handle, action)?;
                }
            }
            if exit || budget == 0 {
                break;
            }
            while msgs.len() < budget {
                match handle.events.try_recv() {
                    Ok(event) => msgs.push(Msg::Agent(event)),
                    Err(_) => break,
                }
            }
            if msgs.is_empty() && pending_terminal > 0 {
                pending_terminal -= 1;
                let ready = poll_fn(|cx| Poll::Ready(terminal_events.poll_next_unpin(cx))).await;
                match ready {
                    Poll::Ready(Some(Ok(event))) => {
                        keyed = true;
                        msgs.extend(keymap::map(&app, &event));
                    }
                    Poll::Ready(Some(Err(e))) => return Err(e),
                    Poll::Ready(None) => return Ok(Exit::Quit),
                    Poll::Pending => {}
                }
            }
            if msgs.is_empty() {
                break;
            }
        }
        if exit {
            finish_turn(&app, handle).await;
            return Ok(Exit::Quit);
        }
        match (app.turn_running(), ticker.is_some()) {
            (true, false) => {
                let mut interval = tokio::time::interval(TICK);
                interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
                ticker = Some(interval);
            }
            (false, true) => ticker = None,
            _ => {}
        }
    }
}

/// Performs one action; true when the loop should end.
fn perform(terminal: &mut Tui, handle: &AgentHandle, action: Action) -> std::io::Result<bool> {
    match action {
        Action::Send(input) => {
            // A stopped agent is noticed by the loop when its events end.
            let _ = handle.inputs.send(input);
        }
        Action::Interrupt => handle.interrupter.interrupt(),
        Action::Answer { reply, answer } => {
            // The agent may have dropped the question (an interrupt).
            let _ = reply.send(answer);
        }
        Action::Copy(text) => term::copy_to_clipboard(terminal.backend_mut(), &text)?,
        Action::Redraw => terminal.clear()?,
        // Handled by the loop, which owns the listing task and the writer.
        Action::ListFiles | Action::KeepPrompt(_) => {}
        Action::Quit => return Ok(true),
    }
    Ok(false)
}

/// Quitting during a turn interrupts it and waits (briefly) for it to end,
/// so a running command's process group is killed before mino leaves.
async fn finish_turn(app: &App, handle: &mut AgentHandle) {
    if !app.turn_running() {
        return;
    }
    handle.interrupter.interrupt();
    let _ = tokio::time::timeout(QUIT_GRACE, async {
        while let Some(event) = handle.events.recv().await {
            match event {
                AgentEvent::TurnEnd { .. } | AgentEvent::Quit => break,
                // Questions still open are dropped (a rejection).
                _ => {}
            }
        }
    })
    .await;
}
