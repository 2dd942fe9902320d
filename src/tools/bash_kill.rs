//! `bash_kill`: stops a background process of this session with
//! everything it started (through its guard, like a timed-out bash call)
//! and hands back what it printed since the last read. Its own call kind:
//! asks in manual like bash, runs shown in the looser modes. Offered only
//! while a background process exists. Never decides.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::bash::Shells;
use super::bash_output::{id_parameters, parse_id};
use super::{BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec};
use crate::policy::{CallFacts, CallKind, ToolKey};

/// The tool's name, as the model calls it.
pub const NAME: &str = "bash_kill";

/// Stops a background process.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashKill;

impl Tool for BashKill {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Stops a background process (started with bash and `background: \
                true`) and everything it started, and returns its last output."
                .into(),
            parameters: id_parameters("The background process's id, as bash returned it."),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let id = parse_id(NAME, args, &cx.shells)?;
        let command = cx
            .shells
            .get(id)
            .map(|b| b.command.clone())
            .unwrap_or_default();
        let mut facts = CallFacts::new(ToolKey::new(NAME), CallKind::ShellKill);
        facts.command = Some(command.clone());
        Ok(Box::new(KillCall {
            facts,
            id,
            command,
            shells: cx.shells.clone(),
        }))
    }
}

struct KillCall {
    facts: CallFacts,
    id: u32,
    command: String,
    shells: Arc<Shells>,
}

impl PreparedCall for KillCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        vec![
            Field::text("Background process", self.id.to_string()),
            Field::text("Command", self.command.clone()),
        ]
    }

    fn run(self: Box<Self>, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            match self.shells.kill(self.id).await {
                Some(text) => ToolOutcome::completed(text),
                None => ToolOutcome::error(format!(
                    "Background process {} is gone (stopped, or the session ended).",
                    self.id
                )),
            }
        })
    }
}
