//! The agent's task: one loop that takes inputs in order (prompts,
//! commands, answers to mode questions), so commands and turns take turns;
//! each input gets a cancellation token of its own that `Interrupter`
//! cancels. Owns the task's handle: ending the agent waits for it and
//! reports a panic with its message.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::policy::{BashConfinement, Mode};

use super::commands::Command;
use super::events::AgentEvent;
use super::sessions::{After, Agent};

/// What a front end sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Prompt(String),
    /// `!command`: a shell command the user runs themselves.
    Shell(String),
    Command(Command),
    /// The answer to `Switch to this mode? [y/N]`.
    ConfirmMode {
        to: Mode,
        yes: bool,
    },
    /// The answer to `Append this rule to FILE? [y/N]`.
    ConfirmRule {
        yes: bool,
    },
    /// Resume the session with this id in this project although it was
    /// started in another (the answer to `AgentEvent::OtherProject`).
    ResumeHere(String),
    /// The person chose this mode in an editor's own mode selector: that
    /// choice is the confirmation, so it takes effect in order, before any
    /// prompt sent after it.
    ChooseMode(Mode),
    /// Go back to before prompt `to` (the answer to
    /// `AgentEvent::RewindOffer`); `force`: paths changed since by
    /// something other than mino that the person confirmed one by one.
    Rewind {
        to: usize,
        what: crate::checkpoint::rewind::What,
        force: Vec<String>,
    },
}

/// Interrupts what the agent runs now (Esc, Ctrl-C): cancels the token of
/// the input in progress. Between inputs it does nothing, so an interrupt
/// is never carried into the next turn.
#[derive(Debug, Clone, Default)]
pub struct Interrupter {
    current: Arc<Mutex<CancellationToken>>,
}

impl Interrupter {
    pub fn interrupt(&self) {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancel();
    }

    /// A fresh token for the next input; interrupting cancels it.
    fn next(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = token.clone();
        token
    }
}

/// Why the agent's task did not end cleanly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentStopped {
    #[error("the agent stopped on an internal error (please report it): {0}")]
    Panicked(String),
    #[error("the agent did not stop within {} s; it was abandoned", .0.as_secs())]
    TimedOut(Duration),
}

/// A front end's side of a running agent.
pub struct AgentHandle {
    pub inputs: mpsc::UnboundedSender<Input>,
    pub interrupter: Interrupter,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    /// Rung when an event that is not a streamed piece was sent
    /// (`EventSender`).
    pub wake: std::sync::Arc<tokio::sync::Notify>,
    pub task: JoinHandle<()>,
    /// The MCP servers of this run: stopped when the front end is done.
    pub mcp: Option<crate::mcp::McpHub>,
    /// What the status bar says about the bash sandbox when it is weaker
    /// than asked ("no sandbox", Landlock only); `None` when in full force.
    pub sandbox_badge: Option<&'static str>,
    /// How bash commands are confined (the mode question says it).
    pub confinement: BashConfinement,
    /// Lists the project's files for `@path` completion (confined, no
    /// protected path); `None` offers no completion.
    pub project_files: Option<crate::tools::search::ProjectFiles>,
    /// The secret values the agent redacts, for what a front end passes
    /// on to the model itself (an editor's embedded resources).
    pub secrets: crate::secrets::HeldSecrets,
}

impl AgentHandle {
    /// Ends the agent: interrupts what runs, closes its inputs and waits at
    /// most `grace` for its task. A panic in it comes back with its message.
    pub async fn finish(self, grace: Duration) -> Result<(), AgentStopped> {
        let AgentHandle {
            inputs,
            interrupter,
            events,
            wake: _,
            mut task,
            mcp: _,
            sandbox_badge: _,
            confinement: _,
            project_files: _,
            secrets: _,
        } = self;
        interrupter.interrupt();
        drop(inputs);
        // Questions still queued are dropped: each is a rejection.
        drop(events);
        match tokio::time::timeout(grace, &mut task).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.is_panic() => {
                Err(AgentStopped::Panicked(panic_message(e.into_panic())))
            }
            // Aborted: nothing more to say.
            Ok(Err(_)) => Ok(()),
            Err(_) => {
                task.abort();
                Err(AgentStopped::TimedOut(grace))
            }
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_string(),
            Err(_) => "a panic without a message".to_string(),
        },
    }
}

/// Runs `agent` on its own task. `events` is the receiving end of the
/// channel the agent's runtime sends on.
pub fn spawn(mut agent: Agent, events: mpsc::UnboundedReceiver<AgentEvent>) -> AgentHandle {
    let (inputs, mut input_rx) = mpsc::unbounded_channel();
    let wake = agent.rt.events.wake();
    let interrupter = Interrupter::default();
    let turns = interrupter.clone();
    let task = tokio::spawn(async move {
        while let Some(input) = input_rx.recv().await {
            let cancel = turns.next();
            match input {
                Input::Prompt(text) => {
                    agent.prompt(text, &cancel).await;
                }
                Input::Shell(command) => {
                    agent.shell(command, &cancel).await;
                }
                Input::Command(command) => {
                    if agent.command(command, &cancel).await == After::Quit {
                        break;
                    }
                }
                Input::ConfirmMode { to, yes } => agent.confirm_mode(to, yes),
                Input::ConfirmRule { yes } => agent.confirm_rule(yes).await,
                Input::ResumeHere(id) => agent.resume_here(&id).await,
                Input::ChooseMode(to) => agent.choose_mode(to),
                Input::Rewind { to, what, force } => agent.rewind(to, what, force).await,
            }
            agent.idle();
        }
        agent.end().await;
    });
    AgentHandle {
        inputs,
        interrupter,
        events,
        wake,
        task,
        mcp: None,
        sandbox_badge: None,
        confinement: BashConfinement::Unconfined,
        project_files: None,
        secrets: crate::secrets::HeldSecrets::default(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn handle(task: JoinHandle<()>) -> AgentHandle {
        let (inputs, _) = mpsc::unbounded_channel();
        let (_, events) = mpsc::unbounded_channel();
        AgentHandle {
            inputs,
            interrupter: Interrupter::default(),
            events,
            wake: std::sync::Arc::default(),
            task,
            mcp: None,
            sandbox_badge: None,
            confinement: BashConfinement::Unconfined,
            project_files: None,
            secrets: crate::secrets::HeldSecrets::default(),
        }
    }

    #[tokio::test]
    async fn a_panic_in_the_agent_is_reported_with_its_message() {
        let task = tokio::spawn(async {
            let detail = "the history index was out of range";
            panic!("{detail}");
        });
        assert_eq!(
            handle(task).finish(Duration::from_secs(5)).await,
            Err(AgentStopped::Panicked(
                "the history index was out of range".into()
            ))
        );
    }

    #[tokio::test]
    async fn a_clean_end_is_ok() {
        let task = tokio::spawn(async {});
        assert_eq!(handle(task).finish(Duration::from_secs(5)).await, Ok(()));
    }

    #[tokio::test]
    async fn an_agent_that_does_not_stop_is_abandoned_after_the_grace() {
        let task = tokio::spawn(std::future::pending());
        let grace = Duration::from_millis(50);
        assert_eq!(
            handle(task).finish(grace).await,
            Err(AgentStopped::TimedOut(grace))
        );
    }

    #[test]
    fn an_interrupt_cancels_only_the_input_in_progress() {
        let interrupter = Interrupter::default();
        let first = interrupter.next();
        interrupter.interrupt();
        assert!(first.is_cancelled());
        let second = interrupter.next();
        assert!(!second.is_cancelled(), "not carried into the next input");
    }
}
