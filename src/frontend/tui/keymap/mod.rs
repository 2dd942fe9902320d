//! Terminal events to intents, by the table in `table`. What a key means
//! depends on what is open: while a question is open its keys are the only
//! ones that answer; before the question's keys arm, typing goes on into
//! the input and answers nothing. The only place that reads key codes; it
//! never changes state.

pub mod binding;
mod intents;
pub mod table;

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

use crate::policy::ConsentAnswer;

use super::app::{App, Layer};
use super::msg::Msg;
use binding::{Binding, Chord, Code, Does, On, When};
use table::BINDINGS;

/// The intent of one terminal event, if it has one.
pub fn map(app: &App, event: &Event) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => key_msg(app, key),
        Event::Mouse(mouse) => mouse_msg(app, mouse),
        Event::Paste(text) => match app.layer() {
            Layer::Input => Some(Msg::Paste(text.clone())),
            // A paste over a question that is not armed yet is kept.
            Layer::Consent | Layer::ServerQuestion | Layer::ModeQuestion
                if !app.question_armed() =>
            {
                Some(Msg::PasteAhead(text.clone()))
            }
            _ => None,
        },
        Event::Resize(..) => Some(Msg::Resize),
        Event::FocusGained => Some(Msg::Focus(true)),
        Event::FocusLost => Some(Msg::Focus(false)),
        _ => None,
    }
}

/// What a key read from the terminal is to a run of typing.
#[derive(Debug, PartialEq, Eq)]
pub enum Plain {
    /// A character pressed (or repeated) with at most Shift held.
    Char(char),
    /// A character's release (reported by terminals that report them):
    /// it neither types nor ends a run.
    Release,
    /// Anything else, which ends a run.
    Not,
}

/// Whether `event` is a plain character.
pub fn plain(event: &Event) -> Plain {
    let Event::Key(key) = event else {
        return Plain::Not;
    };
    let KeyCode::Char(c) = key.code else {
        return Plain::Not;
    };
    if !KeyModifiers::SHIFT.contains(key.modifiers) {
        return Plain::Not;
    }
    if key.kind == KeyEventKind::Release {
        Plain::Release
    } else {
        Plain::Char(c)
    }
}

/// What a run of plain characters read together becomes.
#[derive(Debug, PartialEq, Eq)]
pub enum Run {
    /// Typed into an input that already holds text: one insertion. There
    /// every plain character types itself (the table has no binding of
    /// one that holds on a non-empty input), and typing keeps it so.
    Typed,
    /// Read over a question, where a plain character answers: a paste, as
    /// a terminal with bracketed paste would have sent it. A paste never
    /// answers: a terminal without it sends a paste as keys, and a `y` in
    /// the pasted text would have allowed the call.
    Pasted,
}

/// The character `event` is and what the run it begins becomes, when it
/// may begin one (the characters read with it join it).
pub fn begins_run(app: &App, event: &Event) -> Option<(char, Run)> {
    let (Plain::Char(c), Event::Key(key)) = (plain(event), event) else {
        return None;
    };
    match state(app, app.question_armed()) {
        On::Input if !app.input_is_empty() && matches!(key_msg(app, key), Some(Msg::Edit(_))) => {
            Some((c, Run::Typed))
        }
        On::Unarmed | On::Consent | On::Confirm | On::ModeQuestion | On::SettingsQuestion => {
            Some((c, Run::Pasted))
        }
        _ => None,
    }
}

/// The state the keys act in. `armed` false is the state before a
/// question's keys arm.
pub fn state(app: &App, armed: bool) -> On {
    match app.layer() {
        Layer::Consent | Layer::ServerQuestion | Layer::ModeQuestion if !armed => On::Unarmed,
        Layer::Consent => match app.consents.front() {
            Some(open) if open.confirming.is_some() => On::Confirm,
            Some(open) if open.note.is_some() => On::Note,
            _ => On::Consent,
        },
        Layer::ServerQuestion => On::ServerQuestion,
        Layer::ModeQuestion if app.settings_question() => On::SettingsQuestion,
        Layer::ModeQuestion => On::ModeQuestion,
        Layer::Rewind => On::Rewind,
        Layer::Picker => On::Picker,
        Layer::Help => On::Help,
        Layer::Input => On::Input,
    }
}

/// Whether `when` holds now.
pub fn holds(app: &App, when: When) -> bool {
    match when {
        When::Always => true,
        When::TurnRunning => app.turn_running(),
        When::Idle => !app.turn_running(),
        When::Popup => !app.completions().is_empty(),
        When::EmptyInput => app.input_is_empty(),
        When::QueuedOnEmptyInput => app.input_is_empty() && !app.queued.is_empty(),
        When::FirstRow => app.input.cursor().0 == 0,
        When::LastRow => app.input.cursor().0 + 1 >= app.input.lines().len(),
        When::PlanOffer => app.plan_offer && app.input_is_empty() && !app.turn_running(),
    }
}

/// What a chord is matched against: a key, or a wheel step.
#[derive(Clone, Copy)]
enum Pressed<'a> {
    Key(&'a KeyEvent),
    Wheel { up: bool, mods: KeyModifiers },
}

impl Pressed<'_> {
    fn mods(self) -> KeyModifiers {
        match self {
            Pressed::Key(key) => key.modifiers,
            Pressed::Wheel { mods, .. } => mods,
        }
    }
}

/// Whether `chord` is `pressed`. `Other` is left to the last pass.
fn matches(chord: &Chord, pressed: Pressed) -> bool {
    if !chord.mods.allow(pressed.mods()) {
        return false;
    }
    match (chord.code, pressed) {
        (Code::Key(code), Pressed::Key(key)) => key.code == code,
        (Code::AnyChar, Pressed::Key(key)) => matches!(key.code, KeyCode::Char(_)),
        (Code::Answer, Pressed::Key(key)) => match key.code {
            KeyCode::Char(c) => {
                ConsentAnswer::from_key(c).is_some_and(|answer| answer != ConsentAnswer::Reject)
            }
            _ => false,
        },
        (Code::Other, Pressed::Key(_)) => true,
        (Code::WheelUp, Pressed::Wheel { up, .. }) => up,
        (Code::WheelDown, Pressed::Wheel { up, .. }) => !up,
        _ => false,
    }
}

/// The binding `pressed` gives in `on`: the state's own bindings first,
/// then those that hold anywhere, then the state's `Other`.
fn find(app: &App, on: On, pressed: Pressed) -> Option<&'static Binding> {
    let passes: [(On, bool); 3] = [(on, false), (On::Anywhere, false), (on, true)];
    passes.into_iter().find_map(|(on, other)| {
        BINDINGS.iter().find(|binding| {
            binding.on.contains(&on)
                && binding
                    .chords
                    .iter()
                    .any(|chord| (chord.code == Code::Other) == other && matches(chord, pressed))
                && holds(app, binding.when)
        })
    })
}

fn intent(binding: &Binding, pressed: Pressed) -> Option<Msg> {
    match (binding.does, pressed) {
        (Does::Msg(msg), _) => Some(msg()),
        (Does::Key(msg), Pressed::Key(key)) => msg(key),
        _ => None,
    }
}

fn mouse_msg(app: &App, mouse: &MouseEvent) -> Option<Msg> {
    let up = match mouse.kind {
        MouseEventKind::ScrollUp => true,
        MouseEventKind::ScrollDown => false,
        _ => return None,
    };
    let pressed = Pressed::Wheel {
        up,
        mods: mouse.modifiers,
    };
    find(app, state(app, app.question_armed()), pressed).and_then(|b| intent(b, pressed))
}

/// The intent of a key press.
pub fn key_msg(app: &App, key: &KeyEvent) -> Option<Msg> {
    let pressed = Pressed::Key(key);
    find(app, state(app, app.question_armed()), pressed).and_then(|b| intent(b, pressed))
}

/// What the keys do now, as the status bar says it: the hints of the
/// bindings that hold in the state (a question not armed yet hints what
/// its keys will do).
pub fn hints(app: &App) -> Vec<&'static str> {
    let on = state(app, true);
    BINDINGS
        .iter()
        .filter(|b| (b.on.contains(&on) || b.on.contains(&On::Anywhere)) && holds(app, b.when))
        .filter_map(|b| b.hint)
        .filter(|(_, when)| holds(app, *when))
        .map(|(hint, _)| hint)
        .collect()
}
