//! What the gate is configured with (the trusted executables, the judge's
//! git, the protected paths, the homes and the project root) and the
//! evidence the caller took about a trusted executable. Data and lookups
//! only: nothing here reads the filesystem or decides an outcome.

use crate::policy::ProtectedPaths;

/// One entry of the user's trusted-executable list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    /// Absolute, exactly as configured.
    pub path: String,
    /// Lowercase hex SHA-256, when the list gives one.
    pub sha256: Option<String>,
}

/// What the gate is configured with, built once from the settings.
#[derive(Debug, Clone)]
pub struct Rules {
    pub trusted: Vec<Trusted>,
    /// The exact git path a judge may consider.
    pub git: Option<String>,
    pub protected: ProtectedPaths,
    /// mino's home directory, never named by an allowed command.
    pub mino_home: Option<String>,
    /// The user's home and the project root, for the catastrophic subset.
    pub home: Option<String>,
    pub project_root: Option<String>,
}

impl Rules {
    pub fn new(protected: ProtectedPaths) -> Self {
        Self {
            trusted: Vec::new(),
            git: None,
            protected,
            mino_home: None,
            home: None,
            project_root: None,
        }
    }

    pub(super) fn trusted(&self, path: &str) -> Option<&Trusted> {
        self.trusted.iter().find(|t| t.path == path)
    }

    /// An argument names a protected path (every part between `=` and `:`
    /// is looked at, so `--file=.env` and `HEAD:.env` count) or mino's home.
    pub fn names_protected(&self, arg: &str) -> bool {
        let in_home = |p: &str| {
            self.mino_home.as_ref().is_some_and(|home| {
                let home = home.trim_end_matches('/');
                p == home || p.strip_prefix(home).is_some_and(|r| r.starts_with('/'))
            })
        };
        arg.split(['=', ':']).any(|part| {
            let part = part.replace('\\', "/");
            let trimmed = part.trim_start_matches("./").trim_end_matches('/');
            in_home(&part)
                || (!trimmed.is_empty()
                    && (self.protected.is_protected(trimmed)
                        || self.protected.is_protected(trimmed.trim_start_matches('/'))))
        })
    }
}

/// What the caller found at a trusted executable's path, at decision time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The path that was examined, exactly as the command wrote it.
    pub path: String,
    pub file: FileEvidence,
    /// For git: what it reads in the repository the command runs in
    /// (`repository_to_examine`). `None` when not taken.
    pub repository: Option<super::RepositoryEvidence>,
}

impl Evidence {
    /// A regular file that only root or the user can change: the least
    /// the caller needs before it runs the file to take more evidence.
    pub fn safe_to_run(&self) -> bool {
        matches!(self.file, FileEvidence::Regular { mode, owner, user, .. }
            if mode & 0o022 == 0 && (owner == 0 || owner == user))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvidence {
    /// Nothing there, or it could not be examined.
    Missing { why: String },
    /// Something other than a regular file (after following links).
    NotRegular,
    Regular {
        /// The permission bits.
        mode: u32,
        owner: u32,
        /// The uid mino runs as.
        user: u32,
        /// Lowercase hex, taken when the list gives a digest to match.
        sha256: Option<String>,
    },
}
