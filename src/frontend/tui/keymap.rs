//! Terminal events to intents. What a key means depends on what is open:
//! while a question is open its keys are the only ones that answer; before
//! the question's keys arm, typing goes on into the input and answers
//! nothing. The only file that reads key
//! codes; it never changes state.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

use crate::policy::ConsentAnswer;

use super::app::{App, Layer};
use super::msg::{EditCommand, Msg};

/// Lines one wheel step scrolls.
const WHEEL_LINES: u16 = 3;

/// One readline key of the input: the key presses that give it, how help
/// writes them, and what it does. Help is generated from this table.
#[derive(Debug, Clone, Copy)]
pub struct EditBinding {
    pub chords: &'static [(KeyModifiers, KeyCode)],
    pub keys: &'static str,
    pub help: &'static str,
    pub command: EditCommand,
}

const CTRL: KeyModifiers = KeyModifiers::CONTROL;

/// The input's readline keys. Ctrl+_ arrives as Ctrl+7 from most
/// terminals (the byte 0x1F), so both are bound.
pub const EDIT_KEYS: [EditBinding; 6] = [
    EditBinding {
        chords: &[(CTRL, KeyCode::Char('a'))],
        keys: "Ctrl+A",
        help: "go to the start of the line",
        command: EditCommand::LineStart,
    },
    EditBinding {
        chords: &[(CTRL, KeyCode::Char('e'))],
        keys: "Ctrl+E",
        help: "go to the end of the line",
        command: EditCommand::LineEnd,
    },
    EditBinding {
        chords: &[(CTRL, KeyCode::Char('u'))],
        keys: "Ctrl+U",
        help: "delete to the start of the line",
        command: EditCommand::KillToStart,
    },
    EditBinding {
        chords: &[(CTRL, KeyCode::Char('k'))],
        keys: "Ctrl+K",
        help: "delete to the end of the line",
        command: EditCommand::KillToEnd,
    },
    EditBinding {
        chords: &[(CTRL, KeyCode::Char('w'))],
        keys: "Ctrl+W",
        help: "delete the word before the cursor",
        command: EditCommand::KillWord,
    },
    EditBinding {
        chords: &[
            (CTRL, KeyCode::Char('z')),
            (CTRL, KeyCode::Char('_')),
            (CTRL, KeyCode::Char('7')),
            (CTRL, KeyCode::Char('/')),
        ],
        keys: "Ctrl+Z, Ctrl+_",
        help: "undo the last edit",
        command: EditCommand::Undo,
    },
];

/// The readline command `key` gives, if any.
fn edit_command(key: &KeyEvent) -> Option<EditCommand> {
    let modifiers = key.modifiers - KeyModifiers::SHIFT;
    EDIT_KEYS
        .iter()
        .find(|binding| binding.chords.contains(&(modifiers, key.code)))
        .map(|binding| binding.command)
}

/// The intent of one terminal event, if it has one.
pub fn map(app: &App, event: &Event) -> Option<Msg> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => key_msg(app, key),
        Event::Mouse(mouse) => mouse_msg(mouse),
        Event::Paste(text) => match app.layer() {
            Layer::Input => Some(Msg::Paste(text.clone())),
            // A paste over a question that is not armed yet is kept.
            Layer::Consent | Layer::ModeQuestion if !app.question_armed() => {
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

fn mouse_msg(mouse: &MouseEvent) -> Option<Msg> {
    match mouse.kind {
        MouseEventKind::ScrollUp => Some(Msg::ScrollUp(WHEEL_LINES)),
        MouseEventKind::ScrollDown => Some(Msg::ScrollDown(WHEEL_LINES)),
        _ => None,
    }
}

fn ctrl(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
}

fn alt(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::ALT)
}

/// The intent of a key press.
pub fn key_msg(app: &App, key: &KeyEvent) -> Option<Msg> {
    // Keys that mean the same everywhere.
    match key.code {
        KeyCode::Char('c') if ctrl(key) => {
            return Some(if app.turn_running() {
                Msg::Interrupt
            } else {
                Msg::StopOrQuit
            });
        }
        KeyCode::Char('l') if ctrl(key) => return Some(Msg::Redraw),
        KeyCode::F(2) => return Some(Msg::ToggleMouse),
        _ => {}
    }
    let layer = app.layer();
    if matches!(layer, Layer::Consent | Layer::ModeQuestion) && !app.question_armed() {
        return type_ahead(key);
    }
    let yes = matches!(key.code, KeyCode::Char('y' | 'Y'));
    match layer {
        Layer::Consent if app.consents.front().is_some_and(|o| o.confirming.is_some()) => {
            Some(Msg::ConfirmAnswer(yes))
        }
        Layer::Consent if app.consents.front().is_some_and(|o| o.note.is_some()) => note_key(key),
        Layer::Consent => consent_key(key),
        Layer::ModeQuestion => Some(Msg::ConfirmMode(yes)),
        Layer::Picker => overlay_key(key, true),
        Layer::Help => overlay_key(key, false),
        Layer::Input => input_key(app, key),
    }
}

/// A key that reaches a question before its keys arm: never an answer.
/// What edits text goes into the input box, so typing is not lost; the
/// question's body scrolls; the rest (Enter, Esc, Tab, shortcuts) does
/// nothing.
fn type_ahead(key: &KeyEvent) -> Option<Msg> {
    if ctrl(key) || alt(key) {
        return None;
    }
    match key.code {
        KeyCode::Up => Some(Msg::OverlayUp),
        KeyCode::Down => Some(Msg::OverlayDown),
        KeyCode::PageUp => Some(Msg::OverlayPageUp),
        KeyCode::PageDown => Some(Msg::OverlayPageDown),
        KeyCode::Char(_)
        | KeyCode::Backspace
        | KeyCode::Delete
        | KeyCode::Left
        | KeyCode::Right
        | KeyCode::Home
        | KeyCode::End => Some(Msg::TypeAhead((*key).into())),
        _ => None,
    }
}

fn consent_key(key: &KeyEvent) -> Option<Msg> {
    if ctrl(key) || alt(key) {
        return None;
    }
    Some(match key.code {
        // `n` rejects with a note typed next (Enter alone sends none).
        KeyCode::Char('n' | 'N') | KeyCode::Tab => Msg::StartNote,
        KeyCode::Char(c) if let Some(answer) = ConsentAnswer::from_key(c) => Msg::Answer(answer),
        KeyCode::Esc => Msg::Answer(ConsentAnswer::Reject),
        KeyCode::Enter => Msg::AnswerFocused,
        KeyCode::Right => Msg::FocusNext,
        KeyCode::Left | KeyCode::BackTab => Msg::FocusPrev,
        KeyCode::Up => Msg::OverlayUp,
        KeyCode::Down => Msg::OverlayDown,
        KeyCode::PageUp => Msg::OverlayPageUp,
        KeyCode::PageDown => Msg::OverlayPageDown,
        _ => return None,
    })
}

/// The rejection's note: text goes in, Enter rejects with it, Esc rejects
/// without it.
fn note_key(key: &KeyEvent) -> Option<Msg> {
    if ctrl(key) || alt(key) {
        return None;
    }
    Some(match key.code {
        KeyCode::Char(c) => Msg::NoteChar(c),
        KeyCode::Backspace => Msg::NoteBackspace,
        KeyCode::Enter => Msg::SendNote,
        KeyCode::Esc => Msg::Answer(ConsentAnswer::Reject),
        _ => return None,
    })
}

/// Pickers and help: move, page, choose (pickers only), close.
fn overlay_key(key: &KeyEvent, picker: bool) -> Option<Msg> {
    Some(match key.code {
        KeyCode::Up | KeyCode::Char('k') => Msg::OverlayUp,
        KeyCode::Down | KeyCode::Char('j') => Msg::OverlayDown,
        KeyCode::PageUp => Msg::OverlayPageUp,
        KeyCode::PageDown => Msg::OverlayPageDown,
        KeyCode::Enter if picker => Msg::PickerSelect,
        KeyCode::BackTab if picker => Msg::OverlayDown,
        KeyCode::Tab if picker => Msg::OverlayDown,
        KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(1) => Msg::Dismiss,
        KeyCode::Char('?') | KeyCode::Enter if !picker => Msg::Dismiss,
        _ => return None,
    })
}

fn input_key(app: &App, key: &KeyEvent) -> Option<Msg> {
    let popup = !app.completions().is_empty();
    let row = app.input.cursor().0;
    let last_row = app.input.lines().len().saturating_sub(1);
    Some(match key.code {
        KeyCode::Enter if alt(key) => Msg::Newline,
        KeyCode::Char('j') if ctrl(key) => Msg::Newline,
        KeyCode::Enter if popup => Msg::Complete { submit: true },
        KeyCode::Enter => Msg::Submit,
        KeyCode::Esc if app.turn_running() => Msg::Interrupt,
        KeyCode::Esc => Msg::Dismiss,
        KeyCode::BackTab => Msg::OpenModePicker,
        KeyCode::Tab if popup => Msg::Complete { submit: false },
        KeyCode::Tab => return None,
        KeyCode::Up if popup => Msg::CompletionPrev,
        KeyCode::Down if popup => Msg::CompletionNext,
        KeyCode::Up if app.input_is_empty() && !app.queued.is_empty() => Msg::Unqueue,
        KeyCode::Up if row == 0 && !alt(key) && !ctrl(key) => Msg::HistoryPrev,
        KeyCode::Down if row == last_row && !alt(key) && !ctrl(key) => Msg::HistoryNext,
        KeyCode::PageUp => Msg::PageUp,
        KeyCode::PageDown => Msg::PageDown,
        KeyCode::Home if ctrl(key) || app.input_is_empty() => Msg::ScrollTop,
        KeyCode::End if ctrl(key) || app.input_is_empty() => Msg::ScrollBottom,
        KeyCode::F(1) => Msg::OpenHelp,
        KeyCode::Char('?') if app.input_is_empty() && !ctrl(key) && !alt(key) => Msg::OpenHelp,
        KeyCode::Char('d') if ctrl(key) && app.input_is_empty() => Msg::Quit,
        KeyCode::Char('o') if ctrl(key) => Msg::ToggleExpand,
        _ => match edit_command(key) {
            Some(command) => Msg::EditCommand(command),
            None => Msg::Edit((*key).into()),
        },
    })
}
