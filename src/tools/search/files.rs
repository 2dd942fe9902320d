//! The project's files for `@path` completion in the input box: the same
//! confined walk `search` makes (no protected path, no symbolic link, no
//! path outside the project, `.gitignore` honoured), listing names only.
//! Never reads a file's contents and never decides anything.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Matcher;
use super::run::{Scope, search};
use crate::policy::ProtectedPaths;
use crate::tools::Project;

/// At most this many paths are listed.
pub const MAX_FILES: usize = 2000;

/// What lists the project's files; cheap to clone and to send to a thread.
#[derive(Debug, Clone)]
pub struct ProjectFiles {
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
}

impl ProjectFiles {
    pub fn new(project: Arc<Project>, protected: Arc<ProtectedPaths>) -> Self {
        Self { project, protected }
    }

    /// Project-relative paths of the regular files the walk reaches, in
    /// walk order, at most `MAX_FILES`. Blocking: call it off the async
    /// runtime.
    pub fn list(&self) -> Vec<String> {
        let matcher = Matcher {
            pattern: None,
            glob: None,
            max_results: MAX_FILES,
        };
        let cancel = CancellationToken::new();
        let Ok(entries) = self.project.list_kinds("") else {
            return Vec::new();
        };
        let scope = Scope {
            project: &self.project,
            protected: &self.protected,
            matcher: &matcher,
            cancel: &cancel,
            root: "",
        };
        let (_, results) = search(&scope, Some(entries));
        results.lines().map(str::to_string).collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_links_and_ignored_files_are_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".ssh")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        for file in [
            "src/main.rs",
            "notes.md",
            ".env",
            ".env.local",
            "server.pem",
            ".git/config",
            ".ssh/id_ed25519",
            "target/out.bin",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::os::unix::fs::symlink(".env", root.join("env-link")).unwrap();
        std::os::unix::fs::symlink(".git", root.join("docs")).unwrap();
        let project = Arc::new(Project::new(root).unwrap());
        let files = ProjectFiles::new(project, Arc::new(ProtectedPaths::builtin())).list();
        assert_eq!(files, vec![".gitignore", "notes.md", "src/main.rs"]);
    }
}
