//! What one binding of the full screen is made of (the state, the keys,
//! the condition, the intent, the help line and the status bar's hint),
//! and the small constructors the table is written with. Holds no binding
//! itself (`table` does); never reads the state.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::super::msg::Msg;

/// The state the screen is in, as far as keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// In every state (checked after the state's own keys).
    Anywhere,
    /// The input box, nothing open over it.
    Input,
    /// A question (permission or mode) whose keys have not armed yet.
    Unarmed,
    /// The permission question, armed.
    Consent,
    /// The rejection's note being typed.
    Note,
    /// The `[y/N]` after a session-wide answer to a hurried question.
    Confirm,
    /// The mode question, armed.
    ModeQuestion,
    /// An MCP server's question, armed: typing fills its fields.
    ServerQuestion,
    /// The question before appending to the user's settings (a saved
    /// rule, the first trusted tools), armed.
    SettingsQuestion,
    /// The rewind dialog.
    Rewind,
    Picker,
    Help,
}

/// Which key. `Other` is any key no binding of the state or `Anywhere`
/// took: it is tried last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Key(KeyCode),
    /// Any printable character.
    AnyChar,
    /// The letter of an answer other than reject (whose `n` opens the
    /// note): the letters are `ConsentAnswer::key`'s.
    Answer,
    WheelUp,
    WheelDown,
    Other,
}

/// Which modifiers the key may come with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mods {
    Any,
    /// Neither Ctrl nor Alt (Shift is fine).
    Plain,
    /// All of these held; others may be too.
    With(KeyModifiers),
    /// None of these held.
    Without(KeyModifiers),
    /// These and nothing else, Shift aside.
    Exactly(KeyModifiers),
}

impl Mods {
    pub fn allow(self, held: KeyModifiers) -> bool {
        match self {
            Mods::Any => true,
            Mods::Plain => !held.intersects(CTRL.union(ALT)),
            Mods::With(wanted) => held.contains(wanted),
            Mods::Without(unwanted) => !held.intersects(unwanted),
            Mods::Exactly(wanted) => held - KeyModifiers::SHIFT == wanted,
        }
    }
}

/// One key (or wheel step) with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub code: Code,
    pub mods: Mods,
}

/// When the binding holds, beyond its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    TurnRunning,
    /// No turn runs.
    Idle,
    /// The `/command` completion popup is open.
    Popup,
    EmptyInput,
    /// The input is empty and prompts wait in the queue.
    QueuedOnEmptyInput,
    /// The cursor is on the input's first line.
    FirstRow,
    /// The cursor is on the input's last line.
    LastRow,
    /// The plan hand-off is open and the input is empty.
    PlanOffer,
}

/// What the binding does.
#[derive(Clone, Copy)]
pub enum Does {
    Msg(fn() -> Msg),
    /// An intent made from the key itself (the character typed).
    Key(fn(&KeyEvent) -> Option<Msg>),
    /// The key is taken and does nothing.
    Nothing,
}

/// The groups of the help overlay, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Input,
    Chat,
    Turn,
    Questions,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Input, Group::Chat, Group::Turn, Group::Questions];

    pub fn title(self) -> &'static str {
        match self {
            Group::Input => "Input",
            Group::Chat => "Chat",
            Group::Turn => "Turn",
            Group::Questions => "Questions",
        }
    }
}

/// What help says of a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Help {
    /// Nothing: another binding's line says it, or it is obvious on screen.
    Unlisted,
    Line {
        group: Group,
        keys: &'static str,
        what: &'static str,
    },
    /// One line per answer (its letter and label), reject aside.
    Answers,
}

/// One binding.
#[derive(Clone, Copy)]
pub struct Binding {
    pub on: &'static [On],
    /// Empty for what the terminal does itself and help only mentions.
    pub chords: &'static [Chord],
    pub when: When,
    pub does: Does,
    pub help: Help,
    /// What the status bar says while the binding holds and, beyond it,
    /// the hint's own condition.
    pub hint: Option<(&'static str, When)>,
}

pub(super) const CTRL: KeyModifiers = KeyModifiers::CONTROL;
pub(super) const ALT: KeyModifiers = KeyModifiers::ALT;

pub(super) const fn key(code: KeyCode) -> Chord {
    Chord {
        code: Code::Key(code),
        mods: Mods::Any,
    }
}

pub(super) const fn plain(code: KeyCode) -> Chord {
    Chord {
        code: Code::Key(code),
        mods: Mods::Plain,
    }
}

pub(super) const fn with(mods: Mods, code: KeyCode) -> Chord {
    Chord {
        code: Code::Key(code),
        mods,
    }
}

pub(super) const fn ctrl(c: char) -> Chord {
    with(Mods::With(CTRL), KeyCode::Char(c))
}

/// A readline key: Ctrl and the letter, nothing else.
pub(super) const fn readline(c: char) -> Chord {
    with(Mods::Exactly(CTRL), KeyCode::Char(c))
}

pub(super) const OTHER: Chord = Chord {
    code: Code::Other,
    mods: Mods::Any,
};

pub(super) const fn line(group: Group, keys: &'static str, what: &'static str) -> Help {
    Help::Line { group, keys, what }
}

/// A binding in `on`, always holding, unlisted, without a hint.
pub(super) const fn bind(on: &'static [On], chords: &'static [Chord], does: Does) -> Binding {
    Binding {
        on,
        chords,
        when: When::Always,
        does,
        help: Help::Unlisted,
        hint: None,
    }
}

impl Binding {
    pub(super) const fn when(mut self, when: When) -> Self {
        self.when = when;
        self
    }

    pub(super) const fn help(mut self, help: Help) -> Self {
        self.help = help;
        self
    }

    pub(super) const fn hint(mut self, hint: &'static str) -> Self {
        self.hint = Some((hint, When::Always));
        self
    }

    /// A hint said only while `when` holds too.
    pub(super) const fn hint_when(mut self, hint: &'static str, when: When) -> Self {
        self.hint = Some((hint, when));
        self
    }
}
