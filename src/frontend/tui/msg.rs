//! The typed intents the TUI acts on (from keys, the mouse, the terminal and
//! the agent) and the actions `update` hands back for the loop to perform.
//! Nothing here reads a key code or performs I/O.

use ratatui_textarea::Input as TextInput;
use tokio::sync::oneshot;

use crate::agent::{AgentEvent, ConsentReply, Input};
use crate::policy::ConsentAnswer;

/// One intent. The keymap makes these from key events; the loop wraps agent
/// events and the tick.
#[derive(Debug)]
pub enum Msg {
    // The input box.
    Submit,
    Newline,
    /// A key the text area handles itself (typing, cursor moves, deletion).
    Edit(TextInput),
    /// Plain characters read together, typed into an input that already
    /// holds text: one insertion.
    Type(String),
    Paste(String),
    /// A readline key on the input (Ctrl+U, Ctrl+K, Ctrl+W, ...).
    EditCommand(EditCommand),
    /// Takes the newest queued prompt back into the input.
    Unqueue,
    HistoryPrev,
    HistoryNext,
    /// Tab (or Enter) with the command popup open: complete the selected
    /// command; with `submit`, send it when it takes no arguments.
    Complete {
        submit: bool,
    },
    CompletionPrev,
    CompletionNext,
    // The chat pane.
    ScrollUp(u16),
    ScrollDown(u16),
    PageUp,
    PageDown,
    ScrollTop,
    ScrollBottom,
    /// Expand or collapse the selected (else the last) tool result.
    ToggleExpand,
    /// Ctrl+T: show or hide the plan's panel.
    TogglePlan,
    // The turn and the program.
    /// Stop the running turn at once.
    Interrupt,
    /// Ctrl-C: interrupt a turn, else clear the input, else (twice) quit.
    StopOrQuit,
    Quit,
    // Overlays.
    OpenHelp,
    /// Shift+Tab: the next mode of plan, manual, accept-edits.
    CycleMode,
    /// The plan hand-off's choice: run the plan in this mode, or (None)
    /// keep planning.
    PlanOffer(Option<crate::policy::Mode>),
    /// Close the help overlay, a picker or the command popup.
    Dismiss,
    OverlayUp,
    OverlayDown,
    OverlayPageUp,
    OverlayPageDown,
    PickerSelect,
    // The rewind dialog.
    /// Enter: do the focused choice, or confirm the focused kept file.
    RewindEnter,
    /// Space: confirm the focused kept file (or take that back).
    RewindToggle,
    // Questions whose keys are not armed yet.
    /// A key typed over a question: it edits the input, answers nothing.
    TypeAhead(TextInput),
    /// A paste over a question: it goes into the input.
    PasteAhead(String),
    // The permission dialog.
    Answer(ConsentAnswer),
    /// `n` or Tab: reject, with a note to the model typed next.
    StartNote,
    /// A key typed into the rejection's note.
    NoteChar(char),
    NoteBackspace,
    /// Enter on the note: reject and send it.
    SendNote,
    /// The `[y/N]` after a session-wide answer to a hurried question.
    ConfirmAnswer(bool),
    AnswerFocused,
    FocusNext,
    FocusPrev,
    // The mode question.
    ConfirmMode(bool),
    /// A key on an MCP server's question.
    Question(super::server_question::QuestionMsg),
    // The terminal and the loop.
    /// The terminal gained (true) or lost focus.
    Focus(bool),
    /// F2: take the mouse, or give it back to the terminal.
    ToggleMouse,
    Resize,
    Redraw,
    Tick,
    Agent(AgentEvent),
    /// The project's files, listed for `@` completion.
    Files(Vec<String>),
}

/// The input's readline commands, each bound in the keymap's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditCommand {
    /// Deletes from the cursor back to the start of the line.
    KillToStart,
    /// Deletes from the cursor to the end of the line.
    KillToEnd,
    /// Deletes the word before the cursor.
    KillWord,
    LineStart,
    LineEnd,
    /// Takes back the last edit.
    Undo,
}

/// What the loop performs for `update`.
#[derive(Debug)]
pub enum Action {
    Send(Input),
    Interrupt,
    Answer {
        reply: oneshot::Sender<ConsentReply>,
        answer: ConsentReply,
    },
    /// The answer to an MCP server's question, for that server only.
    AnswerServer {
        reply: oneshot::Sender<crate::mcp::question::QuestionAnswer>,
        answer: crate::mcp::question::QuestionAnswer,
    },
    /// Keep this prompt in the project's history file.
    KeepPrompt(String),
    /// List the project's files for `@` completion (answered by
    /// `Msg::Files`).
    ListFiles,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    /// Write this text to `path` (0600), where the terminal takes no OSC 52.
    CopyToFile {
        path: std::path::PathBuf,
        text: String,
        characters: usize,
        /// "; N control characters removed", or empty.
        removed: String,
    },
    /// Start the agent again in `dir`, resuming session `id` there.
    SwitchProject {
        dir: std::path::PathBuf,
        id: String,
    },
    /// Take the mouse (true) or leave it to the terminal.
    Mouse(bool),
    /// Take the terminal's size again and draw everything whole (a
    /// resize, Ctrl+L).
    Redraw,
    Quit,
}
