//! A call's question put to the editor as `session/request_permission`:
//! the call's fields, diffs and locations, the answers the question
//! offers; the editor's answer goes back through the consent port. A
//! client that answers `cancelled`, or goes away, rejects the call. Never
//! decides.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    RequestPermissionRequest, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use crate::agent::ConsentRequest;
use crate::policy::ConsentAnswer;

use super::session::Slot;
use super::wire;

/// Puts one question to the editor and hands its answer back. Runs on a
/// task of its own so the pump keeps going; a client that answers
/// `cancelled`, or that goes away, rejects the call.
pub(super) fn ask(cx: &ConnectionTo<Client>, slot: &Slot, request: ConsentRequest) {
    let ConsentRequest {
        call_id,
        tool,
        fields,
        offer,
        reply,
    } = request;
    // The tool's name and mino's own fields travel too, so an asking mino
    // decides under NAME/tool and shows what its own dialog would.
    let mut meta = serde_json::Map::new();
    meta.insert(
        crate::agent::asked::META_KEY.to_string(),
        serde_json::json!({ "fields": fields }),
    );
    let call = ToolCallUpdate::new(
        call_id,
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Pending)
            .title(format!("{tool} wants to run"))
            .name(tool.to_string())
            .kind(wire::kind(tool.as_str()))
            .content(
                wire::fields_content(&fields)
                    .into_iter()
                    .chain(wire::diffs(&slot.project, &fields))
                    .collect::<Vec<_>>(),
            )
            .locations(wire::locations(&slot.project, &fields)),
    )
    .meta(meta);
    let sent = cx.send_request(RequestPermissionRequest::new(
        slot.id.clone(),
        call,
        wire::options(tool.as_str(), &offer),
    ));
    tokio::spawn(async move {
        let answer = match sent.block_task().await {
            Ok(response) => wire::outcome_answer(&response.outcome),
            Err(e) => {
                tracing::info!(error = %e, "a permission request got no answer; the call is rejected");
                ConsentAnswer::Reject
            }
        };
        let _ = reply.send(answer.into());
    });
}
