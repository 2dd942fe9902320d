//! The project directory and the only way file tools touch it: paths are
//! normalized lexically, walked without following links to establish facts,
//! and opened in one step that refuses links and escapes (`openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, an `O_NOFOLLOW` walk
//! elsewhere), so a link swapped in after the check is never followed.
//! Never decides: it reports facts and refuses what cannot be opened safely.

mod listing;
mod misread;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use crate::policy::PathTarget;

/// The longest path argument accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// Where a given path points, read lexically (no file touched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Normalized {
    /// In the project: relative, `/`-separated, empty for the project itself.
    Inside(String),
    /// Absolute elsewhere, or `..` past the project directory.
    Outside,
}

/// Why a path could not be used. The text names the path and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfineError {
    #[error("invalid path {given:?}: {reason}")]
    Invalid { given: String, reason: String },
    #[error("{path} is outside the project directory")]
    Outside { path: String },
    #[error("{path} passes through a symbolic link; file tools only follow real directories")]
    ThroughLink { path: String },
    #[error("{path} has more than one hard link; file tools refuse it")]
    HardLinked { path: String },
    #[error("{path} does not exist")]
    NotFound { path: String },
    #[error(
        "{given} does not exist. File tools take paths relative to the project directory, and {relative} exists in the project: use \"{relative}\"."
    )]
    MeantInside { given: String, relative: String },
    #[error("{path} is a directory, not a file")]
    IsDirectory { path: String },
    #[error("{path} is not a directory")]
    NotADirectory { path: String },
    #[error("{path} is not a regular file")]
    NotRegular { path: String },
    #[error("{path} changed since it was inspected; the write was refused. Read it again first.")]
    Changed { path: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

fn io_error(path: &str, errno: Errno) -> ConfineError {
    match errno {
        Errno::NOENT => ConfineError::NotFound { path: shown(path) },
        Errno::LOOP | Errno::MLINK => ConfineError::ThroughLink { path: shown(path) },
        Errno::XDEV => ConfineError::Outside { path: shown(path) },
        Errno::NOTDIR => ConfineError::NotADirectory { path: shown(path) },
        Errno::ISDIR => ConfineError::IsDirectory { path: shown(path) },
        other => ConfineError::Io {
            path: shown(path),
            message: std::io::Error::from(other).to_string(),
        },
    }
}

fn shown(relative: &str) -> String {
    if relative.is_empty() {
        ".".to_string()
    } else {
        relative.to_string()
    }
}

/// The SHA-256 of some bytes.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// What the write expects to find, bound at inspection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Absent,
    Digest([u8; 32]),
}

/// A regular file read through the confined open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContents {
    pub bytes: Vec<u8>,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// True when the file was longer than the limit and `bytes` holds its start.
    pub truncated: bool,
    pub size: u64,
}

/// What a directory entry is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Link,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
    pub size: u64,
}

/// The project directory: its canonical path (for display and for
/// absolute arguments) and a descriptor opened once at the start, through
/// which every lookup and open goes, so a project directory renamed and
/// replaced by a link later is never followed.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    root_fd: Arc<OwnedFd>,
}

impl Project {
    /// Opens the project at `root`, which must be an existing directory.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        let root_fd = rustix::fs::open(
            &root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            std::io::Error::new(
                std::io::Error::from(e).kind(),
                format!("{} cannot be opened as a directory: {e}", root.display()),
            )
        })?;
        Ok(Self {
            root,
            root_fd: Arc::new(root_fd),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Normalizes `given` lexically into a project-relative path with `/`
    /// separators (empty for the project itself). Touches no file.
    pub fn normalize(&self, given: &str) -> Result<Normalized, ConfineError> {
        let invalid = |reason: &str| ConfineError::Invalid {
            given: given.chars().take(200).collect(),
            reason: reason.to_string(),
        };
        if given.is_empty() {
            return Err(invalid(
                "the path is empty; use \".\" for the project directory",
            ));
        }
        if given.contains('\0') {
            return Err(invalid("the path contains a NUL byte"));
        }
        if given.len() > MAX_PATH_BYTES {
            return Err(invalid("the path is longer than 4096 bytes"));
        }
        let path = Path::new(given);
        let rest = if path.is_absolute() {
            match path.strip_prefix(&self.root) {
                Ok(rest) => rest,
                Err(_) => {
                    return Ok(Normalized::Outside);
                }
            }
        } else {
            path
        };
        let mut parts: Vec<&str> = Vec::new();
        for component in rest.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Ok(Normalized::Outside);
                    }
                }
                Component::Normal(name) => match name.to_str() {
                    Some(name) => parts.push(name),
                    None => return Err(invalid("the path is not valid UTF-8")),
                },
                Component::RootDir | Component::Prefix(_) => {
                    return Ok(Normalized::Outside);
                }
            }
        }
        Ok(Normalized::Inside(parts.join("/")))
    }

    /// Establishes the facts about `given` for the decision: where it is,
    /// whether any component is a symbolic link, whether it is a hard-linked
    /// file. Uses `lstat` only; never opens the target.
    pub fn locate(&self, given: &str) -> Result<PathTarget, ConfineError> {
        let relative = match self.normalize(given)? {
            Normalized::Inside(relative) => relative,
            Normalized::Outside => {
                return Ok(PathTarget::Outside {
                    given: given.to_string(),
                });
            }
        };
        let mut through_link = None;
        let mut hard_linked = false;
        let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
        for i in 0..parts.len() {
            let prefix = parts[..=i].join("/");
            let Ok(stat) =
                rustix::fs::statat(&*self.root_fd, prefix.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                break;
            };
            let kind = FileType::from_raw_mode(stat.st_mode);
            if kind == FileType::Symlink {
                through_link = Some(prefix);
                break;
            }
            let last = i + 1 == parts.len();
            if last {
                hard_linked = kind == FileType::RegularFile && stat.st_nlink > 1;
            } else if kind != FileType::Directory {
                break;
            }
        }
        Ok(PathTarget::Inside {
            relative,
            through_link,
            hard_linked,
        })
    }

    /// A fresh descriptor of the project directory opened at the start.
    fn open_root(&self) -> Result<OwnedFd, ConfineError> {
        rustix::fs::openat(
            &*self.root_fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_error("", e))
    }

    /// Opens `relative` beneath the project, refusing every symbolic link
    /// and every escape, in one step.
    fn open_beneath(&self, relative: &str, flags: OFlags) -> Result<OwnedFd, ConfineError> {
        let root = &*self.root_fd;
        if relative.is_empty() {
            return rustix::fs::openat(root, ".", flags | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| io_error(relative, e));
        }
        open_beneath_at(root.as_fd(), relative, flags).map_err(|e| match e {
            // A link as the last component of a directory open fails with
            // ENOTDIR rather than ELOOP: name it for what it is.
            Errno::NOTDIR if is_link_at(root.as_fd(), relative) => ConfineError::ThroughLink {
                path: shown(relative),
            },
            e => io_error(relative, e),
        })
    }

    /// Opens a regular file (not hard-linked) through the confined open; with its status.
    pub fn open_regular(&self, relative: &str) -> Result<(File, rustix::fs::Stat), ConfineError> {
        let fd = self.open_beneath(relative, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io_error(relative, e))?;
        check_regular(relative, &stat)?;
        Ok((File::from(fd), stat))
    }

    /// Reads a regular file, at most `limit` bytes.
    pub fn read(&self, relative: &str, limit: u64) -> Result<FileContents, ConfineError> {
        let (file, stat) = self.open_regular(relative)?;
        let size = u64::try_from(stat.st_size).unwrap_or(0);
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ConfineError::Io {
                path: shown(relative),
                message: e.to_string(),
            })?;
        let truncated = bytes.len() as u64 > limit;
        if truncated {
            bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(FileContents {
            bytes,
            mode: permission_bits(&stat),
            truncated,
            size,
        })
    }

    /// Reads the file a write would replace: `None` when it does not exist.
    pub fn read_current(
        &self,
        relative: &str,
        limit: u64,
    ) -> Result<Option<FileContents>, ConfineError> {
        match self.read(relative, limit) {
            Ok(contents) => Ok(Some(contents)),
            Err(ConfineError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Proves that `relative` is what a write bound to `expected` may
    /// replace (a regular file with those contents, or absent), through the
    /// confined open and without following a link, and writes nothing. Used
    /// before a write that another program (an editor) carries out.
    pub fn check_replace(&self, relative: &str, expected: Expected) -> Result<(), ConfineError> {
        self.open_for_replace(relative, expected, false).map(|_| ())
    }

    /// Replaces (or creates) `relative` with `bytes`, atomically: the current
    /// file is rechecked against `expected`, the new content goes to a
    /// temporary file in the same directory, is synced, and renamed over the
    /// old name. The file's permission bits are kept. Missing parent
    /// directories are created for a new file.
    pub fn write_atomic(
        &self,
        relative: &str,
        bytes: &[u8],
        expected: Expected,
    ) -> Result<(), ConfineError> {
        let (dir, name, mode) = self.open_for_replace(relative, expected, true)?;
        let mut suffix = [0u8; 6];
        getrandom::fill(&mut suffix).map_err(|e| ConfineError::Io {
            path: shown(relative),
            message: e.to_string(),
        })?;
        let temp = format!(".{name}.mino-{}.tmp", hex::encode(suffix));
        let written = write_temp(dir.as_fd(), &temp, bytes, mode)
            .and_then(|()| rustix::fs::renameat(&dir, temp.as_str(), &dir, name))
            .and_then(|()| rustix::fs::fsync(&dir));
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
            return Err(io_error(relative, e));
        }
        Ok(())
    }

    /// The directory holding `relative`, its last name, and the permission
    /// bits to keep, once the current file is proved to match `expected`.
    /// `create` makes a new file's missing directories; without it, a
    /// missing directory is as good as an absent file.
    fn open_for_replace<'r>(
        &self,
        relative: &'r str,
        expected: Expected,
        create: bool,
    ) -> Result<(OwnedFd, &'r str, Option<u32>), ConfineError> {
        let (parent, name) = match relative.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => ("", relative),
        };
        if name.is_empty() {
            return Err(ConfineError::IsDirectory {
                path: shown(relative),
            });
        }
        let dir = match self.open_beneath(parent, OFlags::RDONLY | OFlags::DIRECTORY) {
            Ok(dir) => dir,
            Err(ConfineError::NotFound { .. }) if expected == Expected::Absent => {
                if create {
                    self.create_dirs(parent)?
                } else {
                    return Ok((self.open_root()?, name, None));
                }
            }
            Err(e) => return Err(e),
        };
        let current: Option<([u8; 32], u32)> = match rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => {
                let stat = rustix::fs::fstat(&fd).map_err(|e| io_error(relative, e))?;
                check_regular(relative, &stat)?;
                // Hashed as it is read: a file that grew since inspection
                // costs no memory to refuse.
                let mut hasher = Sha256::new();
                std::io::copy(&mut File::from(fd), &mut hasher).map_err(|e| ConfineError::Io {
                    path: shown(relative),
                    message: e.to_string(),
                })?;
                Some((hasher.finalize().into(), permission_bits(&stat)))
            }
            Err(Errno::NOENT) => None,
            Err(e) => return Err(io_error(relative, e)),
        };
        // A new file gets 0666 less the process umask (applied by the kernel
        // at creation); an existing one keeps its mode.
        let mode = match (current, expected) {
            (None, Expected::Absent) => None,
            (Some((found, mode)), Expected::Digest(want)) if found == want => Some(mode),
            _ => {
                return Err(ConfineError::Changed {
                    path: shown(relative),
                });
            }
        };
        Ok((dir, name, mode))
    }

    /// Creates the missing directories of `parent`, one component at a
    /// time, never following a link.
    fn create_dirs(&self, parent: &str) -> Result<OwnedFd, ConfineError> {
        let mut dir = self.open_root()?;
        for part in parent.split('/').filter(|p| !p.is_empty()) {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let next = match rustix::fs::openat(&dir, part, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(io_error(parent, e)),
                    }
                    rustix::fs::openat(&dir, part, flags, Mode::empty())
                        .map_err(|e| io_error(parent, e))?
                }
                Err(e) => return Err(io_error(parent, e)),
            };
            dir = next;
        }
        Ok(dir)
    }
}

/// `st_mode & 0o7777`. `st_mode` is a `u32` on Linux but a `u16` on macOS,
/// so the conversion is needed even where clippy calls it useless.
#[allow(clippy::useless_conversion)]
fn permission_bits(stat: &rustix::fs::Stat) -> u32 {
    u32::from(stat.st_mode) & 0o7777
}

/// Whether `relative` is itself a symbolic link. Only words an error: the
/// open that failed is what refused the path.
fn is_link_at(root: BorrowedFd<'_>, relative: &str) -> bool {
    rustix::fs::statat(root, relative, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

fn check_regular(relative: &str, stat: &rustix::fs::Stat) -> Result<(), ConfineError> {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => {
            return Err(ConfineError::IsDirectory {
                path: shown(relative),
            });
        }
        _ => {
            return Err(ConfineError::NotRegular {
                path: shown(relative),
            });
        }
    }
    if stat.st_nlink > 1 {
        return Err(ConfineError::HardLinked {
            path: shown(relative),
        });
    }
    Ok(())
}

/// Writes the temporary file: with `keep` (an existing file's mode) it is
/// created private and then given that mode; without, it is created 0666
/// and the kernel takes the process umask away, as for any new file.
fn write_temp(
    dir: BorrowedFd<'_>,
    temp: &str,
    bytes: &[u8],
    keep: Option<u32>,
) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        dir,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(if keep.is_some() { 0o600 } else { 0o666 }),
    )?;
    if let Some(mode) = keep {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
    }
    let mut file = File::from(fd);
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
}

/// Linux: one `openat2` call that fails on any link and any escape.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn open_beneath_at(
    root: BorrowedFd<'_>,
    relative: &str,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    use rustix::fs::ResolveFlags;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(
        root,
        relative,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        resolve,
    ) {
        // Kernels before 5.6 (or seccomp filters) lack openat2: walk instead.
        Err(Errno::NOSYS) | Err(Errno::PERM) => open_walk(root, relative, flags),
        other => other,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn open_beneath_at(
    root: BorrowedFd<'_>,
    relative: &str,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    open_walk(root, relative, flags)
}

/// Elsewhere: open each directory component with `O_NOFOLLOW | O_DIRECTORY`
/// and the last with `O_NOFOLLOW`, so no link is ever followed. `relative`
/// is already normalized (no `.`, `..` or empty components).
fn open_walk(root: BorrowedFd<'_>, relative: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
    let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
    let Some((last, dirs)) = parts.split_last() else {
        return rustix::fs::openat(root, ".", flags | OFlags::CLOEXEC, Mode::empty());
    };
    let mut current: Option<OwnedFd> = None;
    for part in dirs {
        if *part == ".." || *part == "." {
            return Err(Errno::XDEV);
        }
        let at = current.as_ref().map_or(root, |fd| fd.as_fd());
        let next = rustix::fs::openat(
            at,
            *part,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        current = Some(next);
    }
    let at = current.as_ref().map_or(root, |fd| fd.as_fd());
    rustix::fs::openat(
        at,
        *last,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}
