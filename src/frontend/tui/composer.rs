//! The input box's side of `update`: typing, pasting, history, the command
//! popup, and what Enter sends (a prompt, or a parsed slash command; a
//! command that does not parse shows its error and changes nothing). It
//! never reads key codes and never decides.

use crate::agent::commands::{self, CommandSpec};
use crate::agent::{Command, Input};

use super::app::{App, Clipboard};
use super::msg::{Action, Msg};
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
        Msg::Paste(text) => {
            let text = text.replace("\r\n", "\n").replace('\r', "\n");
            app.insert_text(&text);
            edited(app);
        }
        Msg::HistoryPrev => history_prev(app),
        Msg::HistoryNext => history_next(app),
        Msg::Complete { submit: send } => {
            let options = app.completions();
            let Some((name, _)) = options.get(app.completion.min(options.len().saturating_sub(1)))
            else {
                return Vec::new();
            };
            // A command that takes an argument is completed with a space after it.
            let takes_argument =
                CommandSpec::find(name).is_some_and(|spec| spec.argument.is_some());
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
    Vec::new()
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
    let text = app.input_expanded();
    let line = text.trim();
    if line.is_empty() {
        return Vec::new();
    }
    let line = line.to_string();
    if app.history.entries.last() != Some(&line) {
        app.history.entries.push(line.clone());
    }
    app.history.browsing = None;
    app.pastes.clear();
    app.set_input("");
    edited(app);
    app.transcript.to_bottom();
    if !commands::is_command(&line) {
        if app.turn_running() {
            app.transcript.push(EntryKind::Notice(
                "Your prompt runs when this turn ends.".into(),
            ));
        }
        return vec![Action::Send(Input::Prompt(line))];
    }
    app.transcript.push(EntryKind::User(line.clone()));
    match commands::parse(&line) {
        Ok(command) => run_command(app, command),
        Err(e) => {
            app.transcript.push(EntryKind::Error(e.to_string()));
            Vec::new()
        }
    }
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
        Command::Copy => match app.last_answer.clone() {
            Some(answer) => match (&app.clipboard, answer.chars().count()) {
                (Clipboard::File(path), n) => vec![Action::CopyToFile {
                    path: path.clone(),
                    text: answer,
                    characters: n,
                }],
                (Clipboard::Osc52, n) => {
                    app.transcript.push(EntryKind::Notice(format!(
                        "Sent the last answer ({n} characters) to your terminal's clipboard (OSC 52; the terminal does not say whether it took it)."
                    )));
                    vec![Action::Copy(answer)]
                }
            },
            None => {
                app.transcript
                    .push(EntryKind::Notice("There is no answer to copy yet.".into()));
                Vec::new()
            }
        },
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
