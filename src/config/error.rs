//! The one settings error. Every variant that comes from a file names the
//! file, the dotted key, the 1-based line and what is accepted, so a person
//! can fix it without reading the code. Never decides what is valid:
//! `validate.rs` and `project.rs` do.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::small_file::SmallFileError;

/// Why settings could not be loaded. Nothing starts while one is pending.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read settings file {}: {source}", file.display())]
    Unreadable {
        file: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file is a link where none is followed, not a regular file, too
    /// large, or not text.
    #[error("settings file: {0}")]
    File(#[from] SmallFileError),
    /// The file is not TOML.
    #[error(
        "{}:{line}:{column}: {key}: TOML syntax error: {message}; accepted: a TOML document (https://toml.io)",
        file.display()
    )]
    Syntax {
        file: PathBuf,
        line: usize,
        column: usize,
        key: KeyPath,
        message: String,
    },
    /// An unknown key, a wrong type or a bad value.
    #[error("{}:{line}: {key}: {problem}; accepted: {accepted}", file.display())]
    Invalid {
        file: PathBuf,
        line: usize,
        key: KeyPath,
        problem: String,
        accepted: String,
    },
    /// A project file tried to loosen what the user's settings allow.
    #[error(
        "{}:{line}: a project's settings can only tighten: {key} {reason}",
        file.display()
    )]
    Loosening {
        file: PathBuf,
        line: usize,
        key: KeyPath,
        reason: String,
    },
    /// An environment variable with a value mino does not accept.
    #[error("environment variable {variable}={value:?} is not accepted; accepted: {accepted}")]
    Environment {
        variable: &'static str,
        value: String,
        accepted: &'static str,
    },
    /// A command-line override with a value mino does not accept.
    #[error("command line {flag} {value:?}: {problem}; accepted: {accepted}")]
    CommandLine {
        flag: &'static str,
        value: String,
        problem: String,
        accepted: String,
    },
}

impl ConfigError {
    /// The settings file the error is in, when it comes from one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ConfigError::Unreadable { file, .. }
            | ConfigError::Syntax { file, .. }
            | ConfigError::Invalid { file, .. }
            | ConfigError::Loosening { file, .. } => Some(file),
            ConfigError::File(e) => Some(e.path()),
            ConfigError::Environment { .. } | ConfigError::CommandLine { .. } => None,
        }
    }

    /// The 1-based line, when the error points into a file.
    pub fn line(&self) -> Option<usize> {
        match self {
            ConfigError::Syntax { line, .. }
            | ConfigError::Invalid { line, .. }
            | ConfigError::Loosening { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The dotted key, when the error points into a file.
    pub fn key(&self) -> Option<&KeyPath> {
        match self {
            ConfigError::Syntax { key, .. }
            | ConfigError::Invalid { key, .. }
            | ConfigError::Loosening { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A dotted key path such as `model.provider` or `protected.patterns[2]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Segment>);

impl KeyPath {
    /// A path of plain keys.
    pub fn of(keys: &[&str]) -> Self {
        KeyPath(
            keys.iter()
                .map(|k| Segment::Key((*k).to_string()))
                .collect(),
        )
    }

    /// This path with one more key.
    pub fn key(&self, key: &str) -> Self {
        let mut path = self.0.clone();
        path.push(Segment::Key(key.to_string()));
        KeyPath(path)
    }

    /// This path with an array index.
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.0.clone();
        path.push(Segment::Index(index));
        KeyPath(path)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Keys made of letters, digits, `-` and `_` print bare; others quoted, as
/// TOML would write them.
fn is_bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    if is_bare(key) {
                        f.write_str(key)?;
                    } else {
                        write!(f, "{key:?}")?;
                    }
                }
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn key_paths_print_like_toml() {
        assert_eq!(
            KeyPath::of(&["model", "provider"]).to_string(),
            "model.provider"
        );
        assert_eq!(
            KeyPath::of(&["protected", "patterns"]).index(2).to_string(),
            "protected.patterns[2]"
        );
        assert_eq!(
            KeyPath::of(&["mcp", "servers", "my server"]).to_string(),
            "mcp.servers.\"my server\""
        );
        assert_eq!(KeyPath::default().to_string(), "(top level)");
    }
}
