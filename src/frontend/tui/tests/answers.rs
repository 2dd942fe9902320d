//! The questions' keys driven through `keymap` and `update`: each dialog
//! key gives its answer on the oneshot, Enter alone rejects, a note goes
//! with a rejection, nothing typed into a dialog reaches the input, keys
//! typed before a question arms answer nothing, queued questions come in
//! order, and the mode question switches only on `y`.

use std::time::Duration;

use crossterm::event::Event;

use crate::agent::{AgentEvent, Input};
use crate::policy::{BashConfinement, ConsentAnswer, Mode};

use super::super::app::Layer;
use super::*;

#[test]
fn each_dialog_key_gives_its_answer() {
    for (code, answer) in [
        (KeyCode::Char('y'), ConsentAnswer::AllowOnce),
        (KeyCode::Char('a'), ConsentAnswer::AllowForSession),
        (KeyCode::Esc, ConsentAnswer::Reject),
        (KeyCode::Char('v'), ConsentAnswer::NeverThisRun),
    ] {
        let mut app = app();
        let mut rx = open_question(&mut app);
        let rest = perform(press(&mut app, key(code)));
        assert!(rest.is_empty(), "{code:?}: {rest:?}");
        assert_eq!(rx.try_recv(), Ok(answer), "{code:?}");
        assert_eq!(app.layer(), Layer::Input);
    }
}

#[test]
fn n_then_text_rejects_with_a_note() {
    let mut app = app();
    let mut rx = open_question(&mut app);
    assert!(press(&mut app, key(KeyCode::Char('n'))).is_empty());
    assert!(rx.try_recv().is_err(), "n alone opens the note");
    type_text(&mut app, "use rg instead");
    press(&mut app, key(KeyCode::Backspace));
    type_text(&mut app, "d");
    let screen = shot(&app, 100, 30);
    assert!(screen.contains("> use rg instead"), "{screen}");
    assert!(
        screen.contains("Enter sends; Esc rejects without one"),
        "{screen}"
    );
    perform(press(&mut app, key(KeyCode::Enter)));
    let reply = rx.try_recv_reply().unwrap();
    assert_eq!(reply.answer, ConsentAnswer::Reject);
    assert_eq!(reply.note.as_deref(), Some("use rg instead"));
    assert!(app.input_is_empty(), "the note never reaches the input");
    assert_eq!(app.layer(), Layer::Input);
}

#[test]
fn tab_opens_the_note_and_an_empty_or_escaped_note_is_a_plain_rejection() {
    for (text, last) in [("", KeyCode::Enter), ("not now", KeyCode::Esc)] {
        let mut app = app();
        let mut rx = open_question(&mut app);
        press(&mut app, key(KeyCode::Tab));
        type_text(&mut app, text);
        perform(press(&mut app, key(last)));
        let reply = rx.try_recv_reply().unwrap();
        assert_eq!(reply.answer, ConsentAnswer::Reject);
        assert_eq!(reply.note, None, "{text:?} {last:?}");
    }
}

#[test]
fn a_note_key_before_arming_is_typed_ahead() {
    let mut app = app();
    start_turn(&mut app, "Summarize notes.md", 1);
    let (event, mut rx) = consent("bash", "c1", bash_fields("ls"));
    agent(&mut app, event);
    assert!(press(&mut app, key(KeyCode::Char('n'))).is_empty());
    assert_eq!(app.input_text(), "n");
    assert!(app.consents.front().is_some_and(|o| o.note.is_none()));
    assert!(rx.try_recv().is_err());
}

#[test]
fn enter_with_the_initial_focus_rejects() {
    let mut app = app();
    let mut rx = open_question(&mut app);
    perform(press(&mut app, key(KeyCode::Enter)));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::Reject));
}

#[test]
fn focus_moves_and_enter_answers_the_focused_choice() {
    for (moves, answer) in [
        (vec![KeyCode::Left, KeyCode::Left], ConsentAnswer::AllowOnce),
        (vec![KeyCode::Left], ConsentAnswer::AllowForSession),
        (vec![KeyCode::Right], ConsentAnswer::NeverThisRun),
        (
            vec![KeyCode::Right, KeyCode::Right],
            ConsentAnswer::AllowOnce,
        ),
        (vec![KeyCode::Right, KeyCode::Left], ConsentAnswer::Reject),
    ] {
        let mut app = app();
        let mut rx = open_question(&mut app);
        for code in &moves {
            assert!(press(&mut app, key(*code)).is_empty());
        }
        perform(press(&mut app, key(KeyCode::Enter)));
        assert_eq!(rx.try_recv(), Ok(answer), "{moves:?}");
    }
}

#[test]
fn keys_typed_in_a_dialog_never_reach_the_input() {
    let mut app = app();
    let mut rx = open_question(&mut app);
    let mut actions = type_text(&mut app, "hello world? /quit");
    actions.extend(press(&mut app, ctrl('j')));
    actions.extend(press(&mut app, ctrl('d')));
    actions.extend(press(&mut app, key(KeyCode::Backspace)));
    actions.extend(press(&mut app, key(KeyCode::BackTab)));
    actions.extend(press(&mut app, key(KeyCode::F(1))));
    if let Some(msg) = keymap::map(&app, &Event::Paste("pasted".into())) {
        actions.extend(update(&mut app, msg));
    }
    assert!(actions.is_empty(), "{actions:?}");
    assert!(app.input_is_empty());
    assert!(app.picker.is_none() && app.help.is_none());
    // The question is still open and unanswered.
    assert_eq!(app.layer(), Layer::Consent);
    assert!(rx.try_recv().is_err());
    perform(press(&mut app, key(KeyCode::Esc)));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::Reject));
    assert!(app.input_is_empty());
}

#[test]
fn queued_dialogs_come_in_order() {
    let mut app = app();
    start_turn(&mut app, "Do three things", 1);
    let mut receivers = Vec::new();
    for (i, command) in ["one", "two", "three"].iter().enumerate() {
        let (event, rx) = consent("bash", &format!("c{i}"), bash_fields(command));
        agent(&mut app, event);
        receivers.push(rx);
    }
    assert!(shot(&app, 90, 24).contains("2 more requests waiting"));
    assert!(shot(&app, 90, 24).contains("Command: \"one\""));
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Char('y'))));
    let screen = shot(&app, 90, 24);
    assert!(screen.contains("Command: \"two\"") && screen.contains("1 more request waiting"));
    // The next question arms on its own: a key right after the answer is
    // typed ahead, not an answer.
    assert!(press(&mut app, key(KeyCode::Char('n'))).is_empty());
    assert_eq!(app.input_text(), "n");
    app.set_input("");
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Esc)));
    let screen = shot(&app, 90, 24);
    assert!(screen.contains("Command: \"three\"") && !screen.contains("more request"));
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Char('a'))));
    // Opened less than a second after a key: `a` asks once more.
    assert!(shot(&app, 90, 24).contains("Allow bash for the rest of this session? [y/N]"));
    perform(press(&mut app, key(KeyCode::Char('y'))));
    let answers: Vec<_> = receivers.iter_mut().map(|rx| rx.try_recv()).collect();
    assert_eq!(
        answers,
        vec![
            Ok(ConsentAnswer::AllowOnce),
            Ok(ConsentAnswer::Reject),
            Ok(ConsentAnswer::AllowForSession)
        ]
    );
    assert_eq!(app.layer(), Layer::Input);
}

#[test]
fn a_dropped_question_closes_its_dialog() {
    let mut app = app();
    let rx = open_question(&mut app);
    drop(rx);
    agent(&mut app, AgentEvent::Notice("Interrupted.".into()));
    assert_eq!(app.layer(), Layer::Input);
}

#[test]
fn the_answer_line_appears_in_the_chat() {
    let mut app = app();
    let _rx = open_question(&mut app);
    perform(press(&mut app, key(KeyCode::Char('a'))));
    agent(
        &mut app,
        AgentEvent::Answered {
            call_id: "c1".into(),
            tool: "bash".into(),
            answer: ConsentAnswer::AllowForSession,
            line: "Allowed bash for this session.".into(),
        },
    );
    assert!(shot(&app, 80, 20).contains("Allowed bash for this session."));
}

#[test]
fn the_mode_question_switches_only_on_y() {
    let ask = |app: &mut App| ask_bypass(app, &BashConfinement::Unconfined);
    for (code, yes) in [
        (KeyCode::Char('y'), true),
        (KeyCode::Char('n'), false),
        (KeyCode::Enter, false),
        (KeyCode::Esc, false),
        (KeyCode::Char('x'), false),
    ] {
        let mut app = app();
        ask(&mut app);
        arm(&mut app);
        assert_eq!(app.layer(), Layer::ModeQuestion);
        let actions = press(&mut app, key(code));
        assert_eq!(
            sent(&actions),
            vec![Input::ConfirmMode {
                to: Mode::Bypass,
                yes
            }],
            "{code:?}"
        );
        assert!(app.input_is_empty());
    }
}

#[test]
fn typing_over_a_question_that_is_not_armed_answers_nothing_and_is_kept() {
    let mut app = app();
    start_turn(&mut app, "Summarize notes.md", 1);
    type_text(&mut app, "and then ");
    let (event, mut rx) = consent("bash", "c1", bash_fields("make test"));
    agent(&mut app, event);
    // Every key of a sentence typed on (one each 120 ms) stays text.
    let mut actions = Vec::new();
    for c in "yes, allow all".chars() {
        app.now += Duration::from_millis(120);
        actions.extend(press(&mut app, key(KeyCode::Char(c))));
    }
    app.now += Duration::from_millis(120);
    actions.extend(press(&mut app, key(KeyCode::Enter)));
    actions.extend(press(&mut app, key(KeyCode::Esc)));
    assert!(actions.is_empty(), "{actions:?}");
    assert!(rx.try_recv().is_err());
    assert_eq!(app.input_text(), "and then yes, allow all");
    assert!(shot(&app, 90, 24).contains("keys arm when you stop typing"));
    // 300 ms of quiet (and 500 ms on screen): armed, and the border says so.
    app.now += Duration::from_millis(300);
    assert!(shot(&app, 90, 24).contains("keys armed"));
    // Opened under typing: `a` asks again, any key but y goes back.
    perform(press(&mut app, key(KeyCode::Char('a'))));
    assert!(shot(&app, 90, 24).contains("Allow bash for the rest of this session? [y/N]"));
    perform(press(&mut app, key(KeyCode::Char('x'))));
    assert!(rx.try_recv().is_err());
    assert!(shot(&app, 90, 24).contains("[n reject]"));
    perform(press(&mut app, key(KeyCode::Char('v'))));
    assert!(shot(&app, 90, 24).contains("Never allow bash again while mino runs? [y/N]"));
    perform(press(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::NeverThisRun));
    assert_eq!(app.input_text(), "and then yes, allow all");
}

#[test]
fn a_question_opened_in_quiet_takes_a_at_once() {
    let mut app = app();
    start_turn(&mut app, "Summarize notes.md", 5);
    let (event, mut rx) = consent("bash", "c1", bash_fields("make test"));
    agent(&mut app, event);
    // Before the time on screen: nothing.
    app.now += Duration::from_millis(400);
    assert!(press(&mut app, key(KeyCode::Char('a'))).is_empty());
    assert_eq!(app.input_text(), "a");
    app.set_input("");
    app.now += Duration::from_millis(400);
    // 800 ms on screen, 400 ms quiet, but the key at 400 ms makes it hurried.
    perform(press(&mut app, key(KeyCode::Char('a'))));
    assert!(rx.try_recv().is_err());
    perform(press(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::AllowForSession));

    // No key near it at all: `a` answers at once.
    let mut app = super::app();
    start_turn(&mut app, "Summarize notes.md", 5);
    let (event, mut rx) = consent("bash", "c2", bash_fields("make test"));
    agent(&mut app, event);
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Char('a'))));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::AllowForSession));
}

#[test]
fn the_next_question_right_after_a_or_v_takes_them_without_asking_again() {
    for (code, answer) in [
        ('a', ConsentAnswer::AllowForSession),
        ('v', ConsentAnswer::NeverThisRun),
    ] {
        let mut app = app();
        let mut first = open_question(&mut app);
        perform(press(&mut app, key(KeyCode::Char(code))));
        assert_eq!(first.try_recv(), Ok(answer));
        // In auto mode `a` allows one command line: the next command asks,
        // the instant after the answer.
        let (event, mut second) = consent("bash", "c2", bash_fields("ls -l"));
        agent(&mut app, event);
        arm(&mut app);
        perform(press(&mut app, key(KeyCode::Char(code))));
        assert_eq!(second.try_recv(), Ok(answer), "{code}: asked twice");
        assert_eq!(app.layer(), Layer::Input);
    }
    // A key typed after the answer is typing again: the question is hurried.
    let mut app = app();
    let mut first = open_question(&mut app);
    perform(press(&mut app, key(KeyCode::Char('a'))));
    assert_eq!(first.try_recv(), Ok(ConsentAnswer::AllowForSession));
    app.now += Duration::from_millis(50);
    type_text(&mut app, "x");
    let (event, mut second) = consent("bash", "c2", bash_fields("ls -l"));
    agent(&mut app, event);
    arm(&mut app);
    perform(press(&mut app, key(KeyCode::Char('a'))));
    assert!(second.try_recv().is_err(), "typing before it: asks [y/N]");
    perform(press(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(second.try_recv(), Ok(ConsentAnswer::AllowForSession));
}

#[test]
fn the_mode_question_takes_no_key_before_it_arms() {
    let mut app = app();
    type_text(&mut app, "/mode bypass");
    press(&mut app, key(KeyCode::Enter));
    ask_bypass(&mut app, &BashConfinement::Unconfined);
    app.now += Duration::from_millis(100);
    assert!(sent(&press(&mut app, key(KeyCode::Char('y')))).is_empty());
    assert_eq!(app.layer(), Layer::ModeQuestion);
    assert_eq!(app.input_text(), "y");
    assert!(shot(&app, 90, 24).contains("keys arm when you stop typing"));
    arm(&mut app);
    assert_eq!(
        sent(&press(&mut app, key(KeyCode::Char('y')))),
        vec![Input::ConfirmMode {
            to: Mode::Bypass,
            yes: true
        }]
    );
}

#[test]
fn a_question_offering_once_or_not_shows_and_takes_only_those() {
    let mut app = app();
    start_turn(&mut app, "clean up", 1);
    let offer = crate::policy::Offer {
        answers: &[ConsentAnswer::AllowOnce, ConsentAnswer::Reject],
        command: None,
    };
    let (event, mut rx) = consent_offering("bash", "c1", bash_fields("rm -rf ~"), offer);
    agent(&mut app, event);
    arm(&mut app);
    let screen = shot(&app, 120, 30);
    assert!(screen.contains("allow once"), "{screen}");
    assert!(!screen.contains("for this session"), "{screen}");
    assert!(!screen.contains("never"), "{screen}");
    assert!(
        screen.contains("Answer the question above: y or n."),
        "{screen}"
    );
    // The letters of answers not offered do nothing.
    for letter in ['a', 'v'] {
        assert!(perform(press(&mut app, key(KeyCode::Char(letter)))).is_empty());
        assert!(rx.try_recv().is_err(), "{letter}");
        assert_eq!(app.layer(), Layer::Consent);
    }
    // Focus moves between the two offered answers only.
    press(&mut app, key(KeyCode::Right));
    assert_eq!(
        app.consents.front().unwrap().focus,
        ConsentAnswer::AllowOnce
    );
    press(&mut app, key(KeyCode::Right));
    assert_eq!(app.consents.front().unwrap().focus, ConsentAnswer::Reject);
    perform(press(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(rx.try_recv(), Ok(ConsentAnswer::AllowOnce));
}

#[test]
fn a_command_scoped_question_says_it_allows_that_command_line() {
    let mut app = app();
    start_turn(&mut app, "list", 1);
    let offer = crate::policy::Offer {
        answers: &ConsentAnswer::ALL,
        command: Some("ls -l".into()),
    };
    let (event, _rx) = consent_offering("bash", "c1", bash_fields("ls -l"), offer);
    agent(&mut app, event);
    arm(&mut app);
    let screen = shot(&app, 140, 30);
    assert!(
        screen.contains("allow this exact command line for this session"),
        "{screen}"
    );
    assert!(!screen.contains("allow bash for this session"), "{screen}");
}

#[test]
fn the_rule_question_shows_the_rule_and_appends_only_on_y() {
    for (code, yes) in [
        (KeyCode::Char('y'), true),
        (KeyCode::Char('n'), false),
        (KeyCode::Esc, false),
    ] {
        let mut app = app();
        agent(
            &mut app,
            AgentEvent::ConfirmRule {
                toml: "[[rules]]\ntool = \"write_file\"\ndecision = \"allow\"\n".into(),
                file: "/home/u/.config/mino/config.toml".into(),
                ask: "Append this rule to /home/u/.config/mino/config.toml? [y/N]".into(),
            },
        );
        arm(&mut app);
        assert_eq!(app.layer(), Layer::ModeQuestion);
        let screen = shot(&app, 90, 20);
        assert!(screen.contains("tool = \"write_file\""), "{screen}");
        assert!(
            screen.contains("Append this rule to /home/u/.config/mino/config.toml? [y/N]"),
            "{screen}"
        );
        // The status bar and the input say what y does here: it appends.
        assert!(
            screen.contains("y appends · other keys save nothing"),
            "{screen}"
        );
        assert!(
            screen.contains("y appends; any other key saves nothing."),
            "{screen}"
        );
        assert!(!screen.contains("switches"), "{screen}");
        let actions = press(&mut app, key(code));
        assert_eq!(sent(&actions), vec![Input::ConfirmRule { yes }], "{code:?}");
        assert_eq!(app.layer(), Layer::Input);
    }
}

#[test]
fn settings_text_taller_than_the_screen_scrolls_under_its_question() {
    let mut app = app();
    let toml: String = (1..=12)
        .map(|i| format!("[[shell_gate.trusted_executables]]\npath = \"/usr/bin/tool{i}\"\n\n"))
        .collect();
    agent(
        &mut app,
        AgentEvent::ConfirmRule {
            toml,
            file: "/home/u/.config/mino/config.toml".into(),
            ask: "Trust these tools? [y/N]".into(),
        },
    );
    arm(&mut app);
    let screen = shot(&app, 90, 20);
    assert!(screen.contains("Trust these tools? [y/N]"), "{screen}");
    assert!(screen.contains("↑↓ scroll 1-"), "{screen}");
    assert!(screen.contains("tool1\""), "{screen}");
    assert!(!screen.contains("tool12\""), "{screen}");
    for _ in 0..10 {
        assert!(press(&mut app, key(KeyCode::PageDown)).is_empty());
    }
    assert_eq!(
        app.layer(),
        Layer::ModeQuestion,
        "scrolling answers nothing"
    );
    let screen = shot(&app, 90, 20);
    assert!(screen.contains("Trust these tools? [y/N]"), "{screen}");
    assert!(screen.contains("tool12\""), "{screen}");
    assert!(!screen.contains("tool1\""), "{screen}");
    let actions = press(&mut app, key(KeyCode::Char('y')));
    assert_eq!(sent(&actions), vec![Input::ConfirmRule { yes: true }]);
}
