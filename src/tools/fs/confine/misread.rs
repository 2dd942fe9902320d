//! A model's absolute path meant as a project path (`/notes.md` for
//! `notes.md`): found by `lstat` only, so that the call fails as not found
//! with the path to use instead of being denied as outside the project.

use std::path::{Component, Path};

use rustix::fs::AtFlags;

use super::{PathTarget, Project};

impl Project {
    /// The project path an absolute `given` was most likely meant as (a
    /// model that wrote `/notes.md` for `notes.md`): its components after
    /// the root, when all are plain names, the first of them is no entry of
    /// `/` (so `given` itself cannot exist, and nothing else outside is
    /// looked at), and that reading is an entry of the project reached
    /// without a link. Uses `lstat` only; opens nothing.
    pub fn misread_absolute(&self, given: &str) -> Option<String> {
        let path = Path::new(given);
        let mut components = path.components();
        if components.next() != Some(Component::RootDir) {
            return None;
        }
        let mut parts = Vec::new();
        for component in components {
            match component {
                Component::Normal(name) => parts.push(name.to_str()?),
                _ => return None,
            }
        }
        let first = parts.first()?;
        match std::fs::symlink_metadata(Path::new("/").join(first)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            _ => return None,
        }
        let relative = parts.join("/");
        match self.locate(&relative).ok()? {
            PathTarget::Inside {
                through_link: None, ..
            } => {}
            _ => return None,
        }
        rustix::fs::statat(&*self.root_fd, relative.as_str(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(relative)
    }
}
