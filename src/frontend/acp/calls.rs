//! A session's tool calls as the editor draws them: each call with its
//! kind, title and arguments; the record of one that runs unasked (its
//! fields, diffs and locations); the answer to its question; its running
//! state, live output and result. A bash call is drawn in the editor's
//! terminal when the client shows one (`terminal.rs`). Sends only.

use std::collections::HashSet;
use std::path::PathBuf;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdateFields,
};

use crate::agent::AgentEvent;

use super::session::{call_update, update};
use super::{terminal, wire};

/// What the pump keeps about the calls of one session.
pub struct Calls {
    project: PathBuf,
    /// The client draws bash calls in a terminal.
    terminal: bool,
    /// The calls shown in a terminal that started running.
    running: HashSet<String>,
}

impl Calls {
    pub fn new(project: PathBuf, terminal: bool) -> Self {
        Self {
            project,
            terminal,
            running: HashSet::new(),
        }
    }

    /// Sends what a call event says; any other event is handed back.
    pub fn take(
        &mut self,
        cx: &ConnectionTo<Client>,
        id: &str,
        event: AgentEvent,
    ) -> Option<AgentEvent> {
        match event {
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
            } => {
                let mut call = ToolCall::new(call_id.clone(), wire::title(&tool, &arguments))
                    .name(tool.clone())
                    .kind(wire::kind(&tool))
                    .raw_input(wire::raw_input(&arguments));
                if self.terminal && terminal::shows(&tool) {
                    call = terminal::call(call, &call_id, &self.project);
                }
                update(cx, id, SessionUpdate::ToolCall(call));
            }
            AgentEvent::ToolCallRewritten {
                call_id,
                tool,
                arguments,
            } => call_update(
                cx,
                id,
                &call_id,
                ToolCallUpdateFields::new()
                    .title(wire::title(&tool, &arguments))
                    .raw_input(wire::raw_input(&arguments)),
            ),
            AgentEvent::Record {
                call_id,
                tool,
                shown,
                fields,
            } => {
                let lines = crate::frontend::text::record_lines(&tool, &shown, &fields);
                let mut content = Vec::new();
                if !lines.is_empty() {
                    content.push(wire::text_content(lines.join("\n")));
                }
                content.extend(wire::diffs(&self.project, &fields));
                call_update(
                    cx,
                    id,
                    &call_id,
                    ToolCallUpdateFields::new()
                        .content(content)
                        .locations(wire::locations(&self.project, &fields)),
                );
            }
            AgentEvent::Answered { call_id, line, .. } => call_update(
                cx,
                id,
                &call_id,
                ToolCallUpdateFields::new().content(vec![wire::text_content(line)]),
            ),
            AgentEvent::ToolRunning { call_id, tool } => {
                if self.terminal && terminal::shows(&tool) {
                    self.running.insert(call_id.clone());
                }
                call_update(
                    cx,
                    id,
                    &call_id,
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                );
            }
            // A running command's last lines, replaced by its result.
            AgentEvent::ToolOutput {
                call_id, output, ..
            } => {
                let fields = if self.running.contains(&call_id) {
                    terminal::live(&call_id, output)
                } else {
                    ToolCallUpdateFields::new().content(vec![wire::text_content(output)])
                };
                call_update(cx, id, &call_id, fields);
            }
            AgentEvent::ToolResult {
                call_id,
                status,
                output,
                ..
            } => {
                if self.running.remove(&call_id) {
                    terminal::finish(cx, id, &call_id, wire::status(status), &output);
                } else {
                    call_update(
                        cx,
                        id,
                        &call_id,
                        ToolCallUpdateFields::new()
                            .status(wire::status(status))
                            .content(vec![wire::text_content(output)]),
                    );
                }
            }
            other => return Some(other),
        }
        None
    }
}
