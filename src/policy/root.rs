//! The project root judged like any path: a root that is `/`, is or lies
//! in mino's home, or is or lies in a protected directory (`.ssh`, `.aws`,
//! `.gnupg`, a `.git`, ...) is refused, since protected paths are matched
//! only below the root. The home directory itself stays a valid project,
//! with its protected directories refused below it. Pure: the real paths
//! arrive as facts.

use std::path::{Component, Path};

use super::{ProtectedPaths, Protection};

/// Why a project root is refused: the directory at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} cannot be a project: {why}", dir.display())]
pub struct RootRefused {
    pub dir: std::path::PathBuf,
    pub why: String,
}

/// Judges `root` (the project's real, absolute path) against mino's home
/// (`mino_home`, real path) and the protected patterns.
pub fn check_root(
    root: &Path,
    mino_home: &Path,
    protected: &ProtectedPaths,
) -> Result<(), RootRefused> {
    if root.parent().is_none() {
        return Err(RootRefused {
            dir: root.to_path_buf(),
            why: "it is the filesystem root; every file on the machine would be in the project"
                .into(),
        });
    }
    if root.starts_with(mino_home) {
        return Err(RootRefused {
            dir: mino_home.to_path_buf(),
            why: "it is mino's own home (settings, sessions, logs), which file tools never touch"
                .into(),
        });
    }
    let mut dir = std::path::PathBuf::new();
    for part in root.components() {
        dir.push(part);
        let Component::Normal(name) = part else {
            continue;
        };
        let Some(name) = name.to_str() else { continue };
        if protected.protection(name) == Some(Protection::Pattern) {
            return Err(RootRefused {
                dir,
                why: format!(
                    "{name} is a protected directory; file tools never read or write inside it"
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(root: &str) -> Result<(), RootRefused> {
        check_root(
            Path::new(root),
            Path::new("/home/u/.mino"),
            &ProtectedPaths::builtin(),
        )
    }

    #[test]
    fn protected_directories_the_root_and_minos_home_are_refused() {
        assert!(check("/").is_err());
        for (root, dir) in [
            ("/home/u/.ssh", "/home/u/.ssh"),
            ("/home/u/.SSH", "/home/u/.SSH"),
            ("/home/u/.aws/sub", "/home/u/.aws"),
            ("/home/u/.gnupg", "/home/u/.gnupg"),
            ("/srv/repo/.git", "/srv/repo/.git"),
            ("/srv/repo/.git/hooks", "/srv/repo/.git"),
            ("/home/u/.mino", "/home/u/.mino"),
            ("/home/u/.mino/sessions", "/home/u/.mino"),
        ] {
            let refused = check(root)
                .err()
                .unwrap_or_else(|| panic!("{root} allowed"));
            assert_eq!(refused.dir, Path::new(dir), "{root}");
        }
    }

    #[test]
    fn the_home_and_ordinary_projects_are_allowed() {
        for root in [
            "/home/u",
            "/home/u/src/app",
            "/srv/repo",
            "/home/u/.minotaur",
        ] {
            assert_eq!(check(root), Ok(()), "{root}");
        }
    }
}
