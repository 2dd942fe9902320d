//! `bash_output`: what a background process of this session printed since
//! the last read, bounded like bash's output, and whether it still runs.
//! A confined read: it touches nothing but mino's own copy of the output.
//! Offered only while a background process exists. Never signals anything.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::bash::Shells;
use super::{BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec};
use crate::policy::{CallFacts, CallKind, ToolKey};

/// The tool's name, as the model calls it.
pub const NAME: &str = "bash_output";

/// Reads a background process's new output.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashOutput;

impl Tool for BashOutput {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Returns what a background process (started with bash and \
                `background: true`) printed since the last read, and whether it still runs \
                or how it ended."
                .into(),
            parameters: id_parameters("The background process's id, as bash returned it."),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let id = parse_id(NAME, args, &cx.shells)?;
        Ok(Box::new(OutputCall(Target::new(
            NAME,
            CallKind::ConfinedRead,
            id,
            cx,
        ))))
    }
}

/// The parameters of both background tools: one `id`.
pub(super) fn id_parameters(description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "integer", "minimum": 1, "description": description }
        },
        "required": ["id"],
        "additionalProperties": false
    })
}

/// The `id` argument, which must name a background process of this session.
pub(super) fn parse_id(
    tool: &'static str,
    args: &Value,
    shells: &Shells,
) -> Result<u32, ToolError> {
    let invalid = |message: String| ToolError::InvalidArguments { tool, message };
    let Some(object) = args.as_object() else {
        return Err(invalid(
            "the arguments must be a JSON object with `id`".to_string(),
        ));
    };
    if let Some(other) = object.keys().find(|k| *k != "id") {
        return Err(invalid(format!(
            "unknown field `{other}`; the only accepted field is `id`"
        )));
    }
    let id = match object.get("id") {
        None => {
            return Err(invalid(
                "`id` is missing; it must be a background process's id".into(),
            ));
        }
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                invalid(format!(
                    "`id` must be a positive whole number (a background process's id), not {value}"
                ))
            })?,
    };
    if shells.get(id).is_none() {
        let ids = shells.ids();
        let known = if ids.is_empty() {
            "this session has none".to_string()
        } else {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            format!("this session's are: {}", ids.join(", "))
        };
        return Err(invalid(format!(
            "there is no background process {id}; {known}"
        )));
    }
    Ok(id)
}

/// The background process a call of either background tool names, as
/// prepared: its facts, id and command.
pub(super) struct Target {
    pub(super) facts: CallFacts,
    pub(super) id: u32,
    pub(super) command: String,
    pub(super) shells: Arc<Shells>,
}

impl Target {
    /// `id` of this session, for a call of `tool` of `kind`.
    pub(super) fn new(tool: &str, kind: CallKind, id: u32, cx: &ToolContext) -> Self {
        let command = cx
            .shells
            .get(id)
            .map(|b| b.command.clone())
            .unwrap_or_default();
        let kill = kind == CallKind::ShellKill;
        let mut facts = CallFacts::new(ToolKey::new(tool), kind);
        if kill {
            facts.command = Some(command.clone());
        }
        Self {
            facts,
            id,
            command,
            shells: cx.shells.clone(),
        }
    }

    pub(super) fn fields(&self) -> Vec<Field> {
        vec![
            Field::text("Background process", self.id.to_string()),
            Field::text("Command", self.command.clone()),
        ]
    }

    /// The result when the process is no longer in the session.
    pub(super) fn gone(&self) -> ToolOutcome {
        ToolOutcome::error(format!(
            "Background process {} is gone (stopped, or the session ended).",
            self.id
        ))
    }
}

struct OutputCall(Target);

impl PreparedCall for OutputCall {
    fn facts(&self) -> &CallFacts {
        &self.0.facts
    }

    fn fields(&self) -> Vec<Field> {
        self.0.fields()
    }

    fn run(self: Box<Self>, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let target = &self.0;
            let Some(bg) = target.shells.get(target.id) else {
                return target.gone();
            };
            let text = bg.read_new().await;
            target.shells.forget_if_done(target.id);
            ToolOutcome::completed(text)
        })
    }
}
