//! The table of every binding of the full screen, written once: the keys
//! (and the mouse wheel), the state in which they act, the condition, the
//! intent they give, the line help shows and the hint the status bar
//! shows. The dispatcher in `keymap`, the help overlay and the status bar
//! all read it; none of them names a key of its own.

use crossterm::event::KeyCode;

use crate::policy::{ConsentAnswer, Mode};

use super::super::msg::{EditCommand, Msg};
use super::super::server_question::QuestionMsg as Q;
use super::binding::{
    ALT, Binding, CTRL, Chord, Code, Does, Group, Help, Mods, OTHER, On, When, bind, ctrl, key,
    line, plain, readline, with,
};
use super::intents::{answer, note_char, question};

/// Lines one wheel step scrolls.
const WHEEL_LINES: u16 = 3;

/// Reject's letter: in the dialog it opens the note (a rejection with a
/// note typed next, or none).
const REJECT: char = ConsentAnswer::Reject.key();

const fn edit(
    c: &'static [Chord],
    command: EditCommand,
    keys: &'static str,
    what: &'static str,
) -> Binding {
    Binding {
        on: &[On::Input],
        chords: c,
        when: When::Always,
        does: Does::Key(match command {
            EditCommand::LineStart => |_| Some(Msg::EditCommand(EditCommand::LineStart)),
            EditCommand::LineEnd => |_| Some(Msg::EditCommand(EditCommand::LineEnd)),
            EditCommand::KillToStart => |_| Some(Msg::EditCommand(EditCommand::KillToStart)),
            EditCommand::KillToEnd => |_| Some(Msg::EditCommand(EditCommand::KillToEnd)),
            EditCommand::KillWord => |_| Some(Msg::EditCommand(EditCommand::KillWord)),
            EditCommand::Undo => |_| Some(Msg::EditCommand(EditCommand::Undo)),
        }),
        help: line(Group::Input, keys, what),
        hint: None,
    }
}

const INPUT: &[On] = &[On::Input];
const SERVER: &[On] = &[On::ServerQuestion];
/// Where the scroll keys move a question's text.
const SCROLLS: &[On] = &[On::Unarmed, On::Consent, On::SettingsQuestion];
const OVERLAY: &[On] = &[On::Picker, On::Help, On::Rewind];
const ANYWHERE: &[On] = &[On::Anywhere];

/// The table. Within a state the first binding that matches wins; help
/// lists the bindings of each group in this order, and the status bar the
/// hints of the state's bindings that hold.
pub const BINDINGS: &[Binding] = &[
    // The plan hand-off, below an answer given in plan mode.
    bind(
        INPUT,
        &[key(KeyCode::Char('m'))],
        Does::Msg(|| Msg::PlanOffer(Some(Mode::Manual))),
    )
    .when(When::PlanOffer)
    .help(line(
        Group::Input,
        "m e a k",
        "run a plan in manual, accept-edits, auto, or keep planning",
    ))
    .hint_when("m e a k: run the plan or keep planning", When::PlanOffer),
    bind(
        INPUT,
        &[key(KeyCode::Char('e'))],
        Does::Msg(|| Msg::PlanOffer(Some(Mode::AcceptEdits))),
    )
    .when(When::PlanOffer),
    bind(
        INPUT,
        &[key(KeyCode::Char('a'))],
        Does::Msg(|| Msg::PlanOffer(Some(Mode::Auto))),
    )
    .when(When::PlanOffer),
    bind(
        INPUT,
        &[key(KeyCode::Char('k'))],
        Does::Msg(|| Msg::PlanOffer(None)),
    )
    .when(When::PlanOffer),
    // The input box.
    bind(
        INPUT,
        &[with(Mods::Without(ALT), KeyCode::Enter)],
        Does::Msg(|| Msg::Complete { submit: true }),
    )
    .when(When::Popup),
    bind(
        INPUT,
        &[with(Mods::Without(ALT), KeyCode::Enter)],
        Does::Msg(|| Msg::Submit),
    )
    .help(line(Group::Input, "Enter", "send the prompt or command")),
    bind(
        INPUT,
        &[with(Mods::With(ALT), KeyCode::Enter), ctrl('j')],
        Does::Msg(|| Msg::Newline),
    )
    .help(line(Group::Input, "Alt+Enter, Ctrl+J", "new line")),
    bind(
        INPUT,
        &[key(KeyCode::Up)],
        Does::Msg(|| Msg::CompletionPrev),
    )
    .when(When::Popup),
    bind(
        INPUT,
        &[key(KeyCode::Down)],
        Does::Msg(|| Msg::CompletionNext),
    )
    .when(When::Popup),
    bind(INPUT, &[key(KeyCode::Up)], Does::Msg(|| Msg::Unqueue))
        .when(When::QueuedOnEmptyInput)
        .help(line(
            Group::Input,
            "Up",
            "take the newest queued prompt back (on an empty input)",
        )),
    bind(INPUT, &[plain(KeyCode::Up)], Does::Msg(|| Msg::HistoryPrev))
        .when(When::FirstRow)
        .help(line(
            Group::Input,
            "Up, Down",
            "earlier prompts (on the first or last line)",
        )),
    bind(
        INPUT,
        &[plain(KeyCode::Down)],
        Does::Msg(|| Msg::HistoryNext),
    )
    .when(When::LastRow),
    bind(
        INPUT,
        &[key(KeyCode::Tab)],
        Does::Msg(|| Msg::Complete { submit: false }),
    )
    .when(When::Popup)
    .help(line(Group::Input, "Tab", "complete a /command")),
    // Tab never types a tab into the prompt.
    bind(INPUT, &[key(KeyCode::Tab)], Does::Nothing),
    bind(
        INPUT,
        &[key(KeyCode::BackTab)],
        Does::Msg(|| Msg::CycleMode),
    )
    .help(line(
        Group::Input,
        "Shift+Tab",
        "next mode: plan, manual, accept-edits (/mode picks any mode)",
    )),
    bind(INPUT, &[key(KeyCode::F(1))], Does::Msg(|| Msg::OpenHelp)).help(line(
        Group::Input,
        "? or F1",
        "this help (? on an empty input)",
    )),
    bind(
        INPUT,
        &[plain(KeyCode::Char('?'))],
        Does::Msg(|| Msg::OpenHelp),
    )
    .when(When::EmptyInput)
    .hint_when("? help", When::Idle),
    bind(INPUT, &[key(KeyCode::Esc)], Does::Msg(|| Msg::Interrupt))
        .when(When::TurnRunning)
        .help(line(
            Group::Turn,
            "Esc, Ctrl+C",
            "interrupt the running turn",
        ))
        .hint("Esc interrupts"),
    // Esc closes the completion popup; twice on an empty input while no
    // turn runs, it opens /rewind.
    bind(INPUT, &[key(KeyCode::Esc)], Does::Msg(|| Msg::Dismiss)).help(line(
        Group::Input,
        "Esc twice",
        "/rewind (on an empty input, between turns)",
    )),
    bind(INPUT, &[ctrl('d')], Does::Msg(|| Msg::Quit))
        .when(When::EmptyInput)
        .help(line(
            Group::Input,
            "Ctrl+D",
            "quit (on an empty input; during a turn it asks first)",
        )),
    edit(
        &[readline('a')],
        EditCommand::LineStart,
        "Ctrl+A",
        "go to the start of the line",
    ),
    edit(
        &[readline('e')],
        EditCommand::LineEnd,
        "Ctrl+E",
        "go to the end of the line",
    ),
    edit(
        &[readline('u')],
        EditCommand::KillToStart,
        "Ctrl+U",
        "delete to the start of the line",
    ),
    edit(
        &[readline('k')],
        EditCommand::KillToEnd,
        "Ctrl+K",
        "delete to the end of the line",
    ),
    edit(
        &[readline('w')],
        EditCommand::KillWord,
        "Ctrl+W",
        "delete the word before the cursor",
    ),
    // Ctrl+_ arrives as Ctrl+7 from most terminals (the byte 0x1F), and as
    // Ctrl+/ from some.
    edit(
        &[readline('z'), readline('_'), readline('7'), readline('/')],
        EditCommand::Undo,
        "Ctrl+Z, Ctrl+_",
        "undo the last word typed (or paste, or deletion)",
    ),
    // The chat, from the input.
    bind(INPUT, &[key(KeyCode::PageUp)], Does::Msg(|| Msg::PageUp)).help(line(
        Group::Chat,
        "PageUp, PageDown",
        "scroll",
    )),
    bind(
        INPUT,
        &[key(KeyCode::PageDown)],
        Does::Msg(|| Msg::PageDown),
    ),
    bind(
        ANYWHERE,
        &[Chord {
            code: Code::WheelUp,
            mods: Mods::Any,
        }],
        Does::Msg(|| Msg::ScrollUp(WHEEL_LINES)),
    )
    .help(line(Group::Chat, "mouse wheel", "scroll")),
    bind(
        ANYWHERE,
        &[Chord {
            code: Code::WheelDown,
            mods: Mods::Any,
        }],
        Does::Msg(|| Msg::ScrollDown(WHEEL_LINES)),
    ),
    bind(
        INPUT,
        &[with(Mods::With(CTRL), KeyCode::Home)],
        Does::Msg(|| Msg::ScrollTop),
    )
    .help(line(
        Group::Chat,
        "Home, End",
        "top, bottom (on an empty input; Ctrl+Home/End always)",
    )),
    bind(
        INPUT,
        &[with(Mods::With(CTRL), KeyCode::End)],
        Does::Msg(|| Msg::ScrollBottom),
    ),
    bind(INPUT, &[key(KeyCode::Home)], Does::Msg(|| Msg::ScrollTop)).when(When::EmptyInput),
    bind(INPUT, &[key(KeyCode::End)], Does::Msg(|| Msg::ScrollBottom)).when(When::EmptyInput),
    bind(INPUT, &[ctrl('o')], Does::Msg(|| Msg::ToggleExpand)).help(line(
        Group::Chat,
        "Ctrl+O",
        "expand or collapse the last tool result on screen",
    )),
    bind(INPUT, &[ctrl('t')], Does::Msg(|| Msg::TogglePlan)).help(line(
        Group::Chat,
        "Ctrl+T",
        "show or hide the plan",
    )),
    bind(ANYWHERE, &[ctrl('l')], Does::Msg(|| Msg::Redraw)).help(line(
        Group::Chat,
        "Ctrl+L",
        "redraw the screen",
    )),
    bind(
        ANYWHERE,
        &[key(KeyCode::F(2))],
        Does::Msg(|| Msg::ToggleMouse),
    )
    .help(line(
        Group::Chat,
        "F2",
        "give the mouse to the terminal (its own selection) or take it back",
    )),
    // The terminal's own selection: mino never sees it.
    bind(ANYWHERE, &[], Does::Nothing).help(line(
        Group::Chat,
        "Shift+drag",
        "select text (the mouse wheel scrolls the chat)",
    )),
    // Any other key edits the input (typing, cursor moves, deletion).
    bind(
        INPUT,
        &[OTHER],
        Does::Key(|key| Some(Msg::Edit((*key).into()))),
    ),
    // The turn and the program.
    // Interrupting is said with Esc's line.
    bind(ANYWHERE, &[ctrl('c')], Does::Msg(|| Msg::Interrupt)).when(When::TurnRunning),
    bind(ANYWHERE, &[ctrl('c')], Does::Msg(|| Msg::StopOrQuit)).help(line(
        Group::Turn,
        "Ctrl+C twice",
        "quit when idle",
    )),
    // The permission question.
    bind(
        &[On::Consent],
        &[Chord {
            code: Code::Answer,
            mods: Mods::Plain,
        }],
        Does::Key(answer),
    )
    .help(Help::Answers),
    bind(
        &[On::Consent],
        &[
            plain(KeyCode::Char(REJECT)),
            plain(KeyCode::Char(REJECT.to_ascii_uppercase())),
            plain(KeyCode::Tab),
        ],
        Does::Msg(|| Msg::StartNote),
    )
    .help(line(
        Group::Questions,
        "n, Tab",
        "reject with a note to the model (type it, Enter sends)",
    ))
    .hint("n note"),
    bind(
        &[On::Consent],
        &[plain(KeyCode::Esc)],
        Does::Msg(|| Msg::Answer(ConsentAnswer::Reject)),
    )
    .help(line(Group::Questions, "Esc", "reject"))
    .hint("Esc rejects"),
    bind(
        &[On::Consent],
        &[plain(KeyCode::Enter)],
        Does::Msg(|| Msg::AnswerFocused),
    )
    .help(line(
        Group::Questions,
        "Enter",
        "the focused answer (focus starts on reject)",
    )),
    bind(
        &[On::Consent],
        &[plain(KeyCode::Right)],
        Does::Msg(|| Msg::FocusNext),
    )
    .help(line(Group::Questions, "Left, Right", "move the focus")),
    bind(
        &[On::Consent],
        &[plain(KeyCode::Left), plain(KeyCode::BackTab)],
        Does::Msg(|| Msg::FocusPrev),
    ),
    bind(SCROLLS, &[plain(KeyCode::Up)], Does::Msg(|| Msg::OverlayUp)).help(line(
        Group::Questions,
        "Up, Down, PageUp, PageDown",
        "scroll the question",
    )),
    bind(
        SCROLLS,
        &[plain(KeyCode::Down)],
        Does::Msg(|| Msg::OverlayDown),
    ),
    bind(
        SCROLLS,
        &[plain(KeyCode::PageUp)],
        Does::Msg(|| Msg::OverlayPageUp),
    ),
    bind(
        SCROLLS,
        &[plain(KeyCode::PageDown)],
        Does::Msg(|| Msg::OverlayPageDown),
    ),
    bind(&[On::Consent], &[ctrl('c')], Does::Msg(|| Msg::Interrupt))
        .when(When::TurnRunning)
        .help(line(Group::Questions, "Ctrl+C", "interrupt the turn"))
        .hint("Ctrl-C interrupts"),
    // An MCP server's question: typing fills the focused field.
    bind(SERVER, &[plain(KeyCode::Enter)], question(Q::Accept))
        .help(line(
            Group::Questions,
            "Enter",
            "send a server's question its answers",
        ))
        .hint("Enter sends"),
    bind(
        SERVER,
        &[plain(KeyCode::Tab), plain(KeyCode::Down)],
        question(Q::NextField),
    )
    .hint("Tab next field"),
    bind(
        SERVER,
        &[key(KeyCode::BackTab), plain(KeyCode::Up)],
        question(Q::PrevField),
    ),
    bind(SERVER, &[ctrl('d')], question(Q::Decline))
        .help(line(
            Group::Questions,
            "Ctrl+D",
            "decline a server's question",
        ))
        .hint("Ctrl-D declines"),
    bind(SERVER, &[plain(KeyCode::Esc)], question(Q::Cancel))
        .help(line(Group::Questions, "Esc", "cancel a server's question"))
        .hint("Esc cancels"),
    bind(SERVER, &[plain(KeyCode::Backspace)], question(Q::Backspace)),
    bind(
        SERVER,
        &[Chord {
            code: Code::AnyChar,
            mods: Mods::Plain,
        }],
        question(Q::Char(' ')),
    ),
    // Before a question's keys arm, typing goes on into the input and
    // answers nothing.
    bind(
        &[On::Unarmed],
        &[
            Chord {
                code: Code::AnyChar,
                mods: Mods::Plain,
            },
            plain(KeyCode::Backspace),
            plain(KeyCode::Delete),
            plain(KeyCode::Left),
            plain(KeyCode::Right),
            plain(KeyCode::Home),
            plain(KeyCode::End),
        ],
        Does::Key(|key| Some(Msg::TypeAhead((*key).into()))),
    )
    .help(line(
        Group::Questions,
        "typing",
        "goes to the input until the border says keys armed",
    )),
    // The rejection's note.
    bind(
        &[On::Note],
        &[Chord {
            code: Code::AnyChar,
            mods: Mods::Plain,
        }],
        Does::Key(note_char),
    ),
    bind(
        &[On::Note],
        &[plain(KeyCode::Backspace)],
        Does::Msg(|| Msg::NoteBackspace),
    ),
    bind(
        &[On::Note],
        &[plain(KeyCode::Enter)],
        Does::Msg(|| Msg::SendNote),
    )
    .hint("Enter rejects with the note"),
    bind(
        &[On::Note],
        &[plain(KeyCode::Esc)],
        Does::Msg(|| Msg::Answer(ConsentAnswer::Reject)),
    )
    .hint("Esc without"),
    // The `[y/N]` confirmation.
    bind(
        &[On::Confirm],
        &[key(KeyCode::Char('y')), key(KeyCode::Char('Y'))],
        Does::Msg(|| Msg::ConfirmAnswer(true)),
    )
    .hint("y confirms"),
    bind(
        &[On::Confirm],
        &[OTHER],
        Does::Msg(|| Msg::ConfirmAnswer(false)),
    )
    .hint("other keys go back"),
    // The mode question.
    bind(
        &[On::ModeQuestion],
        &[key(KeyCode::Char('y')), key(KeyCode::Char('Y'))],
        Does::Msg(|| Msg::ConfirmMode(true)),
    )
    .hint("y switches"),
    bind(
        &[On::ModeQuestion],
        &[OTHER],
        Does::Msg(|| Msg::ConfirmMode(false)),
    )
    .hint("other keys keep"),
    // The question before appending to the user's settings.
    bind(
        &[On::SettingsQuestion],
        &[key(KeyCode::Char('y')), key(KeyCode::Char('Y'))],
        Does::Msg(|| Msg::ConfirmMode(true)),
    )
    .hint("y appends"),
    bind(
        &[On::SettingsQuestion],
        &[OTHER],
        Does::Msg(|| Msg::ConfirmMode(false)),
    )
    .hint("other keys save nothing"),
    // Pickers and help.
    bind(
        OVERLAY,
        &[key(KeyCode::Up), key(KeyCode::Char('k'))],
        Does::Msg(|| Msg::OverlayUp),
    ),
    bind(
        OVERLAY,
        &[key(KeyCode::Down), key(KeyCode::Char('j'))],
        Does::Msg(|| Msg::OverlayDown),
    ),
    bind(
        OVERLAY,
        &[key(KeyCode::PageUp)],
        Does::Msg(|| Msg::OverlayPageUp),
    ),
    bind(
        OVERLAY,
        &[key(KeyCode::PageDown)],
        Does::Msg(|| Msg::OverlayPageDown),
    ),
    bind(
        &[On::Picker],
        &[key(KeyCode::Enter)],
        Does::Msg(|| Msg::PickerSelect),
    )
    .hint("Enter chooses"),
    bind(
        &[On::Rewind],
        &[key(KeyCode::Enter)],
        Does::Msg(|| Msg::RewindEnter),
    )
    .hint("Enter chooses"),
    bind(
        &[On::Rewind],
        &[key(KeyCode::Char(' '))],
        Does::Msg(|| Msg::RewindToggle),
    )
    .hint("Space confirms a file"),
    bind(
        &[On::Picker],
        &[key(KeyCode::Tab), key(KeyCode::BackTab)],
        Does::Msg(|| Msg::OverlayDown),
    ),
    bind(
        OVERLAY,
        &[
            key(KeyCode::Esc),
            key(KeyCode::Char('q')),
            key(KeyCode::F(1)),
        ],
        Does::Msg(|| Msg::Dismiss),
    )
    .hint("Esc closes"),
    bind(
        &[On::Help],
        &[key(KeyCode::Char('?')), key(KeyCode::Enter)],
        Does::Msg(|| Msg::Dismiss),
    ),
];
