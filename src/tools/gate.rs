//! The shell gate's evidence step: at decision time, what the filesystem
//! says about the trusted executable a command starts with (a stat that
//! follows links, its owner and mode bits, and its SHA-256 when the list
//! gives one to match), handed to the pure classifier as facts. It never
//! decides, never runs the command and never resolves PATH.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::policy::ProtectedPaths;
use crate::policy::shell::{
    Evidence, FileEvidence, REPOSITORY, Rules, Verdict, classify, executable_to_examine,
    repository_to_examine,
};
use crate::tools::git_evidence;

/// The largest executable whose digest is taken.
const MAX_DIGEST_BYTES: u64 = 512 * 1024 * 1024;

/// What the gate runs with, built once from the settings.
#[derive(Debug, Clone)]
pub struct GateSetup {
    pub rules: Rules,
    /// The catastrophic subset asks even in bypass (`[shell_gate] guard_bypass`).
    pub guard_bypass: bool,
}

impl Default for GateSetup {
    fn default() -> Self {
        Self {
            rules: Rules::new(ProtectedPaths::builtin()),
            guard_bypass: true,
        }
    }
}

/// Examines `path` now.
pub fn evidence(path: &str, digest: bool) -> Evidence {
    let file = match std::fs::metadata(path) {
        Err(e) => FileEvidence::Missing { why: e.to_string() },
        Ok(meta) if !meta.is_file() => FileEvidence::NotRegular,
        Ok(meta) => FileEvidence::Regular {
            mode: meta.mode(),
            owner: meta.uid(),
            user: rustix::process::geteuid().as_raw(),
            sha256: if digest {
                sha256(path, meta.len())
            } else {
                None
            },
        },
    };
    Evidence {
        path: path.to_string(),
        file,
        repository: None,
    }
}

/// The lowercase hex SHA-256 of the file at `path` of `len` bytes; `None`
/// past the digest bound or when it cannot be read.
pub fn sha256(path: &str, len: u64) -> Option<String> {
    if len > MAX_DIGEST_BYTES {
        return None;
    }
    let mut file = File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Some(hex::encode(hasher.finalize()))
}

/// Takes the evidence the classifier needs for `command` in `shell`, to
/// run in `cwd`, and classifies it. Blocking: it may read a whole
/// executable, and for git it asks that git (once its own evidence passed)
/// what it reads in the repository, only when the verdict depends on it.
pub fn examine(shell: &str, command: &str, setup: &GateSetup, cwd: &Path) -> Verdict {
    let Some(path) = executable_to_examine(shell, command, &setup.rules) else {
        return classify(shell, command, &setup.rules, None);
    };
    let digest = setup
        .rules
        .trusted
        .iter()
        .any(|t| t.path == path && t.sha256.is_some());
    let mut evidence = evidence(&path, digest);
    let verdict = classify(shell, command, &setup.rules, Some(&evidence));
    if verdict.code != Some(REPOSITORY) || !repository_to_examine(&path) || !evidence.safe_to_run()
    {
        return verdict;
    }
    evidence.repository = Some(git_evidence::repository(&path, cwd));
    classify(shell, command, &setup.rules, Some(&evidence))
}
