//! `/diff`: what the project's files hold now against the checkpoint taken
//! before the session's first prompt, file by file, with each text file's
//! diff (bounded, and redacted as every outside word is before the front
//! end sees it). Read-only for the project: it records the files' state in
//! mino's own store and changes nothing in the project or the session file.

use crate::checkpoint::rewind::prompts;
use crate::checkpoint::{changes, diffs};

use super::driver::Runtime;
use super::events::AgentEvent;
use super::live::LiveSession;

/// Shows what the session changed, or says why there is nothing to show.
pub(super) async fn show(rt: &Runtime, session: &LiveSession) {
    match session_diff(rt, session).await {
        Ok(Some(event)) => rt.emit(event),
        Ok(None) => rt.emit(AgentEvent::Notice(
            "/diff: the project's files are as they were before this session's first prompt."
                .into(),
        )),
        Err(text) => rt.emit(AgentEvent::Error(format!("/diff: {text}"))),
    }
}

async fn session_diff(rt: &Runtime, session: &LiveSession) -> Result<Option<AgentEvent>, String> {
    let Some(checkpoints) = rt.checkpoints.clone() else {
        return Err("this run keeps no checkpoints (the project is too large for them, or they could not start), so there is nothing to compare with.".into());
    };
    let first = session
        .with_log(|log| {
            log.entries()
                .map(|entries| prompts(&entries).first().map(|p| p.before.clone()))
        })
        .await
        .map_err(|e| e.to_string())?
        .transpose()
        .map_err(|e| e.to_string())?
        .flatten();
    let Some(first) = first else {
        return Err("this session has no prompt yet, so it has changed nothing.".into());
    };
    let id = session.id.clone();
    let work = move || {
        let before = checkpoints.manifest(&first).map_err(|e| {
            format!("the checkpoint before the session's first prompt cannot be read (it may have been pruned): {e}")
        })?;
        let now = checkpoints.take_for(&id).map_err(|e| e.to_string())?;
        let store = checkpoints.store();
        let deltas = changes::deltas(store, &before, &now.manifest);
        let files = diffs::diffs(store, &before, &now.manifest, &deltas, diffs::DIFFS_CAP);
        Ok::<_, String>((deltas, files))
    };
    let (deltas, files) = tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("it stopped: {e}"))??;
    if deltas.is_empty() {
        return Ok(None);
    }
    Ok(Some(AgentEvent::SessionDiff {
        changes: deltas,
        diffs: files,
    }))
}
