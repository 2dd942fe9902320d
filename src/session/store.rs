//! The session files on disk: `SessionStore` creates, opens and lists
//! `DIR/ID.jsonl`; `SessionLog` appends to one of them. The directory is
//! created 0700 and a file 0600 (`O_CREAT | O_EXCL`, never following a link).
//! Every append writes its lines through a 64 KiB buffer (one `write` for
//! all but a huge record, which is never held whole a second time) and then
//! `fdatasync`s, so when `append` returns the record is on disk; when it fails the error names the
//! file and the caller must stop, because chat never goes on with history it
//! could not save. A session file is locked (`flock`, exclusive) while a log
//! holds it, so two processes never interleave one session.
//!
//! Never rewrites or truncates a session file, and deletes one only when
//! asked to by its id (`delete`: a regular file whose header names it, held
//! by no process) or when this call just created it and its header could
//! not be written. Never writes a mode.

use std::fs::{self, DirBuilder, File};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use super::format::{Loaded, LogEntry, TORN_MARKER, Tail, tail_of};
use super::id::ID_LEN;
use super::read::{read_end, read_parsed};
use super::{Header, InvalidId, SessionError, SessionId};
use crate::model::Item;

/// The shortest id prefix `resolve` accepts.
pub const MIN_PREFIX: usize = 4;

/// The sessions directory (`HOME/sessions/`).
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// One saved session, as `/sessions` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub id: SessionId,
    /// Unix seconds, from the header.
    pub started: u64,
    pub project: PathBuf,
    pub model: String,
    /// The first user prompt in the file, whitespace collapsed, at most
    /// `summary::PROMPT_PREVIEW_CHARS` characters (`…` marks a cut).
    pub first_prompt: Option<String>,
    /// The file's size in bytes.
    pub bytes: u64,
}

/// An open session file that records are appended to.
#[derive(Debug)]
pub struct SessionLog {
    id: SessionId,
    path: PathBuf,
    file: File,
    /// How the file ends; `None` after a failed write, when it is read again
    /// before the next append.
    tail: Option<Tail>,
}

impl SessionStore {
    /// A store over `dir` (normally `HOME/sessions/`). Nothing is touched
    /// until a session is created, opened or listed.
    pub fn new(dir: PathBuf) -> SessionStore {
        SessionStore { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where session `id` is stored.
    pub fn path_of(&self, id: &SessionId) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Creates a new session file with a fresh id and writes its header.
    /// The directory is created (0700) if it does not exist.
    pub fn create(&self, project: &Path, model: &str) -> Result<SessionLog, SessionError> {
        self.ensure_dir()?;
        let (id, path, file) = self.create_file(None)?;
        self.write_header(id, path, file, project, model)
    }

    /// A fresh id no session file has yet, for a session whose file is
    /// written only when it gets its first record (`create_as`).
    pub fn reserve(&self) -> Result<SessionId, SessionError> {
        for _ in 0..3 {
            let id = SessionId::generate().map_err(|e| SessionError::Random(e.to_string()))?;
            if fs::symlink_metadata(self.path_of(&id)).is_err() {
                return Ok(id);
            }
        }
        Err(SessionError::Create {
            path: self.dir.clone(),
            error: io::Error::new(
                ErrorKind::AlreadyExists,
                "three new session ids were all taken",
            ),
        })
    }

    /// Creates the file of the session `id` (reserved earlier) and writes
    /// its header; an existing file of that name is an error, never opened.
    pub fn create_as(
        &self,
        id: &SessionId,
        project: &Path,
        model: &str,
    ) -> Result<SessionLog, SessionError> {
        self.ensure_dir()?;
        let (id, path, file) = self.create_file(Some(id))?;
        self.write_header(id, path, file, project, model)
    }

    fn write_header(
        &self,
        id: SessionId,
        path: PathBuf,
        file: File,
        project: &Path,
        model: &str,
    ) -> Result<SessionLog, SessionError> {
        let header = Header {
            id: id.clone(),
            started: now(),
            project: PathBuf::from(project.to_string_lossy().into_owned()),
            model: model.to_owned(),
        };
        let mut log = SessionLog {
            id,
            path,
            file,
            tail: Some(Tail::Clean),
        };
        let written = log
            .write_lines(std::slice::from_ref(&header))
            .and_then(|()| sync_dir(&self.dir));
        if let Err(error) = written {
            // A file without a header is not a session; it is ours to remove.
            let _ = fs::remove_file(&log.path);
            return Err(error);
        }
        Ok(log)
    }

    /// Opens session `id` for appending and reads it. An incomplete or
    /// invalid last line is left out with `Loaded::warning`; an invalid line
    /// elsewhere is an error naming the file and line, and the file is left
    /// as it is. The next append after a left-out line starts on a fresh line.
    pub fn open(&self, id: &SessionId) -> Result<(SessionLog, Loaded), SessionError> {
        let path = self.path_of(id);
        let flags =
            OFlags::RDWR | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = match rustix::fs::open(&path, flags, Mode::empty()) {
            Ok(fd) => File::from(fd),
            Err(Errno::NOENT) => {
                return Err(SessionError::NotFound {
                    id: id.clone(),
                    path,
                });
            }
            Err(Errno::LOOP) => {
                return Err(SessionError::NotSession {
                    path,
                    reason: "it is a symbolic link".to_owned(),
                });
            }
            Err(errno) => {
                return Err(SessionError::Open {
                    path,
                    error: errno.into(),
                });
            }
        };
        let metadata = file.metadata().map_err(|error| SessionError::Read {
            path: path.clone(),
            error,
        })?;
        if !metadata.is_file() {
            return Err(SessionError::NotSession {
                path,
                reason: "it is not a regular file".to_owned(),
            });
        }
        lock(&file, &path)?;
        let (loaded, tail) = read_parsed(&file, &path, metadata.len())?;
        if loaded.header.id != *id {
            return Err(SessionError::NotSession {
                reason: format!("its header names session {}", loaded.header.id),
                path,
            });
        }
        let log = SessionLog {
            id: id.clone(),
            path,
            file,
            tail: Some(tail),
        };
        Ok((log, loaded))
    }

    /// Deletes the file of session `id`: opened as `open` opens it (never
    /// through a link, only a regular file whose header names `id`, locked
    /// so a file another mino process holds is refused), then removed.
    pub fn delete(&self, id: &SessionId) -> Result<(), SessionError> {
        let (log, _) = self.open(id)?;
        fs::remove_file(&log.path).map_err(|error| SessionError::Delete {
            path: log.path.clone(),
            error,
        })?;
        drop(log);
        sync_dir(&self.dir)
    }

    /// The session a text names: a whole id, or a prefix of at least
    /// `MIN_PREFIX` characters that exactly one saved session's id starts
    /// with (as the status bar shows the first 8).
    pub fn resolve(&self, text: &str) -> Result<SessionId, SessionError> {
        if let Ok(id) = SessionId::parse(text) {
            return Ok(id);
        }
        let is_prefix = (MIN_PREFIX..ID_LEN).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !is_prefix {
            return Err(SessionError::InvalidId(InvalidId {
                given: text.chars().take(48).collect(),
            }));
        }
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(SessionError::NoMatch {
                    prefix: text.to_string(),
                    dir: self.dir.clone(),
                });
            }
            Err(error) => {
                return Err(SessionError::List {
                    path: self.dir.clone(),
                    error,
                });
            }
        };
        let mut found: Vec<SessionId> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name();
                let stem = name.to_str()?.strip_suffix(".jsonl")?.to_string();
                SessionId::parse(&stem).ok()
            })
            .filter(|id| id.as_str().starts_with(text))
            .collect();
        found.sort();
        match found.len() {
            0 => Err(SessionError::NoMatch {
                prefix: text.to_string(),
                dir: self.dir.clone(),
            }),
            1 => Ok(found.remove(0)),
            _ => Err(SessionError::Ambiguous {
                prefix: text.to_string(),
                ids: found
                    .iter()
                    .map(|id| id.as_str().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The session of `project` last written to that got a prompt (what
    /// `mino --continue` resumes); `None` when the project has none.
    pub fn latest_in(&self, project: &Path) -> Result<Option<SessionId>, SessionError> {
        let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let here = canonical(project);
        let written = |id: &SessionId| {
            fs::metadata(self.path_of(id))
                .and_then(|m| m.modified())
                .ok()
        };
        Ok(self
            .list()?
            .into_iter()
            .filter(|s| s.first_prompt.is_some() && canonical(&s.project) == here)
            .max_by_key(|s| (written(&s.id), s.started))
            .map(|s| s.id))
    }

    /// The summary of session `id`, when it is a readable session file.
    pub fn summary(&self, id: &SessionId) -> Option<SessionSummary> {
        super::summary::summarize(&self.path_of(id), id.clone())
    }

    /// The saved sessions, newest first (by start time, then id). Files that
    /// are not sessions (other names, no readable header, a header naming
    /// another id, not regular files) are skipped. A missing directory means
    /// no sessions yet.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let list_error = |error| SessionError::List {
            path: self.dir.clone(),
            error,
        };
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(list_error(error)),
        };
        let mut sessions = Vec::new();
        for entry in entries {
            let entry = entry.map_err(list_error)?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|name| name.strip_suffix(".jsonl"))
                .and_then(|stem| SessionId::parse(stem).ok())
            else {
                continue;
            };
            if !entry.file_type().is_ok_and(|kind| kind.is_file()) {
                continue;
            }
            if let Some(summary) = super::summary::summarize(&entry.path(), id) {
                sessions.push(summary);
            }
        }
        sessions.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| a.id.cmp(&b.id)));
        Ok(sessions)
    }

    fn ensure_dir(&self) -> Result<(), SessionError> {
        let error = |error| SessionError::CreateDir {
            path: self.dir.clone(),
            error,
        };
        match fs::metadata(&self.dir) {
            Ok(metadata) if metadata.is_dir() => Ok(()),
            Ok(_) => Err(error(io::Error::new(
                ErrorKind::NotADirectory,
                "it exists and is not a directory",
            ))),
            Err(e) if e.kind() == ErrorKind::NotFound => DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)
                .and_then(|()| fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700)))
                .map_err(error),
            Err(e) => Err(error(e)),
        }
    }

    /// A new `ID.jsonl` (of `given`, else a fresh id), 0600, opened for
    /// appending and locked.
    fn create_file(
        &self,
        given: Option<&SessionId>,
    ) -> Result<(SessionId, PathBuf, File), SessionError> {
        let flags = OFlags::RDWR
            | OFlags::APPEND
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC;
        // 128 random bits do not collide; the retry only guards a broken source.
        for _ in 0..3 {
            let id = match given {
                Some(id) => id.clone(),
                None => SessionId::generate().map_err(|e| SessionError::Random(e.to_string()))?,
            };
            let path = self.path_of(&id);
            match rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600)) {
                Ok(fd) => {
                    // The umask can only have narrowed 0600; make it exact.
                    let made = rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600));
                    let file = File::from(fd);
                    if let Err(errno) = made {
                        let _ = fs::remove_file(&path);
                        return Err(SessionError::Create {
                            path,
                            error: errno.into(),
                        });
                    }
                    lock(&file, &path)?;
                    return Ok((id, path, file));
                }
                Err(Errno::EXIST) if given.is_none() => continue,
                Err(errno) => {
                    return Err(SessionError::Create {
                        path,
                        error: errno.into(),
                    });
                }
            }
        }
        Err(SessionError::Create {
            path: self.dir.clone(),
            error: io::Error::new(
                ErrorKind::AlreadyExists,
                "three new session ids were all taken",
            ),
        })
    }
}

impl SessionLog {
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line and waits until it is on disk. On an
    /// error the record may or may not be in the file; the caller must not
    /// go on as if it were saved.
    pub fn append(&mut self, record: &LogEntry) -> Result<(), SessionError> {
        self.write_lines(std::slice::from_ref(record))
    }

    /// `append(&LogEntry::Item(item))` without cloning the item.
    pub fn append_item(&mut self, item: &Item) -> Result<(), SessionError> {
        self.write_lines(std::slice::from_ref(item))
    }

    /// Appends `items`, a line each, with one fsync (thousands of results
    /// at once); on an error, as for `append`.
    pub fn append_items(&mut self, items: &[Item]) -> Result<(), SessionError> {
        if items.is_empty() {
            return Ok(());
        }
        self.write_lines(items)
    }

    /// Writes `records` a line each, after a torn marker when the file does
    /// not end cleanly, encoding straight into a 64 KiB buffer: an answer
    /// of megabytes is never copied whole into a line first.
    fn write_lines<T: serde::Serialize>(&mut self, records: &[T]) -> Result<(), SessionError> {
        let tail = match self.tail {
            Some(tail) => tail,
            None => self.read_tail()?,
        };
        self.tail = None;
        let mut out = io::BufWriter::with_capacity(64 * 1024, &self.file);
        let mut written = || -> Result<(), serde_json::Error> {
            if tail == Tail::Torn {
                out.write_all(b"\n").map_err(serde_json::Error::io)?;
            }
            if tail != Tail::Clean {
                out.write_all(TORN_MARKER.as_bytes())
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(serde_json::Error::io)?;
            }
            for record in records {
                serde_json::to_writer(&mut out, record)?;
                out.write_all(b"\n").map_err(serde_json::Error::io)?;
            }
            out.flush().map_err(serde_json::Error::io)
        };
        let result = written();
        drop(out);
        match result {
            Ok(()) => {}
            Err(error) if error.is_io() => {
                return Err(SessionError::Write {
                    path: self.path.clone(),
                    error: io::Error::from(error),
                });
            }
            Err(error) => {
                return Err(SessionError::Encode {
                    path: self.path.clone(),
                    message: error.to_string(),
                });
            }
        }
        self.file.sync_data().map_err(|error| SessionError::Write {
            path: self.path.clone(),
            error,
        })?;
        self.tail = Some(Tail::Clean);
        Ok(())
    }

    /// Every record of the file as it is now, read through the open
    /// (locked) descriptor: what a rewind of the running session reads.
    pub fn entries(&self) -> Result<Vec<LogEntry>, SessionError> {
        let read_error = |error| SessionError::Read {
            path: self.path.clone(),
            error,
        };
        let len = self.file.metadata().map_err(read_error)?.len();
        Ok(read_parsed(&self.file, &self.path, len)?.0.entries)
    }

    /// After a failed write the file may end in part of a line: look.
    fn read_tail(&self) -> Result<Tail, SessionError> {
        let read_error = |error| SessionError::Read {
            path: self.path.clone(),
            error,
        };
        let len = self.file.metadata().map_err(read_error)?.len();
        let end = read_end(&self.file, len).map_err(read_error)?;
        Ok(tail_of(&end))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Exclusive: a session is written by one process at a time. A child being
/// started elsewhere in this process holds a copy of every descriptor until
/// its `exec` closes them, so a lock that is busy is tried again for a moment
/// before the session counts as in use.
fn lock(file: &File, path: &Path) -> Result<(), SessionError> {
    for attempt in 0..20 {
        match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::WOULDBLOCK) if attempt < 19 => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(Errno::WOULDBLOCK) => break,
            Err(errno) => {
                return Err(SessionError::Open {
                    path: path.to_owned(),
                    error: errno.into(),
                });
            }
        }
    }
    Err(SessionError::InUse {
        path: path.to_owned(),
    })
}

/// The directory entry of a new file is durable only once the directory is.
fn sync_dir(dir: &Path) -> Result<(), SessionError> {
    File::open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(|error| SessionError::Write {
            path: dir.to_owned(),
            error,
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn delete_takes_only_a_session_file_no_process_holds() {
        let dir = tempfile::TempDir::new().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let log = store.create(dir.path(), "m").unwrap();
        let id = log.id().clone();
        // Held by a log: refused, and the file stays.
        assert!(matches!(store.delete(&id), Err(SessionError::InUse { .. })));
        assert!(store.path_of(&id).is_file());
        drop(log);
        store.delete(&id).unwrap();
        assert!(!store.path_of(&id).exists());
        assert!(matches!(
            store.delete(&id),
            Err(SessionError::NotFound { .. })
        ));
        // A link named like a session is not followed, and its target stays.
        let target = dir.path().join("precious.txt");
        fs::write(&target, "keep").unwrap();
        let linked = SessionId::generate().unwrap();
        std::os::unix::fs::symlink(&target, store.path_of(&linked)).unwrap();
        assert!(matches!(
            store.delete(&linked),
            Err(SessionError::NotSession { .. })
        ));
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }
}
