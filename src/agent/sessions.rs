//! The sessions of this run: the one in use, the modes and answers of the
//! ones visited (held in memory only), and the slash commands that move
//! between them. Commands and turns take turns: nothing here runs while a
//! turn does.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use crate::policy::{CanAsk, ConsentAnswer, Mode, RunConsent, SessionConsent, grants, revoke};
use crate::session::{LogEntry, SessionError, SessionId, SessionStore, history, recover};

use super::commands::{COMMANDS, Command};
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

/// The agent: runtime, store, sessions.
pub struct Agent {
    pub rt: Runtime,
    store: SessionStore,
    start_mode: Mode,
    project: String,
    model: String,
    current: LiveSession,
    visited: HashMap<String, Visited>,
    run: RunConsent,
    /// A loosening waiting for `Switch to this mode? [y/N]`.
    pending_mode: Option<Mode>,
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
        model: String,
        resume: Option<&str>,
    ) -> Result<Self, AgentError> {
        let current = match resume {
            Some(id) => open_session(&store, id, start_mode, &rt).await?,
            None => new_session(&store, &project, &model, start_mode).await?,
        };
        let mut agent = Self {
            rt,
            store,
            start_mode,
            project,
            model,
            current,
            visited: HashMap::new(),
            run: RunConsent::default(),
            pending_mode: None,
        };
        agent.banner();
        agent.replay();
        Ok(agent)
    }

    fn banner(&self) {
        self.rt.emit(AgentEvent::Session {
            id: self.current.id.clone(),
            mode: self.current.mode,
            model: self.model.clone(),
            context_window: self.rt.context_window,
        });
        // Each session has answers of its own; the run's "never" stays.
        self.permissions(false);
    }

    /// Runs one turn.
    pub async fn prompt(&mut self, text: String, cancel: &CancellationToken) -> TurnStop {
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
        super::user_shell::run(&self.rt, &mut self.current, command, cancel).await
    }

    /// Recovery before the next input joins history: a turn cut short
    /// leaves calls without results; they are acknowledged, never rerun.
    async fn recover_first(&mut self) -> Result<(), TurnStop> {
        for item in recover(&self.current.history) {
            if let Err(e) = self.current.save(item).await {
                self.rt.emit(AgentEvent::Error(e.to_string()));
                return Err(TurnStop::SaveFailed(e.to_string()));
            }
        }
        Ok(())
    }

    /// Runs one slash command.
    pub async fn command(&mut self, command: Command, cancel: &CancellationToken) -> After {
        match command {
            Command::Mode(None) => self.notice(format!(
                "Permission mode: {}. Modes: manual, accept-edits, auto, bypass. Use /mode NAME to change it.",
                self.current.mode
            )),
            Command::Mode(Some(to)) => self.switch_mode(to),
            Command::New => self.new_session().await,
            Command::Resume(Some(id)) => self.resume(&id).await,
            Command::Resume(None) | Command::Sessions => self.list_sessions().await,
            Command::Clear => self.clear().await,
            Command::Compact => {
                match super::compact::compact(&self.rt, &mut self.current, cancel).await {
                    Ok(notice) => self.notice(notice),
                    Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
                }
            }
            Command::Copy => self.notice(
                "/copy works in the full-screen view; here, select the text in your terminal."
                    .into(),
            ),
            Command::Mcp => match &self.rt.mcp {
                Some(hub) => self.rt.emit(AgentEvent::McpServers(hub.servers())),
                None => self.notice(
                    "No MCP servers are configured: add [mcp.servers.NAME] to your settings (see config.example.toml)."
                        .into(),
                ),
            },
            Command::Permissions(None) => self.permissions(true),
            Command::Permissions(Some(n)) => self.revoke(n),
            Command::Help => self.notice(help_text()),
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
            Command::Quit => {
                self.rt.emit(AgentEvent::Quit);
                return After::Quit;
            }
        }
        After::Continue
    }

    fn notice(&self, text: String) {
        self.rt.emit(AgentEvent::Notice(text));
    }

    /// Tells the front end what is remembered now; `listed` for
    /// `/permissions`.
    fn permissions(&self, listed: bool) {
        self.rt.emit(AgentEvent::Permissions {
            grants: grants(&self.current.consent, &self.run),
            listed,
        });
    }

    /// `/permissions N`: forgets the Nth remembered answer, so the tool's
    /// next call is decided (and asked) again.
    fn revoke(&mut self, n: usize) {
        let all = grants(&self.current.consent, &self.run);
        let Some(grant) = n.checked_sub(1).and_then(|i| all.get(i)) else {
            let count = all.len();
            self.rt.emit(AgentEvent::Error(if count == 0 {
                format!("/permissions {n}: nothing is remembered; there is nothing to revoke.")
            } else {
                format!("/permissions {n}: there are {count} remembered answers; give a number from 1 to {count}, as /permissions lists them.")
            }));
            return;
        };
        if revoke(grant, &mut self.current.consent, &mut self.run) {
            self.notice(format!(
                "Revoked: {}. The next such call is decided again.",
                grant.describe()
            ));
        }
        self.permissions(false);
    }

    fn switch_mode(&mut self, to: Mode) {
        let from = self.current.mode;
        if !from.is_loosening(to) {
            self.current.mode = to;
            self.notice(format!("Permission mode for this session: {to}."));
            self.rt.emit(AgentEvent::ModeChanged(to));
            return;
        }
        if self.rt.can_ask == CanAsk::No {
            self.notice(to.warning().to_string());
            self.rt.emit(AgentEvent::Error(
                "Denied: changing the permission mode requires an interactive terminal.".into(),
            ));
            return;
        }
        self.pending_mode = Some(to);
        self.rt.emit(AgentEvent::ConfirmMode {
            from,
            to,
            warning: to.warning(),
        });
    }

    /// A mode chosen in an editor's selector: applied as a confirmed
    /// switch, with the same notice and event.
    pub fn choose_mode(&mut self, to: Mode) {
        self.pending_mode = Some(to);
        self.confirm_mode(to, true);
    }

    /// The answer to `Switch to this mode? [y/N]`.
    pub fn confirm_mode(&mut self, to: Mode, yes: bool) {
        let pending = self.pending_mode.take();
        if yes && pending == Some(to) {
            self.current.mode = to;
            self.notice(format!("Permission mode for this session: {to}."));
            self.rt.emit(AgentEvent::ModeChanged(to));
        } else {
            self.notice(format!(
                "Permission mode for this session unchanged: {}.",
                self.current.mode
            ));
        }
    }

    fn remember_current(&mut self) {
        self.visited.insert(
            self.current.id.clone(),
            Visited {
                mode: self.current.mode,
                consent: self.current.consent.clone(),
            },
        );
    }

    async fn new_session(&mut self) {
        match new_session(&self.store, &self.project, &self.model, self.start_mode).await {
            Ok(session) => {
                self.remember_current();
                self.current = session;
                self.banner();
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    async fn resume(&mut self, id: &str) {
        if id == self.current.id {
            self.notice(format!("Session {id} is already in use."));
            return;
        }
        match open_session(&self.store, id, self.start_mode, &self.rt).await {
            Ok(mut session) => {
                if let Some(visited) = self.visited.get(&session.id) {
                    session.mode = visited.mode;
                    session.consent = visited.consent.clone();
                }
                self.remember_current();
                self.current = session;
                self.banner();
                self.replay();
            }
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    /// The history of the session in use, for the front end to show, and
    /// what recovery did when it was opened.
    fn replay(&mut self) {
        if !self.current.history.is_empty() {
            self.rt
                .emit(AgentEvent::History(self.current.history.clone()));
        }
        let recovered = std::mem::take(&mut self.current.recovered);
        if recovered > 0 {
            self.notice(format!(
                "Recovered an interrupted turn: {recovered} call(s) without a result were recorded as interrupted with an unknown outcome; nothing was run again."
            ));
        }
    }

    async fn list_sessions(&self) {
        let store = self.store.clone();
        match blocking(move || store.list()).await {
            Ok(list) => self.rt.emit(AgentEvent::Sessions(list)),
            Err(e) => self.rt.emit(AgentEvent::Error(e.to_string())),
        }
    }

    async fn clear(&mut self) {
        match self.current.append_entry(LogEntry::Clear).await {
            Ok(()) => {
                self.current.history.clear();
                self.current.input_tokens = 0;
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

async fn new_session(
    store: &SessionStore,
    project: &str,
    model: &str,
    mode: Mode,
) -> Result<LiveSession, AgentError> {
    let (store, project, model) = (store.clone(), project.to_string(), model.to_string());
    let log = blocking(move || store.create(std::path::Path::new(&project), &model)).await?;
    Ok(LiveSession::new(log, Vec::new(), mode))
}

async fn open_session(
    store: &SessionStore,
    id: &str,
    mode: Mode,
    rt: &Runtime,
) -> Result<LiveSession, AgentError> {
    let id = SessionId::parse(id).map_err(SessionError::from)?;
    let store = store.clone();
    let (log, loaded) = blocking(move || store.open(&id)).await?;
    if let Some(warning) = loaded.warning {
        rt.emit(AgentEvent::Warning(warning));
    }
    let mut session = LiveSession::new(log, history(&loaded.entries), mode);
    let recovered = recover(&session.history);
    session.recovered = recovered.len();
    for item in recovered {
        session.save(item).await?;
    }
    Ok(session)
}

/// The text of `/help`.
pub fn help_text() -> String {
    let mut out = String::from("Commands:\n");
    for spec in COMMANDS {
        out.push_str(&format!("  {:<10} {}\n", spec.name, spec.help));
    }
    out.push_str(&format!(
        "  {:<10} ask the agent NAME of [agents.NAME]: /ask-NAME QUESTION\n",
        "/ask-NAME"
    ));
    let answers: Vec<String> = ConsentAnswer::ALL
        .iter()
        .map(|answer| {
            let enter = if *answer == ConsentAnswer::Reject {
                " (Enter)"
            } else {
                ""
            };
            format!("{} {}{enter}", answer.key(), answer.label())
        })
        .collect();
    out.push_str(&format!("Questions: {}.", answers.join(", ")));
    out
}
