//! Runs a read-only tool's blocking work (a read, a listing, a walk) off the
//! async threads and answers a cancel at once, and inspects a write that was
//! not inspected yet on the same pool. Owns only that wait; the work and its
//! messages are the caller's. Never used for a write: a write that has
//! started must finish (see `write_file::spawn_write`).

use tokio_util::sync::CancellationToken;

use super::{BoxFuture, PreparedCall, ToolOutcome};

/// `call` inspected: at once when it already was (the driver inspects
/// before it asks), else on the blocking pool (inspection reads the file
/// and builds the diff). A failure is the call's error result.
pub(crate) async fn inspected<T>(
    mut call: Box<T>,
    already: bool,
    tool: &'static str,
) -> Result<Box<T>, ToolOutcome>
where
    T: PreparedCall + 'static,
{
    if already {
        return Ok(call);
    }
    tokio::task::spawn_blocking(move || call.inspect().map(|()| call))
        .await
        .map_err(|e| ToolOutcome::error(format!("{tool} failed: {e}")))?
        .map_err(|e| ToolOutcome::error(e.to_string()))
}

/// Runs `work` on the blocking pool. A cancel before it starts or while it
/// runs ends the call at once with `interrupted`; work already running is
/// left to finish unseen (it only reads; work that should stop early watches
/// its own clone of the token). A panic in the work becomes the error
/// `{tool} failed: ...`.
pub(crate) fn run_blocking<F>(
    cancel: CancellationToken,
    tool: &'static str,
    interrupted: &'static str,
    work: F,
) -> BoxFuture<ToolOutcome>
where
    F: FnOnce() -> ToolOutcome + Send + 'static,
{
    Box::pin(async move {
        if cancel.is_cancelled() {
            return ToolOutcome::interrupted(interrupted);
        }
        let work = tokio::task::spawn_blocking(work);
        tokio::select! {
            biased;
            () = cancel.cancelled() => ToolOutcome::interrupted(interrupted),
            joined = work => joined.unwrap_or_else(|e| {
                ToolOutcome::error(format!("{tool} failed: {e}"))
            }),
        }
    })
}
