//! Front ends: they draw and read input, and never decide. A question only
//! collects an answer and hands it back through the consent port.

pub mod acp;
pub mod check;
pub mod gate;
pub mod line;
pub mod rewind;
pub mod rewind_words;
pub mod rules_check;
pub mod stream_json;
pub mod text;
pub mod tui;
pub mod version;

use std::time::Duration;

use tokio::signal::unix::Signal;

use crate::agent::AgentHandle;

/// How long leaving waits for the agent to end (an interrupted turn kills
/// its command's process group first).
const AGENT_GRACE: Duration = Duration::from_secs(2);

/// Ends the agent once the front end is done with it. A panic in it (or an
/// agent that would not stop) is said on stderr and makes a clean exit 1.
pub(crate) async fn finish_agent(handle: AgentHandle, code: i32) -> i32 {
    match handle.finish(AGENT_GRACE).await {
        Ok(()) => code,
        Err(e) => {
            eprintln!("mino: {e}");
            if code == 0 { 1 } else { code }
        }
    }
}

/// The next delivery of `signal`; never, when it could not be set up.
pub(crate) async fn next_signal(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}
