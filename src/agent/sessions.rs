//! The sessions of this run: the one in use, the modes and answers of the
//! ones visited (held in memory only), and the slash commands that move
//! between them. Commands and turns take turns: nothing here runs while a
//! turn does.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use crate::policy::{MODE_NAMES, Mode, RunConsent, SessionConsent};
use crate::session::{
    LogEntry, SessionError, SessionStore, into_history, last_model, last_plan, recover,
};

use super::commands::Command;
use super::driver::{Runtime, run_turn};
use super::error::AgentError;
use super::events::AgentEvent;
use super::live::LiveSession;
use super::turn::TurnStop;

/// What only this run remembers of a session it has visited.
#[derive(Debug, Clone)]
struct Visited {
    mode: Mode,
    consent: SessionConsent,
}

mod mcp;
mod model;
mod modes;
mod saving;
mod switch;

/// The agent: runtime, store, sessions.
pub struct Agent {
    pub rt: Runtime,
    store: SessionStore,
    start_mode: Mode,
    project: String,
    current: LiveSession,
    visited: HashMap<String, Visited>,
    /// Sessions of this run left before their first prompt: they have no
    /// file, so `/resume` finds them here.
    parked: HashMap<String, LiveSession>,
    run: RunConsent,
    /// A loosening waiting for `Switch to this mode? [y/N]`.
    pending_mode: Option<Mode>,
    /// Settings text waiting for `Append … to FILE? [y/N]`.
    pending_append: Option<saving::Append>,
    /// Auto mode's trust offer was made in this run (it is made once).
    trust_offered: bool,
    /// The models each service listed (by preset; none for the
    /// settings' own), once `/model` asked.
    listed: std::collections::BTreeMap<Option<String>, Vec<String>>,
}

/// What a command asks of the loop that runs the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    Continue,
    Quit,
}

impl Agent {
    /// Starts in a new session, or resumes `resume` (recovering an
    /// interrupted turn without rerunning anything).
    pub async fn start(
        rt: Runtime,
        store: SessionStore,
        start_mode: Mode,
        project: String,
        resume: Option<&str>,
        run: RunConsent,
    ) -> Result<Self, AgentError> {
        let model = rt.setup.default.model.clone();
        let current = match resume {
            Some(id) => {
                let (session, started_in) = open_session(&store, id, start_mode, &rt).await?;
                if started_in != std::path::Path::new(&project) {
                    rt.emit(AgentEvent::Warning(format!(
                        "Session {} was started in {}; it continues here, in {}, where this run's tools work. To continue it there instead: mino --cd {} --resume {}",
                        session.id,
                        started_in.display(),
                        project,
                        started_in.display(),
                        session.id
                    )));
                }
                session
            }
            None => new_session(&store, &project, &model, start_mode).await?,
        };
        let mut agent = Self {
            rt,
            store,
            start_mode,
            project,
            current,
            visited: HashMap::new(),
            parked: HashMap::new(),
            run,
            pending_mode: None,
            pending_append: None,
            trust_offered: false,
            listed: Default::default(),
        };
        agent.enter_session().await;
        agent.model_names();
        agent.replay();
        super::hooks::turn::session_start(&agent.rt, &agent.current, resume.is_some());
        Ok(agent)
    }

    /// Ends the run's session: its background processes are stopped
    /// (each with the sandbox's check), SessionEnd hooks are told, and
    /// waited for.
    pub async fn end(&self) {
        // The background processes stop with mino, each with the
        // sandbox's check after it (what it planted is set aside), rather
        // than being swept unchecked at exit.
        self.rt.tool_cx.shells.kill_all().await;
        super::hooks::turn::session_end(&self.rt, &self.current).await;
    }

    fn banner(&self) {
        self.rt.emit(AgentEvent::Session {
            id: self.current.id.clone(),
            mode: self.current.mode,
            model: self.rt.setup.choice.spelling(),
            context_window: self.rt.context_window,
            window_source: self.rt.window_source.clone(),
            profile: self.rt.profile,
        });
        self.rt.emit_spent(&self.current);
        // Each session has answers of its own; the run's "never" stays.
        self.permissions(false);
        if !self.current.plan.is_empty() {
            self.rt.emit(AgentEvent::Plan(self.current.plan.clone()));
        }
    }

    /// Says that the input just handled is done (`AgentEvent::Idle`).
    pub fn idle(&self) {
        self.rt.emit(AgentEvent::Idle);
    }

    /// Runs one turn.
    pub async fn prompt(&mut self, text: String, cancel: &CancellationToken) -> TurnStop {
        self.turn((text, true), cancel).await
    }

    /// Runs one turn for `text`, attaching its `@` mentions when `attach`.
    pub(super) async fn turn(
        &mut self,
        text: (String, bool),
        cancel: &CancellationToken,
    ) -> TurnStop {
        if let Err(stop) = self.recover_first().await {
            return stop;
        }
        run_turn(&self.rt, &mut self.current, &mut self.run, text, cancel).await
    }

    /// Runs the user's own `!command` (see `user_shell`).
    pub async fn shell(&mut self, command: String, cancel: &CancellationToken) -> TurnStop {
        if let Err(stop) = self.recover_first().await {
            return stop;
        }
        super::driver::run_person_shell(&self.rt, &mut self.current, &mut self.run, command, cancel)
            .await
    }

    /// Recovery before the next input joins history: a turn cut short
    /// leaves calls without results; they are acknowledged, never rerun.
    async fn recover_first(&mut self) -> Result<(), TurnStop> {
        // In one write: a cut-short response may have thousands of calls.
        if let Err(e) = self.current.save_all(recover(&self.current.history)).await {
            self.rt.emit(AgentEvent::Error(e.to_string()));
            return Err(TurnStop::SaveFailed(e.to_string()));
        }
        Ok(())
    }

    /// Runs one slash command.
    pub async fn command(&mut self, command: Command, cancel: &CancellationToken) -> After {
        match command {
            Command::Mode(None) => self.notice(format!(
                "Permission mode: {}. Modes: {MODE_NAMES}. Use /mode NAME to change it.",
                self.current.mode
            )),
            Command::Mode(Some(to)) => self.switch_mode(to),
            Command::New => self.new_session().await,
            Command::Resume(Some(id)) => self.resume(&id, false).await,
            Command::Resume(None) => self.list_sessions(false).await,
            Command::Sessions { all } => self.list_sessions(all).await,
            Command::Clear => self.clear().await,
            Command::Compact => {
                super::hooks::turn::pre_compact(&self.rt, &self.current, "manual");
                match super::compact::compact(&self.rt, &mut self.current, cancel).await {
                    Ok(notice) => self.notice(notice),
                    Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
                }
            }
            Command::Copy => self.notice(
                "/copy works in the full-screen view; here, select the text in your terminal."
                    .into(),
            ),
            Command::Mcp => self.mcp_servers(),
            Command::McpAuth(name) => self.mcp_auth(&name),
            Command::McpLogout(name) => self.mcp_logout(&name),
            Command::Permissions(None) => self.permissions(true),
            Command::Permissions(Some(n)) => self.revoke(n),
            Command::SaveRule(n) => self.offer_rule(n),
            Command::Rewind(None) => match super::rewind::list(&self.rt, &self.current).await {
                Ok(prompts) => self.rt.emit(AgentEvent::RewindPrompts(prompts)),
                Err(e) => self.rt.emit(AgentEvent::Error(e)),
            },
            Command::Rewind(Some(n)) => {
                match super::rewind::offer(&self.rt, &self.current, n).await {
                    Ok(offer) => self.rt.emit(AgentEvent::RewindOffer(offer)),
                    Err(e) => self.rt.emit(AgentEvent::Error(e)),
                }
            }
            Command::Shells(action) => super::shells::command(&self.rt, action).await,
            Command::Help => self.notice(super::commands::help_text()),
            Command::Model(name) => self.model(name.as_deref()).await,
            Command::Diff => super::session_diff::show(&self.rt, &self.current).await,
            Command::Init => {
                // A turn like any other: its write of AGENTS.md is decided
                // (and asked) as every write there is.
                self.prompt(super::commands::INIT_PROMPT.to_string(), cancel)
                    .await;
            }
            Command::Ask { agent, question } => {
                if let Err(e) = super::asked::ask(
                    &self.rt,
                    &mut self.current,
                    &mut self.run,
                    &agent,
                    question,
                    cancel,
                )
                .await
                {
                    self.rt.emit(AgentEvent::Error(e.to_string()));
                }
            }
            Command::McpPrompt {
                server,
                prompt,
                words,
            } => self.mcp_prompt((&server, &prompt), &words, cancel).await,
            Command::Quit => {
                self.rt.emit(AgentEvent::Quit);
                return After::Quit;
            }
        }
        After::Continue
    }

    pub(super) fn notice(&self, text: String) {
        self.rt.emit(AgentEvent::Notice(text));
    }

    /// Goes back to before prompt `to` (the answer to a rewind offer). A
    /// conversation that goes back is shown again from its history, and
    /// its prompt is handed back for the input.
    pub async fn rewind(
        &mut self,
        to: usize,
        what: crate::checkpoint::rewind::What,
        force: Vec<String>,
    ) {
        match super::rewind::run(&self.rt, &mut self.current, to, what, force).await {
            Ok(done) => {
                if done.conversation {
                    self.rt.emit(AgentEvent::Cleared);
                    self.replay();
                }
                self.rt.emit(AgentEvent::Rewound {
                    line: done.line(),
                    prompt: done.conversation.then(|| done.prompt.clone()),
                });
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e)),
        }
    }

    /// Makes `session` the one in use; what this run remembers of the one
    /// left is kept (and the session itself, when it has no file yet).
    /// The session in use ends: its background processes (and the keeper
    /// of their network) are stopped with everything they started.
    async fn end_shells(&self) {
        let stopped = self.rt.tool_cx.shells.kill_all().await;
        if stopped > 0 {
            self.notice(format!(
                "Stopped {stopped} background process{} of the session left.",
                if stopped == 1 { "" } else { "es" }
            ));
        }
    }

    fn switch_to(&mut self, session: LiveSession) {
        let left = std::mem::replace(&mut self.current, session);
        self.visited.insert(
            left.id.clone(),
            Visited {
                mode: left.mode,
                consent: left.consent.clone(),
            },
        );
        if !left.is_written() {
            self.parked.insert(left.id.clone(), left);
        }
    }

    /// The id of a session of this run without a file that `text` names
    /// (its whole id or a unique start of it).
    fn parked_id(&self, text: &str) -> Option<String> {
        let mut found = self.parked.keys().filter(|id| id.starts_with(text));
        match (found.next(), found.next()) {
            (Some(id), None) if text.len() >= crate::session::store::MIN_PREFIX => Some(id.clone()),
            _ => None,
        }
    }

    async fn new_session(&mut self) {
        let model = self.rt.setup.default.model.clone();
        match new_session(&self.store, &self.project, &model, self.start_mode).await {
            Ok(session) => {
                self.end_shells().await;
                self.switch_to(session);
                self.enter_session().await;
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    /// Resumes session `id` in this project, where it was started elsewhere.
    pub async fn resume_here(&mut self, id: &str) {
        self.resume(id, true).await;
    }

    /// `/resume ID` (or a unique start of it). A session started in
    /// another project is not resumed unless `here` says so: the front end
    /// is told, and asks.
    async fn resume(&mut self, text: &str, here: bool) {
        if text.len() >= crate::session::store::MIN_PREFIX && self.current.id.starts_with(text) {
            self.notice(format!("Session {} is already in use.", self.current.id));
            return;
        }
        if let Some(id) = self.parked_id(text)
            && let Some(session) = self.parked.remove(&id)
        {
            // Left before its first prompt in this run: it is this project's.
            self.end_shells().await;
            self.switch_to(session);
            self.enter_session().await;
            return;
        }
        let store = self.store.clone();
        let given = text.to_string();
        let found = blocking(move || {
            let id = store.resolve(&given)?;
            Ok((store.summary(&id), id))
        })
        .await;
        let (summary, id) = match found {
            Ok(found) => found,
            Err(e) => return self.rt.emit(AgentEvent::Error(e.to_string())),
        };
        if id.as_str() == self.current.id {
            self.notice(format!("Session {id} is already in use."));
            return;
        }
        let this_project = std::path::Path::new(&self.project);
        if let Some(summary) = summary.filter(|s| !here && s.project != this_project) {
            self.rt.emit(AgentEvent::OtherProject {
                id: id.to_string(),
                project: summary.project,
                here: this_project.to_path_buf(),
            });
            return;
        }
        match open_session(&self.store, id.as_str(), self.start_mode, &self.rt).await {
            Ok((mut session, started_in)) => {
                // Said after the banner, which starts the chat afresh.
                let elsewhere = (started_in != this_project).then(|| {
                    format!(
                        "Session {id} was started in {}; it continues here, in {}.",
                        started_in.display(),
                        this_project.display()
                    )
                });
                if let Some(visited) = self.visited.get(&session.id) {
                    session.mode = visited.mode;
                    session.consent = visited.consent.clone();
                }
                self.end_shells().await;
                self.switch_to(session);
                self.enter_session().await;
                self.replay();
                if let Some(line) = elsewhere {
                    self.notice(line);
                }
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    /// The history of the session in use, for the front end to show, and
    /// what recovery did when it was opened. Its context use is estimated
    /// at once (the service says the real figure at the next request).
    fn replay(&mut self) {
        if !self.current.history.is_empty() {
            self.rt
                .emit(AgentEvent::History(self.current.history.clone()));
            self.current.input_tokens = self.rt.estimate(&self.current.history);
            self.rt.emit(AgentEvent::Usage {
                input_tokens: self.current.input_tokens,
                output_tokens: 0,
                context_window: self.rt.context_window,
                finish_reason: None,
            });
        }
        let recovered = std::mem::take(&mut self.current.recovered);
        if recovered > 0 {
            self.notice(format!(
                "Recovered an interrupted turn: {recovered} call(s) without a result were recorded as interrupted with an unknown outcome; nothing was run again."
            ));
        }
    }

    /// The saved sessions that got a prompt: this project's, or `all`.
    async fn list_sessions(&self, all: bool) {
        let store = self.store.clone();
        match blocking(move || store.list()).await {
            Ok(list) => {
                let here = std::path::Path::new(&self.project);
                let list = list
                    .into_iter()
                    .filter(|s| s.first_prompt.is_some() && (all || s.project == here))
                    .collect();
                self.rt.emit(AgentEvent::Sessions { list, all });
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    async fn clear(&mut self) {
        match self.current.append_entry(LogEntry::Clear).await {
            Ok(()) => {
                self.current.history = std::sync::Arc::default();
                self.current.input_tokens = 0;
                self.rt.emit(AgentEvent::Cleared);
                self.notice(format!(
                    "History cleared. Session {} and its mode ({}) are kept.",
                    self.current.id, self.current.mode
                ));
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }
}

/// Runs file work for the store on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SessionError> + Send + 'static,
) -> Result<T, AgentError> {
    Ok(tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AgentError::Blocking(e.to_string()))??)
}

/// A new session: its id now, its file at its first prompt.
async fn new_session(
    store: &SessionStore,
    project: &str,
    model: &str,
    mode: Mode,
) -> Result<LiveSession, AgentError> {
    let reserving = store.clone();
    let id = blocking(move || reserving.reserve()).await?;
    Ok(LiveSession::unwritten(
        store.clone(),
        id,
        std::path::PathBuf::from(project),
        model.to_string(),
        mode,
    ))
}

async fn open_session(
    store: &SessionStore,
    id: &str,
    mode: Mode,
    rt: &Runtime,
) -> Result<(LiveSession, std::path::PathBuf), AgentError> {
    let store = store.clone();
    let text = id.to_string();
    let (log, loaded) = blocking(move || {
        let id = store.resolve(&text)?;
        store.open(&id)
    })
    .await?;
    if let Some(warning) = loaded.warning {
        rt.emit(AgentEvent::Warning(warning));
    }
    let started_in = loaded.header.project.clone();
    let plan = last_plan(&loaded.entries);
    let model = last_model(&loaded.entries);
    let mut session = LiveSession::new(log, into_history(loaded.entries), mode);
    session.plan = plan;
    session.model = model;
    let recovered = recover(&session.history);
    session.recovered = recovered.len();
    session.save_all(recovered).await?;
    Ok((session, started_in))
}
