//! The store, the walk and the restore together, on real files in a
//! temporary directory.

use std::fs;
use std::sync::Arc;

use super::restore::{Force, apply};
use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cps: Checkpoints,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
    fs::write(root.join("notes.md"), "one\ntwo\n").unwrap();
    fs::create_dir_all(root.join(".git/objects/pack")).unwrap();
    fs::create_dir_all(root.join(".git/refs/heads")).unwrap();
    fs::write(root.join(".git/objects/pack/p.pack"), "PACK").unwrap();
    fs::write(root.join(".git/refs/heads/main"), "abc\n").unwrap();
    fs::write(root.join(".env"), "SECRET=1\n").unwrap();
    let root = root.canonicalize().unwrap();
    let store = Store::at(dir.path().join("home/checkpoints/x"));
    let cps = Checkpoints::new(store, root.clone(), Arc::new(ProtectedPaths::builtin()));
    Fixture {
        _dir: dir,
        root,
        cps,
    }
}

fn blobs(store: &Store) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for shard in fs::read_dir(store.root().join("blobs")).unwrap() {
        for blob in fs::read_dir(shard.unwrap().path()).unwrap() {
            out.push(fs::read(blob.unwrap().path()).unwrap());
        }
    }
    out
}

#[test]
fn nothing_changed_is_the_same_checkpoint_even_in_a_new_process() {
    let f = fixture();
    let first = f.cps.take().unwrap();
    let again = f.cps.take().unwrap();
    assert_eq!(first.id, again.id);
    // A new run reads the index and the manifest it names is the same.
    let other = Checkpoints::new(
        f.cps.store().clone(),
        f.root.clone(),
        Arc::new(ProtectedPaths::builtin()),
    );
    assert_eq!(other.take().unwrap().id, first.id);
    fs::write(f.root.join("notes.md"), "one\nthree\n").unwrap();
    let changed = f.cps.take().unwrap();
    assert_ne!(changed.id, first.id);
    assert_eq!(
        changed.manifest.changes_since(&first.manifest),
        vec![("notes.md".to_string(), Change::Changed)]
    );
}

#[test]
fn a_protected_file_is_recorded_by_digest_and_never_copied() {
    let f = fixture();
    let taken = f.cps.take().unwrap();
    let env = taken.manifest.files.get(".env").unwrap();
    assert_eq!(env.kind, Kind::Protected);
    assert_eq!(env.digest, store::digest_bytes(b"SECRET=1\n"));
    assert!(!blobs(f.cps.store()).contains(&b"SECRET=1\n".to_vec()));
    assert!(!f.cps.store().has_blob(&env.digest));
}

#[test]
fn rm_rf_src_and_git_is_restored_byte_for_byte_and_new_files_removed() {
    let f = fixture();
    let before = f.cps.take().unwrap();
    fs::remove_dir_all(f.root.join("src")).unwrap();
    fs::remove_dir_all(f.root.join(".git")).unwrap();
    fs::write(f.root.join("new.txt"), "new\n").unwrap();
    fs::write(f.root.join(".env"), "SECRET=2\n").unwrap();
    let after = f.cps.take().unwrap();
    let out = apply(
        f.cps.store(),
        &f.root,
        &before.manifest,
        &after.manifest,
        &after.manifest,
        &Force::from(false),
    );
    assert!(out.failed.is_empty(), "{out:?}");
    assert_eq!(out.deleted, vec!["new.txt".to_string()]);
    assert_eq!(
        fs::read_to_string(f.root.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
    assert_eq!(
        fs::read(f.root.join(".git/objects/pack/p.pack")).unwrap(),
        b"PACK"
    );
    assert_eq!(
        fs::read(f.root.join(".git/refs/heads/main")).unwrap(),
        b"abc\n"
    );
    assert!(!f.root.join("new.txt").exists());
    // A rewind leaves a protected file alone.
    assert_eq!(fs::read(f.root.join(".env")).unwrap(), b"SECRET=2\n");
    let now = f.cps.take().unwrap();
    let left: Vec<_> = now.manifest.changes_since(&before.manifest);
    assert_eq!(left, vec![(".env".to_string(), Change::Changed)]);
}

#[test]
fn a_file_changed_since_mino_left_it_is_kept_unless_forced() {
    let f = fixture();
    let before = f.cps.take().unwrap();
    fs::write(f.root.join("notes.md"), "by mino\n").unwrap();
    fs::write(f.root.join("src/a.rs"), "by mino\n").unwrap();
    let left = f.cps.take().unwrap();
    fs::write(f.root.join("notes.md"), "by the person\n").unwrap();
    let current = f.cps.take().unwrap();
    let out = apply(
        f.cps.store(),
        &f.root,
        &before.manifest,
        &current.manifest,
        &left.manifest,
        &Force::from(false),
    );
    assert_eq!(out.kept, vec!["notes.md".to_string()]);
    assert_eq!(out.restored, vec!["src/a.rs".to_string()]);
    assert_eq!(
        fs::read_to_string(f.root.join("notes.md")).unwrap(),
        "by the person\n"
    );
    let out = apply(
        f.cps.store(),
        &f.root,
        &before.manifest,
        &f.cps.take().unwrap().manifest,
        &left.manifest,
        &Force::from(true),
    );
    assert_eq!(out.restored, vec!["notes.md".to_string()]);
    assert_eq!(
        fs::read_to_string(f.root.join("notes.md")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn confirming_one_file_restores_that_file_and_keeps_the_others_changed_since() {
    let f = fixture();
    let before = f.cps.take().unwrap();
    fs::write(f.root.join("notes.md"), "by mino\n").unwrap();
    fs::write(f.root.join("src/a.rs"), "by mino\n").unwrap();
    let left = f.cps.take().unwrap();
    fs::write(f.root.join("notes.md"), "by the person\n").unwrap();
    fs::write(f.root.join("src/a.rs"), "also by the person\n").unwrap();
    let current = f.cps.take().unwrap();
    // A confirmed path that names nothing changed (or a case variant) is
    // no licence for any other path.
    let force = Force::Paths(
        ["src/a.rs", "NOTES.md", "../notes.md"]
            .iter()
            .map(|p| (*p).to_string())
            .collect(),
    );
    let out = apply(
        f.cps.store(),
        &f.root,
        &before.manifest,
        &current.manifest,
        &left.manifest,
        &force,
    );
    assert_eq!(out.kept, vec!["notes.md".to_string()]);
    assert_eq!(out.restored, vec!["src/a.rs".to_string()]);
    assert_eq!(
        fs::read_to_string(f.root.join("notes.md")).unwrap(),
        "by the person\n"
    );
    assert_ne!(
        fs::read_to_string(f.root.join("src/a.rs")).unwrap(),
        "also by the person\n"
    );
}

#[test]
fn a_large_file_is_unrestorable_and_a_link_above_a_path_stops_the_write() {
    let f = fixture();
    let cps = Checkpoints::new(
        f.cps.store().clone(),
        f.root.clone(),
        Arc::new(ProtectedPaths::builtin()),
    )
    .with_size_limit(16);
    fs::write(f.root.join("big.bin"), "01234567890123456789").unwrap();
    let before = cps.take().unwrap();
    assert_eq!(
        before.manifest.files.get("big.bin").unwrap().kind,
        Kind::Large
    );
    fs::remove_file(f.root.join("big.bin")).unwrap();
    // `src` becomes a link to a directory outside the project.
    let outside = f.root.parent().unwrap().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::remove_dir_all(f.root.join("src")).unwrap();
    std::os::unix::fs::symlink(&outside, f.root.join("src")).unwrap();
    let current = cps.take().unwrap();
    let out = apply(
        cps.store(),
        &f.root,
        &before.manifest,
        &current.manifest,
        &current.manifest,
        &Force::from(false),
    );
    assert_eq!(out.unrestorable, vec!["big.bin".to_string()]);
    // The link was mino's to remove (it left it there), so src comes back
    // as a directory and nothing was written outside.
    assert!(fs::read_dir(&outside).unwrap().next().is_none());
    assert!(
        f.root
            .join("src")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_dir()
    );
    assert_eq!(
        fs::read_to_string(f.root.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
}

#[test]
fn changes_count_lines_from_the_blobs() {
    let f = fixture();
    let before = f.cps.take().unwrap();
    fs::write(f.root.join("notes.md"), "one\nthree\nfour\n").unwrap();
    fs::remove_file(f.root.join("src/a.rs")).unwrap();
    let after = f.cps.take().unwrap();
    let deltas = changes::deltas(f.cps.store(), &before.manifest, &after.manifest);
    assert_eq!(changes::line(&deltas), "notes.md +2 -1, deleted src/a.rs");
}

#[test]
fn a_protected_link_to_a_secret_outside_is_never_followed_and_a_fifo_never_read() {
    let f = fixture();
    let outside = f.root.parent().unwrap().join("id_rsa");
    fs::write(&outside, "PRIVATE KEY").unwrap();
    std::os::unix::fs::symlink(&outside, f.root.join("id_rsa")).unwrap();
    std::os::unix::fs::symlink(&outside, f.root.join("plain-link")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        f.root.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let taken = f.cps.take().unwrap();
    let key = taken.manifest.files.get("id_rsa").unwrap();
    assert_eq!(key.kind, Kind::Protected);
    let name = outside.as_os_str().as_encoded_bytes();
    assert_eq!(key.digest, store::digest_bytes(name));
    assert_eq!(
        taken.manifest.files.get("plain-link").unwrap().kind,
        Kind::Symlink
    );
    assert!(!taken.manifest.files.contains_key("pipe"));
    assert!(!blobs(f.cps.store()).contains(&b"PRIVATE KEY".to_vec()));
    // A FIFO where a file was is refused at once, not waited on.
    fs::remove_file(f.root.join("notes.md")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        f.root.join("notes.md"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    assert!(store::read_regular(&f.root.join("notes.md")).is_err());
    assert!(store::digest_file(&f.root.join("notes.md")).is_err());
}

#[test]
fn a_file_holding_a_secret_value_is_recorded_by_digest_only() {
    let f = fixture();
    fs::write(
        f.root.join(".git/config"),
        "[remote \"origin\"]\n\turl = https://tok-9f8e7d6c5b4a@example.com/r\n",
    )
    .unwrap();
    let mut secrets = crate::secrets::Secrets::new();
    secrets.add("remote", "tok-9f8e7d6c5b4a");
    let cps = Checkpoints::new(
        f.cps.store().clone(),
        f.root.clone(),
        Arc::new(ProtectedPaths::builtin()),
    )
    .with_secrets(crate::secrets::HeldSecrets::ready(secrets));
    let taken = cps.take().unwrap();
    assert_eq!(
        taken.manifest.files.get(".git/config").unwrap().kind,
        Kind::Protected
    );
    assert!(
        !blobs(cps.store())
            .iter()
            .any(|b| String::from_utf8_lossy(b).contains("tok-9f8e7d6c5b4a"))
    );
    // Still so when nothing changed.
    assert_eq!(cps.take().unwrap().id, taken.id);
}

#[test]
fn a_project_past_the_entry_limit_turns_checkpoints_off_once_and_records_nothing() {
    let f = fixture();
    let cps = Checkpoints::new(
        f.cps.store().clone(),
        f.root.clone(),
        Arc::new(ProtectedPaths::builtin()),
    )
    .with_max_entries(3);
    let first = cps.take();
    assert!(
        matches!(first, Err(CheckpointError::TooLarge { limit: 3, .. })),
        "{first:?}"
    );
    let text = first.unwrap_err().to_string();
    assert!(text.contains("checkpoints are off for this run"), "{text}");
    assert!(cps.too_large_warning_due());
    assert!(!cps.too_large_warning_due(), "said once");
    // Later calls are refused at once, and nothing was stored.
    fs::write(f.root.join("more.txt"), "x").unwrap();
    assert!(matches!(cps.take(), Err(CheckpointError::TooLarge { .. })));
    let manifests = f.cps.store().root().join("manifests");
    assert!(fs::read_dir(&manifests).map_or(true, |mut d| d.next().is_none()));
    // The same project under the default limit checkpoints.
    assert!(f.cps.take().is_ok());
}

#[test]
fn the_unchanged_shortcut_still_sees_a_new_directory_a_mode_and_a_deletion() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in ["src/a.rs", "notes.md"] {
        let file = fs::File::options()
            .write(true)
            .open(f.root.join(name))
            .unwrap();
        file.set_modified(old).unwrap();
    }
    let first = f.cps.take().unwrap();
    assert_eq!(f.cps.take().unwrap().id, first.id);
    fs::create_dir(f.root.join("empty")).unwrap();
    let with_dir = f.cps.take().unwrap();
    assert_ne!(with_dir.id, first.id);
    assert_eq!(with_dir.manifest.files["empty"].kind, Kind::Dir);
    fs::set_permissions(f.root.join("empty"), fs::Permissions::from_mode(0o700)).unwrap();
    let with_mode = f.cps.take().unwrap();
    assert_ne!(with_mode.id, with_dir.id);
    fs::remove_file(f.root.join("notes.md")).unwrap();
    let without = f.cps.take().unwrap();
    assert!(!without.manifest.files.contains_key("notes.md"));
    // The shortcut's answer is what a new process, reading everything
    // again, records.
    let other = Checkpoints::new(
        f.cps.store().clone(),
        f.root.clone(),
        Arc::new(ProtectedPaths::builtin()),
    );
    assert_eq!(other.take().unwrap().id, without.id);
    assert_eq!(f.cps.take().unwrap().id, without.id);
}
