//! A directory's entries: with their sizes (`list`, one `lstat` each), or
//! by kind alone for the walks that visit every entry of a tree (`search`,
//! `@path` completion): the kind the directory itself records for each
//! entry, looked up (`lstat`) only where it records none, and no size. Opens through the confined open and follows nothing;
//! what is opened later is refused there if it became a link meanwhile.

use rustix::fs::{AtFlags, FileType, OFlags};

use super::{ConfineError, DirEntry, EntryKind, Project, io_error};

impl Project {
    /// Lists a directory's entries, sorted by name, without following any,
    /// each with its size (one `lstat` an entry).
    pub fn list(&self, relative: &str) -> Result<Vec<DirEntry>, ConfineError> {
        self.listing(relative, true)
    }

    /// Lists a directory's entries, sorted by name, without following any,
    /// as `list` does, but every `size` is 0.
    pub fn list_kinds(&self, relative: &str) -> Result<Vec<DirEntry>, ConfineError> {
        self.listing(relative, false)
    }

    /// The entries of `relative`; `sized`: each `lstat`ed for its size,
    /// else looked up only where the directory records no kind.
    fn listing(&self, relative: &str, sized: bool) -> Result<Vec<DirEntry>, ConfineError> {
        let fd = self.open_beneath(relative, OFlags::RDONLY | OFlags::DIRECTORY)?;
        let mut entries = Vec::new();
        let dir = rustix::fs::Dir::read_from(&fd).map_err(|e| io_error(relative, e))?;
        for entry in dir {
            let entry = entry.map_err(|e| io_error(relative, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            let recorded = entry.file_type();
            let (file_type, size) = if sized || recorded == FileType::Unknown {
                match rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => (
                        FileType::from_raw_mode(stat.st_mode),
                        u64::try_from(stat.st_size).unwrap_or(0),
                    ),
                    Err(_) => (FileType::Unknown, 0),
                }
            } else {
                (recorded, 0)
            };
            let kind = match file_type {
                FileType::RegularFile => EntryKind::File,
                FileType::Directory => EntryKind::Directory,
                FileType::Symlink => EntryKind::Link,
                _ => EntryKind::Other,
            };
            let size = if sized { size } else { 0 };
            entries.push(DirEntry { name, kind, size });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kinds_agree_with_the_full_listing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("file.txt"), "x").unwrap();
        std::os::unix::fs::symlink("file.txt", root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("dir-link")).unwrap();
        let project = Project::new(root).unwrap();
        let kinds = |entries: Vec<DirEntry>| {
            entries
                .into_iter()
                .map(|e| (e.name, e.kind))
                .collect::<Vec<_>>()
        };
        let listed = kinds(project.list_kinds("").unwrap());
        assert_eq!(listed, kinds(project.list("").unwrap()));
        assert_eq!(listed.len(), 4);
        assert!(matches!(
            project.list_kinds("dir-link"),
            Err(ConfineError::ThroughLink { .. })
        ));
    }
}
