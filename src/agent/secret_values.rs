//! The secret values of the project that mino itself reads at start, so
//! every result can be redacted of them: `KEY=VALUE` values of the
//! project's protected env files, the bodies of private-key (PEM) blocks,
//! credentials in the repository's remote URLs, and the same found in the
//! blobs of protected paths anywhere in the repository's history
//! (`history_secrets`: git's own plumbing, bounded, cached by commit).
//! Never a file tool on the model's behalf; never decides.

use std::io::Read;
use std::path::Path;

use crate::policy::ProtectedPaths;

/// The largest file or blob read for values.
const FILE_LIMIT: u64 = 256 * 1024;

/// `(name, value)` pairs: the variable or file a value belongs to, and the
/// value.
pub type Values = Vec<(String, String)>;

/// Every secret value of the project at `root` mino can find; what the
/// history held is cached in `cache` (mino's home) when given.
pub fn project_values(
    root: &Path,
    protected: &ProtectedPaths,
    cache: Option<&super::history_secrets::Cache>,
) -> Values {
    let mut values = Values::new();
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if is_file && protected.is_protected(&name) {
                let mut text = String::new();
                if let Ok(file) = std::fs::File::open(entry.path()) {
                    let _ = file.take(FILE_LIMIT).read_to_string(&mut text);
                }
                values.extend(from_text(&name, &text));
            }
        }
    }
    values.extend(remote_credentials(root));
    values.extend(super::history_secrets::history_values(
        root, protected, cache,
    ));
    values
}

/// The values in one file's text: `KEY=VALUE` lines and PEM block lines.
pub fn from_text(file: &str, text: &str) -> Values {
    let mut values = Values::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("-----BEGIN ") {
            in_block = true;
            continue;
        }
        if line.starts_with("-----END ") {
            in_block = false;
            continue;
        }
        if in_block {
            if !line.contains(':') {
                values.push((format!("a key in {file}"), line.to_string()));
            }
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim().trim_matches(['"', '\'']);
        if !key.is_empty() && !key.starts_with('#') {
            values.push((key.to_string(), value.to_string()));
        }
    }
    values
}

/// The user and password parts of `scheme://user:password@host/...` URLs.
pub fn url_credentials(text: &str) -> Values {
    let mut values = Values::new();
    for word in text.split_whitespace() {
        let Some((_, rest)) = word.split_once("://") else {
            continue;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let Some((userinfo, _)) = authority.rsplit_once('@') else {
            continue;
        };
        for part in userinfo.split(':') {
            values.push(("a credential in a remote URL".to_string(), part.to_string()));
        }
    }
    values
}

fn remote_credentials(root: &Path) -> Values {
    let said = super::history_secrets::git(root, &["config", "--get-regexp", r"^remote\..*\.url$"]);
    said.map(|(text, _)| url_credentials(&text))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_lines_pem_bodies_and_url_credentials_are_values() {
        let values = from_text(
            ".env",
            "# comment\nexport API_TOKEN=\"tok-0123456789\"\nEMPTY=\n-----BEGIN KEY-----\nMIIEabcdefgh\n-----END KEY-----\n",
        );
        assert!(values.contains(&("API_TOKEN".into(), "tok-0123456789".into())));
        assert!(values.contains(&("a key in .env".into(), "MIIEabcdefgh".into())));
        let urls = url_credentials("origin https://bot:ghp_secret123@github.com/x/y.git");
        assert!(urls.iter().any(|(_, v)| v == "ghp_secret123"));
    }
}
