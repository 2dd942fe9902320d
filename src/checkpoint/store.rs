//! The checkpoint store of one project, `MINO_HOME/checkpoints/<digest of
//! the project's path>/`: `blobs/ab/cdef…` (content-addressed by SHA-256,
//! written once, never changed), `manifests/<id>.json` (a manifest's id is
//! the digest of its text) and `index.json` (see `index.rs`). Every file
//! is written to a temporary name in the store and renamed into place, so
//! a reader never sees half of one. Never touches the project.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::manifest::Manifest;

/// The store of one project.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// The directory name of a project's store (and of its sandbox layers): the
/// first 8 bytes of the digest of its path, in hex.
pub fn project_key(project: &Path) -> String {
    let digest = Sha256::digest(project.as_os_str().as_encoded_bytes());
    hex::encode(digest.get(..8).unwrap_or_default())
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn digest_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Opens the regular file at `path` for reading: never through a final
/// link, never blocking (a FIFO swapped in after the walk is refused, not
/// waited on).
pub fn open_regular(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(file)
}

/// The bytes of the regular file at `path` (see `open_regular`).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// SHA-256 of the regular file at `path`, read in pieces; of its target's
/// name for a link (a link is never followed).
pub fn digest_file(path: &Path) -> io::Result<String> {
    if path.symlink_metadata()?.file_type().is_symlink() {
        let target = fs::read_link(path)?;
        return Ok(digest_bytes(target.as_os_str().as_encoded_bytes()));
    }
    let mut file = open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(buffer.get(..read).unwrap_or_default());
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Whether `digest` is 64 lower-case hex digits (a manifest names only
/// those, so a damaged one cannot point outside the store).
pub fn valid_digest(digest: &str) -> bool {
    digest.len() == 64
        && digest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Store {
    /// The store of `project` (canonical) under mino's home `home`.
    pub fn for_project(home: &Path, project: &Path) -> Store {
        Store {
            root: home.join("checkpoints").join(project_key(project)),
        }
    }

    /// A store at `root` itself (tests, the bench).
    pub fn at(root: PathBuf) -> Store {
        Store { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn index_file(&self) -> PathBuf {
        self.root.join("index.json")
    }

    fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// Creates the store's directories (0700).
    pub fn ensure(&self) -> io::Result<()> {
        for dir in [
            self.root.clone(),
            self.root.join("blobs"),
            self.root.join("manifests"),
            self.tmp_dir(),
        ] {
            create_private_dir(&dir)?;
        }
        Ok(())
    }

    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let (head, tail) = digest.split_at(digest.len().min(2));
        self.root.join("blobs").join(head).join(tail)
    }

    pub fn has_blob(&self, digest: &str) -> bool {
        self.blob_path(digest).symlink_metadata().is_ok()
    }

    /// Stores `bytes` under `digest` unless it is there already.
    pub fn put_bytes(&self, digest: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.blob_path(digest);
        if path.symlink_metadata().is_ok() {
            return Ok(());
        }
        self.write_atomic(&path, bytes, false)
    }

    /// Stores the file at `source` under `digest` by a hard link (git never
    /// rewrites an object in place), or by a copy where a link cannot be
    /// made. Returns whether it was linked (or already there).
    pub fn put_link(&self, digest: &str, source: &mut fs::File) -> io::Result<bool> {
        let path = self.blob_path(digest);
        if path.symlink_metadata().is_ok() {
            return Ok(true);
        }
        if let Some(parent) = path.parent() {
            create_private_dir(parent)?;
        }
        // The open file itself is linked, whatever its path names by now.
        match rustix::fs::linkat(
            rustix::fs::CWD,
            super::read::proc_path(source).as_str(),
            rustix::fs::CWD,
            &path,
            rustix::fs::AtFlags::SYMLINK_FOLLOW,
        ) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(true),
            Err(_) => {
                use std::io::Seek;
                let mut tmp = tempfile::NamedTempFile::new_in(self.tmp_dir())?;
                source.seek(io::SeekFrom::Start(0))?;
                io::copy(source, tmp.as_file_mut())?;
                persist(tmp, &path)?;
                Ok(false)
            }
        }
    }

    pub fn read_blob(&self, digest: &str) -> io::Result<Vec<u8>> {
        if !valid_digest(digest) {
            return Err(io::Error::other(format!("{digest:?} is not a digest")));
        }
        fs::read(self.blob_path(digest))
    }

    fn manifest_path(&self, id: &str) -> PathBuf {
        self.root.join("manifests").join(format!("{id}.json"))
    }

    /// Writes `manifest` (unless a manifest with the same text is there)
    /// and returns its id.
    pub fn write_manifest(&self, manifest: &Manifest) -> io::Result<String> {
        let text = serde_json::to_vec(manifest).map_err(io::Error::other)?;
        let id = digest_bytes(&text);
        let path = self.manifest_path(&id);
        if path.symlink_metadata().is_err() {
            self.write_atomic(&path, &text, true)?;
        }
        Ok(id)
    }

    pub fn read_manifest(&self, id: &str) -> io::Result<Manifest> {
        if !valid_digest(id) {
            return Err(io::Error::other(format!(
                "{id:?} is not a checkpoint id (64 hex digits)"
            )));
        }
        let path = self.manifest_path(id);
        let text = fs::read(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "checkpoint {id} is not in the store ({}): {e}",
                    path.display()
                ),
            )
        })?;
        serde_json::from_slice(&text)
            .map_err(|e| io::Error::other(format!("{} does not decode: {e}", path.display())))
    }

    /// Writes `bytes` to `path` through a temporary file in the store;
    /// `sync`: the file is on disk before the rename.
    pub fn write_atomic(&self, path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
        if let Some(parent) = path.parent() {
            create_private_dir(parent)?;
        }
        let mut tmp = tempfile::NamedTempFile::new_in(self.tmp_dir())?;
        tmp.write_all(bytes)?;
        if sync {
            tmp.as_file().sync_all()?;
        }
        persist(tmp, path)
    }

    /// Flushes what was written without a sync (blobs) to the disk, before
    /// a manifest that names them is written.
    pub fn sync(&self) -> io::Result<()> {
        let dir = fs::File::open(&self.root)?;
        rustix::fs::syncfs(&dir).map_err(io::Error::from)
    }
}

/// Whether the store can hard-link the objects of the project's `.git`
/// (the same filesystem): tried on one object, linked into the store's
/// temporary directory and removed. None when the project has no objects.
pub fn links_work(store: &Store, project: &Path) -> Option<Result<(), String>> {
    let objects = project.join(".git/objects");
    let object = ignore::WalkBuilder::new(&objects)
        .standard_filters(false)
        .build()
        .flatten()
        .find(|e| e.file_type().is_some_and(|t| t.is_file()))?
        .into_path();
    let probe = store
        .tmp_dir()
        .join(format!("link-probe-{}", std::process::id()));
    let result = store
        .ensure()
        .and_then(|()| fs::hard_link(&object, &probe))
        .map_err(|e| {
            format!(
                "git objects cannot be hard-linked into {} ({e}); checkpoints copy them instead",
                store.root().display()
            )
        });
    let _ = fs::remove_file(&probe);
    Some(result)
}

fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::checkpoint::manifest::{Entry, Kind};

    #[test]
    fn blobs_and_manifests_round_trip_and_are_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("s"));
        store.ensure().unwrap();
        let digest = digest_bytes(b"hello\n");
        store.put_bytes(&digest, b"hello\n").unwrap();
        store.put_bytes(&digest, b"other").unwrap();
        assert_eq!(store.read_blob(&digest).unwrap(), b"hello\n");
        let mut manifest = Manifest::default();
        manifest.files.insert(
            "a.txt".into(),
            Entry {
                kind: Kind::File,
                digest: digest.clone(),
                mode: 0o644,
                size: 6,
            },
        );
        let id = store.write_manifest(&manifest).unwrap();
        assert_eq!(store.write_manifest(&manifest).unwrap(), id);
        assert_eq!(store.read_manifest(&id).unwrap(), manifest);
        assert!(store.read_manifest("../../etc/passwd").is_err());
        assert!(store.read_blob("../x").is_err());
    }

    #[test]
    fn a_linked_blob_shares_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("s"));
        store.ensure().unwrap();
        let source = dir.path().join("pack");
        fs::write(&source, b"pack bytes").unwrap();
        let digest = digest_file(&source).unwrap();
        assert_eq!(digest, digest_bytes(b"pack bytes"));
        let mut opened = fs::File::open(&source).unwrap();
        assert!(store.put_link(&digest, &mut opened).unwrap());
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            fs::metadata(store.blob_path(&digest)).unwrap().ino(),
            fs::metadata(&source).unwrap().ino()
        );
        fs::remove_file(&source).unwrap();
        assert_eq!(store.read_blob(&digest).unwrap(), b"pack bytes");
    }

    #[test]
    fn the_key_is_stable_and_short() {
        assert_eq!(project_key(Path::new("/p")), project_key(Path::new("/p")));
        assert_ne!(project_key(Path::new("/p")), project_key(Path::new("/q")));
        assert_eq!(project_key(Path::new("/p")).len(), 16);
    }
}
