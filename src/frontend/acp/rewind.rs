//! `/rewind` for an editor: the command advertised in
//! `available_commands_update`, a prompt that is `/rewind` or `/rewind N`
//! sent to the agent as that command, and one prompt's three choices put as
//! a `session/request_permission` whose answer goes back as the rewind to
//! do (or nothing, on a cancel or an option mino never offered). Files
//! changed since by something other than mino are kept: an editor has no
//! per-file confirmation here. Decides nothing.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, PermissionOption,
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionUpdate,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UnstructuredCommandInput,
};

use crate::agent::Input;
use crate::agent::commands::{self, Command, CommandSpec};
use crate::checkpoint::rewind::Offer;
use crate::frontend::rewind_words::{self, CHOICES};

use super::session::{Slot, update};
use super::wire;

/// The option id that backs out.
const CANCEL: &str = "cancel";

/// The command a prompt's text is, when it is `/rewind` (with or without a
/// prompt's number) and parses.
pub fn command(text: &str) -> Option<Command> {
    if !commands::is_command(text) {
        return None;
    }
    match commands::parse(text) {
        Ok(command @ Command::Rewind(_)) => Some(command),
        _ => None,
    }
}

/// Tells the editor which commands this session runs.
pub fn advertise(cx: &ConnectionTo<Client>, session: &str) {
    let Some(spec) = CommandSpec::find("/rewind") else {
        return;
    };
    let rewind = AvailableCommand::new(spec.name.trim_start_matches('/'), spec.help).input(
        AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
            "the number of a prompt, as /rewind lists them",
        )),
    );
    update(
        cx,
        session,
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![rewind])),
    );
}

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
