//! The project's protected paths and execution surfaces that exist, found by
//! one walk and cached: the walk is repeated only when a directory it saw
//! changed (its entries were added, removed or renamed, seen by the change
//! time a command cannot set back) or disappeared. Files that share an
//! inode with a protected file (hard links) are masked with it. Never
//! follows a link while walking, never descends into `.git` (git needs to
//! read it) or into a protected directory (the whole directory is masked),
//! and never reads what a file holds.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::policy::{ProtectedPaths, Surfaces};

/// What the project holds that the sandbox treats apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Masked files (protected, or a hard link of one).
    pub files: Vec<PathBuf>,
    /// Masked directories.
    pub dirs: Vec<PathBuf>,
    /// Links named like a secret that lead out of the project: nothing
    /// outside the project is masked through them.
    pub ignored_links: Vec<PathBuf>,
    /// Execution surfaces at any depth (policy's table), the outermost of
    /// each, by their own names (a link as the link): read-only to a
    /// command where they lead inside the project, and what a call adds is
    /// set aside after it.
    pub surfaces: Vec<PathBuf>,
}

/// One directory as the last walk saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: PathBuf,
    modified: Option<SystemTime>,
    changed: (i64, i64),
    inode: u64,
}

/// A change this close before a walk may share its timestamp with one made
/// right after it (a coarse clock): the next look walks again.
const RACY: Duration = Duration::from_millis(50);

/// The last walk of one project.
#[derive(Debug, Default)]
pub struct ScanCache {
    root: PathBuf,
    dirs: Vec<Seen>,
    result: Scanned,
    walks: u64,
    /// A directory changed just before the last walk began.
    racy: bool,
}

impl ScanCache {
    /// What `root` holds, walking again only when needed.
    pub fn scan(
        &mut self,
        root: &Path,
        protected: &ProtectedPaths,
        surfaces: &Surfaces,
    ) -> Scanned {
        if self.walks == 0 || self.root != root || self.racy || self.changed() {
            let began = SystemTime::now();
            let (dirs, result) = walk(root, protected, surfaces);
            self.racy = dirs.iter().any(|seen| racy(seen, began));
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
                Ok(meta) => {
                    meta.modified().ok() != seen.modified
                        || (meta.ctime(), meta.ctime_nsec()) != seen.changed
                        || meta.ino() != seen.inode
                }
                Err(_) => true,
            })
    }
}

/// Whether `seen` changed within `RACY` of `began` (or after it).
fn racy(seen: &Seen, began: SystemTime) -> bool {
    let (secs, nanos) = seen.changed;
    let Ok(secs) = u64::try_from(secs) else {
        return false;
    };
    let changed = SystemTime::UNIX_EPOCH
        + Duration::from_secs(secs)
        + Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    changed + RACY >= began
}

/// The walk's stack entry: a directory, its project-relative path, and
/// whether it lies inside a surface already found.
struct Pending {
    dir: PathBuf,
    rel: String,
    in_surface: bool,
}

/// Walks `root`: every directory seen, and what it holds.
fn walk(root: &Path, protected: &ProtectedPaths, surfaces: &Surfaces) -> (Vec<Seen>, Scanned) {
    let mut seen = Vec::new();
    let mut found = Scanned::default();
    // Regular files by inode, for the hard links of masked files.
    let mut by_inode: HashMap<u64, Vec<PathBuf>> = HashMap::new();
    let mut stack = vec![Pending {
        dir: root.to_path_buf(),
        rel: String::new(),
        in_surface: false,
    }];
    while let Some(Pending {
        dir,
        rel,
        in_surface,
    }) = stack.pop()
    {
        let Ok(meta) = dir.symlink_metadata() else {
            continue;
        };
        seen.push(Seen {
            path: dir.clone(),
            modified: meta.modified().ok(),
            changed: (meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
        });
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                // A directory the walk cannot look into (made unlistable,
                // mode 311) may hold anything a program opens by its path:
                // it is treated as a surface itself.
                let refused = e.kind() == std::io::ErrorKind::PermissionDenied;
                if refused && !rel.is_empty() && !in_surface {
                    found.surfaces.push(dir);
                }
                continue;
            }
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
            // A surface by its name; a repository nested below the top
            // (its configuration and hooks run in the user's git there);
            // or a link where a surface named from the root lies below
            // (`.github` leading elsewhere holds the CI workflows).
            let nested_git = !rel.is_empty() && name.eq_ignore_ascii_case(".git");
            let surface = !in_surface
                && (surfaces.surface(&child_rel).is_some()
                    || nested_git
                    || (kind.is_symlink() && surfaces.holds(&child_rel)));
            if surface {
                found.surfaces.push(path.clone());
            }
            if kind.is_dir() {
                if rel.is_empty() && name.eq_ignore_ascii_case(".git") {
                    continue;
                }
                if protected.is_protected(&child_rel) {
                    found.dirs.push(path);
                } else {
                    stack.push(Pending {
                        dir: path,
                        rel: child_rel,
                        in_surface: in_surface || surface,
                    });
                }
            } else if kind.is_symlink() && protected.is_protected(&child_rel) {
                // A link is masked on the real path it leads to, and only
                // when that lies in the project.
                match fs::canonicalize(&path) {
                    Ok(real) if real.starts_with(root) => match fs::metadata(&real) {
                        Ok(meta) if meta.is_dir() => found.dirs.push(real),
                        Ok(meta) if meta.is_file() => found.files.push(real),
                        _ => {}
                    },
                    Ok(_) => found.ignored_links.push(path),
                    Err(_) => {}
                }
            } else if protected.is_protected(&child_rel) {
                if kind.is_file() {
                    found.files.push(path);
                }
            } else if kind.is_file() {
                by_inode.entry(entry.ino()).or_default().push(path);
            }
        }
    }
    let linked = hard_links(&found.files, &by_inode);
    found.files.extend(linked);
    for list in [
        &mut found.files,
        &mut found.dirs,
        &mut found.ignored_links,
        &mut found.surfaces,
    ] {
        list.sort();
        list.dedup();
    }
    (seen, found)
}

/// The other names of masked files that have more than one.
fn hard_links(files: &[PathBuf], by_inode: &HashMap<u64, Vec<PathBuf>>) -> Vec<PathBuf> {
    let mut linked = Vec::new();
    for file in files {
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
    linked
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
        let masked = cache.scan(root, &ProtectedPaths::builtin(), &Surfaces::default());
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
        let masked =
            ScanCache::default().scan(&root, &ProtectedPaths::builtin(), &Surfaces::default());
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
        // A fixture older than a coarse clock's tick: the walk is not racy.
        std::thread::sleep(RACY + Duration::from_millis(20));
        assert!(
            cache
                .scan(root, &protected, &Surfaces::default())
                .files
                .is_empty()
        );
        assert!(
            cache
                .scan(root, &protected, &Surfaces::default())
                .files
                .is_empty()
        );
        assert_eq!(cache.walks(), 1);
        fs::write(root.join("deep/er/.env"), "x").unwrap();
        let masked = cache.scan(root, &protected, &Surfaces::default());
        assert_eq!(cache.walks(), 2);
        assert_eq!(masked.files, vec![root.join("deep/er/.env")]);
    }

    #[test]
    fn finds_surfaces_at_any_depth_the_outermost_by_their_own_names() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("sub/.claude/commands")).unwrap();
        fs::create_dir_all(root.join("pkg/.github/workflows")).unwrap();
        fs::create_dir_all(root.join(".github/workflows")).unwrap();
        fs::create_dir_all(root.join("hooks")).unwrap();
        fs::write(root.join("sub/.claude/commands/x.md"), "x").unwrap();
        fs::write(root.join("deep.md"), "x").unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/Agents.MD"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("deep.md"), root.join("a/CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("a/GEMINI.md")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", root.join(".envrc")).unwrap();
        let scanned = ScanCache::default().scan(
            &root,
            &ProtectedPaths::builtin(),
            &Surfaces::new(Some("hooks")),
        );
        assert_eq!(
            scanned.surfaces,
            vec![
                root.join(".envrc"),
                root.join(".github/workflows"),
                root.join("a/CLAUDE.md"),
                root.join("a/GEMINI.md"),
                root.join("a/b/Agents.MD"),
                root.join("hooks"),
                root.join("sub/.claude"),
            ]
        );
    }

    #[test]
    fn a_directory_whose_times_were_set_back_is_walked_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("sub")).unwrap();
        let before = fs::metadata(root.join("sub")).unwrap().modified().unwrap();
        std::thread::sleep(RACY + Duration::from_millis(20));
        let mut cache = ScanCache::default();
        let protected = ProtectedPaths::builtin();
        let surfaces = Surfaces::default();
        assert!(cache.scan(root, &protected, &surfaces).surfaces.is_empty());
        fs::write(root.join("sub/AGENTS.md"), "x").unwrap();
        // What `touch -m -d` would do: the modification time set back.
        fs::File::open(root.join("sub"))
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(
            cache.scan(root, &protected, &surfaces).surfaces,
            vec![root.join("sub/AGENTS.md")]
        );
    }
}
