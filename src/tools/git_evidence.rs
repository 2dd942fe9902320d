//! The shell gate's evidence about a repository, and the environment an
//! allowed git request runs with. The evidence is what the trusted git
//! itself reads where the command will run: its configuration with each
//! entry's scope (`.git` files pointing elsewhere, worktrees and includes
//! resolved by git, not guessed), whether its index records a submodule,
//! and whether its hooks hold `post-index-change`. It runs only that git,
//! only with fixed read-only arguments, with the hardened environment, a
//! deadline and capped output, and never decides anything.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::policy::shell::repository::{GIT_CONFIG_OVERRIDES, GIT_ENV};
use crate::policy::shell::{ConfigEntry, RepositoryEvidence};

/// How long each git asked for evidence may take.
const DEADLINE: Duration = Duration::from_secs(5);

/// The most configuration read, in bytes.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The environment an allowed git request runs with: `GIT_ENV`, and
/// `GIT_CONFIG_OVERRIDES` appended after any `GIT_CONFIG_COUNT` entries
/// mino's own environment carries (later entries win).
pub fn hardening_env() -> Vec<(String, String)> {
    hardening_env_with(true)
}

fn hardening_env_with(hooks_off: bool) -> Vec<(String, String)> {
    let base = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let overrides: Vec<&(&str, &str)> = GIT_CONFIG_OVERRIDES
        .iter()
        .filter(|(key, _)| hooks_off || *key != "core.hooksPath")
        .collect();
    let mut env: Vec<(String, String)> = GIT_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.push((
        "GIT_CONFIG_COUNT".into(),
        (base + overrides.len()).to_string(),
    ));
    for (i, (key, value)) in overrides.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{}", base + i), key.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{}", base + i), value.to_string()));
    }
    env
}

/// Asks `git` (an executable whose evidence already passed) what it reads
/// in `cwd`.
pub fn repository(git: &str, cwd: &Path) -> RepositoryEvidence {
    match read_repository(git, cwd) {
        Ok(evidence) => evidence,
        Err(why) => RepositoryEvidence::Unreadable { why },
    }
}

fn read_repository(git: &str, cwd: &Path) -> Result<RepositoryEvidence, String> {
    let config = run(
        git,
        cwd,
        &["config", "--list", "--show-scope", "-z"],
        |out| {
            let mut bytes = Vec::new();
            out.take(MAX_CONFIG_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| e.to_string())?;
            if bytes.len() as u64 > MAX_CONFIG_BYTES {
                return Err(format!(
                    "its configuration is over {MAX_CONFIG_BYTES} bytes"
                ));
            }
            Ok(parse_config(&bytes))
        },
    )?;
    let submodules = run(git, cwd, &["ls-files", "--stage", "-z"], |out| {
        // Streamed: a large index is read, never held.
        for entry in BufReader::new(out).split(0) {
            if entry.map_err(|e| e.to_string())?.starts_with(b"160000 ") {
                return Ok(true);
            }
        }
        Ok(false)
    })?;
    let hook = run(
        git,
        cwd,
        &["rev-parse", "--git-path", "hooks/post-index-change"],
        |mut out| {
            let mut text = String::new();
            out.read_to_string(&mut text).map_err(|e| e.to_string())?;
            Ok(text.trim_end_matches('\n').to_string())
        },
    )?;
    Ok(RepositoryEvidence::Read {
        config,
        submodules,
        index_hook: cwd.join(hook).exists(),
    })
}

/// `scope\0key\nvalue\0` entries (`scope\0key\0` without a value).
fn parse_config(bytes: &[u8]) -> Vec<ConfigEntry> {
    let text = String::from_utf8_lossy(bytes);
    let mut parts = text.split('\0');
    let mut entries = Vec::new();
    while let (Some(scope), Some(pair)) = (parts.next(), parts.next()) {
        let (key, value) = match pair.split_once('\n') {
            Some((key, value)) => (key, Some(value.to_string())),
            None => (pair, None),
        };
        entries.push(ConfigEntry {
            scope: scope.to_string(),
            key: key.to_string(),
            value,
        });
    }
    entries
}

/// Runs `git ARGS` in `cwd` with the hardened environment (hooks left
/// where the repository puts them, so `rev-parse` finds them), hands its
/// output to `read` on a thread of its own, and waits at most `DEADLINE`.
fn run<T: Send + 'static>(
    git: &str,
    cwd: &Path,
    args: &[&str],
    read: impl FnOnce(ChildStdout) -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let mut child = Command::new(git)
        .args(args)
        .current_dir(cwd)
        .envs(hardening_env_with(false))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{git} {} could not start: {e}", args[0]))?;
    let Some(out) = child.stdout.take() else {
        stop(&mut child);
        return Err(format!("{git} {} gave no output pipe", args[0]));
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read(out));
    });
    let result = match rx.recv_timeout(DEADLINE) {
        Ok(result) => result,
        Err(_) => {
            stop(&mut child);
            return Err(format!(
                "{git} {} did not finish within {} seconds",
                args[0],
                DEADLINE.as_secs()
            ));
        }
    };
    // The output was read to its end (or to what was needed): the rest is
    // of no interest, so the child is stopped rather than waited for.
    let status = match child.try_wait() {
        Ok(Some(status)) => status,
        _ => {
            let waited = wait_briefly(&mut child);
            match waited {
                Some(status) => status,
                None => {
                    stop(&mut child);
                    return result;
                }
            }
        }
    };
    if !status.success() {
        return Err(format!("{git} {} failed ({status})", args[0]));
    }
    result
}

fn wait_briefly(child: &mut Child) -> Option<std::process::ExitStatus> {
    for _ in 0..50 {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
