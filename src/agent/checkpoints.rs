//! The turn's checkpoints: before each prompt, and before and after every
//! bash call and every write that runs, each taken on the blocking pool and
//! named by a `checkpoint` record in the session file. After a bash call
//! that changed project files, the front end is told which (with lines
//! added and removed) and the model's result gets one line naming them. A
//! checkpoint that fails is a warning, never a stop: the turn goes on.

use crate::checkpoint::{Taken, changes, diffs};
use crate::session::{CheckpointAt, CheckpointRecord, LogEntry};
use crate::tools::{ToolOutcome, ToolStatus};

use super::driver::Runtime;
use super::events::AgentEvent;
use super::live::LiveSession;

/// Whether a call of `tool` may change project files.
fn writes(tool: &str) -> bool {
    matches!(tool, "bash" | "write_file" | "edit_file")
}

/// Before prompt `prompt`.
pub(super) async fn turn(rt: &Runtime, session: &LiveSession, prompt: &str) {
    record(
        rt,
        session,
        CheckpointAt::Turn,
        Some(prompt.to_string()),
        None,
    )
    .await;
}

/// Before a call of `tool` runs, when it may write.
pub(super) async fn before(
    rt: &Runtime,
    session: &LiveSession,
    call_id: &str,
    tool: &str,
) -> Option<Taken> {
    if !writes(tool) {
        return None;
    }
    record(
        rt,
        session,
        CheckpointAt::Before,
        None,
        Some(call_id.to_string()),
    )
    .await
}

/// After an interrupted call that may write: what it left is what mino left.
pub(super) async fn interrupted(rt: &Runtime, session: &LiveSession, call_id: &str, tool: &str) {
    if writes(tool) {
        record(
            rt,
            session,
            CheckpointAt::After,
            None,
            Some(call_id.to_string()),
        )
        .await;
    }
}

/// Takes a checkpoint and records it; None (after a warning) when it failed
/// or the run keeps none.
async fn record(
    rt: &Runtime,
    session: &LiveSession,
    at: CheckpointAt,
    prompt: Option<String>,
    call_id: Option<String>,
) -> Option<Taken> {
    let checkpoints = rt.checkpoints.clone()?;
    let cps = checkpoints.clone();
    let session_id = session.id.clone();
    let taken = match tokio::task::spawn_blocking(move || cps.take_for(&session_id)).await {
        Ok(Ok(taken)) => taken,
        Ok(Err(e @ crate::checkpoint::CheckpointError::TooLarge { .. })) => {
            // Said once a run: every later call would say it again.
            if checkpoints.too_large_warning_due() {
                rt.emit(AgentEvent::Warning(e.to_string()));
            }
            return None;
        }
        Ok(Err(e)) => {
            rt.emit(AgentEvent::Warning(format!(
                "no checkpoint was taken, so this cannot be rewound: {e}"
            )));
            return None;
        }
        Err(e) => {
            rt.emit(AgentEvent::Warning(format!(
                "no checkpoint was taken: it stopped: {e}"
            )));
            return None;
        }
    };
    // Once a run, after its first checkpoint, off the turn's path: the
    // pass never waits for a take, and what it removed only goes to the
    // log file.
    let cps = checkpoints.clone();
    if checkpoints.prune_due() {
        drop(tokio::task::spawn_blocking(move || {
            match cps.prune_once() {
                Some(Ok(pruned)) if pruned.manifests + pruned.blobs > 0 => tracing::info!(
                    manifests = pruned.manifests,
                    blobs = pruned.blobs,
                    bytes = pruned.bytes,
                    "checkpoints pruned"
                ),
                Some(Err(e)) => tracing::warn!(error = %e, "checkpoints could not be pruned"),
                _ => {}
            }
        }));
    }
    if checkpoints.links_warning_due() {
        rt.emit(AgentEvent::Warning(format!(
            "checkpoints copy the objects of .git instead of hard-linking them: mino's home ({}) is on another filesystem than the project, so each checkpoint of new objects costs their bytes",
            checkpoints.store().root().display()
        )));
    }
    let record = CheckpointRecord {
        at,
        id: taken.id.clone(),
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        prompt,
        call_id,
    };
    if let Err(e) = session.append_entry(LogEntry::Checkpoint(record)).await {
        rt.emit(AgentEvent::Warning(format!(
            "the checkpoint could not be named in the session: {e}"
        )));
    }
    Some(taken)
}

/// After a call that may write: the `after` checkpoint, and for bash what it
/// changed, told to the front end and added to the result.
pub(super) async fn after_call(
    rt: &Runtime,
    session: &LiveSession,
    call_id: &str,
    tool: &str,
    before: Option<Taken>,
    outcome: &mut ToolOutcome,
) {
    if !writes(tool) {
        return;
    }
    let after = record(
        rt,
        session,
        CheckpointAt::After,
        None,
        Some(call_id.to_string()),
    )
    .await;
    let (Some(before), Some(after), Some(checkpoints)) = (before, after, rt.checkpoints.clone())
    else {
        return;
    };
    if tool != "bash" || before.id == after.id {
        return;
    }
    let (deltas, diffs) = tokio::task::spawn_blocking(move || {
        let store = checkpoints.store();
        let deltas = changes::deltas(store, &before.manifest, &after.manifest);
        let diffs = diffs::diffs(
            store,
            &before.manifest,
            &after.manifest,
            &deltas,
            diffs::DIFFS_CAP,
        );
        (deltas, diffs)
    })
    .await
    .unwrap_or_default();
    if deltas.is_empty() {
        return;
    }
    let line = changes::line(&deltas);
    if outcome.status != ToolStatus::Interrupted {
        if !outcome.output.is_empty() && !outcome.output.ends_with('\n') {
            outcome.output.push('\n');
        }
        outcome
            .output
            .push_str(&format!("Changed by this command: {line}\n"));
    }
    rt.emit(AgentEvent::BashChanged {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        changes: deltas,
        diffs,
    });
}
