//! The secret values in the blobs of protected paths anywhere in the
//! repository's history, found with git's own plumbing and cached by
//! commit: mino's home keeps, per project, which blobs of which protected
//! paths the history held at which ref tips (`history/KEY.json`: object
//! names and paths only, never a value). A start whose tips are the same
//! reads no history again; one whose tips moved reads only the objects new
//! since (`rev-list --objects --all --not OLD…`); one whose patterns
//! changed reads it whole. Every git command is bounded in time and
//! output; a walk cut off by its bound is used but not kept. Never decides.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::secret_values::{Values, from_text};
use crate::policy::ProtectedPaths;
use crate::small_file::{Links, read_text};

/// The largest blob read for values.
const BLOB_BYTES: u64 = 256 * 1024;
/// The most protected blobs of history read.
const BLOB_LIMIT: usize = 200;
/// How long one git command may take before its answer is given up.
const GIT_TIME: Duration = Duration::from_secs(3);
/// The most bytes of one git command's output read.
const GIT_OUTPUT_LIMIT: u64 = 32 * 1024 * 1024;
/// The largest cache record read.
const RECORD_LIMIT: u64 = 1 << 20;

/// Where the cache lives and what it was made under.
pub struct Cache {
    /// `history/` in mino's home.
    pub dir: PathBuf,
    /// A digest of the protected patterns the blobs were judged by.
    pub patterns: String,
}

impl Cache {
    /// The cache under mino's home `home`, for the user's extra protected
    /// `patterns` (the built-in table is part of the digest too).
    pub fn new(home: &Path, patterns: &[String]) -> Cache {
        use crate::policy::protected::{
            BUILTIN_DIR_PATTERNS, BUILTIN_FILE_PATTERNS, CREDENTIAL_STORE_PATTERNS,
        };
        let mut hasher = Sha256::new();
        let builtin = BUILTIN_FILE_PATTERNS
            .iter()
            .chain(BUILTIN_DIR_PATTERNS.iter())
            .chain(CREDENTIAL_STORE_PATTERNS.iter());
        for pattern in builtin
            .chain([&"--"])
            .map(|p| p.to_string())
            .chain(patterns.iter().cloned())
        {
            hasher.update(pattern.as_bytes());
            hasher.update(b"\n");
        }
        Cache {
            dir: home.join("history"),
            patterns: hex::encode(hasher.finalize()),
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    patterns: String,
    /// The ref tips the walk covered, sorted.
    tips: Vec<String>,
    /// `(object, path)` of every protected blob found, in the order found.
    blobs: Vec<(String, String)>,
}

/// The values in protected paths' blobs anywhere in `root`'s history.
pub fn history_values(root: &Path, protected: &ProtectedPaths, cache: Option<&Cache>) -> Values {
    let Some(tips) = tips(root) else {
        return Values::new();
    };
    let path = cache.map(|c| {
        c.dir.join(format!(
            "{}.json",
            crate::checkpoint::store::project_key(root)
        ))
    });
    let before: Option<Record> = path
        .as_ref()
        .and_then(|p| read_text(p, RECORD_LIMIT, Links::Refuse).ok().flatten())
        .and_then(|text| serde_json::from_str(&text).ok())
        .filter(|r: &Record| cache.is_some_and(|c| c.patterns == r.patterns));
    let (blobs, complete) = match before {
        Some(before) if before.tips == tips => (before.blobs, false),
        Some(before) => {
            let mut args = vec!["rev-list", "--objects", "--all", "--not"];
            args.extend(before.tips.iter().map(String::as_str));
            match git(root, &args) {
                // An old tip gone (a rewritten history): the walk is whole.
                None => walk(root, protected, Vec::new()),
                Some((listed, complete)) => (merge(before.blobs, &listed, protected), complete),
            }
        }
        None => walk(root, protected, Vec::new()),
    };
    if complete && let (Some(cache), Some(path)) = (cache, &path) {
        let record = Record {
            patterns: cache.patterns.clone(),
            tips,
            blobs: blobs.clone(),
        };
        if let Err(e) = write(&cache.dir, path, &record) {
            tracing::warn!(error = %e, path = %path.display(), "the history cache could not be written");
        }
    }
    let mut values = Values::new();
    for (sha, path) in blobs {
        let Some((size, _)) = git(root, &["cat-file", "-s", &sha]) else {
            continue;
        };
        if size.trim().parse::<u64>().map_or(true, |n| n > BLOB_BYTES) {
            continue;
        }
        if let Some((text, _)) = git(root, &["cat-file", "blob", &sha]) {
            values.extend(from_text(&path, &text));
        }
    }
    values
}

/// The whole history's protected blobs after `known`, and whether the
/// walk was whole.
fn walk(
    root: &Path,
    protected: &ProtectedPaths,
    known: Vec<(String, String)>,
) -> (Vec<(String, String)>, bool) {
    match git(root, &["rev-list", "--all", "--objects"]) {
        Some((listed, complete)) => (merge(known, &listed, protected), complete),
        None => (known, false),
    }
}

/// `known` and the protected blobs of `listed` (`rev-list --objects`
/// lines), at most `BLOB_LIMIT`, each object once.
fn merge(
    mut known: Vec<(String, String)>,
    listed: &str,
    protected: &ProtectedPaths,
) -> Vec<(String, String)> {
    for line in listed.lines() {
        if known.len() >= BLOB_LIMIT {
            break;
        }
        let Some((sha, path)) = line.split_once(' ') else {
            continue;
        };
        if protected.is_protected(path) && !known.iter().any(|(s, _)| s == sha) {
            known.push((sha.to_string(), path.to_string()));
        }
    }
    known
}

/// Every ref's tip and HEAD, sorted and each once; `None` outside a
/// repository.
fn tips(root: &Path) -> Option<Vec<String>> {
    let (refs, _) = git(root, &["for-each-ref", "--format=%(objectname)"])?;
    let mut tips: Vec<String> = refs.lines().map(str::to_string).collect();
    if let Some((head, _)) = git(root, &["rev-parse", "--verify", "-q", "HEAD"]) {
        tips.extend(head.lines().map(str::to_string));
    }
    tips.sort();
    tips.dedup();
    Some(tips)
}

/// Runs git in `root`: what it printed and whether it finished within
/// `GIT_TIME` and `GIT_OUTPUT_LIMIT`; `None` when it could not start or
/// failed.
pub fn git(root: &Path, args: &[&str]) -> Option<(String, bool)> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.take(GIT_OUTPUT_LIMIT).read_to_end(&mut text);
        let _ = tx.send(text);
    });
    let Ok(said) = rx.recv_timeout(GIT_TIME) else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let whole = (said.len() as u64) < GIT_OUTPUT_LIMIT;
    if !whole {
        // Cut off at the limit: git may be blocked on its next write.
        let _ = child.kill();
        let _ = child.wait();
        return Some((String::from_utf8_lossy(&said).into_owned(), false));
    }
    // Its output ended: git is exiting, and says how it went.
    let status = child.wait().ok()?;
    status
        .success()
        .then(|| (String::from_utf8_lossy(&said).into_owned(), true))
}

fn write(dir: &Path, path: &Path, record: &Record) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let text = serde_json::to_string(record).map_err(std::io::Error::other)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".history.")
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn run(root: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn commit_env(root: &Path, value: &str) {
        std::fs::write(root.join(".env"), format!("TOKEN={value}\n")).unwrap();
        run(root, &["add", "-f", ".env"]);
        run(root, &["commit", "-qm", value]);
    }

    fn has(values: &Values, value: &str) -> bool {
        values.iter().any(|(_, v)| v == value)
    }

    fn record(cache: &Cache, root: &Path) -> Record {
        let path = cache.dir.join(format!(
            "{}.json",
            crate::checkpoint::store::project_key(root)
        ));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn the_cache_keeps_object_names_only_and_a_moved_tip_reads_only_what_is_new() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = repo.path();
        run(root, &["init", "-q"]);
        commit_env(root, "first-secret-0001");
        let protected = ProtectedPaths::builtin();
        let cache = Cache::new(home.path(), &[]);
        let values = history_values(root, &protected, Some(&cache));
        assert!(has(&values, "first-secret-0001"), "{values:?}");
        let kept = record(&cache, root);
        assert_eq!(kept.blobs.len(), 1);
        let text = serde_json::to_string(&kept).unwrap();
        assert!(!text.contains("first-secret-0001"), "{text}");
        // Same tips: the cached list is used as it stands.
        assert!(has(
            &history_values(root, &protected, Some(&cache)),
            "first-secret-0001"
        ));
        // A new commit: its blob joins the old one.
        commit_env(root, "second-secret-0002");
        let values = history_values(root, &protected, Some(&cache));
        assert!(has(&values, "first-secret-0001") && has(&values, "second-secret-0002"));
        assert_eq!(record(&cache, root).blobs.len(), 2);
        // Other patterns: the history is read whole again under them.
        let other = Cache::new(home.path(), &["*.secret".to_string()]);
        assert!(has(
            &history_values(root, &protected, Some(&other)),
            "second-secret-0002"
        ));
        assert_eq!(record(&other, root).patterns, other.patterns);
    }

    #[test]
    fn a_rewritten_history_is_walked_whole_and_outside_a_repository_nothing_is_read() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = repo.path();
        run(root, &["init", "-q"]);
        commit_env(root, "kept-secret-0003");
        let protected = ProtectedPaths::builtin();
        let cache = Cache::new(home.path(), &[]);
        history_values(root, &protected, Some(&cache));
        // A cache naming a tip that no longer exists.
        let path = cache.dir.join(format!(
            "{}.json",
            crate::checkpoint::store::project_key(root)
        ));
        let stale = Record {
            patterns: cache.patterns.clone(),
            tips: vec!["0".repeat(40)],
            blobs: Vec::new(),
        };
        std::fs::write(&path, serde_json::to_string(&stale).unwrap()).unwrap();
        assert!(has(
            &history_values(root, &protected, Some(&cache)),
            "kept-secret-0003"
        ));
        let plain = tempfile::tempdir().unwrap();
        assert!(history_values(plain.path(), &protected, Some(&cache)).is_empty());
    }
}
