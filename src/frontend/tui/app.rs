//! The TUI's state: the transcript, the input box and its history, what the
//! status bar shows, the open overlays (questions, pickers, help), and the
//! layout cache the views write and `update` reads. It holds what the agent
//! said; it never decides anything and never draws.

use std::cell::Cell;
use std::time::Instant;

use ratatui::style::{Modifier, Style};
use ratatui_textarea::{TextArea, WrapMode};

use crate::policy::Mode;

use crate::config::Notify;

use super::arming::Arming;
use super::attention::Attention;
use super::consent::ConsentQueue;
use super::from_agent::CallSummaries;
use super::transcript::{EntryKind, Transcript};

/// What the status bar shows about the session.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub mode: Mode,
    pub session_id: String,
    pub model: String,
    pub context_window: u64,
    pub input_tokens: u64,
    /// Tokens the session's requests used in this run (input and output).
    pub tokens_used: u64,
    /// Their cost in US dollars, where the settings price every model.
    pub cost_usd: Option<f64>,
    /// `MCP 3/5, 2 starting`, when servers are configured.
    pub mcp: Option<String>,
    /// "no sandbox" or "sandbox: Landlock only" when bash is less confined
    /// than the settings ask.
    pub sandbox: Option<&'static str>,
    /// What this session allows and this run refuses without asking.
    pub grants: Vec<crate::policy::Grant>,
}

/// What a running turn is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activity {
    /// Waiting for the model's first byte.
    Thinking,
    Streaming,
    /// A call runs: what (the tool, or bash and its command), since when.
    Running {
        what: String,
        since: Instant,
    },
    /// The request failed before its answer (`reason`: `429`, `503`, `no
    /// connection`) and is tried again at `at`.
    Retrying {
        at: Instant,
        reason: String,
    },
}

/// A turn that runs.
#[derive(Debug, Clone)]
pub struct RunningTurn {
    pub started: Instant,
    pub activity: Activity,
}

/// `Switch to this mode? [y/N]`, open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeQuestion {
    pub ask: YesNo,
    pub arming: Arming,
    /// Rows of its text scrolled past (settings text taller than the
    /// screen).
    pub scroll: u16,
}

/// What a y/N question over the chat asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YesNo {
    /// `Switch to this mode? [y/N]` after the mode's warning.
    Mode {
        from: Mode,
        to: Mode,
        warning: String,
    },
    /// `Append this rule to FILE? [y/N]` (the `ask`) under the text to
    /// append to the user's settings `file`.
    Rule {
        toml: String,
        file: std::path::PathBuf,
        ask: String,
    },
}

/// What a picker picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerKind {
    Mode,
    Session,
    /// `/permissions`: Enter revokes the chosen answer.
    Grant,
    /// `/resume` of a session started in `dir`: switch there, or stay.
    Project {
        id: String,
        dir: std::path::PathBuf,
    },
    /// `/rewind`: this session's prompts (`rewind.rs`).
    Rewind,
    /// `/model`: the models to switch to.
    Model,
}

/// One row of a picker: what it shows and what choosing it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    pub label: String,
    pub detail: String,
    pub value: String,
    pub current: bool,
}

/// A list to choose from (Enter chooses, Esc closes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub kind: PickerKind,
    pub title: String,
    pub items: Vec<PickerItem>,
    pub selected: usize,
}

/// Prompts sent earlier, for Up/Down.
#[derive(Debug, Default)]
pub struct PromptHistory {
    pub entries: Vec<String>,
    /// While browsing: the index shown and the draft it replaced.
    pub browsing: Option<(usize, String)>,
}

/// Sizes the last frame had, written by the views (through `Cell`s) and
/// read by `update` for paging and clamping. An explicit cache: drawing
/// never changes the state it draws.
#[derive(Debug)]
pub struct LayoutCache {
    pub chat_width: Cell<u16>,
    pub chat_height: Cell<u16>,
    /// Entries drawn in the chat pane (for Ctrl+O).
    pub chat_entries: Cell<(usize, usize)>,
    /// Body rows of the open dialog and how many the body has.
    pub dialog_rows: Cell<(u16, u16)>,
    pub help_rows: Cell<(u16, u16)>,
}

impl Default for LayoutCache {
    fn default() -> Self {
        Self {
            chat_width: Cell::new(80),
            chat_height: Cell::new(20),
            chat_entries: Cell::new((0, 0)),
            dialog_rows: Cell::new((0, 0)),
            help_rows: Cell::new((0, 0)),
        }
    }
}

/// Where `/copy` puts the last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clipboard {
    /// The terminal's clipboard, through OSC 52.
    Osc52,
    /// This file (in mino's home), where the terminal is known to refuse
    /// OSC 52.
    File(std::path::PathBuf),
}

/// Whether a terminal, known from its environment, takes OSC 52 copies:
/// VTE terminals (GNOME Terminal, Tilix, ...), Apple's Terminal and the
/// Linux console do not.
pub fn takes_osc52(
    vte_version: Option<&str>,
    term_program: Option<&str>,
    term: Option<&str>,
) -> bool {
    vte_version.is_none_or(str::is_empty)
        && term_program != Some("Apple_Terminal")
        && term != Some("linux")
}

/// Which layer gets the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Consent,
    /// An MCP server's question (`server_question.rs`).
    ServerQuestion,
    ModeQuestion,
    /// The rewind dialog (`rewind.rs`).
    Rewind,
    Picker,
    Help,
    Input,
}

/// A line sent while a turn runs, waiting for it to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub text: String,
    /// A `!command` the person typed (never one a paste began with: what
    /// a paste holds is a prompt).
    pub shell: bool,
}

/// The whole state of the TUI.
#[derive(Debug)]
pub struct App {
    pub transcript: Transcript,
    pub input: TextArea<'static>,
    pub history: PromptHistory,
    pub status: Status,
    pub turn: Option<RunningTurn>,
    /// The clock the views read (set by the loop; fixed in tests).
    pub now: Instant,
    /// When the person last pressed a key (for arming questions).
    pub last_key: Option<Instant>,
    /// The key that answered the last question: the next question is not
    /// hurried by it (`typing_key`).
    pub answer_key: Option<Instant>,
    pub consents: ConsentQueue,
    /// MCP servers' questions, after the permission questions.
    pub questions: super::server_question::QuestionQueue,
    pub mode_question: Option<ModeQuestion>,
    pub picker: Option<Picker>,
    /// The rewind dialog of one prompt's choices.
    pub rewind: Option<super::rewind::RewindDialog>,
    /// The rewind picker a prompt was chosen in, until its offer comes.
    pub rewind_back: Option<Picker>,
    /// The plan hand-off is open (`plan_offer.rs`).
    pub plan_offer: bool,
    /// The session's plan (the `plan` tool's), drawn as a panel.
    pub plan: crate::session::Plan,
    /// Ctrl+T hid the plan's panel (the status bar still counts it).
    pub plan_hidden: bool,
    /// The help overlay and its scroll.
    pub help: Option<u16>,
    /// The selected line of the command popup.
    pub completion: usize,
    /// The project's files for `@` completion, once listed.
    pub files: Option<Vec<String>>,
    /// The names `/model` takes, for its completion: the settings' (said
    /// at start), and every one a `/model` list showed.
    pub model_names: Vec<String>,
    /// The MCP servers' prompts and resources, for completion.
    pub mcp_catalog: std::sync::Arc<crate::mcp::catalog::Catalog>,
    /// A listing was asked for since the last turn ended.
    pub files_requested: bool,
    /// The popup was closed with Esc for the text typed so far.
    pub completion_dismissed: bool,
    /// The next session list answers `/resume` without an id.
    pub sessions_for_resume: bool,
    /// Ctrl-C was pressed once while idle, or Ctrl-D once during a turn.
    pub quit_armed: bool,
    /// The key whose second press quits while `quit_armed`.
    pub quit_key: &'static str,
    /// Esc was pressed once on an empty input (twice edits the last prompt).
    pub esc_armed: bool,
    /// Prompts sent while a turn runs, waiting for it to end: shown above
    /// the input, each sent when the turn before it ends.
    pub queued: Vec<Queued>,
    pub last_answer: Option<String>,
    /// Large pastes held out of the text area: (placeholder, text). The
    /// placeholder stands in the input; sending puts the text back.
    pub pastes: Vec<(String, String)>,
    /// Summaries of calls announced and not yet finished, by call id.
    pub calls: CallSummaries,
    /// Where the last records said calls run (`records.rs`).
    pub places: super::records::Places,
    /// Files this turn changed: path, lines added, lines removed.
    pub changed: Vec<(String, usize, usize)>,
    pub layout: LayoutCache,
    /// Calling the person when a question waits.
    pub attention: Attention,
    /// Where `/copy` puts the last answer.
    pub clipboard: Clipboard,
    /// The project directory the agent works in.
    pub project_dir: std::path::PathBuf,
    /// The session in use has a file (it got a prompt, or was resumed).
    pub session_saved: bool,
    /// The screen takes the mouse (the wheel scrolls); F2 gives it back
    /// to the terminal for its own selection.
    pub mouse: bool,
}

impl App {
    /// A new state for the project named `project`.
    pub fn new(project: &str, now: Instant) -> Self {
        let mut transcript = Transcript::default();
        transcript.push(EntryKind::Title(project.to_string()));
        Self {
            transcript,
            input: new_input(),
            history: PromptHistory::default(),
            status: Status {
                mode: Mode::Manual,
                session_id: String::new(),
                model: String::new(),
                context_window: crate::config::DEFAULT_CONTEXT_WINDOW,
                input_tokens: 0,
                tokens_used: 0,
                cost_usd: None,
                mcp: None,
                sandbox: None,
                grants: Vec::new(),
            },
            turn: None,
            now,
            last_key: None,
            answer_key: None,
            consents: ConsentQueue::default(),
            questions: Default::default(),
            mode_question: None,
            picker: None,
            rewind: None,
            rewind_back: None,
            plan_offer: false,
            plan: crate::session::Plan::default(),
            plan_hidden: false,
            help: None,
            completion: 0,
            files: None,
            model_names: Vec::new(),
            mcp_catalog: Default::default(),
            files_requested: false,
            completion_dismissed: false,
            sessions_for_resume: false,
            quit_armed: false,
            quit_key: "Ctrl-C",
            esc_armed: false,
            queued: Vec::new(),
            last_answer: None,
            pastes: Vec::new(),
            calls: CallSummaries::default(),
            places: Default::default(),
            changed: Vec::new(),
            layout: LayoutCache::default(),
            attention: Attention::new(Notify::default(), false),
            project_dir: std::path::PathBuf::new(),
            clipboard: Clipboard::Osc52,
            session_saved: false,
            mouse: true,
        }
    }

    /// The last key that was typing rather than an answer: a question that
    /// opens right after `a` answered the one before is not hurried by it.
    pub fn typing_key(&self) -> Option<Instant> {
        self.last_key.filter(|key| Some(*key) != self.answer_key)
    }

    /// Who gets the keys: an open question first, then the mode question,
    /// the rewind dialog, a picker, help, and last the input.
    pub fn layer(&self) -> Layer {
        if !self.consents.is_empty() {
            Layer::Consent
        } else if !self.questions.is_empty() {
            Layer::ServerQuestion
        } else if self.mode_question.is_some() {
            Layer::ModeQuestion
        } else if self.rewind.is_some() {
            Layer::Rewind
        } else if self.picker.is_some() {
            Layer::Picker
        } else if self.help.is_some() {
            Layer::Help
        } else {
            Layer::Input
        }
    }

    /// The arming of the question that has the keys, if one is open.
    pub fn open_arming(&self) -> Option<Arming> {
        match self.layer() {
            Layer::Consent => self.consents.front().map(|open| open.arming),
            Layer::ServerQuestion => self.questions.front().map(|open| open.arming),
            Layer::ModeQuestion => self.mode_question.as_ref().map(|q| q.arming),
            _ => None,
        }
    }

    /// When the question waiting for the person came on screen, if one
    /// does.
    pub fn waiting_since(&self) -> Option<Instant> {
        match self.layer() {
            Layer::Consent => self.consents.front().map(|open| open.arming.shown_at),
            Layer::ServerQuestion => self.questions.front().map(|open| open.arming.shown_at),
            Layer::ModeQuestion => self.mode_question.as_ref().map(|q| q.arming.shown_at),
            _ => None,
        }
    }

    /// The open question's keys stay armed from now on.
    pub fn latch_arming(&mut self) {
        match self.layer() {
            Layer::Consent => {
                if let Some(open) = self.consents.front_mut() {
                    open.arming.latched = true;
                }
            }
            Layer::ServerQuestion => {
                if let Some(open) = self.questions.front_mut() {
                    open.arming.latched = true;
                }
            }
            Layer::ModeQuestion => {
                if let Some(question) = self.mode_question.as_mut() {
                    question.arming.latched = true;
                }
            }
            _ => {}
        }
    }

    /// True when the open question (if any) takes answer keys now.
    /// Whether the open yes-or-no question is about appending to the
    /// user's settings (not a mode switch).
    pub fn settings_question(&self) -> bool {
        matches!(
            self.mode_question.as_ref().map(|q| &q.ask),
            Some(YesNo::Rule { .. })
        )
    }

    pub fn question_armed(&self) -> bool {
        self.open_arming()
            .is_none_or(|arming| arming.is_armed(self.now, self.last_key))
    }

    /// When the open question arms, while it is not armed yet: the loop
    /// wakes then to draw its border again.
    pub fn arms_at(&self) -> Option<Instant> {
        let at = self.open_arming()?.armed_at(self.last_key);
        (at > self.now).then_some(at)
    }

    /// The id of the session in use when it has a file to resume.
    pub fn saved_session(&self) -> Option<String> {
        (self.session_saved && !self.status.session_id.is_empty())
            .then(|| self.status.session_id.clone())
    }

    pub fn turn_running(&self) -> bool {
        self.turn.is_some()
    }

    /// True while the model's answer streams in.
    pub fn streaming(&self) -> bool {
        self.turn
            .as_ref()
            .is_some_and(|turn| turn.activity == Activity::Streaming)
    }

    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    pub fn input_is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// Replaces the input's text, cursor at the end.
    pub fn set_input(&mut self, text: &str) {
        self.input = new_input();
        self.insert_text(text);
    }
}

/// An empty input box with its placeholder and look.
pub fn new_input() -> TextArea<'static> {
    let mut input = TextArea::default();
    input.set_placeholder_text("ask mino…  (/ for commands, ? for help)");
    input.set_placeholder_style(Style::new().add_modifier(Modifier::DIM));
    input.set_cursor_line_style(Style::new());
    input.set_wrap_mode(WrapMode::WordOrGlyph);
    input.set_max_histories(200);
    input
}
