//! `/rewind` for an editor (a command `commands.rs` advertises): one
//! prompt's three choices put as
//! a `session/request_permission` whose answer goes back as the rewind to
//! do (or nothing, on a cancel or an option mino never offered). Files
//! changed since by something other than mino are kept: an editor has no
//! per-file confirmation here. Decides nothing.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use crate::agent::Input;
use crate::checkpoint::rewind::Offer;
use crate::frontend::rewind_words::{self, CHOICES};

use super::session::Slot;
use super::wire;

/// The option id that backs out.
const CANCEL: &str = "cancel";

/// Puts the choices of `offer` to the editor; its answer is handed to the
/// agent.
pub fn offer(cx: &ConnectionTo<Client>, slot: &Arc<Slot>, offer: Offer) {
    slot.set_offer_open(true);
    let mut options: Vec<PermissionOption> = CHOICES
        .iter()
        .map(|choice| {
            PermissionOption::new(
                choice.id,
                format!("{}: {}", choice.label, rewind_words::effect(choice, &offer)),
                PermissionOptionKind::AllowOnce,
            )
        })
        .collect();
    options.push(PermissionOption::new(
        CANCEL,
        "Cancel: nothing is rewound",
        PermissionOptionKind::RejectOnce,
    ));
    let call = ToolCallUpdate::new(
        format!("rewind-{}", offer.n),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Pending)
            .title(format!("/rewind: back to before prompt {}", offer.n))
            .content(vec![wire::text_content(rewind_words::offer_text(&offer))]),
    );
    let sent = cx.send_request(RequestPermissionRequest::new(
        slot.id.clone(),
        call,
        options,
    ));
    let slot = Arc::clone(slot);
    let cx = cx.clone();
    let to = offer.n;
    tokio::spawn(async move {
        let chosen = match sent.block_task().await {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => CHOICES
                    .iter()
                    .find(|choice| choice.id == &*selected.option_id.0)
                    .copied(),
                _ => None,
            },
            Err(e) => {
                tracing::info!(error = %e, "a rewind's choices got no answer; nothing is rewound");
                None
            }
        };
        slot.set_offer_open(false);
        let sent = chosen.is_some_and(|choice| {
            slot.send_input(Input::Rewind {
                to,
                what: choice.what,
                force: Vec::new(),
            })
        });
        if !sent {
            slot.finish_command(&cx, Some("Nothing was rewound.".into()));
        }
    });
}
