//! mino's home: the one directory that holds `config.toml`, `sessions/`,
//! `logs/`, `SOUL.md` and the audit log (DESIGN section 8), and the private
//! file and directory modes (0600, 0700) everything under it is created
//! with. Never reads or writes what the files contain.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// The variable that overrides where the home is.
pub const MINO_HOME: &str = "MINO_HOME";

/// Why the home could not be found or made.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    #[error("no home directory for mino: set {MINO_HOME} to an absolute path")]
    NoPlatformDirectory,
    #[error("{MINO_HOME} is set but empty; accepted: a directory path")]
    Empty,
    #[error("cannot make {MINO_HOME}={} absolute: {source}", path.display())]
    NotAbsolute {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} exists but is not a directory", path.display())]
    NotADirectory { path: PathBuf },
}

/// mino's home directory. Always absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

/// The names of mino's own variables in this process's environment
/// (`MINO_HOME`, `MINO_LOG`, any `MINO_*`): a child that is not mino (an MCP
/// server, a hook) never needs them, and they say where mino keeps its
/// settings, sessions and audit log.
pub fn own_variables() -> Vec<OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.as_encoded_bytes().starts_with(b"MINO_"))
        .collect()
}

impl Home {
    /// `MINO_HOME` if set, else the platform's configuration directory for
    /// mino (`~/.config/mino` on Linux).
    pub fn resolve() -> Result<Home, HomeError> {
        Self::resolve_from(std::env::var_os(MINO_HOME))
    }

    /// As `resolve`, given the value of `MINO_HOME`.
    pub fn resolve_from(mino_home: Option<OsString>) -> Result<Home, HomeError> {
        match mino_home {
            Some(value) if value.is_empty() => Err(HomeError::Empty),
            Some(value) => Self::at(value),
            None => directories::ProjectDirs::from("", "", "mino")
                .map(|dirs| Home {
                    root: dirs.config_dir().to_path_buf(),
                })
                .ok_or(HomeError::NoPlatformDirectory),
        }
    }

    /// A home at `root`, made absolute against the current directory.
    pub fn at(root: impl Into<PathBuf>) -> Result<Home, HomeError> {
        let root = root.into();
        let absolute = std::path::absolute(&root).map_err(|source| HomeError::NotAbsolute {
            path: root.clone(),
            source,
        })?;
        Ok(Home { root: absolute })
    }

    /// Creates the home, `sessions/` and `logs/` (0700 each), and takes
    /// group and other access away from them if they already existed.
    pub fn ensure(&self) -> Result<(), HomeError> {
        for dir in [self.root.clone(), self.sessions_dir(), self.logs_dir()] {
            create_private_dir(&dir)?;
        }
        Ok(())
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user's settings file.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// One `ID.jsonl` per session.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The user's standing instructions to the model.
    pub fn soul_file(&self) -> PathBuf {
        self.root.join("SOUL.md")
    }

    /// One decision a line.
    pub fn audit_log(&self) -> PathBuf {
        self.root.join("audit.jsonl")
    }

    /// What mino last loaded of each project's instructions and skills.
    pub fn instructions_dir(&self) -> PathBuf {
        self.root.join("instructions")
    }
}

/// Creates `dir` (and its parents) with mode 0700, and states that mode on
/// one that existed.
pub fn create_private_dir(dir: &Path) -> Result<(), HomeError> {
    let err = |source| HomeError::Create {
        path: dir.to_path_buf(),
        source,
    };
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(err)?;
    let meta = fs::metadata(dir).map_err(err)?;
    if !meta.is_dir() {
        return Err(HomeError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The umask may have taken bits away at creation, and an older
        // directory may be open to others: state the mode outright.
        if meta.permissions().mode() & 0o777 != 0o700 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(err)?;
        }
    }
    Ok(())
}

/// Opens `path` for appending, creating it with mode 0600 if it is missing
/// and taking group and other access away if it already existed. Refuses a
/// symbolic link in the last component, so a planted link cannot redirect
/// a session or a log.
pub fn create_private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let no_follow = rustix::fs::OFlags::NOFOLLOW.bits();
        options
            .mode(0o600)
            .custom_flags(i32::try_from(no_follow).unwrap_or(0));
        let file = options.open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            )));
        }
        if meta.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        options.open(path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn mino_home_wins_and_is_made_absolute() {
        let home = Home::resolve_from(Some("relative/home".into())).unwrap();
        assert!(home.root().is_absolute());
        assert!(home.root().ends_with("relative/home"));
        let home = Home::resolve_from(Some("/tmp/mino-home".into())).unwrap();
        assert_eq!(home.config_file(), Path::new("/tmp/mino-home/config.toml"));
        assert!(matches!(
            Home::resolve_from(Some("".into())),
            Err(HomeError::Empty)
        ));
    }

    #[test]
    fn accessors_name_the_files_of_the_design() {
        let home = Home::at("/h").unwrap();
        assert_eq!(home.sessions_dir(), Path::new("/h/sessions"));
        assert_eq!(home.logs_dir(), Path::new("/h/logs"));
        assert_eq!(home.soul_file(), Path::new("/h/SOUL.md"));
        assert_eq!(home.audit_log(), Path::new("/h/audit.jsonl"));
    }
}
