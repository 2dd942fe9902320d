//! The plan hand-off without a terminal: offered below an answer given in
//! plan mode (and only then), its keys, the prefilled next prompt, and
//! typing another prompt instead.

use crossterm::event::KeyCode;

use crate::agent::{AgentEvent, Command, Input, TurnStop};
use crate::policy::Mode;

use super::super::plan_offer::{GO_AHEAD, OFFER};
use super::*;

/// A turn in `mode` that ends with the answer `answer`.
fn answered(mode: Mode, answer: &str, stop: TurnStop) -> App {
    let mut app = app_in(mode);
    start_turn(&mut app, "Plan the release notes fix", 1);
    agent(&mut app, AgentEvent::AssistantDelta(answer.into()));
    agent(&mut app, AgentEvent::AssistantDone);
    turn_end(&mut app, stop);
    app
}

#[test]
fn an_answer_in_plan_mode_offers_to_run_the_plan_below_it() {
    let app = answered(Mode::Plan, "1. Fix the title.", TurnStop::Completed);
    let screen = shot(&app, 100, 20);
    assert!(screen.contains(OFFER), "{screen}");
    let answer_row = screen.lines().position(|l| l.contains("1. Fix the title."));
    let offer_row = screen.lines().position(|l| l.contains(OFFER));
    assert!(answer_row < offer_row, "{screen}");
    // Not in another mode, nor after a turn that did not end with an answer.
    for app in [
        answered(Mode::Manual, "done", TurnStop::Completed),
        answered(Mode::Plan, "cut", TurnStop::Interrupted),
        answered(Mode::Plan, "cut", TurnStop::Length),
    ] {
        assert!(!app.plan_offer);
        assert!(!shot(&app, 100, 20).contains(OFFER));
    }
}

#[test]
fn each_key_chooses_and_the_next_prompt_is_prefilled() {
    for (letter, mode) in [
        ('m', Mode::Manual),
        ('e', Mode::AcceptEdits),
        ('a', Mode::Auto),
    ] {
        let mut app = answered(Mode::Plan, "the plan", TurnStop::Completed);
        let actions = press(&mut app, key(KeyCode::Char(letter)));
        // As `/mode NAME`: a looser mode asks its usual question.
        assert_eq!(
            sent(&actions),
            vec![Input::Command(Command::Mode(Some(mode)))],
            "{letter}"
        );
        assert!(!app.plan_offer);
        assert_eq!(app.input_text(), GO_AHEAD);
        // Enter sends it.
        let actions = press(&mut app, key(KeyCode::Enter));
        assert_eq!(sent(&actions), vec![Input::Prompt(GO_AHEAD.into())]);
    }
}

#[test]
fn k_keeps_planning_and_typing_another_prompt_closes_the_offer() {
    let mut app = answered(Mode::Plan, "the plan", TurnStop::Completed);
    assert!(press(&mut app, key(KeyCode::Char('k'))).is_empty());
    assert!(!app.plan_offer);
    assert!(app.input_is_empty());
    assert!(shot(&app, 100, 20).contains("Still planning"));

    let mut app = answered(Mode::Plan, "the plan", TurnStop::Completed);
    // A prompt of its own: the first key types, and the offer closes, so
    // the letters after it type too.
    let actions = type_text(&mut app, "fix it");
    assert!(sent(&actions).is_empty());
    assert!(!app.plan_offer);
    assert_eq!(app.input_text(), "fix it");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(sent(&actions), vec![Input::Prompt("fix it".into())]);

    // Leaving plan mode another way (Shift+Tab) closes it too.
    let mut app = answered(Mode::Plan, "the plan", TurnStop::Completed);
    agent(&mut app, AgentEvent::ModeChanged(Mode::Manual));
    assert!(!app.plan_offer);
    assert!(!shot(&app, 100, 20).contains(OFFER));
}
