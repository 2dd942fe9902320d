//! The plan hand-off: when a turn in plan mode ends with an answer, the
//! full screen offers below it to run the plan in a looser mode (`m`
//! manual, `e` accept-edits, `a` auto) or to keep planning (`k`). Choosing
//! a mode goes as `/mode NAME` does, so a looser one asks its usual
//! question; the input is prefilled with "Go ahead with the plan." unless
//! the person typed another prompt. Typing anything else closes the offer.

use crate::agent::{Command, TurnStop};
use crate::policy::Mode;

use super::app::App;
use super::composer;
use super::msg::Action;
use super::transcript::EntryKind;

/// The line shown below the answer while the offer is open.
pub const OFFER: &str = "Run this plan in: m manual · e accept-edits · a auto · k keep planning";

/// The next prompt after a mode is chosen, unless the person types another.
pub const GO_AHEAD: &str = "Go ahead with the plan.";

/// After a turn ended with `stop`: opens the offer when the session is in
/// plan mode, the turn ended with the model's answer (not at a limit, an
/// error or an interruption), and no queued prompt goes next.
pub fn after_turn(app: &mut App, stop: &TurnStop) {
    app.plan_offer =
        app.status.mode == Mode::Plan && *stop == TurnStop::Completed && app.queued.is_empty();
}

/// The person's choice: `Some(mode)` runs the plan in that mode, `None`
/// keeps planning.
pub fn choose(app: &mut App, to: Option<Mode>) -> Vec<Action> {
    app.plan_offer = false;
    let Some(to) = to else {
        app.transcript.push(EntryKind::Notice(
            "Still planning: the session stays in plan mode.".into(),
        ));
        return Vec::new();
    };
    if app.input_is_empty() {
        app.set_input(GO_AHEAD);
    }
    app.transcript
        .push(EntryKind::User(format!("/mode {}", to.name())));
    composer::send_command(app, Command::Mode(Some(to)))
}
