//! What a not-found result says: the path given, up to five close matches
//! (the same path in another case, then files, or directories for a
//! listing, of the same name elsewhere in the project), and that paths are
//! relative to the project root, with the project's top-level entries
//! when nothing is close (never an example path of mino's own). Looks
//! only through `Project::list` (never through a link), names only regular
//! files and directories (never a link or a special file), skips protected
//! paths and `.git`, and stops after a bounded number of entries. Never
//! opens a file and never decides.

use crate::policy::ProtectedPaths;

use super::confine::{EntryKind, Project};
use super::paths::join;

/// At most this many close matches are named.
pub const MAX_MATCHES: usize = 5;
/// The look stops after this many directory entries.
const MAX_VISITED: usize = 20_000;

/// The close matches of `wanted` (a project-relative path that does not
/// exist): case variants of the whole path first, then entries of `kind`
/// with the same name (any case) elsewhere, each group in name order.
pub fn close_matches(
    project: &Project,
    protected: &ProtectedPaths,
    wanted: &str,
    kind: EntryKind,
) -> Vec<String> {
    let wanted = wanted.trim_start_matches("./").trim_end_matches('/');
    let wanted_lower = wanted.to_lowercase();
    let name_lower = wanted.rsplit('/').next().unwrap_or(wanted).to_lowercase();
    if name_lower.is_empty() {
        return Vec::new();
    }
    let (mut case, mut named) = (Vec::new(), Vec::new());
    let mut visited = 0;
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = project.list(&dir) else {
            continue;
        };
        for entry in entries {
            visited += 1;
            if visited > MAX_VISITED {
                return ordered(case, named);
            }
            let child = join(&dir, &entry.name);
            if entry.name == ".git" || protected.is_protected(&child) {
                continue;
            }
            // A link or a special file is never offered: a read of it is
            // refused, and its name says nothing about where it leads.
            if !matches!(entry.kind, EntryKind::File | EntryKind::Directory) {
                continue;
            }
            let lower = child.to_lowercase();
            if child != wanted && lower == wanted_lower {
                case.push(child.clone());
            } else if entry.kind == kind && entry.name.to_lowercase() == name_lower {
                named.push(child.clone());
            }
            if entry.kind == EntryKind::Directory {
                stack.push(child);
            }
        }
    }
    ordered(case, named)
}

fn ordered(mut case: Vec<String>, mut named: Vec<String>) -> Vec<String> {
    case.sort();
    named.sort();
    case.extend(named);
    case.truncate(MAX_MATCHES);
    case
}

/// The sentences a not-found result adds after `{path} does not exist`;
/// `kind` is what the call wanted there (a file, or a directory to list).
pub fn hint(
    project: &Project,
    protected: &ProtectedPaths,
    wanted: &str,
    kind: EntryKind,
) -> String {
    let matches = close_matches(project, protected, wanted, kind);
    let mut text = String::new();
    if matches.is_empty() {
        // No example path of mino's own: a small model calls whatever
        // path a result names. The project's real entries instead.
        let top = top_level(project, protected);
        if !top.is_empty() {
            text.push_str(&format!(
                " The project's top level holds: {}.",
                top.join(", ")
            ));
        }
    } else {
        text.push_str(&format!(" Close matches: {}.", matches.join(", ")));
    }
    text.push_str(" Paths are relative to the project root, never absolute.");
    text
}

/// At most this many top-level entries are named.
const MAX_TOP: usize = 8;

/// The project's top-level files and directories (a directory with a
/// trailing `/`), in name order, at most `MAX_TOP`, a `…` after them when
/// there are more: never `.git`, a protected path, a link or a special
/// file.
pub fn top_level(project: &Project, protected: &ProtectedPaths) -> Vec<String> {
    let Ok(entries) = project.list("") else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .filter(|e| e.name != ".git" && !protected.is_protected(&e.name))
        .filter_map(|e| match e.kind {
            EntryKind::File => Some(e.name),
            EntryKind::Directory => Some(format!("{}/", e.name)),
            _ => None,
        })
        .collect();
    names.sort();
    if names.len() > MAX_TOP {
        names.truncate(MAX_TOP);
        names.push("…".into());
    }
    names
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_case_variant_comes_first_then_the_same_name_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("NOTES.md"), "n").unwrap();
        std::fs::create_dir_all(root.join("docs/old")).unwrap();
        std::fs::write(root.join("docs/notes.md"), "n").unwrap();
        std::fs::write(root.join("docs/old/Notes.md"), "n").unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/notes.md"), "n").unwrap();
        let project = Project::new(root).unwrap();
        let protected = ProtectedPaths::builtin();
        assert_eq!(
            close_matches(&project, &protected, "notes.md", EntryKind::File),
            ["NOTES.md", "docs/notes.md", "docs/old/Notes.md"]
        );
        assert_eq!(
            close_matches(&project, &protected, "./calc/NOTES.MD", EntryKind::File),
            ["NOTES.md", "docs/notes.md", "docs/old/Notes.md"]
        );
        assert!(close_matches(&project, &protected, "other.md", EntryKind::File).is_empty());
        let hint = hint(&project, &protected, "notes.md", EntryKind::File);
        assert!(
            hint.starts_with(" Close matches: NOTES.md, docs/notes.md, docs/old/Notes.md."),
            "{hint}"
        );
        assert!(hint.contains("relative to the project root"), "{hint}");
    }

    #[test]
    fn protected_paths_are_never_named_and_five_at_most() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".env"), "SECRET=1").unwrap();
        for n in 0..7 {
            std::fs::create_dir_all(root.join(format!("d{n}"))).unwrap();
            std::fs::write(root.join(format!("d{n}/.env")), "x").unwrap();
            std::fs::write(root.join(format!("d{n}/a.txt")), "x").unwrap();
        }
        let project = Project::new(root).unwrap();
        let protected = ProtectedPaths::builtin();
        assert!(close_matches(&project, &protected, "sub/.ENV", EntryKind::File).is_empty());
        assert_eq!(
            close_matches(&project, &protected, "a.txt", EntryKind::File).len(),
            MAX_MATCHES
        );
    }

    #[test]
    fn a_link_is_never_offered_even_as_a_case_variant() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".env"), "SECRET=1").unwrap();
        std::os::unix::fs::symlink(".env", root.join("NOTES.md")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("Config")).unwrap();
        let project = Project::new(root).unwrap();
        let protected = ProtectedPaths::builtin();
        assert!(close_matches(&project, &protected, "notes.md", EntryKind::File).is_empty());
        assert!(close_matches(&project, &protected, "config", EntryKind::Directory).is_empty());
        assert!(close_matches(&project, &protected, "config/passwd", EntryKind::File).is_empty());
    }

    #[test]
    fn a_listing_is_offered_directories_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("calc/tests")).unwrap();
        std::fs::write(root.join("tests"), "a file, not a directory").unwrap();
        std::fs::create_dir_all(root.join("Docs")).unwrap();
        let project = Project::new(root).unwrap();
        let protected = ProtectedPaths::builtin();
        assert_eq!(
            close_matches(&project, &protected, "src/tests", EntryKind::Directory),
            ["calc/tests"]
        );
        assert_eq!(
            close_matches(&project, &protected, "docs", EntryKind::Directory),
            ["Docs"]
        );
        assert_eq!(
            close_matches(&project, &protected, "src/tests", EntryKind::File),
            ["tests"]
        );
    }
}
