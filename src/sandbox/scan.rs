//! The project's protected paths that exist, found by one walk and cached:
//! the walk is repeated only when a directory it saw changed (its entries
//! were added, removed or renamed) or disappeared. Files that share an inode
//! with a protected file (hard links) are masked with it. Never follows a
//! link while walking, never descends into `.git` (git needs to read it) or
//! into a protected directory (the whole directory is masked), and never
//! reads what a file holds.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::policy::ProtectedPaths;

/// What the project holds that is masked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Masked {
    pub files: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
    /// Links named like a secret that lead out of the project: nothing
    /// outside the project is masked through them.
    pub ignored_links: Vec<PathBuf>,
}

/// One directory as the last walk saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: PathBuf,
    modified: Option<SystemTime>,
    inode: u64,
}

/// The last walk of one project.
#[derive(Debug, Default)]
pub struct ScanCache {
    root: PathBuf,
    dirs: Vec<Seen>,
    result: Masked,
    walks: u64,
}

impl ScanCache {
    /// The masked paths of `root`, walking again only when needed.
    pub fn masked(&mut self, root: &Path, protected: &ProtectedPaths) -> Masked {
        if self.walks == 0 || self.root != root || self.changed() {
            let (dirs, result) = walk(root, protected);
            self.root = root.to_path_buf();
            self.dirs = dirs;
            self.result = result;
            self.walks += 1;
        }
        self.result.clone()
    }

    /// How many times the project was walked (for the bench and tests).
    pub fn walks(&self) -> u64 {
        self.walks
    }

    fn changed(&self) -> bool {
        self.dirs
            .iter()
            .any(|seen| match seen.path.symlink_metadata() {
                Ok(meta) => meta.modified().ok() != seen.modified || meta.ino() != seen.inode,
                Err(_) => true,
            })
    }
}

/// Walks `root`: every directory seen, and what is masked.
fn walk(root: &Path, protected: &ProtectedPaths) -> (Vec<Seen>, Masked) {
    let mut seen = Vec::new();
    let mut masked = Masked::default();
    // Regular files by inode, for the hard links of masked files.
    let mut by_inode: HashMap<u64, Vec<PathBuf>> = HashMap::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(meta) = dir.symlink_metadata() else {
            continue;
        };
        seen.push(Seen {
            path: dir.clone(),
            modified: meta.modified().ok(),
            inode: meta.ino(),
        });
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let child_rel = if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if rel.is_empty() && name.eq_ignore_ascii_case(".git") {
                    continue;
                }
                if protected.is_protected(&child_rel) {
                    masked.dirs.push(path);
                } else {
                    stack.push((path, child_rel));
                }
            } else if kind.is_symlink() && protected.is_protected(&child_rel) {
                // A link is masked on the real path it leads to, and only
                // when that lies in the project.
                match fs::canonicalize(&path) {
                    Ok(real) if real.starts_with(root) => match fs::metadata(&real) {
                        Ok(meta) if meta.is_dir() => masked.dirs.push(real),
                        Ok(meta) if meta.is_file() => masked.files.push(real),
                        _ => {}
                    },
                    Ok(_) => masked.ignored_links.push(path),
                    Err(_) => {}
                }
            } else if protected.is_protected(&child_rel) {
                if kind.is_file() {
                    masked.files.push(path);
                }
            } else if kind.is_file() {
                by_inode.entry(entry.ino()).or_default().push(path);
            }
        }
    }
    let mut linked = Vec::new();
    for file in &masked.files {
        let Ok(meta) = fs::metadata(file) else {
            continue;
        };
        if meta.nlink() < 2 {
            continue;
        }
        for other in by_inode.get(&meta.ino()).into_iter().flatten() {
            if fs::symlink_metadata(other).is_ok_and(|m| m.dev() == meta.dev()) {
                linked.push(other.clone());
            }
        }
    }
    masked.files.extend(linked);
    masked.files.sort();
    masked.files.dedup();
    masked.dirs.sort();
    masked.dirs.dedup();
    masked.ignored_links.sort();
    (seen, masked)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn finds_protected_files_dirs_and_hard_links_and_skips_git() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("a/.ssh")).unwrap();
        fs::create_dir_all(root.join(".git/sub")).unwrap();
        fs::write(root.join(".git/sub/.env"), "x").unwrap();
        fs::write(root.join("a/.ssh/id"), "x").unwrap();
        fs::write(root.join(".env"), "SECRET").unwrap();
        fs::write(root.join("a/server.PEM"), "x").unwrap();
        fs::hard_link(root.join(".env"), root.join("a/notes.txt")).unwrap();
        fs::write(root.join("readme"), "x").unwrap();
        let mut cache = ScanCache::default();
        let masked = cache.masked(root, &ProtectedPaths::builtin());
        assert_eq!(
            masked.files,
            vec![
                root.join(".env"),
                root.join("a/notes.txt"),
                root.join("a/server.PEM")
            ]
        );
        assert_eq!(masked.dirs, vec![root.join("a/.ssh")]);
    }

    #[test]
    fn a_link_is_masked_on_its_real_path_and_never_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("config")).unwrap();
        fs::write(root.join("config/prod.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("config/prod.txt"), root.join(".env")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join(".ssh")).unwrap();
        std::os::unix::fs::symlink("/usr", root.join(".aws")).unwrap();
        let masked = ScanCache::default().masked(&root, &ProtectedPaths::builtin());
        assert_eq!(masked.files, vec![root.join("config/prod.txt")]);
        assert!(masked.dirs.is_empty(), "{:?}", masked.dirs);
        assert_eq!(
            masked.ignored_links,
            vec![root.join(".aws"), root.join(".ssh")]
        );
    }

    #[test]
    fn walks_again_only_when_a_directory_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("deep/er")).unwrap();
        let protected = ProtectedPaths::builtin();
        let mut cache = ScanCache::default();
        assert!(cache.masked(root, &protected).files.is_empty());
        assert!(cache.masked(root, &protected).files.is_empty());
        assert_eq!(cache.walks(), 1);
        fs::write(root.join("deep/er/.env"), "x").unwrap();
        let masked = cache.masked(root, &protected);
        assert_eq!(cache.walks(), 2);
        assert_eq!(masked.files, vec![root.join("deep/er/.env")]);
    }
}
