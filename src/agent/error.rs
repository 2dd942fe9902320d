//! Why the agent could not start or keep a record: one enum that keeps the
//! source of every failure. Each text names the file or setting at fault.
//! Never decides and never prints.

use std::io;
use std::path::PathBuf;

use crate::model::ModelError;
use crate::session::SessionError;
use crate::small_file::SmallFileError;
use crate::tools::ConfineError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the project directory {} cannot be used: {source}", path.display())]
    Project { path: PathBuf, source: io::Error },
    #[error("{0}; start mino in the project's own directory (--cd DIR)")]
    RootRefused(#[from] crate::policy::RootRefused),
    #[error("SOUL.md: {0}")]
    Soul(SmallFileError),
    #[error(
        "mino cannot find its own binary (/proc/self/exe), which every bash call runs under; \
         turn bash off with [tools] bash = false to run without it"
    )]
    NoOwnBinary,
    #[error(
        "the project's instructions: {0}; accepted: AGENTS.md as a regular file in the project, not a link"
    )]
    Instructions(ConfineError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("the shell gate's judge cannot be set up: {0}")]
    Judge(ModelError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("could not open the audit log {}: {source}", path.display())]
    AuditOpen { path: PathBuf, source: io::Error },
    #[error("could not write the audit log {}: {source}", path.display())]
    AuditWrite { path: PathBuf, source: io::Error },
    #[error("the audit log {} is unusable after an earlier failure", path.display())]
    AuditPoisoned { path: PathBuf },
    /// Work on the blocking pool stopped before it finished (a panic).
    #[error("a file operation stopped before it finished: {0}")]
    Blocking(String),
}
