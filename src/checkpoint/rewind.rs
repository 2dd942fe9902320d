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
use super::restore::{Force, Restored, apply, plan};
use super::{CheckpointError, Checkpoints, Manifest};

/// What to restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
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

/// One prompt as `--list`, `/rewind`'s picker and ACP show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    pub n: usize,
    pub prompt: String,
    pub time: u64,
    pub checkpoint: String,
    /// Whether the checkpoint is gone from the store (pruned).
    pub pruned: bool,
    /// What its turn changed.
    pub files: Vec<FileDelta>,
}

/// What going back to the state before one prompt would do, said before
/// it is done: the code part is `restore::plan` without force (paths
/// changed since by something else are `kept`), with the lines it puts
/// back and takes away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offer {
    pub n: usize,
    pub prompt: String,
    pub code: Restored,
    /// Lines the restore adds and removes, over the files it writes or
    /// deletes.
    pub added: usize,
    pub removed: usize,
    /// Prompts the conversation leaves out (this one and every later one).
    pub prompts_dropped: usize,
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub to: usize,
    pub prompt: String,
    pub code: bool,
    pub conversation: bool,
    /// The checkpoint taken just before the code was restored.
    pub checkpoint: Option<String>,
    pub restored: Restored,
}

impl Done {
    /// One line that says it, for a chat.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.code {
            let r = &self.restored;
            parts.push(format!(
                "{} file(s) restored, {} deleted",
                r.restored.len(),
                r.deleted.len()
            ));
            if !r.kept.is_empty() {
                parts.push(format!(
                    "kept as they are (changed since by something other than mino): {}",
                    r.kept.join(", ")
                ));
            }
            if !r.unrestorable.is_empty() {
                parts.push(format!(
                    "recorded by digest only, not restored: {}",
                    r.unrestorable.join(", ")
                ));
            }
            if !r.failed.is_empty() {
                parts.push(format!("failed: {}", r.failed.join("; ")));
            }
        }
        if self.conversation {
            parts.push(format!(
                "the conversation is back to before prompt {}",
                self.to
            ));
        }
        let undo = if self.code {
            " /rewind can take it back."
        } else {
            ""
        };
        format!(
            "Rewound to before prompt {}: {}.{undo}",
            self.to,
            parts.join("; ")
        )
    }

    fn json(&self, session: &str) -> Value {
        let r = &self.restored;
        json!({
            "session": session,
            "to": self.to,
            "prompt": self.prompt,
            "code": self.code,
            "conversation": self.conversation,
            "checkpoint": self.checkpoint,
            "restored": r.restored,
            "deleted": r.deleted,
            "kept": r.kept,
            "unrestorable": r.unrestorable,
            "failed": r.failed,
        })
    }
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

/// The prompts of `entries`, numbered from 1, with the files each turn
/// changed (none, and `pruned`, when a checkpoint is gone).
pub fn listed(checkpoints: &Checkpoints, entries: &[LogEntry]) -> Vec<Listed> {
    prompts(entries)
        .into_iter()
        .map(|prompt| {
            let before = checkpoints.manifest(&prompt.before);
            let after = checkpoints.manifest(&prompt.after);
            let (pruned, files) = match (before, after) {
                (Ok(before), Ok(after)) => (false, deltas(checkpoints.store(), &before, &after)),
                _ => (true, Vec::new()),
            };
            Listed {
                n: prompt.n,
                prompt: prompt.text,
                time: prompt.time,
                checkpoint: prompt.before,
                pruned,
                files,
            }
        })
        .collect()
}

/// `--list`: the prompts, numbered from 1, with the files each turn changed.
pub fn list(
    store: &SessionStore,
    checkpoints: &Checkpoints,
    session: &str,
) -> Result<Value, RewindError> {
    let (log, entries) = open(store, session, checkpoints.root())?;
    let listed = listed(checkpoints, &entries);
    Ok(json!({ "session": log.id().to_string(), "prompts": listed }))
}

fn prompt_at(prompts: &[Prompt], to: usize, session: &str) -> Result<Prompt, RewindError> {
    to.checked_sub(1)
        .and_then(|i| prompts.get(i))
        .cloned()
        .ok_or_else(|| RewindError::NoSuchPrompt {
            to,
            id: session.to_string(),
            count: prompts.len(),
        })
}

fn target(checkpoints: &Checkpoints, prompt: &Prompt, to: usize) -> Result<Manifest, RewindError> {
    match checkpoints.manifest(&prompt.before) {
        Ok(target) => Ok(target),
        Err(CheckpointError::Store { error, .. })
            if error.kind() == std::io::ErrorKind::NotFound =>
        {
            Err(RewindError::Pruned { to })
        }
        Err(e) => Err(e.into()),
    }
}

fn last_left(checkpoints: &Checkpoints, entries: &[LogEntry]) -> Result<Manifest, RewindError> {
    Ok(match last_checkpoint(entries) {
        Some(id) => checkpoints.manifest(&id)?,
        None => Manifest::default(),
    })
}

/// What going back to before prompt `to` of `entries` (session `session`)
/// would do, without doing it. Blocking: it records the project's files now.
pub fn offer(
    checkpoints: &Checkpoints,
    session: &str,
    entries: &[LogEntry],
    to: usize,
) -> Result<Offer, RewindError> {
    let prompts = prompts(entries);
    let prompt = prompt_at(&prompts, to, session)?;
    let target = target(checkpoints, &prompt, to)?;
    let last = last_left(checkpoints, entries)?;
    let current = checkpoints.take_for(session)?;
    let code = plan(&target, &current.manifest, &last, &Force::None);
    let (mut added, mut removed) = (0, 0);
    for delta in deltas(checkpoints.store(), &current.manifest, &target) {
        if code.restored.contains(&delta.path) || code.deleted.contains(&delta.path) {
            added += delta.added;
            removed += delta.removed;
        }
    }
    Ok(Offer {
        n: to,
        prompt: prompt.text,
        code,
        added,
        removed,
        prompts_dropped: prompts.len() + 1 - to,
    })
}

/// Goes back to the state just before prompt `to` of the session `log`
/// writes, whose records are `entries`: the code first (itself a
/// checkpoint first), then the `rewind` record. Blocking.
pub fn rewind_log(
    log: &mut SessionLog,
    entries: &[LogEntry],
    checkpoints: &Checkpoints,
    to: usize,
    what: What,
    force: &Force,
) -> Result<Done, RewindError> {
    let session = log.id().to_string();
    let prompt = prompt_at(&prompts(entries), to, &session)?;
    let code = matches!(what, What::Code | What::Both);
    let conversation = matches!(what, What::Conversation | What::Both);
    let mut restored = Restored::default();
    let mut taken_id = None;
    if code {
        let target = target(checkpoints, &prompt, to)?;
        let last = last_left(checkpoints, entries)?;
        // The rewind is itself a checkpoint, so it can be taken back.
        let current = checkpoints.take_for(&session)?;
        append(log, CheckpointAt::Rewind, &current.id)?;
        restored = apply(
            checkpoints.store(),
            checkpoints.root(),
            &target,
            &current.manifest,
            &last,
            force,
        );
        let left = checkpoints.take_for(&session)?;
        append(log, CheckpointAt::End, &left.id)?;
        taken_id = Some(current.id);
    }
    log.append(&LogEntry::Rewind {
        to,
        code,
        conversation,
    })?;
    Ok(Done {
        to,
        prompt: prompt.text,
        code,
        conversation,
        checkpoint: taken_id,
        restored,
    })
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
    let done = rewind_log(
        &mut log,
        &entries,
        checkpoints,
        to,
        what,
        &Force::from(force),
    )?;
    Ok(done.json(log.id().as_ref()))
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
