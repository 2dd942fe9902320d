//! The agent: drives turns through the decision, owns the limits and the
//! sessions of this run, and talks to front ends only through typed events
//! (`AgentEvent`) and a consent port (a request carrying a oneshot reply).
//! It never draws and never reads keys.

mod announce;
pub mod asked;
pub mod attach;
pub mod audit;
pub mod budget;
pub mod build;
mod checkpoints;
pub mod commands;
pub mod compact;
pub mod driver;
mod error;
pub mod events;
pub mod first_trust;
mod gate_step;
mod held;
mod history_secrets;
mod home_secrets;
pub mod hooks;
mod host_question;
pub mod instructions_seen;
pub mod judge;
pub mod live;
pub mod live_output;
mod mcp_start;
mod model_setup;
mod offered;
mod prepare;
pub mod prompt;
mod request;
mod rewind;
mod runtime;
mod secret_values;
mod session_diff;
pub mod sessions;
mod shells;
pub mod spent;
mod stream;
pub mod task;
pub mod turn;
pub mod user_shell;

pub use commands::{Command, CommandError};
pub use error::AgentError;
pub use events::{AgentEvent, ConsentReply, ConsentRequest, DecisionView, ModelEntry, NoticeKind};
pub use task::{AgentHandle, AgentStopped, Input, Interrupter};
pub use turn::{TurnLimits, TurnStop};
