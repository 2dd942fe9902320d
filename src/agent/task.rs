//! The agent's task: one loop that takes inputs in order (prompts,
//! commands, answers to mode questions), so commands and turns take turns,
//! and an interrupt channel that stops the running turn at once.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::policy::Mode;

use super::commands::Command;
use super::events::AgentEvent;
use super::sessions::{After, Agent};

/// What a front end sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Prompt(String),
    Command(Command),
    /// The answer to `Switch to this mode? [y/N]`.
    ConfirmMode {
        to: Mode,
        yes: bool,
    },
}

/// A front end's side of a running agent.
pub struct AgentHandle {
    pub inputs: mpsc::UnboundedSender<Input>,
    /// Interrupts the running turn; ignored between turns.
    pub interrupt: mpsc::UnboundedSender<()>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: JoinHandle<()>,
    /// The MCP servers of this run: stopped when the front end is done.
    pub mcp: Option<crate::mcp::McpHub>,
}

/// Runs `agent` on its own task. `events` is the receiving end of the
/// channel the agent's runtime sends on.
pub fn spawn(mut agent: Agent, events: mpsc::UnboundedReceiver<AgentEvent>) -> AgentHandle {
    let (inputs, mut input_rx) = mpsc::unbounded_channel();
    let (interrupt, mut interrupt_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(input) = input_rx.recv().await {
            // An interrupt pressed between turns is not carried into the next.
            while interrupt_rx.try_recv().is_ok() {}
            match input {
                Input::Prompt(text) => {
                    agent.prompt(text, &mut interrupt_rx).await;
                }
                Input::Command(command) => {
                    if agent.command(command, &mut interrupt_rx).await == After::Quit {
                        break;
                    }
                }
                Input::ConfirmMode { to, yes } => agent.confirm_mode(to, yes),
            }
        }
    });
    AgentHandle {
        inputs,
        interrupt,
        events,
        task,
        mcp: None,
    }
}
