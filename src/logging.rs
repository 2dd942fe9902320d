//! Diagnostics: a tracing subscriber writing through tracing-appender's
//! non-blocking worker into `logs/mino.log` (0600) under mino's home, at the
//! level `MINO_LOG` names. Never writes to the terminal: the full-screen
//! front end owns it.

use std::fs;
use std::io;
use std::path::PathBuf;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

use crate::home::{Home, HomeError, create_private_file};

/// The variable holding the log filter (`info` when unset).
pub const MINO_LOG: &str = "MINO_LOG";

/// A log this large at startup is moved to `mino.log.1`, replacing the
/// previous one, so logs never grow without bound.
const ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Lines the writer thread may lag behind before new ones are dropped.
/// The appender's default of 128,000 allocates (and touches) 4 MiB at
/// start, a fifth of mino's memory, for a log that writes a few lines.
const BUFFERED_LINES: usize = 1024;

/// Why logging could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[error(transparent)]
    Home(#[from] HomeError),
    #[error("cannot open log file {}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{MINO_LOG}={value:?} is not a log filter ({message}); accepted: error, warn, info, debug, trace, or directives such as mino=debug"
    )]
    Filter { value: String, message: String },
    #[error("a tracing subscriber is already installed: {0}")]
    AlreadyInstalled(String),
}

/// The log file under `home`.
pub fn log_file(home: &Home) -> PathBuf {
    home.logs_dir().join("mino.log")
}

/// The filter `MINO_LOG` (given as `value`) names; `info` when unset.
pub fn filter(value: Option<&str>) -> Result<EnvFilter, LoggingError> {
    match value {
        None => Ok(EnvFilter::new("info")),
        Some(value) => EnvFilter::try_new(value).map_err(|e| LoggingError::Filter {
            value: value.to_string(),
            message: e.to_string(),
        }),
    }
}

/// Installs the global subscriber. Keep the guard alive for the whole run:
/// dropping it flushes and stops the writer thread.
pub fn init(home: &Home) -> Result<WorkerGuard, LoggingError> {
    home.ensure()?;
    let value = std::env::var_os(MINO_LOG).map(|v| v.to_string_lossy().into_owned());
    let filter = filter(value.as_deref())?;
    let path = log_file(home);
    rotate_if_large(&path);
    let file = create_private_file(&path).map_err(|source| LoggingError::File {
        path: path.clone(),
        source,
    })?;
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .finish(file);
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| LoggingError::AlreadyInstalled(e.to_string()))?;
    Ok(guard)
}

/// Moves an oversized log aside. A failure only means the log keeps growing,
/// so it is not an error.
fn rotate_if_large(path: &std::path::Path) {
    let large = fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > ROTATE_BYTES);
    if large {
        let _ = fs::rename(path, path.with_extension("log.1"));
    }
}

/// When the process started, for `startup_step`.
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Marks the process's start; the first call counts.
pub fn mark_start() {
    let _ = STARTED.set(std::time::Instant::now());
}

/// Logs `step` with the milliseconds since `mark_start`, at debug level
/// under `mino::startup` (`MINO_LOG=mino::startup=debug` shows where a
/// start spends its time).
pub fn startup_step(step: &str) {
    if let Some(started) = STARTED.get() {
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        tracing::debug!(target: "mino::startup", "{ms:.1} ms: {step}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn filter_defaults_to_info_and_names_a_bad_value() {
        assert_eq!(filter(None).unwrap().to_string(), "info");
        assert!(filter(Some("mino=debug")).is_ok());
        let err = filter(Some("mino=loud")).unwrap_err().to_string();
        assert!(err.contains("MINO_LOG"), "{err}");
        assert!(err.contains("mino=loud"), "{err}");
    }
}
