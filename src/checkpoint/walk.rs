//! The walk a checkpoint records: every directory, file and link under the
//! project root that `.gitignore`/`.ignore` (and `.git/info/exclude`) do
//! not leave out, plus the whole of the project's own `.git`, whose objects
//! and packs are marked to be linked rather than copied. mino's home, when
//! it lies inside the project, is left out; protected paths (the secret
//! table, the user's patterns) are marked to be recorded by digest only.
//! Reads names and stats only, never contents. Each path is stat'ed by its
//! name relative to its directory, opened once (`O_PATH`) for all of its
//! entries a walker thread meets in a row: the kernel then resolves one
//! name instead of the whole path, which is most of what the walk costs.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::{WalkBuilder, WalkState};

use crate::policy::{ProtectedPaths, Protection};

use super::index::Stat;
use super::manifest::Kind;

/// One path the walk found.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub stat: Stat,
    /// File, Symlink, Dir or GitObject: what it is, before `judge` says
    /// whether it is protected (and the size limit whether it is large).
    pub kind: Kind,
    /// Inside the project's own `.git`.
    pub in_git: bool,
}

/// What `seen` is recorded as under `protected`: Protected for a protected
/// file or link, else its own kind. Inside the project's own .git the
/// `.git/` pattern does not apply: what is below it is judged by its own
/// name.
pub fn judge(seen: &Seen, protected: &ProtectedPaths) -> Kind {
    if seen.kind == Kind::Dir {
        return Kind::Dir;
    }
    let judged = if seen.in_git {
        seen.rel.strip_prefix(".git/").unwrap_or("")
    } else {
        seen.rel.as_str()
    };
    if !judged.is_empty() && protected.is_protected(judged) {
        Kind::Protected
    } else {
        seen.kind
    }
}

/// The most paths a checkpoint walks: past it, the project is too large to
/// checkpoint at every call (a home directory, a monorepo without ignore
/// files), and checkpoints are off for the run rather than slow.
pub const MAX_ENTRIES: usize = 200_000;

/// Threads of the project's walk.
const WALK_THREADS: usize = 2;

/// Walks `root` (canonical); `Err(limit)` when it holds more than `limit`
/// paths (nothing partial is ever returned: a partial walk would read as
/// deletions).
pub fn walk_bounded(
    root: &Path,
    protected: &Arc<ProtectedPaths>,
    limit: usize,
) -> Result<Vec<Seen>, usize> {
    let seen = walk_until(root, protected, limit);
    if seen.len() > limit {
        Err(limit)
    } else {
        Ok(seen)
    }
}

/// Walks `root` (canonical), whole.
pub fn walk(root: &Path, protected: &Arc<ProtectedPaths>) -> Vec<Seen> {
    walk_until(root, protected, usize::MAX)
}

/// Walks `root`, stopping once more than `limit` paths were seen.
fn walk_until(root: &Path, protected: &Arc<ProtectedPaths>, limit: usize) -> Vec<Seen> {
    let mut seen = Vec::new();
    let top = root.to_path_buf();
    let filter_protected = Arc::clone(protected);
    let filter_top = top.clone();
    // Two threads: the walk is a stat of every path, and most of its time
    // is the kernel's, which two cores halve.
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .require_git(false)
        .follow_links(false)
        .threads(WALK_THREADS)
        .filter_entry(move |entry| {
            // The project's own .git is walked on its own, without ignore
            // rules; mino's home (a directory) is never part of a checkpoint.
            if entry.depth() == 1 && entry.file_name() == ".git" {
                return false;
            }
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            let Some(rel) = relative(&filter_top, entry.path()) else {
                return true;
            };
            filter_protected.protection(&rel) != Some(Protection::MinoHome)
        })
        .build_parallel();
    let (found_tx, found_rx) = std::sync::mpsc::channel();
    let count = std::sync::atomic::AtomicUsize::new(0);
    walker.run(|| {
        let found_tx = found_tx.clone();
        let top = &top;
        let count = &count;
        let mut dirs = Parent::default();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(rel) = relative(top, entry.path()) else {
                return WalkState::Continue;
            };
            if let Some(found) = classify(&mut dirs, entry.path(), rel, false) {
                let _ = found_tx.send(found);
                // Past the limit the walk stops: the caller refuses it whole.
                if count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= limit {
                    return WalkState::Quit;
                }
            }
            WalkState::Continue
        })
    });
    drop(found_tx);
    seen.extend(found_rx);
    if seen.len() > limit {
        return seen;
    }
    let git = root.join(".git");
    if git.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        let walker = WalkBuilder::new(&git)
            .standard_filters(false)
            .follow_links(false)
            .build();
        let mut dirs = Parent::default();
        for entry in walker.flatten() {
            let Some(rel) = relative(&top, entry.path()) else {
                continue;
            };
            if let Some(found) = classify(&mut dirs, entry.path(), rel, true) {
                seen.push(found);
            }
            if seen.len() > limit {
                return seen;
            }
        }
    } else if let Some(found) = classify(&mut Parent::default(), &git, ".git".to_string(), false) {
        // A `.git` file (a worktree's or submodule's pointer) is a file.
        seen.push(found);
    }
    seen
}

/// `path` relative to `root`, `/`-separated; None for the root itself or a
/// name that is not UTF-8 (left out of every checkpoint).
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let text = rel.to_str()?;
    (!text.is_empty()).then(|| text.to_string())
}

/// The directory a walker thread stat'ed its last entry in, held open.
#[derive(Default)]
struct Parent {
    open: Option<(PathBuf, OwnedFd)>,
}

impl Parent {
    /// `path`'s stat, not following a link at its end: by its name in its
    /// directory, opened now unless it was the last one's.
    fn stat(&mut self, path: &Path) -> Option<rustix::fs::Stat> {
        use rustix::fs::{AtFlags, Mode, OFlags};
        let (dir, name) = (path.parent()?, path.file_name()?);
        let fresh = !matches!(&self.open, Some((open, _)) if open == dir);
        if fresh {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::open(dir, flags, Mode::empty()).ok()?;
            self.open = Some((dir.to_path_buf(), fd));
        }
        let (_, fd) = self.open.as_ref()?;
        rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()
    }
}

fn classify(dirs: &mut Parent, path: &Path, rel: String, in_git: bool) -> Option<Seen> {
    use rustix::fs::FileType;
    let raw = dirs.stat(path)?;
    let stat = Stat::of_raw(&raw);
    let file_type = FileType::from_raw_mode(raw.st_mode);
    let kind = if file_type == FileType::Directory {
        Kind::Dir
    } else if file_type == FileType::Symlink {
        Kind::Symlink
    } else if file_type == FileType::RegularFile {
        if in_git && rel.starts_with(".git/objects/") {
            Kind::GitObject
        } else {
            Kind::File
        }
    } else {
        // Sockets, FIFOs and devices carry nothing to restore.
        return None;
    };
    Some(Seen {
        rel,
        stat,
        kind,
        in_git,
    })
}

/// The absolute path of `rel` under `root`.
pub fn absolute(root: &Path, rel: &str) -> PathBuf {
    root.join(rel)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn ignored_output_is_left_out_git_is_walked_and_secrets_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        fs::create_dir_all(root.join("target/debug")).unwrap();
        fs::write(root.join("target/debug/big"), "x").unwrap();
        fs::write(root.join("run.log"), "x").unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        fs::write(root.join(".env"), "KEY=1\n").unwrap();
        fs::create_dir_all(root.join(".git/objects/ab")).unwrap();
        fs::write(root.join(".git/objects/ab/cd"), "obj").unwrap();
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        // A .gitignore that names git's files does not hide them.
        fs::write(root.join(".ignore"), "HEAD\n").unwrap();
        std::os::unix::fs::symlink("src/a.rs", root.join("link")).unwrap();
        let protected = Arc::new(ProtectedPaths::builtin());
        let seen = walk(&root, &protected);
        let kind = |rel: &str| {
            seen.iter()
                .find(|s| s.rel == rel)
                .map(|s| judge(s, &protected))
        };
        assert_eq!(kind("src/a.rs"), Some(Kind::File));
        assert_eq!(kind("src"), Some(Kind::Dir));
        assert_eq!(kind("target/debug/big"), None);
        assert_eq!(kind("run.log"), None);
        assert_eq!(kind(".env"), Some(Kind::Protected));
        assert_eq!(kind(".git/objects/ab/cd"), Some(Kind::GitObject));
        assert_eq!(kind(".git/HEAD"), Some(Kind::File));
        assert_eq!(kind("link"), Some(Kind::Symlink));
        assert_eq!(kind(".gitignore"), Some(Kind::File));
    }
}
