//! The full-screen front end: sets the terminal up, runs the event loop and
//! restores the terminal on every way out. The loop sleeps until a terminal
//! event, an agent event or a signal arrives (a tick exists only while a
//! turn runs), drains everything queued, and draws at most once per frame,
//! and only when something changed. It draws and reads keys; it never
//! decides: a dialog only collects an answer and hands it back.

mod alarm;
pub mod app;
pub mod arming;
pub mod attention;
pub mod completion;
pub mod composer;
pub mod consent;
pub mod format;
pub mod from_agent;
mod hangup;
pub mod highlight;
mod input;
pub mod keymap;
pub mod markdown;
pub mod msg;
pub mod paste;
pub mod plan_offer;
pub mod records;
pub mod replay;
pub mod rewind;
mod scroll;
pub mod server_question;
pub mod term;
pub mod transcript;
pub mod update;
pub mod view;
pub mod wrap;

#[cfg(test)]
mod tests;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;

use super::{finish_agent, next_signal};
use crate::agent::build::Relaunch;
use crate::agent::{self, AgentEvent, AgentHandle};
use crate::policy::{GrantScope, ToolKey};

use crate::config::UiSettings;

use app::App;
use attention::Attention;
use msg::{Action, Msg};
use term::Tui;

/// At most one frame per this long.
const FRAME: Duration = Duration::from_millis(16);
/// While an answer streams and no key waits to be shown, at most one frame
/// per this long: text arriving 20 times a second reads as smoothly, and
/// each frame lays out the answer's growing block and draws the screen
/// again (at 200 words a second a frame took about 0.4 ms, and the frames
/// half the CPU the stream cost).
const STREAM_FRAME: Duration = Duration::from_millis(50);
/// While a turn runs, the screen is drawn at least this often (the
/// spinner and the elapsed time move): a tick comes this long after the
/// last frame, so a streaming answer's frames leave it nothing to do.
const TICK: Duration = view::status::SPIN_STEP;
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

/// What the full screen is started with besides the agent.
#[derive(Debug, Default)]
pub struct Options {
    /// `[ui]`.
    pub ui: UiSettings,
    /// How to start the agent again in another project (switching to a
    /// session of another project); none where that cannot be done.
    pub relaunch: Option<Relaunch>,
    /// Where `/copy` writes when the terminal takes no OSC 52.
    pub copy_file: Option<PathBuf>,
    /// A line shown above the banner (the demo's project path).
    pub intro: Option<String>,
    /// The file prompts are remembered in (per project, in mino's home).
    pub history: Option<PathBuf>,
}

/// What the loop keeps besides the screen's state.
struct Session<'a> {
    relaunch: Option<&'a Relaunch>,
    writer: Option<&'a crate::prompt_history::Writer>,
}

/// Runs the full-screen front end until the user quits. Returns the exit
/// status, or why the agent could not start.
///
/// `start` is the agent being built: the first frame (the title, an empty
/// transcript, the composer) is drawn before it is awaited, so what the
/// agent's start waits for (the sandbox's probe, git, a local server's
/// window) never delays the screen. Keys typed meanwhile wait in the
/// terminal's input.
pub async fn run(
    start: impl Future<Output = Result<AgentHandle, agent::AgentError>>,
    project_dir: &Path,
    options: Options,
) -> Result<i32, agent::AgentError> {
    let Options {
        ui,
        relaunch,
        copy_file,
        intro,
        history,
    } = options;
    let mut guard = match term::enter(ui.mouse) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("mino: the full-screen view could not start: {e}; try --line");
            return Ok(2);
        }
    };
    let mut app = App::new(&project_name(project_dir), Instant::now());
    app.project_dir = project_dir.to_path_buf();
    app.mouse = ui.mouse;
    // A frame that cannot be drawn now is drawn by the loop, or fails there.
    let _ = term::draw(&mut guard.terminal, |frame| view::draw(&app, frame));
    crate::logging::startup_step("the first frame");
    let kept = async {
        match history.clone() {
            Some(path) => tokio::task::spawn_blocking(move || crate::prompt_history::load(&path))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e))),
            None => Ok(Vec::new()),
        }
    };
    let (handle, kept) = tokio::join!(start, kept);
    let mut handle = match handle {
        Ok(handle) => handle,
        Err(e) => {
            // The screen is left before the error is printed.
            drop(guard);
            return Err(e);
        }
    };
    let mcp = handle.mcp.clone();
    let writer = history.and_then(|path| crate::prompt_history::Writer::spawn(path).ok());
    let kept = kept.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the prompt history could not be read");
        Vec::new()
    });
    let mut saved = None;
    app.history.entries = kept;
    app.status.sandbox = handle.sandbox_badge;
    let env = |name| std::env::var(name).ok();
    let (term_program, term) = (env("TERM_PROGRAM"), env("TERM"));
    app.attention = Attention::new(
        ui.notify,
        attention::shows_osc9(term_program.as_deref(), term.as_deref()),
    );
    let vte = env("VTE_VERSION");
    if !app::takes_osc52(vte.as_deref(), term_program.as_deref(), term.as_deref())
        && let Some(path) = copy_file
    {
        app.clipboard = app::Clipboard::File(path);
    }
    if let Some(intro) = intro {
        app.transcript.push(transcript::EntryKind::Notice(intro));
    }
    let result = event_loop(
        &mut guard.terminal,
        &mut handle,
        app,
        Session {
            relaunch: relaunch.as_ref(),
            writer: writer.as_ref(),
        },
        &mut saved,
    )
    .await;
    if let Some(writer) = writer {
        // Every prompt sent is on disk before mino leaves.
        let _ = tokio::task::spawn_blocking(move || writer.finish()).await;
    }
    drop(guard);
    // Written, not printed: after a hangup the terminal is gone, and
    // `println!` would panic on it.
    if let Some(id) = saved {
        let _ = writeln!(
            std::io::stdout(),
            "mino: session {id} is saved. To continue it: mino --resume {id}"
        );
    }
    let code = match result {
        Ok(Exit::Quit) => 0,
        Ok(Exit::Signal(signal)) => 128 + signal,
        Ok(Exit::AgentGone) => {
            let _ = writeln!(
                std::io::stderr(),
                "mino: the agent stopped unexpectedly; see the log under mino's home."
            );
            1
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "mino: the terminal failed: {e}");
            1
        }
    };
    let code = finish_agent(handle, code).await;
    // The servers' process groups end with mino.
    if let Some(hub) = mcp {
        hub.shutdown();
    }
    Ok(code)
}

/// The name the title line shows for a project directory.
fn project_name(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
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
    mut app: App,
    session: Session<'_>,
    saved: &mut Option<String>,
) -> std::io::Result<Exit> {
    let Session { relaunch, writer } = session;
    let mut terminal_events = input::Input::start()?;
    let mut alarm = alarm::Alarm::new();
    let mut sigterm = signal(SignalKind::terminate()).ok();
    let mut sighup = signal(SignalKind::hangup()).ok();
    let mut hangup = Some(hangup::watch());
    let mut files_task: Option<JoinHandle<Vec<String>>> = None;
    let mut dirty = true;
    // A key (or another terminal event) changed what shows since the last
    // frame: it is drawn at the full rate.
    let mut keyed = false;
    let mut last_draw: Option<Instant> = None;
    // When the queue was last looked at for a streaming answer's frame,
    // and whether that look found nothing.
    let mut looked: Option<Instant> = None;
    let mut paused = false;
    // Frames left at the full rate after a piece of the answer came while
    // the loop was not holding (the answer's first, or the first after a
    // pause): that piece is drawn at once and the loop looks again a short
    // frame later, so a short answer, or the rest of a burst, is on screen
    // a short frame after it came rather than a streaming frame's interval.
    let mut quick: u8 = 0;
    let mut first_pass = true;
    loop {
        let frame = if !keyed && quick == 0 && app.streaming() {
            STREAM_FRAME
        } else {
            FRAME
        };
        // The loop's first frame waits for what the agent said while it
        // started (the banner): drawn before it, the banner would wait a
        // whole frame's interval behind it. Once only: a flood of events
        // never holds the frame back.
        let starting = first_pass && !handle.events.is_empty();
        first_pass = false;
        if dirty && !starting && last_draw.is_none_or(|at| at.elapsed() >= frame) {
            app.now = Instant::now();
            if let Err(e) = term::draw(terminal, |frame| view::draw(&app, frame)) {
                return hangup::or_failed(e);
            }
            if last_draw.is_none() {
                crate::logging::startup_step("the agent's first frame");
                // Servers start only now, so they never delay this frame.
                if let Some(hub) = &handle.mcp {
                    hub.begin();
                }
            }
            last_draw = Some(Instant::now());
            dirty = false;
            keyed = false;
            quick = quick.saturating_sub(1);
        }
        let frame_due = last_draw.map_or_else(Instant::now, |at| at + frame);
        // While an answer streams, what the agent sends waits in its queue
        // and is read once a frame's interval: one wake-up per frame, not
        // one per piece of text, nor one for the first piece and another to
        // draw it. A look that found nothing waits a whole interval again,
        // and when the answer has paused (a look found nothing), the next
        // piece wakes the loop as it comes.
        let hold = frame == STREAM_FRAME && (dirty || !paused);
        let look_at = if dirty {
            Some(frame_due)
        } else if hold {
            Some(looked.map_or(frame_due, |at| frame_due.max(at + frame)))
        } else {
            None
        };
        // A question that is not armed yet is drawn again when it arms.
        let arms_at = app.arms_at();
        // A question that waits calls the person when it is due.
        let call_at = app.attention.due(app.waiting_since());
        let tick_at = app
            .turn_running()
            .then(|| last_draw.map_or_else(Instant::now, |at| at + TICK));
        alarm.set(
            [tick_at, look_at, arms_at, call_at]
                .into_iter()
                .flatten()
                .min(),
        );
        let mut msgs = Vec::new();
        let mut looking = false;
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    keyed = true;
                    msgs.extend(terminal_events.intent(&app, &event));
                }
                Some(Err(e)) => return hangup::or_failed(e),
                None => return Ok(Exit::Quit),
            },
            event = handle.events.recv(), if !hold => match event {
                Some(event) => {
                    if paused || !app.streaming() {
                        quick = 2;
                    }
                    paused = false;
                    msgs.push(Msg::Agent(event));
                }
                None => return Ok(Exit::AgentGone),
            },
            // While the pieces wait for the frame, the answer's end or a
            // question is drawn as it comes: the pass below takes what the
            // queue holds.
            () = handle.wake.notified(), if hold => {}
            files = listed_files(&mut files_task) => msgs.push(Msg::Files(files)),
            // Every deadline reached rings: a question that calls the
            // person needs nothing more than the pass below.
            rang = alarm.rung() => {
                let now = Instant::now().max(rang);
                let due = |at: Option<Instant>| at.is_some_and(|at| at <= now);
                if due(tick_at) {
                    msgs.push(Msg::Tick);
                }
                if due(look_at) {
                    looked = Some(Instant::now());
                    // Only a look while holding can find the answer
                    // paused: otherwise each piece woke the loop as it
                    // came, and the queue is empty whatever the answer
                    // does.
                    looking = hold;
                }
                if due(arms_at) {
                    dirty = true;
                }
            }
            () = next_signal(&mut sigterm) => return Ok(Exit::Signal(15)),
            () = next_signal(&mut sighup) => return Ok(Exit::Signal(1)),
            () = hangup::heard(&mut hangup) => return Ok(Exit::Signal(1)),
        }
        app.now = Instant::now();
        let mut exit = false;
        let mut switch = None;
        // Apply what arrived, then everything else already queued. Keys
        // are mapped one at a time: what a key means depends on what the
        // previous one opened.
        let mut pending_terminal = BATCH;
        let mut budget = 16 * BATCH;
        let mut found = false;
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
                    // A terminal that hung up fails here as it does
                    // drawing a frame.
                    match perform(terminal, handle, &mut app, action) {
                        Ok(Flow::Go) => {}
                        Ok(Flow::Quit) => exit = true,
                        Ok(Flow::Switch { dir, id }) => switch = Some((dir, id)),
                        Err(e) => return hangup::or_failed(e),
                    }
                }
                *saved = app.saved_session();
            }
            if exit || budget == 0 {
                break;
            }
            while msgs.len() < budget {
                match handle.events.try_recv() {
                    Ok(event) => {
                        found = true;
                        msgs.push(Msg::Agent(event));
                    }
                    Err(_) => break,
                }
            }
            if msgs.is_empty() && pending_terminal > 0 {
                pending_terminal -= 1;
                match terminal_events.ready() {
                    Some(Some(Ok(event))) => {
                        keyed = true;
                        msgs.extend(terminal_events.intent(&app, &event));
                    }
                    Some(Some(Err(e))) => return hangup::or_failed(e),
                    Some(None) => return Ok(Exit::Quit),
                    None => {}
                }
            }
            if msgs.is_empty() {
                break;
            }
        }
        if looking {
            paused = !found;
        }
        if let Some(signal) = app.attention.step(app.waiting_since(), app.now) {
            term::write_sequence(terminal.backend_mut(), &attention::sequence(&signal))?;
        }
        if exit {
            finish_turn(&app, handle).await;
            return Ok(Exit::Quit);
        }
        if let (Some((dir, id)), Some(relaunch)) = (switch, relaunch) {
            app = switch_project(&app, handle, relaunch, &dir, &id).await?;
            *saved = app.saved_session();
            dirty = true;
            continue;
        }
    }
}

/// What the loop does after an action.
enum Flow {
    Go,
    Quit,
    Switch { dir: PathBuf, id: String },
}

/// Ends the agent (its session file is let go) and starts it again in
/// `dir` under that directory's settings, resuming `id`, with this run's
/// "never" answers. Where that fails, it starts again where it was, and
/// says why. Returns the screen's state for the new agent.
async fn switch_project(
    app: &App,
    handle: &mut AgentHandle,
    relaunch: &Relaunch,
    dir: &Path,
    id: &str,
) -> std::io::Result<App> {
    let never: Vec<ToolKey> = app
        .status
        .grants
        .iter()
        .filter(|g| g.scope == GrantScope::Run)
        .map(|g| g.tool.clone())
        .collect();
    let (old_dir, old_id) = (app.project_dir.clone(), app.saved_session());
    let _ = handle
        .inputs
        .send(agent::Input::Command(agent::Command::Quit));
    let _ = tokio::time::timeout(QUIT_GRACE, &mut handle.task).await;
    if let Some(hub) = handle.mcp.take() {
        hub.shutdown();
    }
    let (started, dir, problem) = match relaunch.launch(dir, Some(id), never.clone()).await {
        Ok(started) => (started, dir.to_path_buf(), None),
        Err(e) => {
            let back = relaunch.launch(&old_dir, old_id.as_deref(), never).await;
            match back {
                Ok(started) => (started, old_dir, Some(e.to_string())),
                Err(again) => {
                    return Err(std::io::Error::other(format!(
                        "{e}; starting again in {} failed too: {again}",
                        old_dir.display()
                    )));
                }
            }
        }
    };
    let (new_handle, ui) = started;
    let old = std::mem::replace(handle, new_handle);
    drop(old);
    let mut fresh = App::new(&project_name(&dir), Instant::now());
    fresh.project_dir = dir;
    fresh.history = app_history(app);
    fresh.status.sandbox = handle.sandbox_badge;
    fresh.mouse = app.mouse;
    fresh.clipboard = app.clipboard.clone();
    fresh.attention = Attention::new(ui.notify, app.attention.osc9_shown);
    fresh.attention.focused = app.attention.focused;
    if let Some(problem) = problem {
        fresh.transcript.push(transcript::EntryKind::Error(format!(
            "Could not switch the project: {problem}. mino started again where it was."
        )));
    }
    Ok(fresh)
}

fn app_history(app: &App) -> app::PromptHistory {
    app::PromptHistory {
        entries: app.history.entries.clone(),
        browsing: None,
    }
}

/// Performs one action.
fn perform(
    terminal: &mut Tui,
    handle: &AgentHandle,
    app: &mut App,
    action: Action,
) -> std::io::Result<Flow> {
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
        Action::AnswerServer { reply, answer } => {
            // The server's call may have ended meanwhile.
            let _ = reply.send(answer);
        }
        Action::Copy(text) => term::copy_to_clipboard(terminal.backend_mut(), &text)?,
        Action::CopyToFile {
            path,
            text,
            characters,
            removed,
        } => {
            let line = match term::copy_to_file(&path, &text) {
                Ok(()) => transcript::EntryKind::Notice(format!(
                    "Your terminal does not take clipboard copies (OSC 52): the last answer ({characters} characters{removed}) is in {}.",
                    path.display()
                )),
                Err(e) => transcript::EntryKind::Error(format!(
                    "Could not write the last answer to {}: {e}",
                    path.display()
                )),
            };
            app.transcript.push(line);
        }
        Action::Mouse(on) => term::set_mouse(terminal.backend_mut(), on)?,
        Action::Redraw => term::follow_size(terminal)?,
        // Handled by the loop, which owns the listing task and the writer.
        Action::ListFiles | Action::KeepPrompt(_) => {}
        Action::Quit => return Ok(Flow::Quit),
        Action::SwitchProject { dir, id } => return Ok(Flow::Switch { dir, id }),
    }
    Ok(Flow::Go)
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
