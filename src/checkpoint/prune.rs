//! Retention: which checkpoints a project's store keeps, and pruning the
//! rest (oldest first) without ever blocking a turn.
//!
//! Every checkpoint a session names is also a line of the store's `log`
//! (`time session id`), appended while the taker holds the store's lock
//! shared. Kept: per session its newest `keep` distinct checkpoints no
//! older than `max_age`, newest first until the bytes only the store holds
//! pass `max_bytes` (the newest checkpoint of all is always kept), and any
//! manifest younger than a day that no line names (a line a crash lost).
//!
//! Pruning reads everything without the lock, then takes it exclusively
//! only if nobody holds it (a take in progress: try again next run) and
//! only if the log did not grow meanwhile; it then bumps the store's
//! `generation` (so a running taker checks its cached digests against the
//! blobs before trusting them again), removes what is not kept and writes
//! the log back with the kept lines only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::manifest::Kind;
use super::store::{Store, valid_digest};

/// How much a project's store keeps: a setting (`[checkpoints]`), so it
/// lives with the settings.
pub use crate::config::Retention;

/// A manifest no log line names is kept this long (a crash may have lost
/// its line).
const UNLOGGED_GRACE: Duration = Duration::from_secs(24 * 3600);

/// The most files one pass removes, so the lock is held briefly.
const MAX_REMOVALS: usize = 20_000;

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The lock was held or the log grew: nothing was removed.
    pub skipped: bool,
    pub manifests: usize,
    pub blobs: usize,
    pub bytes: u64,
}

/// One log line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    time: u64,
    session: String,
    id: String,
}

fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let time = words.next()?.parse().ok()?;
            let session = words.next()?.to_string();
            let id = words.next()?.to_string();
            (words.next().is_none() && valid_digest(&id) && !session.is_empty()).then_some(Line {
                time,
                session,
                id,
            })
        })
        .collect()
}

fn secs(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Store {
    pub fn log_file(&self) -> PathBuf {
        self.root().join("log")
    }

    pub fn lock_file(&self) -> PathBuf {
        self.root().join("lock")
    }

    pub fn generation_file(&self) -> PathBuf {
        self.root().join("generation")
    }

    /// The store's lock (created on first use).
    pub fn open_lock(&self) -> io::Result<fs::File> {
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.lock_file())
    }

    /// How many passes removed something: a change means cached digests
    /// must be checked against the blobs again.
    pub fn generation(&self) -> u64 {
        fs::read_to_string(self.generation_file())
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Appends `id` as named by `session` now. Call with the lock held
    /// shared, in the same hold as the take that made `id`.
    pub fn log_checkpoint(&self, session: &str, id: &str) -> io::Result<()> {
        // A session id is one word of the log; anything else is not logged
        // (and so kept only by the grace of its age).
        if session.is_empty() || session.contains(char::is_whitespace) {
            return Ok(());
        }
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_file())?;
        file.write_all(format!("{} {session} {id}\n", secs(SystemTime::now())).as_bytes())
    }

    /// One pruning pass by `retention` at `now`.
    pub fn prune(&self, retention: &Retention, now: SystemTime) -> io::Result<Pruned> {
        let log_path = self.log_file();
        let text = match fs::read_to_string(&log_path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let read_len = text.len() as u64;
        let lines = parse(&text);
        let (mut live, mut referenced) = self.kept(&lines, retention, now);
        let manifests = self.listed("manifests", ".json")?;
        let grace = secs(now).saturating_sub(UNLOGGED_GRACE.as_secs());
        let logged: BTreeSet<&str> = lines.iter().map(|l| l.id.as_str()).collect();
        let mut doomed_manifests = Vec::new();
        for (id, path) in &manifests {
            if live.contains(id) {
                continue;
            }
            let young = fs::symlink_metadata(path)
                .map(|m| u64::try_from(m.mtime()).unwrap_or(0) >= grace)
                .unwrap_or(true);
            if young && !logged.contains(id.as_str()) {
                live.insert(id.clone());
                if let Ok(manifest) = self.read_manifest(id) {
                    referenced.extend(
                        manifest
                            .files
                            .into_values()
                            .filter_map(|entry| holds_bytes(entry.kind).then_some(entry.digest)),
                    );
                }
            } else {
                doomed_manifests.push(path.clone());
            }
        }
        let mut doomed_blobs = Vec::new();
        for (digest, path) in self.blobs()? {
            if !referenced.contains(&digest) {
                doomed_blobs.push(path);
            }
        }
        if doomed_manifests.is_empty() && doomed_blobs.is_empty() {
            return Ok(Pruned::default());
        }
        let lock = self.open_lock()?;
        if lock.try_lock().is_err() {
            return Ok(Pruned {
                skipped: true,
                ..Pruned::default()
            });
        }
        let grown = fs::metadata(&log_path).map_or(0, |m| m.len()) != read_len;
        if grown {
            return Ok(Pruned {
                skipped: true,
                ..Pruned::default()
            });
        }
        self.write_atomic(
            &self.generation_file(),
            format!("{}\n", self.generation() + 1).as_bytes(),
            true,
        )?;
        let mut out = Pruned::default();
        for path in doomed_manifests.iter().take(MAX_REMOVALS) {
            if fs::remove_file(path).is_ok() {
                out.manifests += 1;
            }
        }
        for path in doomed_blobs
            .iter()
            .take(MAX_REMOVALS.saturating_sub(out.manifests))
        {
            let bytes = held_bytes(path);
            if fs::remove_file(path).is_ok() {
                out.blobs += 1;
                out.bytes += bytes;
            }
        }
        let kept: String = lines
            .iter()
            .filter(|l| live.contains(&l.id))
            .map(|l| format!("{} {} {}\n", l.time, l.session, l.id))
            .collect();
        self.write_atomic(&log_path, kept.as_bytes(), true)?;
        drop(lock);
        Ok(out)
    }

    /// The ids retention keeps (from the log and the blobs' sizes) and the
    /// blobs they name.
    fn kept(
        &self,
        lines: &[Line],
        retention: &Retention,
        now: SystemTime,
    ) -> (BTreeSet<String>, BTreeSet<String>) {
        let oldest = secs(now).saturating_sub(retention.max_age.as_secs());
        // Per session, newest first: its distinct ids within the age.
        let mut by_session: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        for line in lines.iter().rev() {
            let ids = by_session.entry(&line.session).or_default();
            if line.time >= oldest && ids.len() < retention.keep {
                ids.entry(&line.id).or_insert(line.time);
            }
        }
        let mut candidates: Vec<(u64, &str)> = by_session
            .into_values()
            .flat_map(|ids| ids.into_iter().map(|(id, time)| (time, id)))
            .collect();
        candidates.sort_by(|a, b| b.cmp(a));
        let mut kept = BTreeSet::new();
        let mut counted = BTreeSet::new();
        let mut bytes = 0u64;
        for (_, id) in candidates {
            if kept.contains(id) {
                continue;
            }
            let Ok(manifest) = self.read_manifest(id) else {
                continue;
            };
            let fresh: BTreeSet<String> = manifest
                .files
                .into_values()
                .filter(|entry| holds_bytes(entry.kind) && !counted.contains(&entry.digest))
                .map(|entry| entry.digest)
                .collect();
            let more: u64 = fresh
                .iter()
                .map(|digest| held_bytes(&self.blob_path(digest)))
                .sum();
            if !kept.is_empty() && bytes.saturating_add(more) > retention.max_bytes {
                break;
            }
            counted.extend(fresh);
            bytes = bytes.saturating_add(more);
            kept.insert(id.to_string());
        }
        (kept, counted)
    }

    /// The files of `dir` (`blobs`: two levels) as (name, path).
    fn listed(&self, dir: &str, suffix: &str) -> io::Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        let entries = match fs::read_dir(self.root().join(dir)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(suffix) {
                out.push((id.to_string(), entry.path()));
            }
        }
        Ok(out)
    }

    fn blobs(&self) -> io::Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        for (head, dir) in self.listed("blobs", "")? {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let digest = format!("{head}{}", entry.file_name().to_string_lossy());
                if valid_digest(&digest) {
                    out.push((digest, entry.path()));
                }
            }
        }
        Ok(out)
    }
}

/// Whether a recorded kind has its bytes in the store.
fn holds_bytes(kind: Kind) -> bool {
    matches!(kind, Kind::File | Kind::Symlink | Kind::GitObject)
}

/// The bytes a blob holds that nothing else does: a hard link to an object
/// still in the project's `.git` costs nothing.
fn held_bytes(path: &std::path::Path) -> u64 {
    fs::symlink_metadata(path).map_or(0, |m| {
        if m.nlink() > 1 {
            0
        } else {
            m.blocks().saturating_mul(512)
        }
    })
}
