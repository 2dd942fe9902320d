//! `mino rewind`: a session's prompts with the files each turn changed, and
//! going back to the state just before one of them: the code (restored as
//! `restore.rs` says, itself a checkpoint first so it can be taken back),
//! the conversation (a `rewind` record: history is cut there on replay;
//! the session file is never rewritten), or both. Prompts are numbered
//! from 1 by the `turn` checkpoints of the session file.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::session::{
    CheckpointAt, CheckpointRecord, LogEntry, SessionError, SessionLog, SessionStore,
};

use super::changes::{FileDelta, deltas};
use super::restore::{Restored, apply};
use super::{CheckpointError, Checkpoints, Manifest};

/// What to restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Code,
    Conversation,
    Both,
}

/// Why a rewind could not be done. Each names what is at fault.
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(
        "session {id} was started in {}, not in {}; run mino rewind there (or give --cd)",
        session.display(),
        here.display()
    )]
    OtherProject {
        id: String,
        session: std::path::PathBuf,
        here: std::path::PathBuf,
    },
    #[error(
        "--to {to}: session {id} has {count} prompt(s) with a checkpoint; accepted: 1 to {count}"
    )]
    NoSuchPrompt { to: usize, id: String, count: usize },
    #[error(
        "--to {to}: the checkpoint before that prompt was pruned from the store (the [checkpoints] settings say how many, how old and how much is kept); mino rewind --list shows which prompts can still be rewound"
    )]
    Pruned { to: usize },
}

/// One prompt of the session.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub n: usize,
    pub text: String,
    pub time: u64,
    /// The checkpoint just before it.
    pub before: String,
    /// The last checkpoint of its turn (before the next prompt).
    pub after: String,
}

/// The prompts the records name, in order.
pub fn prompts(entries: &[LogEntry]) -> Vec<Prompt> {
    let mut out: Vec<Prompt> = Vec::new();
    for entry in entries {
        let LogEntry::Checkpoint(record) = entry else {
            continue;
        };
        if record.at == CheckpointAt::Turn {
            out.push(Prompt {
                n: out.len() + 1,
                text: record.prompt.clone().unwrap_or_default(),
                time: record.time,
                before: record.id.clone(),
                after: record.id.clone(),
            });
        } else if let Some(last) = out.last_mut() {
            last.after.clone_from(&record.id);
        }
    }
    out
}

/// The id of the last checkpoint the records name: what mino last left.
pub fn last_checkpoint(entries: &[LogEntry]) -> Option<String> {
    entries.iter().rev().find_map(|entry| match entry {
        LogEntry::Checkpoint(record) => Some(record.id.clone()),
        _ => None,
    })
}

#[derive(Serialize)]
struct Listed<'a> {
    n: usize,
    prompt: &'a str,
    time: u64,
    checkpoint: &'a str,
    /// Whether the checkpoint is gone from the store (pruned).
    pruned: bool,
    files: Vec<FileDelta>,
}

fn open(
    store: &SessionStore,
    session: &str,
    root: &Path,
) -> Result<(SessionLog, Vec<LogEntry>), RewindError> {
    let id = store.resolve(session)?;
    let (log, loaded) = store.open(&id)?;
    let started = std::fs::canonicalize(&loaded.header.project)
        .unwrap_or_else(|_| loaded.header.project.clone());
    if started != root {
        return Err(RewindError::OtherProject {
            id: id.to_string(),
            session: loaded.header.project,
            here: root.to_path_buf(),
        });
    }
    Ok((log, loaded.entries))
}

/// `--list`: the prompts, numbered from 1, with the files each turn changed.
pub fn list(
    store: &SessionStore,
    checkpoints: &Checkpoints,
    session: &str,
) -> Result<Value, RewindError> {
    let (log, entries) = open(store, session, checkpoints.root())?;
    let mut listed = Vec::new();
    let prompts = prompts(&entries);
    for prompt in &prompts {
        let before = checkpoints.manifest(&prompt.before);
        let after = checkpoints.manifest(&prompt.after);
        let (pruned, files) = match (before, after) {
            (Ok(before), Ok(after)) => (false, deltas(checkpoints.store(), &before, &after)),
            _ => (true, Vec::new()),
        };
        listed.push(Listed {
            n: prompt.n,
            prompt: &prompt.text,
            time: prompt.time,
            checkpoint: &prompt.before,
            pruned,
            files,
        });
    }
    Ok(json!({ "session": log.id().to_string(), "prompts": listed }))
}

/// `--to N`: back to the state just before prompt `to`.
pub fn to(
    store: &SessionStore,
    checkpoints: &Checkpoints,
    session: &str,
    to: usize,
    what: What,
    force: bool,
) -> Result<Value, RewindError> {
    let (mut log, entries) = open(store, session, checkpoints.root())?;
    let prompts = prompts(&entries);
    let Some(prompt) = to.checked_sub(1).and_then(|i| prompts.get(i)) else {
        return Err(RewindError::NoSuchPrompt {
            to,
            id: log.id().to_string(),
            count: prompts.len(),
        });
    };
    let code = matches!(what, What::Code | What::Both);
    let conversation = matches!(what, What::Conversation | What::Both);
    let mut out = Restored::default();
    let mut taken_id = None;
    if code {
        let target = match checkpoints.manifest(&prompt.before) {
            Ok(target) => target,
            Err(CheckpointError::Store { error, .. })
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                return Err(RewindError::Pruned { to });
            }
            Err(e) => return Err(e.into()),
        };
        let last = match last_checkpoint(&entries) {
            Some(id) => checkpoints.manifest(&id)?,
            None => Manifest::default(),
        };
        // The rewind is itself a checkpoint, so it can be taken back.
        let current = checkpoints.take_for(log.id().as_ref())?;
        append(&mut log, CheckpointAt::Rewind, &current.id)?;
        out = apply(
            checkpoints.store(),
            checkpoints.root(),
            &target,
            &current.manifest,
            &last,
            force,
        );
        let left = checkpoints.take_for(log.id().as_ref())?;
        append(&mut log, CheckpointAt::End, &left.id)?;
        taken_id = Some(current.id);
    }
    log.append(&LogEntry::Rewind {
        to,
        code,
        conversation,
    })?;
    Ok(json!({
        "session": log.id().to_string(),
        "to": to,
        "prompt": prompt.text,
        "code": code,
        "conversation": conversation,
        "checkpoint": taken_id,
        "restored": out.restored,
        "deleted": out.deleted,
        "kept": out.kept,
        "unrestorable": out.unrestorable,
        "failed": out.failed,
    }))
}

fn append(log: &mut SessionLog, at: CheckpointAt, id: &str) -> Result<(), SessionError> {
    log.append(&LogEntry::Checkpoint(CheckpointRecord {
        at,
        id: id.to_string(),
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        prompt: None,
        call_id: None,
    }))
}
