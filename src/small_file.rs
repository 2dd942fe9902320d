//! Reading the small text files mino needs at start (settings, `SOUL.md`,
//! a model script): opened without blocking, without following a final
//! symbolic link where the file is project-controlled, accepted only when
//! it is a regular file, and read with a size cap. A link to `/dev/zero`, a
//! FIFO or a huge file is a clear error naming the file and what is
//! accepted, never a hang or unbounded memory. Never parses what it reads.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

/// The cap for a settings file.
pub const SETTINGS_LIMIT: u64 = 1024 * 1024;

/// Whether a final symbolic link may be followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// The file is the user's own (mino's home, a path in the user's
    /// settings): a link is the user's choice and is followed.
    Follow,
    /// The file is the project's: a final link is refused.
    Refuse,
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SmallFileError {
    #[error(
        "{} is a symbolic link; a project's file is never followed through a link. Accepted: a regular file",
        path.display()
    )]
    Link { path: PathBuf },
    #[error("{} is {kind}, not a regular file. Accepted: a regular file", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{} is larger than {limit} bytes. Accepted: a regular file of at most {limit} bytes",
        path.display()
    )]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{} is not UTF-8 text. Accepted: a UTF-8 text file", path.display())]
    NotText { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl SmallFileError {
    /// The file at fault.
    pub fn path(&self) -> &Path {
        match self {
            SmallFileError::Link { path }
            | SmallFileError::NotRegular { path, .. }
            | SmallFileError::TooLarge { path, .. }
            | SmallFileError::NotText { path }
            | SmallFileError::Io { path, .. } => path,
        }
    }
}

/// Reads `path` as UTF-8 text of at most `limit` bytes. A missing file is
/// `None`.
pub fn read_text(path: &Path, limit: u64, links: Links) -> Result<Option<String>, SmallFileError> {
    let io_err = |source: io::Error| SmallFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) if links == Links::Refuse => {
            return Err(SmallFileError::Link {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(io_err(e.into())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_err(e.into()))?;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::CharacterDevice => Some("a character device"),
        FileType::BlockDevice => Some("a block device"),
        FileType::Socket => Some("a socket"),
        FileType::Symlink => Some("a symbolic link"),
        FileType::Unknown => Some("a special file"),
    };
    if let Some(kind) = kind {
        return Err(SmallFileError::NotRegular {
            path: path.to_path_buf(),
            kind,
        });
    }
    let too_large = || SmallFileError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| SmallFileError::NotText {
            path: path.to_path_buf(),
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_missing_ones_are_none() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "x = 1\n").unwrap();
        assert_eq!(
            read_text(&file, 100, Links::Refuse).unwrap().as_deref(),
            Some("x = 1\n")
        );
        assert!(
            read_text(&dir.path().join("none"), 100, Links::Refuse)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn links_devices_directories_and_large_files_are_refused_by_name() {
        let dir = tempfile::TempDir::new().unwrap();
        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = read_text(&link, 100, Links::Refuse).unwrap_err();
        assert!(matches!(err, SmallFileError::Link { .. }), "{err}");
        assert!(err.to_string().contains("zero.toml"));
        let err = read_text(&link, 100, Links::Follow).unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let err = read_text(dir.path(), 100, Links::Follow).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 101]).unwrap();
        let err = read_text(&big, 100, Links::Refuse).unwrap_err();
        assert!(err.to_string().contains("at most 100 bytes"), "{err}");
    }
}
