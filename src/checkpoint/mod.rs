//! Checkpoints: the state of a project's files, taken before each turn,
//! before every bash call and every write that runs, and after them, so
//! that a turn (bash included) can be taken back.
//!
//! Design: a content-addressed store of mino's own in mino's home, per
//! project (`MINO_HOME/checkpoints/<digest of the project's path>/`, named
//! like the sandbox's `MINO_HOME/sandbox/<digest>/`), not a git directory:
//! it never touches the user's repository, runs no git, needs no git
//! installed, and works the same in a project that is not a repository.
//! Blobs are named by their SHA-256 and written once; a checkpoint is a
//! manifest (path -> kind, digest, mode, size) named by the digest of its
//! text, so a checkpoint where nothing changed is the manifest already
//! there. A cached index (path -> size, mtime, ctime, inode, digest) makes
//! that a stat walk: no file is read again unless its stat changed.
//!
//! What is recorded: what `.gitignore`/`.ignore` leave in; the whole of
//! the project's `.git` (refs, `HEAD`, the index, `packed-refs`, the
//! configuration), its objects and packs by hard link (git never rewrites
//! them in place; copied where links cannot be made, which
//! `links_failed` reports). Protected paths and files over the size limit
//! (16 MiB by default) are recorded by digest only: never copied, never
//! restored. The session file names each checkpoint (a `checkpoint`
//! record), so `mino rewind` works across restarts.

pub mod changes;
pub mod diffs;
pub mod index;
pub mod manifest;
pub mod prune;
pub mod read;
pub mod restore;
pub mod rewind;
pub mod store;
pub mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::policy::ProtectedPaths;

use index::{Cached, Index, now_ns};
pub use manifest::{Change, Entry, Kind, Manifest};
pub use store::Store;

/// Files larger than this are recorded by digest only.
pub const DEFAULT_SIZE_LIMIT: u64 = 16 * 1024 * 1024;

/// Why a checkpoint could not be taken or used. Names the store's path.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("the checkpoint store {} cannot be used: {error}", path.display())]
    Store {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The project holds more paths than a checkpoint walks: checkpoints
    /// are off for the run.
    #[error(
        "{} holds more than {limit} files and directories that .gitignore and .ignore do not leave out, too many to checkpoint at every call: checkpoints are off for this run, so nothing of it can be rewound (add ignore files, or run mino in a smaller directory)",
        root.display()
    )]
    TooLarge { root: PathBuf, limit: usize },
}

/// A checkpoint taken: its id and what it recorded.
#[derive(Debug, Clone)]
pub struct Taken {
    pub id: String,
    pub manifest: Arc<Manifest>,
}

/// The checkpoints of one project, shared by the turns of a run.
#[derive(Debug)]
pub struct Checkpoints {
    store: Store,
    root: PathBuf,
    protected: Arc<ProtectedPaths>,
    size_limit: u64,
    /// The most paths a checkpoint walks (`walk::MAX_ENTRIES`).
    max_entries: usize,
    /// The secret values mino holds: a file holding one is recorded by
    /// digest only, like a protected one (a remote URL's token in
    /// `.git/config` never reaches mino's home).
    secrets: Option<crate::secrets::HeldSecrets>,
    state: Mutex<State>,
    /// Whether the copied-objects warning was given.
    warned: std::sync::atomic::AtomicBool,
    /// Whether the too-large warning was given.
    warned_too_large: std::sync::atomic::AtomicBool,
    retention: prune::Retention,
    /// Whether this run's pruning pass was started.
    pruned: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    index: Option<Index>,
    last: Option<Taken>,
    links_failed: bool,
    /// A walk found the project too large: no more walks this run.
    too_large: bool,
    /// The store's pruning generation `index` was last checked against.
    generation: Option<u64>,
}

impl Checkpoints {
    /// The checkpoints of `root` (canonical) kept in `store`.
    pub fn new(store: Store, root: PathBuf, protected: Arc<ProtectedPaths>) -> Checkpoints {
        Checkpoints {
            store,
            root,
            protected,
            size_limit: DEFAULT_SIZE_LIMIT,
            max_entries: walk::MAX_ENTRIES,
            secrets: None,
            state: Mutex::new(State::default()),
            warned: std::sync::atomic::AtomicBool::new(false),
            warned_too_large: std::sync::atomic::AtomicBool::new(false),
            retention: prune::Retention::default(),
            pruned: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn with_retention(mut self, retention: prune::Retention) -> Checkpoints {
        self.retention = retention;
        self
    }

    /// Whether this run's pruning pass is still to start.
    pub fn prune_due(&self) -> bool {
        !self.pruned.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// This run's one pruning pass: the first call runs it, later ones do
    /// nothing (None). Blocking; it never waits for a take in progress.
    pub fn prune_once(&self) -> Option<std::io::Result<prune::Pruned>> {
        if self.pruned.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        Some(
            self.store
                .prune(&self.retention, std::time::SystemTime::now()),
        )
    }

    /// The checkpoints of `root` in mino's home `home`.
    pub fn in_home(home: &Path, root: PathBuf, protected: Arc<ProtectedPaths>) -> Checkpoints {
        Checkpoints::new(Store::for_project(home, &root), root, protected)
    }

    pub fn with_secrets(mut self, secrets: crate::secrets::HeldSecrets) -> Checkpoints {
        self.secrets = Some(secrets);
        self
    }

    pub fn with_size_limit(mut self, limit: u64) -> Checkpoints {
        self.size_limit = limit;
        self
    }

    pub fn with_max_entries(mut self, limit: usize) -> Checkpoints {
        self.max_entries = limit;
        self
    }

    /// True once, the first time a walk found the project too large.
    pub fn too_large_warning_due(&self) -> bool {
        !self
            .warned_too_large
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a git object had to be copied because a hard link could not
    /// be made (mino's home on another filesystem).
    pub fn links_failed(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .links_failed
    }

    /// True once, the first time objects had to be copied: say it then.
    pub fn links_warning_due(&self) -> bool {
        self.links_failed() && !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    fn error(&self, error: std::io::Error) -> CheckpointError {
        CheckpointError::Store {
            path: self.store.root().to_path_buf(),
            error,
        }
    }

    /// Records the project's files now, unnamed (tests, the bench).
    pub fn take(&self) -> Result<Taken, CheckpointError> {
        self.take_for("")
    }

    /// Records the project's files now as named by `session` (the store's
    /// log, which retention reads). Blocking: run it off the async workers.
    pub fn take_for(&self, session: &str) -> Result<Taken, CheckpointError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let too_large = || CheckpointError::TooLarge {
            root: self.root.clone(),
            limit: self.max_entries,
        };
        if state.too_large {
            return Err(too_large());
        }
        self.store.ensure().map_err(|e| self.error(e))?;
        // Held shared until the take is in the log: a pruning pass removes
        // nothing meanwhile.
        let lock = self.store.open_lock().map_err(|e| self.error(e))?;
        lock.lock_shared().map_err(|e| self.error(e))?;
        // A pass that removed blobs since the index was checked: a cached
        // digest is trusted only if its blob is still there.
        let generation = self.store.generation();
        let verify = state.generation != Some(generation);
        if verify {
            state.last = None;
        }
        // An index this process made was judged by this protected set: a
        // fresh entry's kind stands. One read from disk may have been
        // judged by other settings: every path is judged again (its bytes
        // are not read again when its stat is the same).
        let (old, judged) = match state.index.take() {
            Some(index) => (index, true),
            None => (Index::load(&self.store.index_file()), false),
        };
        let mut index = Index::default();
        index.entries.reserve(old.entries.len());
        let mut files = BTreeMap::new();
        let mut changed_index = false;
        let mut wrote_blob = false;
        let Ok(walked) = walk::walk_bounded(&self.root, &self.protected, self.max_entries) else {
            state.too_large = true;
            return Err(too_large());
        };
        // Nothing changed since the last take of this run (the common case
        // before a call): the last checkpoint stands, no map is rebuilt.
        if judged
            && !verify
            && let Some(last) = state.last.clone()
            && unchanged(&walked, &old, &last.manifest, self.size_limit)
        {
            self.store
                .log_checkpoint(session, &last.id)
                .map_err(|e| self.error(e))?;
            drop(lock);
            state.index = Some(old);
            state.generation = Some(generation);
            return Ok(last);
        }
        let root = read::Root::open(&self.root).map_err(|error| CheckpointError::Store {
            path: self.root.clone(),
            error,
        })?;
        for seen in walked {
            if seen.kind == Kind::Dir {
                files.insert(
                    seen.rel,
                    Entry {
                        kind: Kind::Dir,
                        digest: String::new(),
                        mode: seen.stat.mode,
                        size: 0,
                    },
                );
                continue;
            }
            let trusted = old
                .entries
                .get(&seen.rel)
                .filter(|cached| judged && cached.fresh_as(&seen.stat, seen.kind, self.size_limit));
            let wanted = match trusted {
                Some(cached) => cached.kind,
                None => match walk::judge(&seen, &self.protected) {
                    Kind::File if seen.stat.size > self.size_limit => Kind::Large,
                    other => other,
                },
            };
            let cached = match old.entries.get(&seen.rel) {
                Some(cached)
                    if cached.fresh(&seen.stat, wanted)
                        && (!verify
                            || !matches!(
                                cached.kind,
                                Kind::File | Kind::Symlink | Kind::GitObject
                            )
                            || self.store.has_blob(&cached.digest)) =>
                {
                    cached.clone()
                }
                _ => {
                    let read_ns = now_ns();
                    let (digest, wanted) =
                        match self.record(&root, &seen, wanted, &mut state.links_failed) {
                            Ok(Some(found)) => found,
                            // Gone or unreadable between the walk and the read.
                            Ok(None) | Err(_) => continue,
                        };
                    wrote_blob |= matches!(wanted, Kind::File | Kind::Symlink);
                    changed_index = true;
                    Cached {
                        stat: seen.stat,
                        kind: wanted,
                        digest,
                        read_ns,
                    }
                }
            };
            files.insert(
                seen.rel.clone(),
                Entry {
                    kind: cached.kind,
                    digest: cached.digest.clone(),
                    mode: cached.stat.mode,
                    size: cached.stat.size,
                },
            );
            index.entries.insert(seen.rel, cached);
        }
        changed_index |= index.entries.len() != old.entries.len();
        let manifest = Manifest { files };
        let taken = match &state.last {
            Some(last) if *last.manifest == manifest => last.clone(),
            _ => {
                if wrote_blob {
                    self.store.sync().map_err(|e| self.error(e))?;
                }
                let id = self
                    .store
                    .write_manifest(&manifest)
                    .map_err(|e| self.error(e))?;
                Taken {
                    id,
                    manifest: Arc::new(manifest),
                }
            }
        };
        if changed_index {
            let bytes = index.to_bytes().map_err(|e| self.error(e))?;
            self.store
                .write_atomic(&self.store.index_file(), &bytes, false)
                .map_err(|e| self.error(e))?;
        }
        self.store
            .log_checkpoint(session, &taken.id)
            .map_err(|e| self.error(e))?;
        drop(lock);
        state.index = Some(index);
        state.last = Some(taken.clone());
        state.generation = Some(generation);
        Ok(taken)
    }

    /// Reads what the walk saw as `seen` (through `root`, never through a
    /// link, and only if it is still the inode the walk stat'ed) and
    /// stores what `kind` keeps; returns its digest and the kind it is
    /// recorded as (Protected for a file holding a secret value).
    fn record(
        &self,
        root: &read::Root,
        seen: &walk::Seen,
        kind: Kind,
        links_failed: &mut bool,
    ) -> std::io::Result<Option<(String, Kind)>> {
        // Blocking until every value is read is fine here: a checkpoint
        // runs on the blocking pool, and must never copy a secret.
        let holds = |bytes: &[u8]| self.secrets.as_ref().is_some_and(|s| s.now().holds(bytes));
        let rel = seen.rel.as_str();
        match kind {
            Kind::Symlink => {
                let bytes = root.link_target(rel)?;
                let digest = store::digest_bytes(&bytes);
                if holds(&bytes) {
                    return Ok(Some((digest, Kind::Protected)));
                }
                self.store.put_bytes(&digest, &bytes)?;
                Ok(Some((digest, kind)))
            }
            Kind::File => {
                let bytes = read::bytes(root.file(rel, &seen.stat)?)?;
                let digest = store::digest_bytes(&bytes);
                if holds(&bytes) {
                    return Ok(Some((digest, Kind::Protected)));
                }
                self.store.put_bytes(&digest, &bytes)?;
                Ok(Some((digest, kind)))
            }
            Kind::GitObject => {
                let mut file = root.file(rel, &seen.stat)?;
                let digest = read::digest(&mut file)?;
                if !self.store.put_link(&digest, &mut file)? {
                    *links_failed = true;
                }
                Ok(Some((digest, kind)))
            }
            Kind::Protected | Kind::Large => {
                let digest = if seen.kind == Kind::Symlink {
                    store::digest_bytes(&root.link_target(rel)?)
                } else {
                    read::digest(&mut root.file(rel, &seen.stat)?)?
                };
                Ok(Some((digest, kind)))
            }
            Kind::Dir => Ok(None),
        }
    }

    /// The manifest with `id`.
    pub fn manifest(&self, id: &str) -> Result<Manifest, CheckpointError> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(last) = state.last.as_ref().filter(|last| last.id == id) {
            return Ok((*last.manifest).clone());
        }
        drop(state);
        self.store.read_manifest(id).map_err(|e| self.error(e))
    }
}

/// Whether `walked` is exactly what `last` (made with `index`) recorded:
/// the same paths, each file's stat as the index has it and trusted, each
/// directory of the same mode.
fn unchanged(walked: &[walk::Seen], index: &Index, last: &Manifest, size_limit: u64) -> bool {
    walked.len() == last.files.len()
        && walked.iter().all(|seen| {
            let Some(entry) = last.files.get(&seen.rel) else {
                return false;
            };
            if seen.kind == Kind::Dir {
                return entry.kind == Kind::Dir && entry.mode == seen.stat.mode;
            }
            index.entries.get(&seen.rel).is_some_and(|cached| {
                cached.fresh_as(&seen.stat, seen.kind, size_limit)
                    && cached.kind == entry.kind
                    && cached.digest == entry.digest
            })
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod prune_tests;
