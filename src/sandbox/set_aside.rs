//! After a call: an execution surface the call made (an `AGENTS.md`, a
//! `.claude/` or `.vscode/` at any depth, a `.mino/` at the top; policy's
//! table) is set aside under a name nothing reads, and the result says so.
//! The surfaces that existed before are read-only during the call
//! (`plan.rs`); a new one can only appear where nothing stood, and nothing
//! a command writes may steer an agent or run later without a question (a
//! file tool's write there asks in every mode). Never follows a link,
//! never deletes what the call wrote, never touches a path outside the
//! project.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;

use super::plan::Planner;

/// The suffix of a surface set aside: `AGENTS.md.refused-by-mino`.
pub const SUFFIX: &str = ".refused-by-mino";

/// The most set-aside paths a result names one by one.
const NAMED: usize = 8;

/// The project's surfaces before a call.
#[derive(Debug, Clone)]
pub struct SurfacesBefore {
    project: PathBuf,
    existed: BTreeSet<PathBuf>,
}

impl SurfacesBefore {
    /// `existed`: the surfaces as the planner's walk saw them before.
    pub fn new(planner: &Planner, existed: Vec<PathBuf>) -> Self {
        Self {
            project: real_project(planner),
            existed: existed.into_iter().collect(),
        }
    }

    /// Sets aside every surface that is new since `capture`, and says what
    /// was set aside, if anything.
    pub fn set_aside(self, planner: &Planner) -> Option<String> {
        let new: Vec<PathBuf> = planner
            .project_scan()
            .1
            .into_iter()
            .filter(|path| !self.existed.contains(path))
            .collect();
        if new.is_empty() {
            return None;
        }
        let Ok(root) = rustix::fs::open(
            &self.project,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return Some(said(&[], &new));
        };
        let mut moved = Vec::new();
        let mut kept = Vec::new();
        for path in new {
            match path
                .strip_prefix(&self.project)
                .ok()
                .and_then(|rel| aside(&root, rel))
            {
                Some(to) => moved.push((relative(&self.project, &path), to)),
                None => kept.push(path),
            }
        }
        Some(said(&moved, &kept))
    }
}

/// The project's real path, as the walk names its entries.
fn real_project(planner: &Planner) -> PathBuf {
    std::fs::canonicalize(&planner.project).unwrap_or_else(|_| planner.project.clone())
}

fn relative(project: &Path, path: &Path) -> String {
    path.strip_prefix(project)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Renames `rel` (project-relative) to the first free
/// `NAME.refused-by-mino[.N]` beside it, through its parent opened beneath
/// the project without following a link; the new name, project-relative.
fn aside(root: &OwnedFd, rel: &Path) -> Option<String> {
    let name = rel.file_name()?.to_os_string();
    let parent = rel.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = match parent {
        Some(parent) => open_beneath(root, parent).ok()?,
        None => rustix::fs::openat(
            root,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?,
    };
    for n in 1..100 {
        let mut to = name.clone();
        to.push(SUFFIX);
        if n > 1 {
            to.push(format!(".{n}"));
        }
        match rustix::fs::renameat_with(&dir, &name, &dir, &to, RenameFlags::NOREPLACE) {
            Ok(()) => {
                let moved = parent.map_or_else(|| PathBuf::from(&to), |p| p.join(&to));
                return Some(moved.to_string_lossy().into_owned());
            }
            Err(Errno::EXIST) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// A directory beneath `root`, through no link and no `..`.
fn open_beneath(root: &OwnedFd, rel: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(root, rel, flags, Mode::empty(), resolve) {
        Err(Errno::NOSYS) | Err(Errno::PERM) => walk(root, rel, flags),
        other => other,
    }
}

/// Without `openat2`: one component at a time, none a link.
fn walk(root: &OwnedFd, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let mut current: Option<OwnedFd> = None;
    for part in rel.iter() {
        if part == ".." || part == "." {
            return Err(Errno::XDEV);
        }
        let at = current.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
        current = Some(rustix::fs::openat(at, part, flags, Mode::empty())?);
    }
    match current {
        Some(fd) => Ok(fd),
        None => Err(Errno::INVAL),
    }
}

/// The result's note.
fn said(moved: &[(String, String)], kept: &[PathBuf]) -> String {
    let mut parts: Vec<String> = moved
        .iter()
        .take(NAMED)
        .map(|(from, to)| format!("{from} as {to}"))
        .collect();
    if moved.len() > NAMED {
        parts.push(format!("{} more", moved.len() - NAMED));
    }
    let mut note = String::from("[Sandbox: code written here runs later or steers an agent");
    if !parts.is_empty() {
        note.push_str(&format!(", so mino set aside {}", parts.join(", ")));
    }
    if !kept.is_empty() {
        let names: Vec<OsString> = kept
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_os_string()))
            .collect();
        note.push_str(&format!(
            "; {} could not be set aside ({})",
            kept.len(),
            names
                .iter()
                .map(|n| n.to_string_lossy())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    note.push_str(". Write such a file with a file tool, which asks first.]");
    note
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn root(dir: &Path) -> OwnedFd {
        rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn a_surface_is_renamed_beside_itself_never_over_another_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("sub/.claude")).unwrap();
        std::fs::write(dir.join("sub/.claude/settings.json"), "{}").unwrap();
        std::fs::write(dir.join("sub/.claude.refused-by-mino"), "older").unwrap();
        let to = aside(&root(dir), Path::new("sub/.claude")).unwrap();
        assert_eq!(to, "sub/.claude.refused-by-mino.2");
        assert_eq!(
            std::fs::read_to_string(dir.join("sub/.claude.refused-by-mino.2/settings.json"))
                .unwrap(),
            "{}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("sub/.claude.refused-by-mino")).unwrap(),
            "older"
        );
    }

    #[test]
    fn a_parent_that_became_a_link_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("AGENTS.md"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("sub")).unwrap();
        assert_eq!(aside(&root(tmp.path()), Path::new("sub/AGENTS.md")), None);
        assert!(outside.path().join("AGENTS.md").exists());
    }

    #[test]
    fn a_link_is_set_aside_itself() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("notes.md"), "x").unwrap();
        std::os::unix::fs::symlink("notes.md", tmp.path().join("CLAUDE.md")).unwrap();
        assert_eq!(
            aside(&root(tmp.path()), Path::new("CLAUDE.md")).as_deref(),
            Some("CLAUDE.md.refused-by-mino")
        );
        assert!(tmp.path().join("notes.md").is_file());
        assert!(
            tmp.path()
                .join("CLAUDE.md.refused-by-mino")
                .symlink_metadata()
                .unwrap()
                .is_symlink()
        );
    }

    #[test]
    fn the_note_names_a_few_and_counts_the_rest() {
        let moved: Vec<(String, String)> = (0..10)
            .map(|i| (format!("d{i}/AGENTS.md"), format!("d{i}/AGENTS.md{SUFFIX}")))
            .collect();
        let note = said(&moved, &[]);
        assert!(
            note.contains("d0/AGENTS.md as d0/AGENTS.md.refused-by-mino"),
            "{note}"
        );
        assert!(note.contains("2 more"), "{note}");
        assert!(!note.contains("d9/"), "{note}");
    }
}
