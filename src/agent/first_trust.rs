//! Auto mode's first day: when a session switches to auto and nothing is
//! trusted yet, the common read-only tools this machine has in its system
//! directories (root-owned regular files nobody else can write), each with
//! its SHA-256, offered as `[[shell_gate.trusted_executables]]` for the
//! user's settings. Nothing is written or trusted before the person says
//! yes to the text shown.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The tools offered, by name.
pub const OFFERED: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "git", "diff", "file", "stat",
];

/// Where they are looked for: never PATH, which a project's environment
/// could point elsewhere.
const DIRS: &[&str] = &["/usr/bin", "/bin", "/usr/local/bin"];

/// The offered tools found here: (absolute path, lowercase hex SHA-256).
pub fn candidates() -> Vec<(PathBuf, String)> {
    OFFERED
        .iter()
        .filter_map(|name| {
            DIRS.iter()
                .map(|dir| Path::new(dir).join(name))
                .find_map(|path| examined(&path).map(|digest| (path, digest)))
        })
        .collect()
}

/// The digest of `path` when it is a regular file (not a link, in a
/// directory that is not one), owned by root and writable by nobody else.
fn examined(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    if std::fs::symlink_metadata(dir)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.uid() != 0 || meta.mode() & 0o022 != 0 {
        return None;
    }
    crate::tools::gate::sha256(path.to_str()?, meta.len())
}

/// The settings text that trusts `found`.
pub fn toml(found: &[(PathBuf, String)]) -> String {
    found
        .iter()
        .map(|(path, digest)| {
            format!(
                "[[shell_gate.trusted_executables]]\npath = {}\nsha256 = \"{digest}\"\n",
                toml::Value::String(path.display().to_string())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_root_owned_files_nobody_else_writes_are_offered() {
        let found = candidates();
        // This machine has at least ls in a system directory.
        assert!(found.iter().any(|(p, _)| p.ends_with("ls")), "{found:?}");
        for (path, digest) in &found {
            assert!(DIRS.iter().any(|d| path.starts_with(d)), "{path:?}");
            assert_eq!(digest.len(), 64);
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("ls");
        std::fs::write(&mine, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o775)).unwrap();
        assert_eq!(
            examined(&mine),
            None,
            "a file others can write is never offered"
        );
        let link = dir.path().join("cat");
        std::os::unix::fs::symlink(&found[0].0, &link).unwrap();
        assert_eq!(examined(&link), None, "a link is never offered");
        let text = toml(&found[..1]);
        assert!(text.starts_with("[[shell_gate.trusted_executables]]\npath = \""));
    }
}
