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
    if event.tool_name != "Bash" {
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
    let (decision, reason) = match (verdict.outcome, verdict.code) {
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
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
        .to_string(),
    ))
}
