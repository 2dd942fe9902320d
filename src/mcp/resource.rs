//! Reading one resource of a server (`resources/read`): the tool an
//! `@server:uri` mention in a prompt becomes, so it is announced, decided
//! like that server's tools (an MCP call with its trust, every string
//! checked for protected names, links resolved), run, shown and saved like
//! any call. Not offered to the model as a tool. Its result is the text of
//! the resource's contents, binary ones as a placeholder, bounded like any
//! result, with answers typed for that server hidden. Never decides.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::policy::{CallFacts, CallKind, ToolKey};
use crate::tools::FieldRole;
use crate::tools::{
    BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
};

use super::content::{cap, resource_text};
use super::hub::Server;
use super::rounds;

/// The tool's name: `mcp-` can never be a server tool's (`mcp_SERVER_TOOL`).
pub const RESOURCE_TOOL: &str = "mcp-resource";

/// The resources of the running servers.
pub struct ResourceTool {
    pub servers: Vec<Arc<Server>>,
    pub output_limit: usize,
}

impl Tool for ResourceTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: Cow::Borrowed(RESOURCE_TOOL),
            description: Cow::Borrowed("Reads one resource of an MCP server."),
            parameters: json!({
                "type": "object",
                "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
                "required": ["server", "uri"]
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
        let (name, uri) = (text("server"), text("uri"));
        let Some(server) = self.servers.iter().find(|s| s.name == name) else {
            return Err(ToolError::Failed(format!(
                "{RESOURCE_TOOL}: no MCP server is named {name:?}"
            )));
        };
        if let Err(state) = server.peer() {
            return Err(ToolError::Failed(format!(
                "The MCP server {} is {state}; its resources cannot be read now.",
                server.name
            )));
        }
        let mut facts = CallFacts::new(
            ToolKey::new(&format!("{RESOURCE_TOOL}:{}", server.name)),
            CallKind::Mcp {
                server: server.name.clone(),
                trust_ask: server.config.trust_ask,
                claims: Default::default(),
            },
        );
        facts.argument_strings.push(uri.to_string());
        let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
        let resolved = super::links::resolved_links(
            &facts.argument_strings,
            cx.project.root(),
            home.as_deref(),
        )
        .map_err(|e| ToolError::Failed(format!("{RESOURCE_TOOL}: {e}")))?;
        facts.argument_strings.extend(resolved);
        Ok(Box::new(ResourceRead {
            facts,
            server: server.clone(),
            uri: uri.to_string(),
            output_limit: self.output_limit,
        }))
    }
}

struct ResourceRead {
    facts: CallFacts,
    server: Arc<Server>,
    uri: String,
    output_limit: usize,
}

/// The contents as text, each part as `content::resource_text` writes it.
fn render(contents: &[ResourceContents]) -> String {
    let parts: Vec<String> = contents.iter().map(resource_text).collect();
    parts.join("\n")
}

impl PreparedCall for ResourceRead {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        vec![
            Field::named(FieldRole::Server, self.server.name.clone()),
            Field::text("Destination", self.server.destination.clone()),
            Field::text("Resource", self.uri.clone()),
        ]
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let ResourceRead {
                server,
                uri,
                output_limit,
                ..
            } = *self;
            let connection = match server.peer() {
                Ok(live) => live,
                Err(state) => {
                    return ToolOutcome::error(format!(
                        "The MCP server {} is {state}; its resources cannot be read now.",
                        server.name
                    ));
                }
            };
            // Its questions are put to the person while the read runs.
            let _calling = server.window.calling();
            let timeout = server.config.tool_timeout;
            let params = ReadResourceRequestParams::new(uri.clone());
            tokio::select! {
                biased;
                _ = cancel.cancelled() => ToolOutcome::interrupted(format!(
                    "Reading {uri} from the MCP server {} was interrupted.", server.name
                )),
                _ = connection.gone.cancelled() => ToolOutcome::error(format!(
                    "The MCP server {} stopped while {uri} was read.", server.name
                )),
                result = tokio::time::timeout(
                    timeout,
                    rounds::read_resource(&connection.peer, &connection.handler, params),
                ) => match result {
                    Ok(Ok(read)) => ToolOutcome::completed(cap(
                        &server.typed.hide(&render(&read.contents)),
                        output_limit,
                    )),
                    Ok(Err(e)) => ToolOutcome::error(server.typed.hide(&format!(
                        "Reading {uri} from the MCP server {} failed: {e}", server.name
                    ))),
                    Err(_) => ToolOutcome::error(format!(
                        "Reading {uri} from the MCP server {} took longer than {} s (tool_timeout_secs) and was abandoned.",
                        server.name,
                        timeout.as_secs()
                    )),
                },
            }
        })
    }
}
