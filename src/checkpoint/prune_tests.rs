//! Retention on a real store: per session, by age, by size, never while a
//! take holds the lock, and a running taker that trusted a pruned blob
//! writes it again.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::prune::Retention;
use super::restore::{Force, apply};
use super::{Checkpoints, Manifest, Store};
use crate::policy::ProtectedPaths;

const DAY: Duration = Duration::from_secs(24 * 3600);

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    fs::create_dir_all(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let store = Store::at(dir.path().join("home/checkpoints/x"));
    Fixture {
        _dir: dir,
        root,
        store,
    }
}

impl Fixture {
    fn cps(&self) -> Checkpoints {
        Checkpoints::new(
            self.store.clone(),
            self.root.clone(),
            Arc::new(ProtectedPaths::builtin()),
        )
    }

    /// Writes `text` to `name` with an mtime an hour ago, so the index
    /// trusts it afterwards.
    fn write_old(&self, name: &str, text: &str) {
        let path = self.root.join(name);
        fs::write(&path, text).unwrap();
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }

    fn manifests(&self) -> usize {
        fs::read_dir(self.store.root().join("manifests"))
            .unwrap()
            .count()
    }

    fn restores(&self, manifest: &Manifest) -> bool {
        let out = tempfile::tempdir().unwrap();
        let restored = apply(
            &self.store,
            out.path(),
            manifest,
            &Manifest::default(),
            &Manifest::default(),
            &Force::from(true),
        );
        restored.failed.is_empty() && restored.unrestorable.is_empty()
    }
}

fn blob_count(root: &Path) -> usize {
    fs::read_dir(root.join("blobs"))
        .unwrap()
        .map(|shard| fs::read_dir(shard.unwrap().path()).unwrap().count())
        .sum()
}

fn retention(keep: usize) -> Retention {
    Retention {
        keep,
        ..Retention::default()
    }
}

#[test]
fn a_session_keeps_its_newest_checkpoints_and_their_blobs() {
    let f = fixture();
    let cps = f.cps();
    let mut taken = Vec::new();
    for n in 0..5 {
        fs::write(f.root.join("a.txt"), format!("version {n}\n")).unwrap();
        taken.push(cps.take_for("s1").unwrap());
    }
    // Another session's only checkpoint is its own newest.
    let other = f.cps();
    fs::write(f.root.join("a.txt"), "other\n").unwrap();
    let theirs = other.take_for("s2").unwrap();
    assert_eq!(f.manifests(), 6);

    let pruned = f.store.prune(&retention(2), SystemTime::now()).unwrap();
    assert!(!pruned.skipped);
    assert_eq!(pruned.manifests, 3, "{pruned:?}");
    assert_eq!(f.manifests(), 3);
    for gone in &taken[..3] {
        assert!(f.store.read_manifest(&gone.id).is_err());
    }
    for kept in taken[3..].iter().chain([&theirs]) {
        assert!(f.restores(&kept.manifest), "{} restores", kept.id);
    }
    // The blobs of versions 0 to 2 went with their checkpoints.
    assert_eq!(blob_count(f.store.root()), 3);
    // The log keeps the kept lines only, and a second pass removes nothing.
    let log = fs::read_to_string(f.store.log_file()).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    let again = f.store.prune(&retention(2), SystemTime::now()).unwrap();
    assert_eq!((again.manifests, again.blobs), (0, 0));
}

#[test]
fn checkpoints_past_the_age_go_but_the_newest_of_all_stays_by_size() {
    let f = fixture();
    let cps = f.cps();
    fs::write(f.root.join("a.txt"), "one\n").unwrap();
    cps.take_for("s1").unwrap();
    let later = SystemTime::now() + 31 * DAY;
    let pruned = f.store.prune(&Retention::default(), later).unwrap();
    assert_eq!(pruned.manifests, 1);
    assert_eq!(f.manifests(), 0);
    assert_eq!(blob_count(f.store.root()), 0);

    // By size: two checkpoints of 8 KiB files each against a 1-byte cap
    // keep only the newest.
    fs::write(f.root.join("a.txt"), "x".repeat(8192)).unwrap();
    let first = cps.take_for("s1").unwrap();
    fs::write(f.root.join("a.txt"), "y".repeat(8192)).unwrap();
    let second = cps.take_for("s1").unwrap();
    let tiny = Retention {
        max_bytes: 1,
        ..Retention::default()
    };
    f.store.prune(&tiny, SystemTime::now()).unwrap();
    assert!(f.store.read_manifest(&first.id).is_err());
    assert!(f.restores(&second.manifest));
}

#[test]
fn a_take_in_progress_holds_the_pass_off() {
    let f = fixture();
    let cps = f.cps();
    for n in 0..3 {
        fs::write(f.root.join("a.txt"), format!("{n}\n")).unwrap();
        cps.take_for("s1").unwrap();
    }
    let lock = f.store.open_lock().unwrap();
    lock.lock_shared().unwrap();
    let pruned = f.store.prune(&retention(1), SystemTime::now()).unwrap();
    assert!(pruned.skipped);
    assert_eq!(f.manifests(), 3);
    drop(lock);
    let pruned = f.store.prune(&retention(1), SystemTime::now()).unwrap();
    assert_eq!(pruned.manifests, 2);
}

#[test]
fn a_running_taker_writes_a_pruned_blob_again() {
    let f = fixture();
    let cps = f.cps();
    f.write_old("kept.txt", "unchanged all along\n");
    cps.take_for("s1").unwrap();
    // Everything is pruned by age while this run still trusts its index.
    f.store
        .prune(&Retention::default(), SystemTime::now() + 31 * DAY)
        .unwrap();
    assert_eq!(blob_count(f.store.root()), 0);
    let again = cps.take_for("s1").unwrap();
    assert!(f.restores(&again.manifest), "the file's bytes are back");
    // A new run reading the index from disk checks it too.
    f.store
        .prune(&Retention::default(), SystemTime::now() + 31 * DAY)
        .unwrap();
    let fresh = f.cps().take_for("s1").unwrap();
    assert!(f.restores(&fresh.manifest));
}

#[test]
fn an_unlogged_young_checkpoint_is_kept_and_a_bad_log_line_is_ignored() {
    let f = fixture();
    let cps = f.cps();
    fs::write(f.root.join("a.txt"), "unnamed\n").unwrap();
    let unnamed = cps.take().unwrap();
    fs::write(f.store.log_file(), "not a line\n12 s1\n").unwrap();
    f.store.prune(&retention(1), SystemTime::now()).unwrap();
    assert!(f.restores(&unnamed.manifest));
    f.store
        .prune(&retention(1), SystemTime::now() + 2 * DAY)
        .unwrap();
    assert!(f.store.read_manifest(&unnamed.id).is_err());
}
