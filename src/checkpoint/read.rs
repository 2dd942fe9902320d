//! Reading what the walk saw, through the project's own descriptor: each
//! path is opened beneath the project root without following any link
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, the same open
//! the file tools use), and a file is read only if it is still the inode
//! the walk stat'ed. A parent directory swapped for a link between the walk
//! and the read fails the open, so nothing outside the project is ever
//! recorded, linked into the store or digested.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::index::Stat;
use crate::tools::fs::confine::open_beneath_at;

/// The project root, opened once for a checkpoint's reads.
pub struct Root {
    fd: OwnedFd,
}

impl Root {
    pub fn open(root: &Path) -> io::Result<Root> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root { fd })
    }

    /// The regular file `rel` (relative, `/`-separated), if it is still
    /// the inode `seen` describes. Never blocks: a FIFO swapped in is
    /// refused, not waited on.
    pub fn file(&self, rel: &str, seen: &Stat) -> io::Result<File> {
        let fd = open_beneath_at(self.fd.as_fd(), rel, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!("{rel} is not a regular file")));
        }
        #[allow(clippy::useless_conversion)] // st_ino is not u64 on every target.
        let ino = u64::from(stat.st_ino);
        if ino != seen.ino {
            return Err(io::Error::other(format!(
                "{rel} was replaced since the walk"
            )));
        }
        Ok(File::from(fd))
    }

    /// The target of the link `rel`, read through its parent directory
    /// (opened beneath the root, links refused).
    pub fn link_target(&self, rel: &str) -> io::Result<Vec<u8>> {
        let (parent, name) = match rel.rsplit_once('/') {
            Some((parent, name)) => (Some(parent), name),
            None => (None, rel),
        };
        let opened;
        let dir: BorrowedFd<'_> = match parent {
            Some(parent) => {
                opened =
                    open_beneath_at(self.fd.as_fd(), parent, OFlags::RDONLY | OFlags::DIRECTORY)?;
                opened.as_fd()
            }
            None => self.fd.as_fd(),
        };
        let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
        Ok(target.into_bytes())
    }
}

/// The whole of `file`.
pub fn bytes(mut file: File) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// SHA-256 of the rest of `file`, read in pieces, lower-case hex.
pub fn digest(file: &mut File) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(buffer.get(..read).unwrap_or_default());
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The name through which the kernel links the open `file` itself (not
/// whatever its path names now): `/proc/self/fd/N`.
pub fn proc_path(file: &File) -> String {
    format!("/proc/self/fd/{}", file.as_raw_fd())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stat_of(path: &Path) -> Stat {
        let raw = rustix::fs::lstat(path).unwrap();
        Stat::of_raw(&raw)
    }

    #[test]
    fn a_parent_swapped_for_a_link_after_the_walk_is_never_read_through() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join("docs")).unwrap();
        std::fs::write(project.path().join("docs/a.txt"), "mine").unwrap();
        std::fs::write(outside.path().join("a.txt"), "the host's").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", outside.path().join("l")).unwrap();
        let seen = stat_of(&project.path().join("docs/a.txt"));
        let root = Root::open(project.path()).unwrap();
        assert_eq!(
            bytes(root.file("docs/a.txt", &seen).unwrap()).unwrap(),
            b"mine"
        );
        // The walk saw docs/a.txt; then docs becomes a link outside.
        std::fs::rename(project.path().join("docs"), project.path().join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), project.path().join("docs")).unwrap();
        assert!(root.file("docs/a.txt", &seen).is_err());
        assert!(root.link_target("docs/l").is_err());
        // Even a same-named file of the right inode number elsewhere is
        // out of reach: the open itself refuses the link.
        let there = stat_of(&outside.path().join("a.txt"));
        assert!(root.file("docs/a.txt", &there).is_err());
    }

    #[test]
    fn a_file_replaced_after_the_walk_is_refused() {
        let project = tempfile::tempdir().unwrap();
        let path = project.path().join("a.txt");
        std::fs::write(&path, "before").unwrap();
        let seen = stat_of(&path);
        let root = Root::open(project.path()).unwrap();
        let other = project.path().join("b.txt");
        std::fs::write(&other, "swapped in").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(root.file("a.txt", &seen).is_err());
        std::os::unix::fs::symlink("a.txt", project.path().join("l")).unwrap();
        assert_eq!(root.link_target("l").unwrap(), b"a.txt");
    }
}
