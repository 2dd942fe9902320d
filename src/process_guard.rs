//! What mino does to its own process once, at start, so that what it runs
//! cannot reach into it: it makes itself non-dumpable, so its `/proc`
//! entries (`environ`, `mem`, `maps`, ...) belong to root and a child
//! running as the same user cannot read the key out of its environment.
//! Never touches another process.

/// Why hardening the process failed.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("could not make mino's process non-dumpable (prctl PR_SET_DUMPABLE): {0}")]
    Dumpable(#[source] std::io::Error),
}

/// Applies every setting above to the calling process. Linux only; other
/// systems keep their own defaults.
pub fn harden_at_start() -> Result<(), GuardError> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::process::{DumpableBehavior, set_dumpable_behavior};
        set_dumpable_behavior(DumpableBehavior::NotDumpable)
            .map_err(|e| GuardError::Dumpable(e.into()))?;
    }
    Ok(())
}
