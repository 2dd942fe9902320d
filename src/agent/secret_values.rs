//! The secret values of the project that mino itself reads at start, so
//! every result can be redacted of them: `KEY=VALUE` values of the
//! project's protected env files, the bodies of private-key (PEM) blocks,
//! credentials in the repository's remote URLs, and the same found in the
//! blobs of protected paths anywhere in the repository's history (git's own
//! plumbing, bounded in time and size). Never a file tool on the model's
//! behalf; never decides.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::policy::ProtectedPaths;

/// The largest file or blob read for values.
const FILE_LIMIT: u64 = 256 * 1024;
/// The most protected blobs of history read.
const BLOB_LIMIT: usize = 200;
/// How long one git command may take before its answer is given up.
const GIT_TIME: Duration = Duration::from_secs(3);
/// The most bytes of one git command's output read.
const GIT_OUTPUT_LIMIT: u64 = 32 * 1024 * 1024;

/// `(name, value)` pairs: the variable or file a value belongs to, and the
/// value.
pub type Values = Vec<(String, String)>;

/// Every secret value of the project at `root` mino can find.
pub fn project_values(root: &Path, protected: &ProtectedPaths) -> Values {
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
    values.extend(history_values(root, protected));
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
    let said = git(root, &["config", "--get-regexp", r"^remote\..*\.url$"]);
    url_credentials(&said)
}

/// The values in protected paths' blobs anywhere in history.
fn history_values(root: &Path, protected: &ProtectedPaths) -> Values {
    let objects = git(root, &["rev-list", "--all", "--objects"]);
    let mut blobs: Vec<(String, String)> = Vec::new();
    for line in objects.lines() {
        let Some((sha, path)) = line.split_once(' ') else {
            continue;
        };
        if protected.is_protected(path) && !blobs.iter().any(|(s, _)| s == sha) {
            blobs.push((sha.to_string(), path.to_string()));
            if blobs.len() >= BLOB_LIMIT {
                break;
            }
        }
    }
    let mut values = Values::new();
    for (sha, path) in blobs {
        let size = git(root, &["cat-file", "-s", &sha]);
        if size.trim().parse::<u64>().map_or(true, |n| n > FILE_LIMIT) {
            continue;
        }
        let text = git(root, &["cat-file", "blob", &sha]);
        values.extend(from_text(&path, &text));
    }
    values
}

/// Runs git in `root` and returns what it printed, or nothing when it
/// failed or took longer than `GIT_TIME`.
fn git(root: &Path, args: &[&str]) -> String {
    let child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return String::new();
    };
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return String::new();
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.take(GIT_OUTPUT_LIMIT).read_to_end(&mut text);
        let _ = tx.send(text);
    });
    let said = rx.recv_timeout(GIT_TIME).unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    String::from_utf8_lossy(&said).into_owned()
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
