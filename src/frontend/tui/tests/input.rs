//! The input box's own features driven through `keymap` and `update`:
//! `@path` completion from the project's listed files, `!command` sent as
//! the user's shell command, and queued `!` commands.

use crate::agent::Input;

use super::*;

fn sent(actions: &[Action]) -> Vec<Input> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(input) => Some(input.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn typing_at_asks_for_the_files_once_and_tab_completes_a_path() {
    let mut app = app();
    let actions = type_text(&mut app, "read @");
    assert!(
        matches!(actions.as_slice(), [Action::ListFiles]),
        "{actions:?}"
    );
    assert!(type_text(&mut app, "no").is_empty(), "asked only once");
    update(
        &mut app,
        Msg::Files(vec![
            "Cargo.toml".into(),
            "notes.md".into(),
            "src/notes_view.rs".into(),
            "src/main.rs".into(),
        ]),
    );
    let labels: Vec<String> = app.completions().into_iter().map(|(l, _)| l).collect();
    assert_eq!(labels, vec!["@notes.md", "@src/notes_view.rs"]);
    assert!(shot(&app, 80, 20).contains("@src/notes_view.rs"));
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input_text(), "read @src/notes_view.rs ");
    assert!(app.completions().is_empty());
    // Enter completes too, and does not send.
    type_text(&mut app, "and @ca");
    assert!(sent(&press(&mut app, key(KeyCode::Enter))).is_empty());
    assert_eq!(app.input_text(), "read @src/notes_view.rs and @Cargo.toml ");
    // Then Enter sends the prompt with its mentions.
    assert_eq!(
        sent(&press(&mut app, key(KeyCode::Enter))),
        vec![Input::Prompt(
            "read @src/notes_view.rs and @Cargo.toml".into()
        )]
    );
}

#[test]
fn a_turn_end_lists_the_files_again_at_the_next_at() {
    let mut app = app();
    type_text(&mut app, "@");
    update(&mut app, Msg::Files(vec!["a.txt".into()]));
    press(&mut app, ctrl('u'));
    start_turn(&mut app, "make b.txt", 1);
    agent(
        &mut app,
        AgentEvent::TurnEnd {
            requests: 1,
            tool_calls: 1,
            stop: crate::agent::TurnStop::Completed,
        },
    );
    let actions = type_text(&mut app, "@");
    assert!(matches!(actions.as_slice(), [Action::ListFiles]));
}

#[test]
fn bang_sends_a_shell_command_not_a_prompt() {
    let mut app = app();
    type_text(&mut app, "!ls -la");
    assert_eq!(
        sent(&press(&mut app, key(KeyCode::Enter))),
        vec![Input::Shell("ls -la".into())]
    );
    // A lone `!` is a prompt like any other text.
    type_text(&mut app, "!");
    assert_eq!(
        sent(&press(&mut app, key(KeyCode::Enter))),
        vec![Input::Prompt("!".into())]
    );
    // Queued during a turn, it still runs as a command.
    start_turn(&mut app, "first", 1);
    type_text(&mut app, "!cargo test");
    assert!(sent(&press(&mut app, key(KeyCode::Enter))).is_empty());
    let actions = agent(
        &mut app,
        AgentEvent::TurnEnd {
            requests: 1,
            tool_calls: 0,
            stop: crate::agent::TurnStop::Completed,
        },
    );
    assert_eq!(sent(&actions), vec![Input::Shell("cargo test".into())]);
}

#[test]
fn sent_lines_are_kept_once() {
    let kept = |actions: Vec<Action>| -> Vec<String> {
        actions
            .into_iter()
            .filter_map(|a| match a {
                Action::KeepPrompt(line) => Some(line),
                _ => None,
            })
            .collect()
    };
    let mut app = app();
    type_text(&mut app, "fix the tests");
    assert_eq!(
        kept(press_keeping(&mut app, key(KeyCode::Enter))),
        vec!["fix the tests"]
    );
    // The same line again is not kept twice in a row.
    type_text(&mut app, "fix the tests");
    assert!(kept(press_keeping(&mut app, key(KeyCode::Enter))).is_empty());
    type_text(&mut app, "/help");
    assert_eq!(
        kept(press_keeping(&mut app, key(KeyCode::Enter))),
        vec!["/help"]
    );
}
