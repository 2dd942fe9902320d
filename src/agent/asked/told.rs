//! What asking an agent tells the rest of mino: the steps of the asked
//! agent's turn as events for the front ends (its words redacted on their
//! way), and why asking failed.

use std::path::PathBuf;

/// What an asked agent did, for the front ends to show as a nested block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskedEvent {
    Started {
        question: String,
    },
    Text(String),
    ToolCall {
        call_id: String,
        title: String,
    },
    ToolUpdate {
        call_id: String,
        /// `in_progress`, `completed` or `failed`, when the update says.
        status: Option<&'static str>,
        text: String,
    },
    /// The asked agent's turn ended: `stop` is `end_turn`, `cancelled`, ...
    Ended {
        answer: String,
        stop: String,
    },
}

impl AskedEvent {
    /// This event with `clean` applied to the asked agent's words.
    pub fn redacted(self, clean: &dyn Fn(String) -> String) -> Self {
        match self {
            AskedEvent::Text(text) => AskedEvent::Text(clean(text)),
            AskedEvent::ToolCall { call_id, title } => AskedEvent::ToolCall {
                call_id,
                title: clean(title),
            },
            AskedEvent::ToolUpdate {
                call_id,
                status,
                text,
            } => AskedEvent::ToolUpdate {
                call_id,
                status,
                text: clean(text),
            },
            AskedEvent::Ended { answer, stop } => AskedEvent::Ended {
                answer: clean(answer),
                stop: clean(stop),
            },
            started @ AskedEvent::Started { .. } => started,
        }
    }
}

/// Why asking failed; each names the agent and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("no asked agent named {name:?}; configured in [agents]: {known}")]
    Unknown { name: String, known: String },
    #[error("the settings file of agent {name}, {}, does not exist", config.display())]
    NoConfig { name: String, config: PathBuf },
    #[error("agent {name} could not be started: {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("agent {name} failed: {message}")]
    Protocol { name: String, message: String },
}
