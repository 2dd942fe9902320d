//! `mino gate check` and `mino gate hook`: the shell gate as a command and
//! as a PreToolUse hook for other agents (Claude Code's format, or mino's
//! own canonical object). Same settings, same evidence step, same pure
//! classifier as auto mode. It never runs the command.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::agent::build::gate_setup;
use crate::config::Settings;
use crate::policy::shell::{Outcome, Verdict};
use crate::tools::gate::examine;

/// The longest hook event read from stdin.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// The gate's answer as one canonical JSON object: fixed keys in a fixed
/// order, no whitespace.
#[derive(Debug, Serialize)]
struct Canonical<'a> {
    outcome: &'static str,
    code: Option<&'static str>,
    reason: &'a str,
    executable: Option<&'a str>,
    operation: Option<&'a str>,
}

pub fn canonical(verdict: &Verdict) -> String {
    let object = Canonical {
        outcome: verdict.outcome.as_str(),
        code: verdict.code,
        reason: &verdict.reason,
        executable: verdict.executable.as_deref(),
        operation: verdict.operation.as_deref(),
    };
    serde_json::to_string(&object).unwrap_or_default()
}

/// `mino gate check`: the canonical object and the exit status (0 only for
/// `allow-final`).
pub fn check(settings: &Settings, project_dir: &Path, shell: &str, command: &str) -> (String, i32) {
    let verdict = examine(
        shell,
        command,
        &gate_setup(settings, project_dir),
        project_dir,
    );
    let status = i32::from(verdict.outcome != Outcome::AllowFinal);
    (canonical(&verdict), status)
}

/// The answer format of `mino gate hook`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookFormat {
    ClaudeCode,
    Json,
}

/// A PreToolUse event, as far as the gate reads it.
#[derive(Debug, Deserialize)]
struct HookEvent {
    tool_name: String,
    #[serde(default)]
    tool_input: serde_json::Value,
    #[serde(default)]
    cwd: Option<String>,
    /// The event this is; only `PreToolUse` gets a decision.
    #[serde(default)]
    hook_event_name: Option<String>,
}

/// Why a hook event could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error(
        "the hook event on stdin is not a PreToolUse event ({0}); expected a JSON object with tool_name, tool_input.command and cwd"
    )]
    Malformed(String),
    #[error("the hook event is longer than {MAX_EVENT_BYTES} bytes")]
    TooLong,
}

/// `mino gate hook`: the answer to print for one event, or `None` for no
/// decision (another tool, or an unresolved command without
/// `--unresolved ask`).
pub fn hook(
    settings: &Settings,
    event: &str,
    format: HookFormat,
    unresolved_ask: bool,
) -> Result<Option<String>, HookError> {
    if event.len() > MAX_EVENT_BYTES {
        return Err(HookError::TooLong);
    }
    let event: HookEvent =
        serde_json::from_str(event).map_err(|e| HookError::Malformed(e.to_string()))?;
    let event_name = event
        .hook_event_name
        .clone()
        .unwrap_or_else(|| "PreToolUse".to_string());
    if event.tool_name != "Bash" || event_name != "PreToolUse" {
        return Ok(None);
    }
    let Some(command) = event.tool_input.get("command").and_then(|c| c.as_str()) else {
        return Err(HookError::Malformed(
            "tool_input.command is not a string".into(),
        ));
    };
    let cwd = event.cwd.as_deref().unwrap_or(".");
    let verdict = examine(
        "bash",
        command,
        &gate_setup(settings, Path::new(cwd)),
        Path::new(cwd),
    );
    if format == HookFormat::Json {
        return Ok(Some(canonical(&verdict)));
    }
    // No mino sandbox and no redaction stand behind an allow here: a
    // command that could hand out a secret gets no decision.
    let outcome = match verdict.outcome {
        Outcome::AllowFinal if may_hand_out(command, Path::new(cwd), &settings.protected()) => {
            return Ok(None);
        }
        other => other,
    };
    let (decision, reason) = match (outcome, verdict.code) {
        (Outcome::AllowFinal, _) => (
            "allow",
            format!("mino gate: allow-final: {}", verdict.reason),
        ),
        (Outcome::DenyFinal, code) => (
            "deny",
            format!(
                "mino gate: {}: {}",
                code.unwrap_or("AMG_DENY_INTERNAL"),
                verdict.reason
            ),
        ),
        (_, code) if unresolved_ask => (
            "ask",
            format!(
                "mino gate: {}: {}",
                code.unwrap_or("AMG_DENY_INTERNAL"),
                verdict.reason
            ),
        ),
        _ => return Ok(None),
    };
    Ok(Some(
        json!({
            "hookSpecificOutput": {
                "hookEventName": event_name,
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
        .to_string(),
    ))
}

/// The most entries `holds_protected` looks at before it says yes.
const MAX_WALKED: usize = 20_000;

/// Whether `dir` (under `cwd`) holds a protected path, a link (which could
/// lead anywhere) or more entries than are looked at: errs toward yes.
fn holds_protected(dir: &Path, cwd: &Path, protected: &crate::policy::ProtectedPaths) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            return true;
        };
        for entry in entries {
            seen += 1;
            let Ok(entry) = entry else {
                return true;
            };
            let path = entry.path();
            let relative = path
                .strip_prefix(cwd)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Ok(kind) = entry.file_type() else {
                return true;
            };
            if seen > MAX_WALKED
                || relative.is_empty()
                || kind.is_symlink()
                || protected.is_protected(&relative)
            {
                return true;
            }
            if kind.is_dir() {
                stack.push(path);
            }
        }
    }
    false
}

/// Whether a command the gate allows could still hand a secret to another
/// agent with no sandbox behind it: an argument under `/proc`, `/sys` or
/// `/dev`, outside the event's project, or protected; a recursive reader
/// (`grep -r`, `rg`, `find`, `ls -R`, `du`, `tar`) over a directory that
/// holds a protected path (the working directory when it names none),
/// `git grep`, or a pager of history (`git log -p`, `git show`, `git
/// diff`). Errs toward true.
fn may_hand_out(command: &str, cwd: &Path, protected: &crate::policy::ProtectedPaths) -> bool {
    let separators = ["|", "||", "&&", ";", "&", "(", ")", "{", "}"];
    let mut words: Vec<String> = Vec::new();
    let mut name: Option<String> = None;
    for raw in command.split_whitespace() {
        let word = raw.trim_matches(['"', '\'', '`']);
        if separators.contains(&word) {
            name = None;
            continue;
        }
        if name.is_none() {
            let base = word.rsplit('/').next().unwrap_or(word).to_string();
            name = Some(base.clone());
            words.push(format!("\0{base}"));
            continue;
        }
        words.push(word.to_string());
        let expanded = word.starts_with('~') || word.contains('$');
        let absolute = Path::new(word).is_absolute();
        if expanded
            || word.contains("..")
            || ["/proc", "/sys", "/dev"].iter().any(|p| word.contains(p))
            || (absolute && !Path::new(word).starts_with(cwd))
        {
            return true;
        }
        let relative = if absolute {
            Path::new(word)
                .strip_prefix(cwd)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            word.trim_start_matches("./").to_string()
        };
        if !relative.is_empty()
            && (protected.is_protected(&relative) || protected.names_protected(word))
        {
            return true;
        }
    }
    let text = words.join(" ");
    // A recursive reader hands out what the directories it walks hold:
    // those its words name, or the working directory where none is named.
    let walks_a_secret = || {
        let dirs: Vec<std::path::PathBuf> = words
            .iter()
            .filter(|w| !w.starts_with('\0') && !w.starts_with('-'))
            .map(|w| cwd.join(w))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            .collect();
        if dirs.is_empty() {
            return holds_protected(cwd, cwd, protected);
        }
        dirs.iter().any(|d| holds_protected(d, cwd, protected))
    };
    let readers = ["\0rg", "\0find", "\0du", "\0tar", "\0fd", "\0tree"];
    if readers.iter().any(|r| text.split(' ').any(|w| w == *r)) {
        return walks_a_secret();
    }
    let recursive = |flags: &[&str]| {
        text.split(' ').any(|w| {
            flags.contains(&w)
                || (w.starts_with('-')
                    && !w.starts_with("--")
                    && flags.iter().any(|f| f.len() == 2 && w.contains(&f[1..])))
        })
    };
    let has = |name: &str| text.split(' ').any(|w| w == format!("\0{name}"));
    let reads_down = (has("grep")
        && recursive(&["-r", "-R", "--recursive", "--dereference-recursive"]))
        || (has("ls") && recursive(&["-R", "--recursive"]));
    (reads_down && walks_a_secret())
        || (has("git")
            && [
                "grep",
                "log",
                "show",
                "diff",
                "whatchanged",
                "cat-file",
                "archive",
                "bundle",
            ]
            .iter()
            .any(|sub| text.split(' ').any(|w| w == *sub)))
}
