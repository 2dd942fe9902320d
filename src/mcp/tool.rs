//! One MCP tool as mino offers it: its spec (the server's description and
//! input schema, untrusted text that only ever reaches the model as a tool
//! definition), `prepare` (the facts: an MCP call to this server with its
//! trust and every string argument; the fields a question shows), and `run`
//! (the call, bounded by the tool timeout, stopped by an interrupt, refused
//! at once when the server is not running). Never decides.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::policy::{CallFacts, CallKind, ToolClaims, ToolKey};
use crate::tools::FieldRole;
use crate::tools::{
    BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
};

use super::content;
use super::hub::Server;
use super::rounds;

/// The longest description offered to the model for one tool.
const DESCRIPTION_LIMIT: usize = 2048;

/// One tool of a running server.
pub struct McpTool {
    /// The name the model calls it by (`mcp_SERVER_TOOL`).
    pub name: String,
    /// The server's own name for it.
    pub remote: String,
    pub server: Arc<Server>,
    pub description: String,
    pub schema: Value,
    pub output_limit: usize,
    /// What the server's tool list claimed about it (trust aside).
    pub claims: ToolClaims,
}

impl McpTool {
    pub fn new(
        name: String,
        server: Arc<Server>,
        remote: &rmcp::model::Tool,
        output_limit: usize,
    ) -> Self {
        let mut description: String = remote
            .description
            .as_deref()
            .unwrap_or_default()
            .chars()
            .take(DESCRIPTION_LIMIT)
            .collect();
        if description.is_empty() {
            description = format!(
                "The tool {} of the MCP server {}.",
                remote.name, server.name
            );
        }
        let mut schema = Value::Object(remote.input_schema.as_ref().clone());
        if schema.get("type").is_none() {
            schema["type"] = Value::String("object".into());
        }
        let annotations = remote.annotations.as_ref();
        let claims = ToolClaims {
            destructive: annotations.and_then(|a| a.destructive_hint) == Some(true),
            read_only: annotations.and_then(|a| a.read_only_hint) == Some(true),
            trusted: server.config.trust_annotations,
        };
        Self {
            name,
            remote: remote.name.to_string(),
            server,
            description,
            schema,
            output_limit,
            claims,
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: Cow::Owned(self.name.clone()),
            description: Cow::Owned(self.description.clone()),
            parameters: self.schema.clone(),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        // A stopped server's tool is refused before anybody is asked.
        if let Err(state) = self.server.peer() {
            return Err(ToolError::Failed(format!(
                "The MCP server {} is {state}; its tools cannot be called now.",
                self.server.name
            )));
        }
        let arguments = match args {
            Value::Object(map) => map.clone(),
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::Failed(format!(
                    "invalid arguments for {}: expected a JSON object, got {other}",
                    self.name
                )));
            }
        };
        let mut facts = CallFacts::new(
            ToolKey::new(&self.name),
            CallKind::Mcp {
                server: self.server.name.clone(),
                trust_ask: self.server.config.trust_ask,
                claims: self.claims,
            },
        );
        collect_strings(args, &mut facts.argument_strings);
        // A server follows links: a link named `notes.md` to `.env`, or
        // into mino's home, is judged by where it leads.
        let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
        let resolved = super::links::resolved_links(
            &facts.argument_strings,
            cx.project.root(),
            home.as_deref(),
        )
        .map_err(|e| ToolError::Failed(format!("{}: {e}", self.name)))?;
        facts.argument_strings.extend(resolved);
        Ok(Box::new(McpCall {
            facts,
            server: self.server.clone(),
            remote: self.remote.clone(),
            arguments,
            output_limit: self.output_limit,
        }))
    }
}

/// The dialog's words for what the server claimed, when it claimed harm or
/// harmlessness: its word, not a fact.
fn claimed(claims: ToolClaims) -> Option<String> {
    match (claims.destructive, claims.read_only) {
        (true, _) => Some("destructive (asks in every mode but bypass)".to_string()),
        (false, true) if claims.trusted => {
            Some("read-only (trusted by the user's settings)".to_string())
        }
        (false, true) => Some("read-only (not trusted: changes nothing)".to_string()),
        (false, false) => None,
    }
}

/// Every string in `value`, object keys included (a server may read either).
fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                collect_strings(v, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

struct McpCall {
    facts: CallFacts,
    server: Arc<Server>,
    remote: String,
    arguments: serde_json::Map<String, Value>,
    output_limit: usize,
}

impl PreparedCall for McpCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let pretty = serde_json::to_string_pretty(&Value::Object(self.arguments.clone()))
            .unwrap_or_else(|_| "{}".into());
        let mut fields = vec![
            Field::named(FieldRole::Server, self.server.name.clone()),
            Field::text("Destination", self.server.destination.clone()),
            Field::text("Tool", self.remote.clone()),
        ];
        if let CallKind::Mcp { claims, .. } = &self.facts.kind
            && let Some(said) = claimed(*claims)
        {
            fields.push(Field::text("Server claims", said));
        }
        fields.push(Field::block("Arguments", pretty));
        fields
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let McpCall {
                server,
                remote,
                arguments,
                output_limit,
                ..
            } = *self;
            let connection = match server.peer() {
                Ok(live) => live,
                Err(state) => {
                    return ToolOutcome::error(format!(
                        "The MCP server {} is {state}; its tools cannot be called now.",
                        server.name
                    ));
                }
            };
            // Its questions are put to the person while this call runs.
            let _calling = server.window.calling();
            let timeout: Duration = server.config.tool_timeout;
            let params = CallToolRequestParams::new(remote.clone()).with_arguments(arguments);
            tokio::select! {
                biased;
                _ = cancel.cancelled() => ToolOutcome::interrupted(format!(
                    "The call to {remote} on the MCP server {} was interrupted; whether the server acted on it is unknown.",
                    server.name
                )),
                _ = connection.gone.cancelled() => ToolOutcome::error(format!(
                    "The MCP server {} stopped during the call to {remote}; whether it acted on it is unknown.",
                    server.name
                )),
                result = tokio::time::timeout(
                    timeout,
                    rounds::call_tool(&connection.peer, &connection.handler, params),
                ) => match result {
                    Ok(Ok(result)) => content::outcome(&result, output_limit, &server.typed),
                    Ok(Err(e)) => ToolOutcome::error(server.typed.hide(&format!(
                        "The call to {remote} on the MCP server {} failed: {e}",
                        server.name
                    ))),
                    Err(_) => ToolOutcome::error(format!(
                        "The call to {remote} on the MCP server {} took longer than {} s (tool_timeout_secs) and was abandoned.",
                        server.name,
                        timeout.as_secs()
                    )),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_collected_from_every_depth() {
        let mut out = Vec::new();
        collect_strings(
            &serde_json::json!({"path": "/a/.env", "list": ["x", {"k": "y"}], "n": 1}),
            &mut out,
        );
        assert_eq!(out, ["path", "/a/.env", "list", "x", "k", "y", "n"]);
    }
}
