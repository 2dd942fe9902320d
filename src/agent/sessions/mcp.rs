//! The session's MCP commands: `/mcp` (the servers), `/mcp auth NAME` and
//! `/mcp logout NAME` (a remote server's OAuth), and `/SERVER:PROMPT` (a
//! server's prompt sent as the person's).

use tokio_util::sync::CancellationToken;

use super::super::events::AgentEvent;
use super::Agent;

const NONE_CONFIGURED: &str = "No MCP servers are configured: add [mcp.servers.NAME] to your settings (see config.example.toml).";

impl Agent {
    /// `/mcp`: every server, its state, destination and tools.
    pub(super) fn mcp_servers(&self) {
        match &self.rt.mcp {
            Some(hub) => self.rt.emit(AgentEvent::McpServers(hub.servers())),
            None => self.notice(NONE_CONFIGURED.into()),
        }
    }

    /// `/mcp auth NAME`: starts authorizing a remote server.
    pub(super) fn mcp_auth(&self, name: &str) {
        match self.rt.mcp.as_ref().map(|hub| hub.authorize(name)) {
            Some(Ok(())) => self.notice(format!(
                "Authorizing the MCP server {name}: discovering its authorization server."
            )),
            Some(Err(e)) => self.notice(format!("/mcp auth {name}: {e}")),
            None => self.notice(NONE_CONFIGURED.into()),
        }
    }

    /// `/mcp logout NAME`: forgets a remote server's tokens.
    pub(super) fn mcp_logout(&self, name: &str) {
        match self.rt.mcp.as_ref().map(|hub| hub.logout(name)) {
            Some(Ok(said)) => self.notice(said),
            Some(Err(e)) => self.notice(format!("/mcp logout {name}: {e}")),
            None => self.notice(NONE_CONFIGURED.into()),
        }
    }

    /// `/SERVER:PROMPT`: gets the server's prompt and sends its text as the
    /// person's prompt (shown first, redacted of every secret mino holds),
    /// a turn decided like any other.
    pub(super) async fn mcp_prompt(
        &mut self,
        (server, prompt): (&str, &str),
        words: &str,
        cancel: &CancellationToken,
    ) {
        let Some(hub) = self.rt.mcp.clone() else {
            return self.rt.emit(AgentEvent::Error(format!(
                "/{server}:{prompt}: {NONE_CONFIGURED}"
            )));
        };
        hub.ready().await;
        match crate::mcp::catalog::get(&hub, (server, prompt), words).await {
            Ok(text) => {
                let text = self.rt.tool_cx.secrets.redact(&text).await;
                // Shown with its control characters escaped: a server's
                // words never drive the terminal.
                self.notice(format!(
                    "/{server}:{prompt}: the MCP server {server}'s prompt is sent as yours:\n{}",
                    crate::controls::visible(&text)
                ));
                // Its words are the server's: an `@` in them attaches nothing.
                self.turn((text, false), cancel).await;
            }
            Err(e) => {
                // A server's error text is shown escaped too.
                let said = self.rt.tool_cx.secrets.redact(&e.to_string()).await;
                self.rt
                    .emit(AgentEvent::Error(crate::controls::visible(&said)));
            }
        }
    }
}
