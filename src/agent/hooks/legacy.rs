//! The deprecated `[hooks] pre_tool_call` argv in mino's own format: a
//! command that sees each prepared call as JSON on stdin and answers with
//! its exit status (0 continue, anything else deny; stderr is the reason).
//! Only the user's own settings name one. It fails closed: a hook that
//! cannot run, or runs too long, denies. Claude Code's format is `mod.rs`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::policy::{CallFacts, CallKind, HookVerdict, PathTarget};

/// How long the legacy hook may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A configured hook command.
#[derive(Debug, Clone)]
pub struct Hook {
    pub argv: Vec<String>,
    pub timeout: Duration,
}

fn kind_name(kind: &CallKind) -> &'static str {
    match kind {
        CallKind::ConfinedRead => "read",
        CallKind::FileWrite => "write",
        CallKind::PlanChange => "plan",
        CallKind::SurfaceWrite { .. } => "write_surface",
        CallKind::Shell => "shell",
        CallKind::UnsandboxedShell { .. } => "shell_unsandboxed",
        CallKind::ShellKill => "shell_kill",
        CallKind::Fetch => "fetch",
        CallKind::FetchPrivate => "fetch_private",
        CallKind::Mcp { .. } => "mcp",
    }
}

impl Hook {
    /// Runs the hook for one call.
    pub async fn check(&self, tool: &str, args: &Value, facts: &CallFacts) -> HookVerdict {
        let paths: Vec<&str> = facts
            .targets
            .iter()
            .map(|t| match t {
                PathTarget::Inside { relative, .. } => relative.as_str(),
                PathTarget::Outside { given } => given.as_str(),
            })
            .collect();
        let input = json!({
            "event": "preToolCall",
            "tool": tool,
            "agent_tool_key": facts.tool.as_str(),
            "kind": kind_name(&facts.kind),
            "arguments": args,
            "paths": paths,
        });
        match tokio::time::timeout(self.timeout, self.run(input.to_string())).await {
            Ok(Ok(verdict)) => verdict,
            Ok(Err(e)) => HookVerdict::Deny {
                reason: format!("the hook {} could not run: {e}", self.name()),
            },
            Err(_) => HookVerdict::Deny {
                reason: format!(
                    "the hook {} did not answer within {} s",
                    self.name(),
                    self.timeout.as_secs()
                ),
            },
        }
    }

    fn name(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    async fn run(&self, input: String) -> std::io::Result<HookVerdict> {
        let Some((program, args)) = self.argv.split_first() else {
            return Ok(HookVerdict::Deny {
                reason: "the hook command is empty".into(),
            });
        };
        let mut command = tokio::process::Command::new(program);
        // mino's own variables are no hook's business.
        for name in crate::home::own_variables() {
            command.env_remove(name);
        }
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input still gets to answer.
            let _ = stdin.write_all(input.as_bytes()).await;
        }
        let mut stderr = String::new();
        if let Some(mut err) = child.stderr.take() {
            let mut buf = Vec::new();
            let _ = (&mut err).take(4096).read_to_end(&mut buf).await;
            stderr = String::from_utf8_lossy(&buf).trim().to_string();
        }
        let status = child.wait().await?;
        Ok(if status.success() {
            HookVerdict::Continue
        } else if stderr.is_empty() {
            HookVerdict::Deny {
                reason: format!("the hook {} exited with {status}", self.name()),
            }
        } else {
            HookVerdict::Deny { reason: stderr }
        })
    }
}
