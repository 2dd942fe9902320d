//! Puts a project back to a checkpoint. For each path where the project
//! now differs from the target, the path's current state is compared with
//! what mino last left there (the last checkpoint of the session): a path
//! changed since by something other than mino is kept and listed, unless
//! the caller forces it (all of them, or the paths the person confirmed
//! one by one). Protected paths are never touched; a file recorded
//! by digest only (over the size limit) is listed as unrestorable. Every
//! file is written to a temporary name beside it and renamed into place;
//! nothing is written through a link or outside the root.

use std::fs;
use std::io;
use std::path::{Component, Path};

use serde::Serialize;

use super::manifest::{Entry, Kind, Manifest};
use super::store::{Store, valid_digest};

/// What a restore did, path by path (relative, `/`-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Restored {
    /// Written back (added or changed since the target).
    pub restored: Vec<String>,
    /// Removed (not in the target).
    pub deleted: Vec<String>,
    /// Changed since mino last left them: left as they are.
    pub kept: Vec<String>,
    /// Recorded by digest only (over the size limit): cannot be put back.
    pub unrestorable: Vec<String>,
    /// Could not be written or removed: the path and why.
    pub failed: Vec<String>,
}

/// Which paths changed since mino left them are restored anyway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Force {
    /// None: each is kept and listed.
    #[default]
    None,
    /// Every one (`mino rewind --force`).
    All,
    /// These, confirmed one by one; the rest are kept.
    Paths(std::collections::BTreeSet<String>),
}

impl Force {
    fn covers(&self, path: &str) -> bool {
        match self {
            Force::None => false,
            Force::All => true,
            Force::Paths(paths) => paths.contains(path),
        }
    }
}

impl From<bool> for Force {
    fn from(all: bool) -> Self {
        if all { Force::All } else { Force::None }
    }
}

fn same(a: Option<&Entry>, b: Option<&Entry>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same(b),
        _ => false,
    }
}

/// What restoring `target` over `current` would do, without doing it.
/// `last`: what mino last left; `force`: which paths changed since are
/// restored too.
pub fn plan(target: &Manifest, current: &Manifest, last: &Manifest, force: &Force) -> Restored {
    let mut out = Restored::default();
    let paths: std::collections::BTreeSet<&String> =
        target.files.keys().chain(current.files.keys()).collect();
    for path in paths {
        let t = target.files.get(path);
        let c = current.files.get(path);
        if same(t, c) {
            continue;
        }
        let kind_of = |e: Option<&Entry>| e.map(|e| e.kind);
        if kind_of(t) == Some(Kind::Protected) || kind_of(c) == Some(Kind::Protected) {
            continue;
        }
        if kind_of(t) == Some(Kind::Large) {
            out.unrestorable.push(path.clone());
            continue;
        }
        if !force.covers(path) && !same(c, last.files.get(path)) && kind_of(c) != Some(Kind::Dir) {
            out.kept.push(path.clone());
            continue;
        }
        match t {
            Some(e) if e.kind == Kind::Dir => {}
            Some(_) => out.restored.push(path.clone()),
            None if kind_of(c) == Some(Kind::Dir) => {}
            None => out.deleted.push(path.clone()),
        }
    }
    out
}

/// Restores `target` over the project at `root`, as `plan` says.
pub fn apply(
    store: &Store,
    root: &Path,
    target: &Manifest,
    current: &Manifest,
    last: &Manifest,
    force: &Force,
) -> Restored {
    let mut out = plan(target, current, last, force);
    let mut failed = Vec::new();
    // Files first out, deepest first, then directories the target lacks.
    let mut deleted = Vec::new();
    for rel in out.deleted.iter().rev() {
        match remove(root, rel) {
            Ok(()) => deleted.push(rel.clone()),
            Err(e) => failed.push(format!("{rel}: {e}")),
        }
    }
    deleted.reverse();
    out.deleted = deleted;
    let kept_in = |dir: &str| {
        out.kept
            .iter()
            .any(|k| k.starts_with(dir) && k.as_bytes().get(dir.len()) == Some(&b'/'))
    };
    let mut extra_dirs: Vec<&String> = current
        .files
        .iter()
        .filter(|(rel, e)| {
            e.kind == Kind::Dir
                && !target.files.get(*rel).is_some_and(|t| t.kind == Kind::Dir)
                && !kept_in(rel)
        })
        .map(|(rel, _)| rel)
        .collect();
    extra_dirs.sort_by_key(|rel| std::cmp::Reverse(rel.len()));
    for rel in extra_dirs {
        if safe(root, rel) {
            // Not empty: something kept or unrecorded (ignored) is in it.
            let _ = fs::remove_dir(root.join(rel));
        }
    }
    // Then directories the target has, shallowest first.
    for (rel, entry) in &target.files {
        if entry.kind == Kind::Dir
            && !current.files.get(rel).is_some_and(|c| c.kind == Kind::Dir)
            && !out.kept.contains(rel)
            && let Err(e) = make_dir(root, rel, entry.mode)
        {
            failed.push(format!("{rel}: {e}"));
        }
    }
    let mut restored = Vec::new();
    for rel in &out.restored {
        let Some(entry) = target.files.get(rel) else {
            continue;
        };
        match write(store, root, rel, entry) {
            Ok(()) => restored.push(rel.clone()),
            Err(e) => failed.push(format!("{rel}: {e}")),
        }
    }
    out.restored = restored;
    out.failed = failed;
    out
}

/// Whether `rel` is a plain relative path whose every ancestor under
/// `root` is a real directory (or missing): never `..`, never through a link.
fn safe(root: &Path, rel: &str) -> bool {
    let path = Path::new(rel);
    if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return false;
    }
    let mut at = root.to_path_buf();
    let mut parts = path.components().peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            break;
        }
        at.push(part);
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return false,
            Err(_) => return true,
        }
    }
    true
}

fn refuse(rel: &str) -> io::Error {
    io::Error::other(format!(
        "{rel} is not a plain path under the project, or a directory above it is a link"
    ))
}

fn remove(root: &Path, rel: &str) -> io::Result<()> {
    if !safe(root, rel) {
        return Err(refuse(rel));
    }
    let path = root.join(rel);
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(&path),
        Ok(_) => fs::remove_file(&path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn make_dir(root: &Path, rel: &str, mode: u32) -> io::Result<()> {
    if !safe(root, rel) {
        return Err(refuse(rel));
    }
    let path = root.join(rel);
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => fs::remove_file(&path)?,
        Err(_) => {}
    }
    fs::create_dir_all(&path)?;
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(mode & 0o7777))
}

fn write(store: &Store, root: &Path, rel: &str, entry: &Entry) -> io::Result<()> {
    if !safe(root, rel) || !valid_digest(&entry.digest) {
        return Err(refuse(rel));
    }
    let path = root.join(rel);
    let parent = path.parent().ok_or_else(|| refuse(rel))?;
    fs::create_dir_all(parent)?;
    if !safe(root, rel) {
        return Err(refuse(rel));
    }
    if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(&path)?;
    }
    let blob = store.blob_path(&entry.digest);
    match entry.kind {
        Kind::Symlink => {
            let target = store.read_blob(&entry.digest)?;
            let target = std::ffi::OsStr::from_bytes_lossless(&target);
            let tmp = parent.join(format!(".mino-rewind-{}", std::process::id()));
            let _ = fs::remove_file(&tmp);
            std::os::unix::fs::symlink(target, &tmp)?;
            fs::rename(&tmp, &path)
        }
        Kind::GitObject => {
            let tmp = parent.join(format!(".mino-rewind-{}", std::process::id()));
            let _ = fs::remove_file(&tmp);
            if fs::hard_link(&blob, &tmp).is_err() {
                fs::copy(&blob, &tmp)?;
            }
            fs::rename(&tmp, &path)
        }
        Kind::File => {
            let bytes = store.read_blob(&entry.digest)?;
            let mut tmp = tempfile::NamedTempFile::new_in(parent)?;
            io::Write::write_all(&mut tmp, &bytes)?;
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(entry.mode & 0o7777))?;
            tmp.as_file().sync_all()?;
            tmp.persist(&path).map(|_| ()).map_err(|e| e.error)
        }
        _ => Err(refuse(rel)),
    }
}

/// `OsStr` from raw bytes on Unix.
trait FromBytes {
    fn from_bytes_lossless(bytes: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytes for std::ffi::OsStr {
    fn from_bytes_lossless(bytes: &[u8]) -> &std::ffi::OsStr {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(bytes)
    }
}
