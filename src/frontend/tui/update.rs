//! `update`: one intent in, the state changed, the actions out (send an
//! input, interrupt, answer a question, copy, quit). It never reads key
//! codes, never performs I/O and never decides a call: a dialog's answer is
//! handed back exactly as the user gave it.

use crate::agent::{Command, ConsentReply, Input};
use crate::frontend::tui::app::YesNo;
use crate::policy::{ConsentAnswer, Mode};

use super::app::{App, Layer, Picker, PickerItem, PickerKind};
use super::composer;
use super::from_agent;
use super::msg::{Action, Msg};
use super::transcript::EntryKind;

/// The notice for a command typed while a turn runs.
pub const COMMAND_WAITS: &str = "The command runs when the turn ends.";

/// Applies `msg` to `app`; returns what the loop must do.
pub fn update(app: &mut App, msg: Msg) -> Vec<Action> {
    if !matches!(
        msg,
        Msg::StopOrQuit
            | Msg::Quit
            | Msg::Agent(_)
            | Msg::Files(_)
            | Msg::Tick
            | Msg::Resize
            | Msg::Redraw
            | Msg::Focus(_)
    ) {
        app.quit_armed = false;
    }
    if !matches!(
        msg,
        Msg::Dismiss | Msg::Agent(_) | Msg::Files(_) | Msg::Tick | Msg::Resize | Msg::Redraw
    ) {
        app.esc_armed = false;
    }
    // Armed or not is judged before this key counts as the last one.
    let armed = app.question_armed();
    if !matches!(
        msg,
        Msg::Agent(_) | Msg::Files(_) | Msg::Tick | Msg::Resize | Msg::Focus(_)
    ) {
        app.last_key = Some(app.now);
        if armed {
            app.latch_arming();
        }
    }
    if app.plan_offer && matches!(msg, Msg::Edit(_) | Msg::Type(_) | Msg::Paste(_)) {
        app.plan_offer = false;
    }
    match msg {
        // Belt and braces: the keymap sends no answer before arming.
        Msg::Answer(_)
        | Msg::AnswerFocused
        | Msg::ConfirmAnswer(_)
        | Msg::ConfirmMode(_)
        | Msg::StartNote
        | Msg::SendNote
        | Msg::Question(_)
            if !armed =>
        {
            Vec::new()
        }
        Msg::TypeAhead(key) => {
            if let Some(open) = app.consents.front_mut() {
                open.arming.hurried = true;
            }
            composer::update(app, Msg::Edit(key))
        }
        Msg::PasteAhead(text) => {
            if let Some(open) = app.consents.front_mut() {
                open.arming.hurried = true;
            }
            composer::update(app, Msg::Paste(text))
        }
        Msg::ConfirmAnswer(yes) => {
            let confirmed = app.consents.front_mut().and_then(|o| o.confirming.take());
            match confirmed {
                Some(answer) if yes => answer_consent(app, answer),
                _ => Vec::new(),
            }
        }
        Msg::Agent(event) => from_agent::apply(app, event),
        Msg::Files(files) => {
            app.files = Some(files);
            Vec::new()
        }
        Msg::Tick => Vec::new(),
        // The terminal's new size is taken before the next frame, which is
        // drawn whole.
        Msg::Resize => vec![Action::Redraw],
        Msg::Focus(focused) => {
            app.attention.focused = focused;
            Vec::new()
        }
        Msg::ToggleMouse => {
            app.mouse = !app.mouse;
            app.transcript.push(EntryKind::Notice(if app.mouse {
                "Mouse on: the wheel scrolls the chat (Shift+drag selects). F2 gives the mouse to your terminal.".into()
            } else {
                "Mouse off: your terminal selects and copies text as usual; PageUp/PageDown scroll. F2 takes the mouse back.".into()
            }));
            vec![Action::Mouse(app.mouse)]
        }
        Msg::Redraw => vec![Action::Redraw],
        Msg::TogglePlan => {
            app.plan_hidden = !app.plan_hidden;
            if app.plan.is_empty() {
                app.transcript.push(EntryKind::Notice(
                    "No plan yet: the model makes one with its plan tool; Ctrl+T then shows or hides it.".into(),
                ));
            }
            Vec::new()
        }
        Msg::Quit => quit(app),
        Msg::Interrupt => interrupt(app),
        Msg::StopOrQuit => stop_or_quit(app),
        Msg::Answer(answer) => answer_or_confirm(app, answer),
        Msg::StartNote => {
            if let Some(open) = app.consents.front_mut() {
                open.note = Some(String::new());
                open.focus = ConsentAnswer::Reject;
            }
            Vec::new()
        }
        Msg::NoteChar(c) => {
            if let Some(note) = app.consents.front_mut().and_then(|o| o.note.as_mut()) {
                note.push(c);
            }
            Vec::new()
        }
        Msg::NoteBackspace => {
            if let Some(note) = app.consents.front_mut().and_then(|o| o.note.as_mut()) {
                note.pop();
            }
            Vec::new()
        }
        Msg::SendNote => {
            let note = app
                .consents
                .front_mut()
                .and_then(|o| o.note.take())
                .unwrap_or_default();
            reply_consent(app, ConsentReply::reject_with(&note))
        }
        Msg::AnswerFocused => match app.consents.front() {
            Some(open) => answer_or_confirm(app, open.focus),
            None => Vec::new(),
        },
        Msg::FocusNext | Msg::FocusPrev => {
            if let Some(open) = app.consents.front_mut() {
                let back = matches!(msg, Msg::FocusPrev);
                open.focus = open.request.offer.step(open.focus, back);
            }
            Vec::new()
        }
        Msg::Question(msg) => super::server_question::update(app, msg),
        Msg::ConfirmMode(yes) => match app.mode_question.take().map(|q| q.ask) {
            Some(YesNo::Mode { to, .. }) => vec![Action::Send(Input::ConfirmMode { to, yes })],
            Some(YesNo::Rule { .. }) => vec![Action::Send(Input::ConfirmRule { yes })],
            None => Vec::new(),
        },
        Msg::OverlayUp => overlay_move(app, -1, false),
        Msg::OverlayDown => overlay_move(app, 1, false),
        Msg::OverlayPageUp => overlay_move(app, -1, true),
        Msg::OverlayPageDown => overlay_move(app, 1, true),
        Msg::PickerSelect => picker_select(app),
        Msg::RewindEnter => super::rewind::enter(app),
        Msg::RewindToggle => {
            super::rewind::toggle(app);
            Vec::new()
        }
        Msg::Dismiss => dismiss(app),
        Msg::OpenHelp => {
            app.help = Some(0);
            Vec::new()
        }
        Msg::CycleMode => cycle_mode(app),
        Msg::PlanOffer(to) => super::plan_offer::choose(app, to),
        Msg::ScrollUp(_)
        | Msg::ScrollDown(_)
        | Msg::PageUp
        | Msg::PageDown
        | Msg::ScrollTop
        | Msg::ScrollBottom
        | Msg::ToggleExpand => {
            chat(app, msg);
            Vec::new()
        }
        Msg::Submit
        | Msg::Newline
        | Msg::Edit(_)
        | Msg::Type(_)
        | Msg::Paste(_)
        | Msg::EditCommand(_)
        | Msg::Unqueue
        | Msg::HistoryPrev
        | Msg::HistoryNext
        | Msg::Complete { .. }
        | Msg::CompletionPrev
        | Msg::CompletionNext => {
            // Belt and braces: nothing reaches the input while anything
            // else is open.
            if app.layer() == Layer::Input {
                composer::update(app, msg)
            } else {
                Vec::new()
            }
        }
    }
}

fn page(rows: u16) -> i32 {
    i32::from(rows.saturating_sub(1).max(1))
}

fn interrupt(app: &mut App) -> Vec<Action> {
    if app.turn_running() {
        vec![Action::Interrupt]
    } else {
        Vec::new()
    }
}

/// Ctrl-D on an empty input: quits when idle; during a turn it asks
/// first, and a second Ctrl-D interrupts the turn and quits.
fn quit(app: &mut App) -> Vec<Action> {
    if !app.turn_running() || app.quit_armed {
        return vec![Action::Quit];
    }
    app.quit_armed = true;
    app.quit_key = "Ctrl-D";
    app.transcript
        .push(EntryKind::Notice(QUIT_DURING_TURN.into()));
    Vec::new()
}

/// What the first Ctrl-D during a turn says.
pub const QUIT_DURING_TURN: &str =
    "A turn is running: press Ctrl-D again to interrupt it and quit; any other key goes on.";

/// Ctrl-C while idle: close what is open, else clear the input, else arm;
/// the second press quits.
fn stop_or_quit(app: &mut App) -> Vec<Action> {
    if app.turn_running() {
        return vec![Action::Interrupt];
    }
    match app.layer() {
        Layer::ModeQuestion => return update(app, Msg::ConfirmMode(false)),
        Layer::Picker | Layer::Help | Layer::Rewind => return dismiss(app),
        Layer::Consent => return answer_consent(app, ConsentAnswer::Reject),
        Layer::ServerQuestion => {
            return super::server_question::update(
                app,
                super::server_question::QuestionMsg::Cancel,
            );
        }
        Layer::Input => {}
    }
    if !app.input_is_empty() {
        app.pastes.clear();
        app.set_input("");
        app.quit_armed = false;
        return Vec::new();
    }
    if app.quit_armed {
        return vec![Action::Quit];
    }
    app.quit_armed = true;
    app.quit_key = "Ctrl-C";
    Vec::new()
}

/// A session-wide answer to a hurried question asks `[y/N]` first; every
/// other answer is given at once.
fn answer_or_confirm(app: &mut App, answer: ConsentAnswer) -> Vec<Action> {
    let session_wide = matches!(
        answer,
        ConsentAnswer::AllowForSession | ConsentAnswer::NeverThisRun
    );
    match app.consents.front_mut() {
        // A letter for an answer this question does not offer does nothing.
        Some(open) if !open.request.offer.allows(answer) => Vec::new(),
        Some(open) if session_wide && open.arming.hurried => {
            open.confirming = Some(answer);
            Vec::new()
        }
        _ => answer_consent(app, answer),
    }
}

fn answer_consent(app: &mut App, answer: ConsentAnswer) -> Vec<Action> {
    reply_consent(app, answer.into())
}

fn reply_consent(app: &mut App, answer: ConsentReply) -> Vec<Action> {
    if matches!(
        answer.answer,
        ConsentAnswer::AllowForSession | ConsentAnswer::NeverThisRun
    ) {
        // The person is answering, not typing: the next question, opened
        // at once, takes `a` or `v` without asking again.
        app.answer_key = app.last_key;
    }
    match app.consents.pop_front(app.now, app.typing_key()) {
        Some(open) => vec![Action::Answer {
            reply: open.request.reply,
            answer,
        }],
        None => Vec::new(),
    }
}

/// Moves the open overlay one line (or one page) in `direction`.
fn overlay_move(app: &mut App, direction: i32, by_page: bool) -> Vec<Action> {
    let clamp = |value: u16, delta: i32, max: u16| -> u16 {
        let moved = i32::from(value) + delta;
        u16::try_from(moved.clamp(0, i32::from(max))).unwrap_or(0)
    };
    let step = |rows: u16| {
        if by_page {
            page(rows) * direction
        } else {
            direction
        }
    };
    match app.layer() {
        Layer::Consent => {
            let (rows, total) = app.layout.dialog_rows.get();
            if let Some(open) = app.consents.front_mut() {
                open.scroll = clamp(open.scroll, step(rows), total.saturating_sub(rows));
            }
        }
        Layer::ModeQuestion => {
            let (rows, total) = app.layout.dialog_rows.get();
            if let Some(open) = app.mode_question.as_mut() {
                open.scroll = clamp(open.scroll, step(rows), total.saturating_sub(rows));
            }
        }
        Layer::Picker => {
            if let Some(picker) = app.picker.as_mut() {
                let last = picker.items.len().saturating_sub(1);
                let delta = if by_page { direction * 10 } else { direction };
                let moved = i64::try_from(picker.selected).unwrap_or(0) + i64::from(delta);
                picker.selected = usize::try_from(moved.max(0)).unwrap_or(0).min(last);
            }
        }
        Layer::Help => {
            let (rows, total) = app.layout.help_rows.get();
            let max = total.saturating_sub(rows);
            app.help = app.help.map(|s| clamp(s, step(rows), max));
        }
        Layer::Rewind => super::rewind::step(app, if by_page { direction * 10 } else { direction }),
        Layer::ServerQuestion | Layer::Input => {}
    }
    Vec::new()
}

/// Esc: backs out of the rewind dialog (to its picker), closes a picker,
/// help or the command popup; on an empty input while no turn runs,
/// pressed twice, it opens `/rewind`.
fn dismiss(app: &mut App) -> Vec<Action> {
    if app.rewind.is_some() {
        super::rewind::back(app);
        return Vec::new();
    }
    if app.picker.take().is_some() {
        app.sessions_for_resume = false;
        return Vec::new();
    }
    if app.help.take().is_some() {
        return Vec::new();
    }
    if !app.completions().is_empty() {
        app.completion_dismissed = true;
    } else if app.layer() == Layer::Input && app.input_is_empty() {
        if app.esc_armed {
            app.esc_armed = false;
            if !app.turn_running() {
                app.transcript.push(EntryKind::User("/rewind".into()));
                return super::rewind::open(app);
            }
        } else {
            app.esc_armed = true;
        }
    }
    Vec::new()
}

/// Shift+Tab: the next mode of the cycle. Tightening goes as `/mode NAME`
/// does; the one loosening step (manual to accept-edits) is the key's own
/// confirmation, as a choice in an editor's mode selector is. Auto and
/// bypass are never reached this way.
fn cycle_mode(app: &mut App) -> Vec<Action> {
    let from = app.status.mode;
    let to = from.cycled();
    if from.is_loosening(to) {
        if app.turn_running() {
            app.transcript
                .push(EntryKind::Notice(COMMAND_WAITS.to_string()));
        }
        return vec![Action::Send(Input::ChooseMode(to))];
    }
    composer::send_command(app, Command::Mode(Some(to)))
}

/// The five modes, the current one marked and selected.
pub fn mode_picker(current: Mode) -> Picker {
    let items: Vec<PickerItem> = Mode::ALL
        .iter()
        .map(|mode| PickerItem {
            label: mode.name().to_string(),
            detail: match mode {
                Mode::Plan => "only reads run; writes, commands and MCP calls are refused",
                Mode::Manual => "asks before every write, command, fetch and MCP call",
                Mode::AcceptEdits => "edits project files without asking; commands still ask",
                Mode::Auto => "edits without asking; runs only commands the shell gate proves read-only (trusted executables); others ask",
                Mode::Bypass => "runs every call without asking",
            }
            .to_string(),
            value: mode.name().to_string(),
            current: *mode == current,
        })
        .collect();
    Picker {
        kind: PickerKind::Mode,
        title: "Permission mode".into(),
        selected: items.iter().position(|i| i.current).unwrap_or(0),
        items,
    }
}

fn picker_select(app: &mut App) -> Vec<Action> {
    let Some(picker) = app.picker.take() else {
        return Vec::new();
    };
    let Some(item) = picker.items.get(picker.selected) else {
        return Vec::new();
    };
    let (command, typed) = match picker.kind {
        PickerKind::Mode => match item.value.parse::<Mode>() {
            Ok(mode) => (Command::Mode(Some(mode)), format!("/mode {mode}")),
            Err(_) => return Vec::new(),
        },
        PickerKind::Session => (
            Command::Resume(Some(item.value.clone())),
            format!("/resume {}", item.value),
        ),
        PickerKind::Project { id, dir } => {
            if item.value == "switch" {
                app.transcript.push(EntryKind::Notice(format!(
                    "Switching to {} for session {id}…",
                    dir.display()
                )));
                return vec![Action::SwitchProject { dir, id }];
            }
            return vec![Action::Send(Input::ResumeHere(id))];
        }
        PickerKind::Rewind => {
            let value = item.value.clone();
            return super::rewind::choose_prompt(app, picker, &value);
        }
        PickerKind::Model => (
            Command::Model(Some(item.value.clone())),
            format!("/model {}", item.value),
        ),
        PickerKind::Grant => match item.value.parse::<usize>() {
            Ok(n) => (Command::Permissions(Some(n)), format!("/permissions {n}")),
            Err(_) => return Vec::new(),
        },
    };
    app.transcript.push(EntryKind::User(typed));
    composer::send_command(app, command)
}

fn chat(app: &mut App, msg: Msg) {
    let width = app.layout.chat_width.get();
    let height = usize::from(app.layout.chat_height.get().max(1));
    let page = height.saturating_sub(1).max(1);
    let transcript = &mut app.transcript;
    match msg {
        Msg::ScrollUp(n) => transcript.scroll_up(usize::from(n), width, height),
        Msg::ScrollDown(n) => transcript.scroll_down(usize::from(n), width, height),
        Msg::PageUp => transcript.scroll_up(page, width, height),
        Msg::PageDown => transcript.scroll_down(page, width, height),
        Msg::ScrollTop => transcript.to_top(width, height),
        Msg::ScrollBottom => transcript.to_bottom(),
        Msg::ToggleExpand => {
            let (first, end) = app.layout.chat_entries.get();
            if !transcript.toggle_expand(first..end) {
                transcript.push(EntryKind::Notice(
                    "No tool result on screen to expand: scroll to one, then Ctrl+O.".into(),
                ));
            }
        }
        _ => {}
    }
}
