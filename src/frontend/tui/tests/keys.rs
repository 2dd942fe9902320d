//! The keymap's table and the keys that act on the program, driven through
//! `keymap` and `update`: help lists every binding and the status bar
//! hints the state's, no binding is shadowed, Esc and Ctrl-C interrupt a
//! turn, Shift+Tab opens the mode picker, help, quitting, commands typed
//! during a turn, the session picker and `/copy`. The questions' keys are
//! in `answers`, the input's in `input`.

use crate::agent::{AgentEvent, Command, Input};
use crate::policy::{ConsentAnswer, Mode};

use super::super::app::Layer;
use super::super::update::COMMAND_WAITS;
use super::*;

#[test]
fn esc_and_ctrl_c_during_a_turn_interrupt() {
    let mut app = app();
    start_turn(&mut app, "Run the tests", 1);
    assert!(matches!(
        press(&mut app, key(KeyCode::Esc)).as_slice(),
        [Action::Interrupt]
    ));
    assert!(matches!(
        press(&mut app, ctrl('c')).as_slice(),
        [Action::Interrupt]
    ));
    // With a question open, Ctrl-C still interrupts (the agent then drops
    // the question).
    let (event, _rx) = consent("bash", "c1", bash_fields("make test"));
    agent(&mut app, event);
    assert!(matches!(
        press(&mut app, ctrl('c')).as_slice(),
        [Action::Interrupt]
    ));
    // Idle, Esc interrupts nothing.
    let mut idle = super::app();
    assert!(press(&mut idle, key(KeyCode::Esc)).is_empty());
}

#[test]
fn mode_without_a_name_opens_the_mode_picker() {
    let mut app = app();
    type_text(&mut app, "/mode");
    assert!(press(&mut app, key(KeyCode::Enter)).is_empty());
    assert_eq!(app.layer(), Layer::Picker);
    let screen = shot(&app, 90, 20);
    assert!(
        screen.contains("Permission mode") && screen.contains("● manual"),
        "{screen}"
    );
    assert!(screen.contains("plan"), "{screen}");
    press(&mut app, key(KeyCode::Down));
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Command(Command::Mode(Some(Mode::AcceptEdits)))]
    );
    assert_eq!(app.layer(), Layer::Input);
    // Esc closes it without sending anything.
    type_text(&mut app, "/mode");
    press(&mut app, key(KeyCode::Enter));
    assert!(press(&mut app, key(KeyCode::Esc)).is_empty());
    assert_eq!(app.layer(), Layer::Input);
}

#[test]
fn shift_tab_cycles_plan_manual_accept_edits_and_never_loosens_past_it() {
    let cases = [
        (Mode::Manual, Input::ChooseMode(Mode::AcceptEdits)),
        (
            Mode::AcceptEdits,
            Input::Command(Command::Mode(Some(Mode::Plan))),
        ),
        (Mode::Plan, Input::ChooseMode(Mode::Manual)),
        (Mode::Auto, Input::Command(Command::Mode(Some(Mode::Plan)))),
        (
            Mode::Bypass,
            Input::Command(Command::Mode(Some(Mode::Plan))),
        ),
    ];
    for (from, want) in cases {
        let mut app = super::app_in(from);
        let actions = press(&mut app, key(KeyCode::BackTab));
        assert_eq!(sent(&actions), vec![want], "from {from}");
        assert_eq!(app.layer(), Layer::Input, "from {from}");
    }
}

#[test]
fn mode_command_during_a_turn_waits_and_says_so() {
    let mut app = app();
    start_turn(&mut app, "Summarize notes.md", 1);
    type_text(&mut app, "/mode accept-edits");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Command(Command::Mode(Some(Mode::AcceptEdits)))]
    );
    assert!(shot(&app, 80, 20).contains(COMMAND_WAITS));
}

#[test]
fn unknown_commands_show_the_error_and_send_nothing() {
    let mut app = app();
    type_text(&mut app, "/frobnicate");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert!(actions.is_empty());
    assert!(shot(&app, 120, 20).contains("unknown command /frobnicate"));
    type_text(&mut app, "/mode bypass now");
    assert!(press(&mut app, key(KeyCode::Enter)).is_empty());
    assert_eq!(app.status.mode, Mode::Manual);
}

#[test]
fn help_opens_with_question_mark_f1_and_the_command() {
    let mut app = app();
    press(&mut app, key(KeyCode::Char('?')));
    assert_eq!(app.layer(), Layer::Help);
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, key(KeyCode::F(1)));
    assert_eq!(app.layer(), Layer::Help);
    press(&mut app, key(KeyCode::Esc));
    type_text(&mut app, "/help");
    assert!(press(&mut app, key(KeyCode::Enter)).is_empty());
    assert_eq!(app.layer(), Layer::Help);
    press(&mut app, key(KeyCode::Esc));
    // `?` in text is just a character.
    type_text(&mut app, "why?");
    assert_eq!(app.input_text(), "why?");
}

#[test]
fn quitting() {
    let mut app = app();
    type_text(&mut app, "/quit");
    assert!(matches!(
        press(&mut app, key(KeyCode::Enter)).as_slice(),
        [Action::Quit]
    ));
    let mut app = super::app();
    assert!(matches!(
        press(&mut app, ctrl('d')).as_slice(),
        [Action::Quit]
    ));
    // Ctrl-C twice when idle; the first only arms, and says so.
    let mut app = super::app();
    assert!(press(&mut app, ctrl('c')).is_empty());
    assert!(shot(&app, 100, 10).contains("Press Ctrl-C again to quit"));
    assert!(matches!(
        press(&mut app, ctrl('c')).as_slice(),
        [Action::Quit]
    ));
    // Another key in between disarms it; Ctrl-C on text clears it.
    let mut app = super::app();
    press(&mut app, ctrl('c'));
    type_text(&mut app, "x");
    assert!(press(&mut app, ctrl('c')).is_empty());
    assert!(app.input_is_empty());
    assert!(press(&mut app, ctrl('c')).is_empty());
    assert!(matches!(
        press(&mut app, ctrl('c')).as_slice(),
        [Action::Quit]
    ));
}

fn summary(id: &str, started: u64, prompt: &str, bytes: u64) -> crate::session::SessionSummary {
    crate::session::SessionSummary {
        id: crate::session::SessionId::parse(id).unwrap(),
        started,
        project: "/home/u/notes-demo".into(),
        model: "gpt-5-mini".into(),
        first_prompt: Some(prompt.into()),
        bytes,
    }
}

#[test]
fn resume_without_an_id_opens_a_session_picker() {
    let mut app = app();
    type_text(&mut app, "/resume");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(sent(&actions), vec![Input::Command(Command::Resume(None))]);
    agent(
        &mut app,
        AgentEvent::Sessions {
            all: false,
            list: vec![
                summary(
                    "aaaaaaaabbbbbbbbccccccccdddddddd",
                    1_798_243_380,
                    "Summarize notes.md",
                    2048,
                ),
                summary(SESSION, 1_798_243_400, "Fix the typo", 512),
            ],
        },
    );
    assert_eq!(app.layer(), Layer::Picker);
    assert_snapshot_picker(&app);
    press(&mut app, key(KeyCode::Down));
    let actions = press(&mut app, key(KeyCode::Enter));
    assert_eq!(
        sent(&actions),
        vec![Input::Command(Command::Resume(Some(SESSION.into())))]
    );
    // `/sessions` lists them in the chat instead.
    type_text(&mut app, "/sessions");
    press(&mut app, key(KeyCode::Enter));
    agent(
        &mut app,
        AgentEvent::Sessions {
            list: Vec::new(),
            all: false,
        },
    );
    assert_eq!(app.layer(), Layer::Input);
    assert!(shot(&app, 80, 20).contains("No saved sessions in this project"));
}

fn assert_snapshot_picker(app: &App) {
    insta::assert_snapshot!("session_picker", shot(app, 90, 16));
}

#[test]
fn copy_puts_the_last_answer_on_the_clipboard() {
    let mut app = app();
    type_text(&mut app, "/copy");
    assert!(press(&mut app, key(KeyCode::Enter)).is_empty());
    start_turn(&mut app, "hi", 0);
    agent(&mut app, AgentEvent::AssistantDelta("The answer.".into()));
    agent(&mut app, AgentEvent::AssistantDone);
    type_text(&mut app, "/copy");
    let actions = press(&mut app, key(KeyCode::Enter));
    assert!(matches!(actions.as_slice(), [Action::Copy(text)] if text == "The answer."));
    let mut out = Vec::new();
    super::super::term::copy_to_clipboard(&mut out, "The answer.").unwrap();
    assert_eq!(out, b"\x1b]52;c;VGhlIGFuc3dlci4=\x07");
}

#[test]
fn help_lists_every_binding_line_of_the_keymap_table() {
    use super::super::{keymap::binding::Help, keymap::table::BINDINGS};
    let help: Vec<String> = super::super::view::help::lines()
        .iter()
        .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let mut listed = 0;
    for binding in BINDINGS {
        if let Help::Line { keys, what, .. } = binding.help {
            listed += 1;
            assert!(
                help.iter()
                    .any(|line| line.trim_start().starts_with(keys) && line.ends_with(what)),
                "{keys} is missing from help"
            );
        }
    }
    assert!(listed > 20, "{listed}");
    for answer in ConsentAnswer::ALL {
        assert!(
            help.iter().any(|line| line.ends_with(answer.label())),
            "{answer:?}"
        );
    }
}

#[test]
fn no_binding_is_shadowed_by_an_earlier_one_in_its_state() {
    use super::super::{keymap::binding::When, keymap::table::BINDINGS};
    for (i, later) in BINDINGS.iter().enumerate() {
        for earlier in &BINDINGS[..i] {
            let same_state = later.on.iter().any(|on| earlier.on.contains(on));
            let covered = !later.chords.is_empty()
                && later
                    .chords
                    .iter()
                    .all(|chord| earlier.chords.contains(chord));
            assert!(
                !(same_state && covered && earlier.when == When::Always),
                "binding {i} ({:?}) can never act",
                later.chords
            );
        }
    }
}

#[test]
fn the_status_bar_hints_what_the_keys_do_in_each_state() {
    use super::super::view::status::key_hint;
    let mut app = app();
    assert_eq!(key_hint(&app), "? help ");
    type_text(&mut app, "x");
    assert_eq!(key_hint(&app), "", "? types once the input has text");
    press(&mut app, ctrl('u'));
    let _rx = open_question(&mut app);
    assert_eq!(key_hint(&app), "n note · Esc rejects · Ctrl-C interrupts ");
    press(&mut app, key(KeyCode::Char('n')));
    assert_eq!(key_hint(&app), "Enter rejects with the note · Esc without ");
    press(&mut app, key(KeyCode::Esc));
    // A session-wide answer to a hurried question asks `[y/N]` first: its
    // keys are not the dialog's.
    let _rx = open_question(&mut app);
    app.consents.front_mut().unwrap().arming.hurried = true;
    press(&mut app, key(KeyCode::Char('a')));
    assert_eq!(key_hint(&app), "y confirms · other keys go back ");
    press(&mut app, key(KeyCode::Char('x')));
    assert_eq!(key_hint(&app), "n note · Esc rejects · Ctrl-C interrupts ");
}

#[test]
fn ctrl_d_during_a_turn_asks_before_quitting() {
    let mut app = app();
    start_turn(&mut app, "first", 1);
    assert!(press(&mut app, ctrl('d')).is_empty());
    let screen = shot(&app, 120, 20);
    assert!(screen.contains("press Ctrl-D again to interrupt it and quit"));
    // The status bar names the key that quits, not Ctrl-C.
    assert!(screen.contains("Press Ctrl-D again to quit"), "{screen}");
    assert!(!screen.contains("Ctrl-C again"), "{screen}");
    // Any other key goes on.
    press(&mut app, key(KeyCode::PageUp));
    assert!(press(&mut app, ctrl('d')).is_empty());
    assert!(matches!(
        press(&mut app, ctrl('d')).as_slice(),
        [Action::Quit]
    ));
}
