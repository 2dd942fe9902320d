//! `bash_kill`: stops a background process of this session with
//! everything it started (through its guard, like a timed-out bash call)
//! and hands back what it printed since the last read. Its own call kind:
//! asks in manual like bash, runs shown in the looser modes. Offered only
//! while a background process exists. Never decides.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::bash_output::{Target, id_parameters, parse_id};
use super::{BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec};
use crate::policy::{CallFacts, CallKind};

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
        Ok(Box::new(KillCall(Target::new(
            NAME,
            CallKind::ShellKill,
            id,
            cx,
        ))))
    }
}

struct KillCall(Target);

impl PreparedCall for KillCall {
    fn facts(&self) -> &CallFacts {
        &self.0.facts
    }

    fn fields(&self) -> Vec<Field> {
        self.0.fields()
    }

    fn run(self: Box<Self>, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let target = &self.0;
            match target.shells.kill(target.id).await {
                Some(text) => ToolOutcome::completed(text),
                None => target.gone(),
            }
        })
    }
}
