//! `/rewind` on the full screen: the picker of this session's prompts
//! (newest first, a pruned one marked and not choosable), then the dialog
//! of one prompt's three choices, each saying what it would do, with every
//! file changed since by something other than mino listed to be confirmed
//! one by one (kept unless confirmed). Only opened while no turn runs. It
//! collects the choice and hands it to the agent, which does the work.

use std::collections::BTreeSet;

use crate::agent::{Command, Input};
use crate::checkpoint::rewind::{Listed, Offer, What};
use crate::controls::visible;
use crate::frontend::rewind_words::{self, CHOICES};

use super::app::{App, Picker, PickerItem, PickerKind};
use super::composer;
use super::msg::Action;
use super::transcript::EntryKind;

/// What a pruned prompt's row sends: nothing can be chosen.
pub const PRUNED: &str = "pruned";

/// Said when `/rewind` (or Esc twice) comes while a turn runs.
pub const WAIT_FOR_TURN: &str =
    "/rewind works between turns: wait for this one to end, or stop it with Esc, then /rewind.";

/// The open dialog of one prompt's choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindDialog {
    pub offer: Offer,
    /// The row with focus: the choices first, then the kept files.
    pub selected: usize,
    /// Kept files the person confirmed: restored anyway.
    pub confirmed: BTreeSet<String>,
    /// The picker it came from, back on Esc.
    pub back: Option<Picker>,
}

impl RewindDialog {
    pub fn rows(&self) -> usize {
        CHOICES.len() + self.offer.code.kept.len()
    }

    /// The kept file on the selected row, if it is one.
    pub fn selected_file(&self) -> Option<&String> {
        self.selected
            .checked_sub(CHOICES.len())
            .and_then(|i| self.offer.code.kept.get(i))
    }
}

/// `/rewind` or Esc twice: asks the agent for the prompts, unless a turn
/// runs.
pub fn open(app: &mut App) -> Vec<Action> {
    if app.turn_running() {
        app.transcript
            .push(EntryKind::Notice(WAIT_FOR_TURN.to_string()));
        return Vec::new();
    }
    composer::send_command(app, Command::Rewind(None))
}

/// The prompts came: the picker, newest first.
pub fn prompts(app: &mut App, prompts: &[Listed]) {
    if prompts.is_empty() {
        app.transcript
            .push(EntryKind::Notice(rewind_words::prompts_text(prompts)));
        return;
    }
    let items = prompts
        .iter()
        .rev()
        .map(|listed| PickerItem {
            label: format!(
                "{}. {}",
                listed.n,
                visible(&rewind_words::short(&listed.prompt, 40))
            ),
            detail: visible(&rewind_words::prompt_detail(listed)),
            value: if listed.pruned {
                PRUNED.to_string()
            } else {
                listed.n.to_string()
            },
            current: false,
        })
        .collect();
    app.picker = Some(Picker {
        kind: PickerKind::Rewind,
        title: "Rewind to before a prompt (newest first)".into(),
        items,
        selected: 0,
    });
}

/// A prompt was chosen in the picker.
pub fn choose_prompt(app: &mut App, picker: Picker, value: &str) -> Vec<Action> {
    let Ok(n) = value.parse::<usize>() else {
        app.transcript.push(EntryKind::Notice(
            "That prompt's checkpoint was pruned ([checkpoints] settings say how much is kept): it cannot be rewound. Choose another.".into(),
        ));
        app.picker = Some(picker);
        return Vec::new();
    };
    app.rewind_back = Some(picker);
    composer::send_command(app, Command::Rewind(Some(n)))
}

/// The offer came: the dialog opens on its first choice.
pub fn offered(app: &mut App, offer: Offer) {
    app.picker = None;
    app.rewind = Some(RewindDialog {
        offer,
        selected: 0,
        confirmed: BTreeSet::new(),
        back: app.rewind_back.take(),
    });
}

/// Up or Down in the dialog.
pub fn step(app: &mut App, delta: i32) {
    if let Some(dialog) = app.rewind.as_mut() {
        let last = dialog.rows().saturating_sub(1);
        let moved = i64::try_from(dialog.selected).unwrap_or(0) + i64::from(delta);
        dialog.selected = usize::try_from(moved.max(0)).unwrap_or(0).min(last);
    }
}

/// Space (or Enter) on a kept file: confirms it, or takes that back.
pub fn toggle(app: &mut App) {
    let Some(dialog) = app.rewind.as_mut() else {
        return;
    };
    let Some(file) = dialog.selected_file().cloned() else {
        return;
    };
    if !dialog.confirmed.remove(&file) {
        dialog.confirmed.insert(file);
    }
}

/// Enter: on a choice, does it; on a kept file, toggles it.
pub fn enter(app: &mut App) -> Vec<Action> {
    let Some(dialog) = app.rewind.as_ref() else {
        return Vec::new();
    };
    if dialog.selected_file().is_some() {
        toggle(app);
        return Vec::new();
    }
    let Some(choice) = CHOICES.get(dialog.selected) else {
        return Vec::new();
    };
    if app.turn_running() {
        app.transcript
            .push(EntryKind::Notice(WAIT_FOR_TURN.to_string()));
        return Vec::new();
    }
    let Some(dialog) = app.rewind.take() else {
        return Vec::new();
    };
    let force = if choice.what == What::Conversation {
        Vec::new()
    } else {
        dialog.confirmed.into_iter().collect()
    };
    app.transcript.push(EntryKind::User(format!(
        "/rewind {}: {}",
        dialog.offer.n,
        choice.label.to_lowercase()
    )));
    vec![Action::Send(Input::Rewind {
        to: dialog.offer.n,
        what: choice.what,
        force,
    })]
}

/// Esc: back to the picker it came from.
pub fn back(app: &mut App) {
    if let Some(dialog) = app.rewind.take() {
        app.picker = dialog.back;
    }
}

/// The rewind was done: said in the chat; a conversation that went back
/// puts its prompt back in the input.
pub fn done(app: &mut App, line: String, prompt: Option<String>) {
    app.transcript.push(EntryKind::Notice(visible(&line)));
    if let Some(prompt) = prompt {
        app.pastes.clear();
        app.set_input(&prompt);
    }
}
