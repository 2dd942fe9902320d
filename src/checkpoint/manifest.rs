//! One checkpoint's manifest: every project path it recorded (relative,
//! `/`-separated) with its kind, digest, mode and size, and the differences
//! between two manifests. Pure data; the store writes and reads it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a recorded path is, and so what a rewind can do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A regular file whose bytes are in the store.
    File,
    /// A symbolic link; its target is in the store as a blob.
    Symlink,
    /// A directory (so that empty ones come back too).
    Dir,
    /// A git object or pack under `.git/objects`, hard-linked into the store
    /// (copied where links cannot be made).
    GitObject,
    /// A protected file: its digest only; a rewind leaves it alone.
    Protected,
    /// Larger than the size limit: its digest only; it cannot be restored.
    Large,
}

impl Kind {
    /// Whether the store holds the bytes.
    pub fn restorable(self) -> bool {
        matches!(
            self,
            Kind::File | Kind::Symlink | Kind::Dir | Kind::GitObject
        )
    }
}

/// One recorded path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub kind: Kind,
    /// SHA-256 of the bytes (of the link's target for a link), lower-case
    /// hex; empty for a directory.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// The permission bits.
    pub mode: u32,
    pub size: u64,
}

impl Entry {
    /// Whether `other` is the same content at the same path (a directory's
    /// mode aside, which a rewind does not fight over).
    pub fn same(&self, other: &Entry) -> bool {
        self.kind == other.kind
            && self.digest == other.digest
            && (self.kind == Kind::Dir || self.mode & 0o111 == other.mode & 0o111)
    }
}

/// Every path a checkpoint recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub files: BTreeMap<String, Entry>,
}

/// How one path differs between two manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Added,
    Changed,
    Deleted,
}

impl Manifest {
    /// The paths (files and links, never directories) that differ from
    /// `before` to `self`, in path order.
    pub fn changes_since(&self, before: &Manifest) -> Vec<(String, Change)> {
        let mut out = Vec::new();
        for (path, entry) in &self.files {
            if entry.kind == Kind::Dir {
                continue;
            }
            match before.files.get(path) {
                None => out.push((path.clone(), Change::Added)),
                Some(old) if old.kind == Kind::Dir => out.push((path.clone(), Change::Added)),
                Some(old) if !old.same(entry) => out.push((path.clone(), Change::Changed)),
                Some(_) => {}
            }
        }
        for (path, entry) in &before.files {
            if entry.kind == Kind::Dir {
                continue;
            }
            match self.files.get(path) {
                Some(now) if now.kind != Kind::Dir => {}
                _ => out.push((path.clone(), Change::Deleted)),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn file(digest: &str) -> Entry {
        Entry {
            kind: Kind::File,
            digest: digest.into(),
            mode: 0o644,
            size: 1,
        }
    }

    #[test]
    fn changes_name_added_changed_and_deleted_files_but_no_directories() {
        let mut before = Manifest::default();
        before.files.insert("a".into(), file("1"));
        before.files.insert("b".into(), file("2"));
        before.files.insert(
            "d".into(),
            Entry {
                kind: Kind::Dir,
                digest: String::new(),
                mode: 0o755,
                size: 0,
            },
        );
        let mut after = Manifest::default();
        after.files.insert("a".into(), file("9"));
        after.files.insert("c".into(), file("3"));
        assert_eq!(
            after.changes_since(&before),
            vec![
                ("a".to_string(), Change::Changed),
                ("b".to_string(), Change::Deleted),
                ("c".to_string(), Change::Added),
            ]
        );
        assert!(after.changes_since(&after).is_empty());
    }

    #[test]
    fn an_executable_bit_is_a_change() {
        let mut before = Manifest::default();
        before.files.insert("a".into(), file("1"));
        let mut after = before.clone();
        if let Some(e) = after.files.get_mut("a") {
            e.mode = 0o755;
        }
        assert_eq!(after.changes_since(&before).len(), 1);
        let text = serde_json::to_string(&before).unwrap();
        assert_eq!(serde_json::from_str::<Manifest>(&text).unwrap(), before);
    }
}
