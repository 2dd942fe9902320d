//! What changed between two checkpoints, file by file, with the lines
//! added and removed (from the blobs both keep), and the one line that
//! says it: `src/a.rs +3 -1, new.txt +2 -0, deleted src/b.rs`.

use serde::Serialize;

use super::manifest::{Change, Kind, Manifest};
use super::store::Store;

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDelta {
    pub path: String,
    pub change: Change,
    /// Lines added and removed; 0 and 0 for a binary or unreadable file.
    pub added: usize,
    pub removed: usize,
}

/// The files that differ from `before` to `after`.
pub fn deltas(store: &Store, before: &Manifest, after: &Manifest) -> Vec<FileDelta> {
    after
        .changes_since(before)
        .into_iter()
        .map(|(path, change)| {
            let text = |m: &Manifest| {
                m.files
                    .get(&path)
                    .filter(|e| e.kind == Kind::File)
                    .and_then(|e| store.read_blob(&e.digest).ok())
                    .and_then(|bytes| String::from_utf8(bytes).ok())
            };
            let (added, removed) = match (text(before), text(after)) {
                (old, new) if old.is_some() || new.is_some() => {
                    counts(&old.unwrap_or_default(), &new.unwrap_or_default())
                }
                _ => (0, 0),
            };
            FileDelta {
                path,
                change,
                added,
                removed,
            }
        })
        .collect()
}

/// Lines added and removed from `old` to `new`.
pub fn counts(old: &str, new: &str) -> (usize, usize) {
    // A file rewritten whole can make the exact diff slow: past the
    // timeout the counts come from a coarser diff, never a wait.
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// `src/a.rs +3 -1, deleted src/b.rs`.
pub fn line(deltas: &[FileDelta]) -> String {
    deltas
        .iter()
        .map(|d| match d.change {
            Change::Deleted => format!("deleted {}", d.path),
            _ => format!("{} +{} -{}", d.path, d.added, d.removed),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_each_file_and_its_counts() {
        assert_eq!(counts("a\nb\n", "a\nc\nd\n"), (2, 1));
        let deltas = [
            FileDelta {
                path: "src/a.rs".into(),
                change: Change::Changed,
                added: 3,
                removed: 1,
            },
            FileDelta {
                path: "src/b.rs".into(),
                change: Change::Deleted,
                added: 0,
                removed: 4,
            },
        ];
        assert_eq!(line(&deltas), "src/a.rs +3 -1, deleted src/b.rs");
    }
}
