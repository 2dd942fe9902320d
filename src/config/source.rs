//! One settings file as read: its path, its TOML document (kept for the
//! spans that error lines come from) and its raw serde structs. Owns turning
//! syntax and serde errors into `ConfigError`s; never validates a value.

use std::path::{Path, PathBuf};

use toml_edit::Document;

use super::error::{ConfigError, KeyPath};
use super::locate::{key_at, key_near, line_column, line_of};
use super::raw::RawFile;
use crate::small_file::{Links, SETTINGS_LIMIT, read_text};

/// A settings file that exists and parses.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub doc: Document<String>,
    pub raw: RawFile,
}

impl SourceFile {
    /// Reads `path`: a regular file of at most 1 MiB, opened without
    /// blocking and, with `Links::Refuse` (a project's file), without
    /// following a final link. A missing file is `None`; anything else that
    /// is not such a file, or is not valid TOML or has unknown keys or wrong
    /// types, is an error naming it.
    pub fn read(path: &Path, links: Links) -> Result<Option<SourceFile>, ConfigError> {
        match read_text(path, SETTINGS_LIMIT, links)? {
            Some(text) => Self::parse(path, text).map(Some),
            None => Ok(None),
        }
    }

    /// Parses `text` as the contents of `path`.
    pub fn parse(path: &Path, text: String) -> Result<SourceFile, ConfigError> {
        let doc = match Document::parse(text.clone()) {
            Ok(doc) => doc,
            Err(e) => {
                let offset = e.span().map_or(0, |span| span.start);
                let (line, column) = line_column(&text, offset);
                return Err(ConfigError::Syntax {
                    file: path.to_path_buf(),
                    line,
                    column,
                    key: key_near(&text, line),
                    message: e.message().trim().replace('\n', "; "),
                });
            }
        };
        let raw = match toml::from_str::<RawFile>(doc.raw()) {
            Ok(raw) => raw,
            Err(e) => {
                let key = e
                    .span()
                    .map(|span| key_at(&doc, span.start))
                    .unwrap_or_default();
                let (problem, accepted) = explain_serde(e.message());
                let line = e.span().map_or_else(
                    || line_of(&doc, &key),
                    |span| line_column(doc.raw(), span.start).0,
                );
                return Err(ConfigError::Invalid {
                    file: path.to_path_buf(),
                    line,
                    key,
                    problem,
                    accepted,
                });
            }
        };
        Ok(SourceFile {
            path: path.to_path_buf(),
            doc,
            raw,
        })
    }

    /// The directory relative paths in this file are resolved against.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or_else(|| Path::new("."))
    }

    /// The line `key` (or its nearest written parent) is on.
    pub fn line(&self, key: &KeyPath) -> usize {
        line_of(&self.doc, key)
    }

    /// A bad value at `key`.
    pub fn invalid(
        &self,
        key: KeyPath,
        problem: impl Into<String>,
        accepted: impl Into<String>,
    ) -> ConfigError {
        ConfigError::Invalid {
            file: self.path.clone(),
            line: self.line(&key),
            key,
            problem: problem.into(),
            accepted: accepted.into(),
        }
    }

    /// A project file's attempt to loosen, at `key`.
    pub fn loosening(&self, key: KeyPath, reason: impl Into<String>) -> ConfigError {
        ConfigError::Loosening {
            file: self.path.clone(),
            line: self.line(&key),
            key,
            reason: reason.into(),
        }
    }
}

/// Splits a serde message into what is wrong and what is accepted, in the
/// words a settings file uses (key, table, integer) rather than Rust's.
fn explain_serde(message: &str) -> (String, String) {
    let message = message.trim();
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (name, expected) = match rest.split_once(", expected ") {
            Some((name, expected)) => match expected.strip_prefix("one of ") {
                Some(keys) => (name, format!("one of the keys {keys}")),
                None => (name, format!("the key {expected}")),
            },
            None => (
                rest.split(',').next().unwrap_or(rest),
                "no keys here".to_string(),
            ),
        };
        return (format!("unknown key {name}"), expected);
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        return (
            format!("missing key {rest}"),
            format!("a table that sets {rest}"),
        );
    }
    match message.rsplit_once(", expected ") {
        Some((problem, expected)) => (problem.to_string(), friendly_type(expected)),
        None => (message.to_string(), "see config.example.toml".to_string()),
    }
}

fn friendly_type(expected: &str) -> String {
    let expected = expected.trim();
    match expected {
        "i64" | "u64" | "i32" | "u32" | "an integer" => "an integer".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        "a string" => "a string".to_string(),
        "a sequence" => "an array".to_string(),
        "a map" => "a table".to_string(),
        other if other.starts_with("struct ") => "a table".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_become_settings_words() {
        let (problem, accepted) = explain_serde("unknown field `modle`, expected `a` or `b`");
        assert_eq!(problem, "unknown key `modle`");
        assert_eq!(accepted, "the key `a` or `b`");
        let (_, accepted) = explain_serde("unknown field `x`, expected one of `a`, `b`, `c`");
        assert_eq!(accepted, "one of the keys `a`, `b`, `c`");
        let (problem, accepted) = explain_serde("invalid type: string \"big\", expected i64");
        assert_eq!(problem, "invalid type: string \"big\"");
        assert_eq!(accepted, "an integer");
    }
}
