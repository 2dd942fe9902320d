//! The diffs of what changed between two checkpoints, for a person to read
//! (Ctrl+O under a bash call's `Changed by bash` line): a unified diff per
//! changed text file, from the blobs both checkpoints keep, bounded in all.
//! A file the store keeps by digest only (protected, holding a secret
//! value, too large) or that is not text gets a note instead, never its
//! bytes.

use serde::Serialize;

use std::time::Duration;

use super::changes::FileDelta;
use super::manifest::{Change, Kind, Manifest};
use super::store::Store;

/// The bytes of diff text kept for one call, all files together.
pub const DIFFS_CAP: usize = 256 * 1024;

/// A file rewritten whole can make the exact diff slow: past this the
/// diff is a coarser one, never a wait.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// One changed file's diff, or the note that stands for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    /// A unified diff with `--- a/PATH` and `+++ b/PATH`, or empty when
    /// `note` says why there is none.
    pub diff: String,
    pub note: Option<String>,
}

/// What one side of a change holds.
enum Side {
    Absent,
    Text(String),
    /// Kept by digest only, or not a regular file.
    NotKept,
    Binary,
}

fn side(store: &Store, manifest: &Manifest, path: &str) -> Side {
    let Some(entry) = manifest.files.get(path) else {
        return Side::Absent;
    };
    if entry.kind != Kind::File {
        return Side::NotKept;
    }
    match store.read_blob(&entry.digest) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => Side::Text(text),
            _ => Side::Binary,
        },
        Err(_) => Side::NotKept,
    }
}

/// The diff of each file of `deltas`, at most `cap` bytes of diff text in
/// all (a file past it gets a note naming the bound).
pub fn diffs(
    store: &Store,
    before: &Manifest,
    after: &Manifest,
    deltas: &[FileDelta],
    cap: usize,
) -> Vec<FileDiff> {
    let mut left = cap;
    deltas
        .iter()
        .map(|delta| {
            let path = delta.path.clone();
            let note = |text: &str| FileDiff {
                path: path.clone(),
                diff: String::new(),
                note: Some(text.to_string()),
            };
            let text = |s: Side| match s {
                Side::Absent => Ok(String::new()),
                Side::Text(text) => Ok(text),
                Side::NotKept => Err("not kept in the checkpoint, so no diff"),
                Side::Binary => Err("binary, so no diff"),
            };
            let (old, new) = match (
                text(side(store, before, &path)),
                text(side(store, after, &path)),
            ) {
                (Ok(old), Ok(new)) => (old, new),
                (Err(why), _) | (_, Err(why)) => return note(why),
            };
            let from = match delta.change {
                Change::Added => "/dev/null".to_string(),
                _ => format!("a/{path}"),
            };
            let diff = similar::TextDiff::configure()
                .algorithm(similar::Algorithm::Myers)
                .timeout(DIFF_TIMEOUT)
                .diff_lines(&old, &new)
                .unified_diff()
                .context_radius(3)
                .header(&from, &format!("b/{path}"))
                .to_string();
            if diff.len() > left {
                return note(&format!(
                    "a diff of {} bytes, past what is kept of one call's diffs ({} KiB)",
                    diff.len(),
                    cap / 1024
                ));
            }
            left -= diff.len();
            FileDiff {
                path,
                diff,
                note: None,
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(digest: &str, size: usize) -> crate::checkpoint::Entry {
        crate::checkpoint::Entry {
            kind: Kind::File,
            digest: digest.into(),
            mode: 0o644,
            size: size as u64,
        }
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("store"));
        store.ensure().unwrap();
        (dir, store)
    }

    fn put(store: &Store, m: &mut Manifest, path: &str, bytes: &[u8]) {
        let digest = crate::checkpoint::store::digest_bytes(bytes);
        store.put_bytes(&digest, bytes).unwrap();
        m.files.insert(path.into(), entry(&digest, bytes.len()));
    }

    fn delta(path: &str, change: Change) -> FileDelta {
        FileDelta {
            path: path.into(),
            change,
            added: 0,
            removed: 0,
        }
    }

    #[test]
    fn text_files_get_a_diff_and_the_rest_a_note_within_the_cap() {
        let (_dir, store) = store();
        let mut before = Manifest::default();
        let mut after = Manifest::default();
        put(&store, &mut before, "a.txt", b"one\ntwo\n");
        put(&store, &mut after, "a.txt", b"one\nthree\n");
        put(&store, &mut after, "new.txt", b"hello\n");
        put(&store, &mut before, "gone.txt", b"bye\n");
        put(&store, &mut before, "bin", b"\0\x01");
        put(&store, &mut after, "bin", b"\0\x02");
        let deltas = [
            delta("a.txt", Change::Changed),
            delta("new.txt", Change::Added),
            delta("gone.txt", Change::Deleted),
            delta("bin", Change::Changed),
        ];
        let got = diffs(&store, &before, &after, &deltas, DIFFS_CAP);
        assert_eq!(got.len(), 4);
        assert!(
            got[0].diff.contains("--- a/a.txt\n+++ b/a.txt\n"),
            "{}",
            got[0].diff
        );
        assert!(got[0].diff.contains("-two\n+three\n"), "{}", got[0].diff);
        assert!(
            got[1].diff.starts_with("--- /dev/null\n+++ b/new.txt\n"),
            "{}",
            got[1].diff
        );
        assert!(got[1].diff.contains("+hello\n"), "{}", got[1].diff);
        assert!(got[2].diff.contains("-bye\n"), "{}", got[2].diff);
        assert_eq!(got[3].note.as_deref(), Some("binary, so no diff"));
        // A small cap leaves the later files to a note naming it.
        let got = diffs(&store, &before, &after, &deltas, 60);
        assert!(got[0].note.is_none());
        assert!(
            got[1]
                .note
                .as_deref()
                .unwrap()
                .contains("past what is kept"),
            "{got:?}"
        );
    }

    #[test]
    fn a_file_kept_by_digest_only_gets_no_diff() {
        let (_dir, store) = store();
        let mut before = Manifest::default();
        let mut after = Manifest::default();
        put(&store, &mut after, ".env", b"x\n");
        // Before: recorded by a digest the store never kept.
        before
            .files
            .insert(".env".into(), entry(&"0".repeat(64), 9));
        let got = diffs(
            &store,
            &before,
            &after,
            &[delta(".env", Change::Changed)],
            DIFFS_CAP,
        );
        assert_eq!(got[0].diff, "");
        assert_eq!(
            got[0].note.as_deref(),
            Some("not kept in the checkpoint, so no diff")
        );
    }
}
