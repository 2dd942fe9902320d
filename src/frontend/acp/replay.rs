//! A resumed session's conversation as `session/load` replays it: each
//! prompt, answer, call and result as the update that first said it.
//! Sends only; `session/resume` replays nothing.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCall, ToolCallUpdateFields};

use crate::model::Item;

use super::session::{call_update, text_chunk, update};
use super::wire;

/// A resumed session's conversation, as `session/load` replays it.
pub fn replay(cx: &ConnectionTo<Client>, session: &str, items: &[Item]) {
    for item in items {
        match item {
            Item::User { text } => update(
                cx,
                session,
                SessionUpdate::UserMessageChunk(text_chunk(text)),
            ),
            Item::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    update(
                        cx,
                        session,
                        SessionUpdate::AgentMessageChunk(text_chunk(text)),
                    );
                }
                for call in tool_calls {
                    update(
                        cx,
                        session,
                        SessionUpdate::ToolCall(
                            ToolCall::new(
                                call.id.clone(),
                                wire::title(&call.name, &call.arguments),
                            )
                            .name(call.name.clone())
                            .kind(wire::kind(&call.name))
                            .raw_input(wire::raw_input(&call.arguments)),
                        ),
                    );
                }
            }
            Item::ToolResult {
                call_id,
                status,
                output,
            } => call_update(
                cx,
                session,
                call_id,
                ToolCallUpdateFields::new()
                    .status(wire::status(*status))
                    .content(vec![wire::text_content(output.clone())]),
            ),
            Item::Summary { text } => update(
                cx,
                session,
                SessionUpdate::AgentMessageChunk(text_chunk(&format!(
                    "[Summary of earlier conversation, lossy]\n{text}"
                ))),
            ),
            // mino's own line to the model; the editor saw its notice.
            Item::Reminder { .. } => {}
        }
    }
}
