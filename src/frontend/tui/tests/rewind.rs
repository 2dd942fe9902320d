//! `/rewind` on the full screen: Esc twice opens it only on an empty input
//! between turns, the picker (newest first, pruned rows not choosable),
//! the dialog's three choices and its per-file confirmation, and the prompt
//! put back in the input.

use crossterm::event::KeyCode;
use insta::assert_snapshot;

use crate::agent::{AgentEvent, Command, Input};
use crate::checkpoint::Change;
use crate::checkpoint::changes::FileDelta;
use crate::checkpoint::restore::Restored;
use crate::checkpoint::rewind::{Listed, Offer, What};

use super::*;

fn listed(n: usize, prompt: &str, pruned: bool) -> Listed {
    Listed {
        n,
        prompt: prompt.into(),
        time: 0,
        checkpoint: "0".repeat(64),
        pruned,
        files: if pruned {
            Vec::new()
        } else {
            vec![FileDelta {
                path: format!("src/f{n}.rs"),
                change: Change::Changed,
                added: n,
                removed: 1,
            }]
        },
    }
}

fn offer(kept: &[&str]) -> Offer {
    Offer {
        n: 2,
        prompt: "delete src and write new.txt".into(),
        code: Restored {
            restored: vec!["notes.md".into(), "src/a.rs".into()],
            deleted: vec!["new.txt".into()],
            kept: kept.iter().map(|k| (*k).to_string()).collect(),
            ..Restored::default()
        },
        added: 12,
        removed: 3,
        prompts_dropped: 2,
    }
}

#[test]
fn esc_twice_on_an_empty_idle_input_asks_for_the_prompts_and_esc_in_a_turn_interrupts() {
    let mut app = app();
    assert!(
        sent(&press(&mut app, key(KeyCode::Esc))).is_empty(),
        "once does nothing"
    );
    // Another key in between disarms it.
    type_text(&mut app, "x");
    press(&mut app, ctrl('u'));
    assert!(sent(&press(&mut app, key(KeyCode::Esc))).is_empty());
    let actions = press(&mut app, key(KeyCode::Esc));
    assert_eq!(sent(&actions), vec![Input::Command(Command::Rewind(None))]);
    // Not on a typed input.
    type_text(&mut app, "draft");
    press(&mut app, key(KeyCode::Esc));
    assert!(sent(&press(&mut app, key(KeyCode::Esc))).is_empty());
    assert_eq!(app.input_text(), "draft");
    // During a turn Esc keeps its meaning: it interrupts.
    let mut app = super::app();
    start_turn(&mut app, "work", 1);
    for _ in 0..2 {
        let actions = press(&mut app, key(KeyCode::Esc));
        assert!(sent(&actions).is_empty());
        assert!(actions.iter().any(|a| matches!(a, Action::Interrupt)));
    }
    // And /rewind typed during a turn is refused, not queued.
    type_text(&mut app, "/rewind");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert!(sent(&actions).is_empty());
    assert!(shot(&app, 100, 20).contains("/rewind works between turns"));
}

#[test]
fn the_picker_lists_prompts_newest_first_and_a_pruned_one_cannot_be_chosen() {
    let mut app = app();
    agent(
        &mut app,
        AgentEvent::RewindPrompts(vec![
            listed(1, "first, pruned", true),
            listed(2, "add a parser", false),
            listed(3, "fix \u{1b}[31mthe tests\nand more", false),
        ]),
    );
    assert_snapshot!("rewind_picker", shot(&app, 90, 14));
    let picker = app.picker.as_ref().expect("picker");
    assert_eq!(picker.items[0].value, "3");
    assert_eq!(picker.items[2].value, crate::frontend::tui::rewind::PRUNED);
    // The pruned one: Enter keeps the picker and says why.
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    let actions = press(&mut app, key(KeyCode::Enter));
    assert!(sent(&actions).is_empty());
    assert!(app.picker.is_some());
    press(&mut app, key(KeyCode::Up));
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Command(Command::Rewind(Some(2)))]
    );
}

#[test]
fn a_file_changed_outside_mino_is_kept_unless_confirmed_in_the_dialog() {
    let mut app = app();
    agent(
        &mut app,
        AgentEvent::RewindPrompts(vec![listed(1, "one", false), listed(2, "two", false)]),
    );
    press(&mut app, key(KeyCode::Enter));
    agent(
        &mut app,
        AgentEvent::RewindOffer(offer(&["notes.md", "docs/x.md"])),
    );
    assert_snapshot!("rewind_dialog", shot(&app, 100, 24));
    // Esc backs out to the picker, and the offer comes again.
    press(&mut app, key(KeyCode::Esc));
    assert!(app.rewind.is_none() && app.picker.is_some());
    agent(
        &mut app,
        AgentEvent::RewindOffer(offer(&["notes.md", "docs/x.md"])),
    );
    // Unconfirmed: code and conversation restore nothing kept.
    let mut unconfirmed = app_clone_dialog(&app);
    let actions = press(&mut unconfirmed, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Rewind {
            to: 2,
            what: What::Both,
            force: Vec::new()
        }]
    );
    // Confirm notes.md (the first kept row, after the three choices).
    for _ in 0..3 {
        press(&mut app, key(KeyCode::Down));
    }
    press(&mut app, key(KeyCode::Char(' ')));
    assert!(shot(&app, 100, 24).contains("[x] restore notes.md"));
    // Code only: the row just above.
    press(&mut app, key(KeyCode::Up));
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Rewind {
            to: 2,
            what: What::Code,
            force: vec!["notes.md".to_string()]
        }]
    );
    assert!(app.rewind.is_none());
    // Done: the line, and the prompt back in the input.
    agent(
        &mut app,
        AgentEvent::Rewound {
            line: "Rewound to before prompt 2: 2 file(s) restored, 1 deleted.".into(),
            prompt: Some("two".into()),
        },
    );
    assert_eq!(app.input_text(), "two");
    assert!(shot(&app, 100, 24).contains("Rewound to before prompt 2"));
}

/// A state whose dialog is the same as `app`'s.
fn app_clone_dialog(app: &App) -> App {
    let mut other = super::app();
    other.rewind = app.rewind.clone();
    other
}
