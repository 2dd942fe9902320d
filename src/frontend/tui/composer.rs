//! The input box's side of `update`: typing, pasting, history, the command
//! popup, and what Enter sends (a prompt, or a parsed slash command; a
//! command that does not parse shows its error and changes nothing). It
//! never reads key codes and never decides.

use crate::agent::commands::{self, CommandSpec};
use crate::agent::{Command, Input};

use super::app::{App, Clipboard};
use super::completion::Completing;
use super::msg::{Action, EditCommand, Msg};
use super::transcript::EntryKind;
use super::update::COMMAND_WAITS;

/// Handles an input-box intent.
pub fn update(app: &mut App, msg: Msg) -> Vec<Action> {
    match msg {
        Msg::Submit => return submit(app),
        Msg::Newline => {
            app.input.insert_newline();
            edited(app);
        }
        Msg::Edit(key) => {
            let changed = app.input.input(key);
            if changed {
                edited(app);
            }
        }
        Msg::Type(text) => {
            app.input.insert_str(text);
            edited(app);
        }
        Msg::Paste(text) => {
            let text = text.replace("\r\n", "\n").replace('\r', "\n");
            app.insert_text(&text);
            edited(app);
        }
        Msg::EditCommand(command) => edit_command(app, command),
        Msg::Unqueue => {
            if let Some(prompt) = app.queued.pop() {
                app.set_input(&prompt.text);
                edited(app);
            }
        }
        Msg::HistoryPrev => history_prev(app),
        Msg::HistoryNext => history_next(app),
        Msg::Complete { submit: send } => {
            let options = app.completions();
            let Some((name, _)) = options.get(app.completion.min(options.len().saturating_sub(1)))
            else {
                return Vec::new();
            };
            if let Some(Completing::File(partial)) = app.completing() {
                // The `@partial` before the cursor becomes `@path `.
                for _ in 0..=partial.chars().count() {
                    app.input.delete_char();
                }
                app.input.insert_str(format!("{name} "));
                edited(app);
                return Vec::new();
            }
            let argument = match app.completing() {
                Some(Completing::Mode(_)) => Some("/mode"),
                Some(Completing::Model(_)) => Some("/model"),
                _ => None,
            };
            if let Some(command) = argument {
                app.set_input(&format!("{command} {name}"));
                if send {
                    return submit(app);
                }
                edited(app);
                return Vec::new();
            }
            let name = name.as_str();
            // A command that takes an argument is completed with a space after it.
            let takes_argument = CommandSpec::find(name)
                .is_some_and(|spec| spec.argument.is_some())
                || app
                    .mcp_catalog
                    .prompts
                    .iter()
                    .any(|p| p.command() == name && !p.arguments.is_empty());
            if send && !takes_argument {
                app.set_input(name);
                return submit(app);
            }
            app.set_input(&if takes_argument {
                format!("{name} ")
            } else {
                (*name).to_string()
            });
            edited(app);
        }
        Msg::CompletionPrev => app.completion = app.completion.saturating_sub(1),
        Msg::CompletionNext => {
            let last = app.completions().len().saturating_sub(1);
            app.completion = (app.completion + 1).min(last);
        }
        _ => {}
    }
    list_files_if_needed(app)
}

/// An `@` being completed asks for the project's files, once per turn (a
/// turn may have added files).
fn list_files_if_needed(app: &mut App) -> Vec<Action> {
    if app.files_requested || !matches!(app.completing(), Some(Completing::File(_))) {
        return Vec::new();
    }
    app.files_requested = true;
    vec![Action::ListFiles]
}

/// Applies a readline command.
fn edit_command(app: &mut App, command: EditCommand) {
    use ratatui_textarea::CursorMove;
    let input = &mut app.input;
    let changed = match command {
        EditCommand::KillToStart => input.delete_line_by_head(),
        EditCommand::KillToEnd => input.delete_line_by_end(),
        EditCommand::KillWord => input.delete_word(),
        EditCommand::LineStart => {
            input.move_cursor(CursorMove::Head);
            false
        }
        EditCommand::LineEnd => {
            input.move_cursor(CursorMove::End);
            false
        }
        EditCommand::Undo => undo_word(input),
    };
    if changed {
        edited(app);
    }
}

/// Undoes the last word typed (and the spaces typed after it) rather than
/// its last character: undo steps are taken while each takes back one
/// character typed just before the one taken back before it, of the same
/// word; anything else (a paste, a deletion, typing elsewhere) is a step
/// of its own.
fn undo_word(input: &mut ratatui_textarea::TextArea<'static>) -> bool {
    let text = |input: &ratatui_textarea::TextArea<'static>| input.lines().join("\n");
    let before = text(input);
    if !input.undo() {
        return false;
    }
    let Some((first, mut at)) = one_char_taken(&before, &text(input)) else {
        return true;
    };
    let mut in_word = !first.is_whitespace();
    loop {
        let prev = text(input);
        if !input.undo() {
            break;
        }
        match one_char_taken(&prev, &text(input)) {
            Some((c, next)) if next + c.len_utf8() == at && (!c.is_whitespace() || !in_word) => {
                in_word |= !c.is_whitespace();
                at = next;
            }
            _ => {
                input.redo();
                break;
            }
        }
    }
    true
}

/// The one character `after` lacks of `before`, and its byte offset, when
/// that is the only difference.
fn one_char_taken(before: &str, after: &str) -> Option<(char, usize)> {
    let at = before
        .char_indices()
        .zip(after.chars())
        .find(|((_, a), b)| a != b)
        .map(|((i, _), _)| i)
        .unwrap_or(after.len());
    let taken = before.get(at..)?.chars().next()?;
    let rest = &before[at + taken.len_utf8()..];
    (after.len() == at + rest.len() && after.get(at..) == Some(rest)).then_some((taken, at))
}

/// The turn ended: the next queued prompt goes to the agent. After an
/// interrupt the queue goes back into the input instead, so nothing runs
/// that the person stopped waiting for.
pub fn turn_ended(app: &mut App, interrupted: bool) -> Vec<Action> {
    if app.queued.is_empty() {
        return Vec::new();
    }
    if interrupted {
        let mut text = std::mem::take(&mut app.queued)
            .into_iter()
            .map(|q| q.text)
            .collect::<Vec<_>>()
            .join("\n\n");
        if !app.input_is_empty() {
            text = format!("{text}\n\n{}", app.input_expanded());
            app.pastes.clear();
        }
        app.set_input(&text);
        edited(app);
        app.transcript.push(EntryKind::Notice(
            "The turn was interrupted: your queued prompts are back in the input.".into(),
        ));
        return Vec::new();
    }
    let prompt = app.queued.remove(0);
    vec![Action::Send(input_for(prompt.text, prompt.shell))]
}

/// What a line (not a slash command) sends: `!command`, when the person
/// typed the `!` (`typed_shell`), runs a shell command as the user;
/// anything else is a prompt.
fn input_for(line: String, typed_shell: bool) -> Input {
    match line.strip_prefix('!').map(str::trim) {
        Some(command) if typed_shell && !command.is_empty() => Input::Shell(command.to_string()),
        _ => Input::Prompt(line),
    }
}

/// Whether the input as shown (placeholders standing for pastes) begins
/// with `c`: a paste that begins with `!` or `/` never makes its line a
/// shell command or a slash command the person did not see.
fn typed_lead(app: &App, c: char) -> bool {
    app.input_text().trim_start().starts_with(c)
}

/// The text changed: the popup starts over.
fn edited(app: &mut App) {
    app.completion = 0;
    app.completion_dismissed = false;
}

fn history_prev(app: &mut App) {
    let entries = &app.history.entries;
    if entries.is_empty() {
        return;
    }
    let index = match &app.history.browsing {
        Some((0, _)) => return,
        Some((i, _)) => i - 1,
        None => entries.len() - 1,
    };
    let draft = match app.history.browsing.take() {
        Some((_, draft)) => draft,
        None => app.input_expanded(),
    };
    let text = entries[index].clone();
    app.history.browsing = Some((index, draft));
    app.set_input(&text);
    edited(app);
}

fn history_next(app: &mut App) {
    let Some((index, draft)) = app.history.browsing.take() else {
        return;
    };
    if index + 1 < app.history.entries.len() {
        let text = app.history.entries[index + 1].clone();
        app.history.browsing = Some((index + 1, draft));
        app.set_input(&text);
    } else {
        app.set_input(&draft);
    }
    edited(app);
}

/// Enter: a prompt, a command, or nothing for an empty input.
fn submit(app: &mut App) -> Vec<Action> {
    let typed_shell = typed_lead(app, '!');
    let typed_command = typed_lead(app, '/');
    let text = app.input_expanded();
    let line = text.trim();
    if line.is_empty() {
        return Vec::new();
    }
    let line = line.to_string();
    let mut actions = Vec::new();
    if app.history.entries.last() != Some(&line) {
        app.history.entries.push(line.clone());
        actions.push(Action::KeepPrompt(line.clone()));
    }
    app.history.browsing = None;
    app.pastes.clear();
    app.set_input("");
    edited(app);
    app.transcript.to_bottom();
    if !typed_command || !commands::is_command(&line) {
        if app.turn_running() {
            // Held here, shown above the input, until the turn ends.
            app.queued.push(crate::frontend::tui::app::Queued {
                text: line,
                shell: typed_shell,
            });
        } else {
            actions.push(Action::Send(input_for(line, typed_shell)));
        }
        return actions;
    }
    app.transcript.push(EntryKind::User(line.clone()));
    match commands::parse(&line) {
        Ok(command) => actions.extend(run_command(app, command)),
        Err(e) => app.transcript.push(EntryKind::Error(e.to_string())),
    }
    actions
}

/// The text `/copy` hands out: every control character but newline and tab
/// (ESC, so no CSI, OSC or bracketed-paste end marker, the other C0 and C1
/// characters, DEL) removed, so what is pasted is what was shown; and how
/// many were removed.
pub fn copyable(text: &str) -> (String, usize) {
    let mut removed = 0;
    let kept = text
        .chars()
        .filter(|&c| {
            let keep = !c.is_control() || c == '\n' || c == '\t';
            if !keep {
                removed += 1;
            }
            keep
        })
        .collect();
    (kept, removed)
}

/// A parsed command: the ones that only concern the screen run here; the
/// rest go to the agent.
fn run_command(app: &mut App, command: Command) -> Vec<Action> {
    match command {
        Command::Quit => vec![Action::Quit],
        Command::Help => {
            app.help = Some(0);
            Vec::new()
        }
        Command::Copy => match app.last_answer.as_deref().map(copyable) {
            Some((answer, removed)) => {
                let n = answer.chars().count();
                let removed = match removed {
                    0 => String::new(),
                    1 => "; 1 control character removed".to_string(),
                    r => format!("; {r} control characters removed"),
                };
                match &app.clipboard {
                    Clipboard::File(path) => vec![Action::CopyToFile {
                        path: path.clone(),
                        text: answer,
                        characters: n,
                        removed,
                    }],
                    Clipboard::Osc52 => {
                        app.transcript.push(EntryKind::Notice(format!(
                            "Sent the last answer ({n} characters{removed}) to your terminal's clipboard (OSC 52; the terminal does not say whether it took it)."
                        )));
                        vec![Action::Copy(answer)]
                    }
                }
            }
            None => {
                app.transcript
                    .push(EntryKind::Notice("There is no answer to copy yet.".into()));
                Vec::new()
            }
        },
        Command::Mode(None) => {
            app.picker = Some(super::update::mode_picker(app.status.mode));
            Vec::new()
        }
        Command::Rewind(None) => super::rewind::open(app),
        Command::Rewind(Some(_)) if app.turn_running() => {
            app.transcript
                .push(EntryKind::Notice(super::rewind::WAIT_FOR_TURN.to_string()));
            Vec::new()
        }
        Command::Resume(None) => {
            app.sessions_for_resume = true;
            send_command(app, Command::Resume(None))
        }
        other => send_command(app, other),
    }
}

/// Sends `command` to the agent, saying so when it has to wait for a turn.
pub fn send_command(app: &mut App, command: Command) -> Vec<Action> {
    if app.turn_running() {
        app.transcript
            .push(EntryKind::Notice(COMMAND_WAITS.to_string()));
    }
    vec![Action::Send(Input::Command(command))]
}
