//! `/rewind` for the session in use: its prompts, what going back to before
//! one would do, and doing it, all read from and written to the session's
//! own open file (so it works after `/resume` and across restarts). The
//! work is `checkpoint::rewind`'s, run on the blocking pool; this never runs
//! while a turn does (inputs take turns), and it decides nothing about a
//! tool call.

use crate::checkpoint::restore::Force;
use crate::checkpoint::rewind::{self, Done, Listed, Offer, RewindError, What};
use crate::session::history;

use super::driver::Runtime;
use super::error::AgentError;
use super::live::LiveSession;

/// Why `/rewind` could not be done, as the chat says it.
fn say(error: RewindError) -> String {
    match error {
        RewindError::NoSuchPrompt { to, count, .. } => format!(
            "/rewind {to}: this session has {count} prompt(s) with a checkpoint; accepted: 1 to {count}"
        ),
        RewindError::Pruned { to } => format!(
            "/rewind {to}: the checkpoint before that prompt was pruned from the store ([checkpoints] keep_per_session, max_age_days and max_bytes say how much is kept); choose a prompt that is not marked pruned"
        ),
        other => format!("/rewind: {other}"),
    }
}

fn off() -> String {
    "/rewind: this run keeps no checkpoints (the project is too large for them, or they could not start), so there is nothing to go back to.".into()
}

const NOTHING: &str = "/rewind: this session has no prompt yet, so there is nothing to go back to.";

fn blocking_error(e: AgentError) -> String {
    format!("/rewind: {e}")
}

/// The session's prompts, numbered from 1.
pub(super) async fn list(rt: &Runtime, session: &LiveSession) -> Result<Vec<Listed>, String> {
    let Some(checkpoints) = rt.checkpoints.clone() else {
        return Err(off());
    };
    let listed = session
        .with_log(move |log| log.entries().map(|e| rewind::listed(&checkpoints, &e)))
        .await
        .map_err(blocking_error)?;
    match listed {
        None => Ok(Vec::new()),
        Some(Ok(listed)) => Ok(listed),
        Some(Err(e)) => Err(format!("/rewind: {e}")),
    }
}

/// What going back to before prompt `to` would do.
pub(super) async fn offer(rt: &Runtime, session: &LiveSession, to: usize) -> Result<Offer, String> {
    let Some(checkpoints) = rt.checkpoints.clone() else {
        return Err(off());
    };
    let id = session.id.clone();
    let offered = session
        .with_log(move |log| {
            let entries = log.entries().map_err(RewindError::from)?;
            rewind::offer(&checkpoints, &id, &entries, to)
        })
        .await
        .map_err(blocking_error)?;
    match offered {
        None => Err(NOTHING.into()),
        Some(result) => result.map_err(say),
    }
}

/// Goes back to before prompt `to`; when the conversation goes back, the
/// session's history in memory follows its file.
pub(super) async fn run(
    rt: &Runtime,
    session: &mut LiveSession,
    to: usize,
    what: What,
    force: Vec<String>,
) -> Result<Done, String> {
    let Some(checkpoints) = rt.checkpoints.clone() else {
        return Err(off());
    };
    let force = Force::Paths(force.into_iter().collect());
    let done = session
        .with_log(move |log| {
            let entries = log.entries().map_err(RewindError::from)?;
            let done = rewind::rewind_log(log, &entries, &checkpoints, to, what, &force)?;
            let items = if done.conversation {
                Some(history(&log.entries().map_err(RewindError::from)?))
            } else {
                None
            };
            Ok::<_, RewindError>((done, items))
        })
        .await
        .map_err(blocking_error)?;
    let (done, items) = match done {
        None => return Err(NOTHING.into()),
        Some(result) => result.map_err(say)?,
    };
    if let Some(items) = items {
        session.history = std::sync::Arc::new(items);
        session.input_tokens = rt.estimate(&session.history);
    }
    Ok(done)
}
