//! What the agent tells front ends, and the consent port through which a
//! front end answers a question. Front ends draw these; they never decide.

use serde::Serialize;
use tokio::sync::oneshot;

use crate::model::ResultStatus;
use crate::policy::{ConsentAnswer, Decision, Mode, Shown, ToolKey};
use crate::tools::Field;

use super::turn::TurnStop;

/// A question for the user about one prepared call. The answer travels back
/// through `reply`; dropping it counts as a rejection.
#[derive(Debug)]
pub struct ConsentRequest {
    pub call_id: String,
    pub tool: ToolKey,
    /// The fields a confirmation shows (after inspection for writes).
    pub fields: Vec<Field>,
    /// The answers the question offers, and what each covers.
    pub offer: crate::policy::Offer,
    pub reply: oneshot::Sender<ConsentReply>,
}

/// An answer to a question, with the note a rejection may carry to the
/// model ("The user rejected this call: NOTE").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentReply {
    pub answer: ConsentAnswer,
    /// Only a rejection carries one; empty notes are none.
    pub note: Option<String>,
}

impl ConsentReply {
    /// A rejection that tells the model `note` (nothing when it is blank).
    pub fn reject_with(note: &str) -> Self {
        let note = note.trim();
        Self {
            answer: ConsentAnswer::Reject,
            note: (!note.is_empty()).then(|| note.to_string()),
        }
    }
}

impl From<ConsentAnswer> for ConsentReply {
    fn from(answer: ConsentAnswer) -> Self {
        Self { answer, note: None }
    }
}

/// A decision as front ends and `stream-json` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionView {
    /// `allow`, `ask` or `deny`.
    pub decision: &'static str,
    /// True for an allow that the user was not asked about (and that is not a
    /// quiet confined read).
    pub unasked: bool,
    pub code: Option<&'static str>,
    pub reason: Option<String>,
    /// The saved rule that allowed the call (`rule 3 (cargo test)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl DecisionView {
    pub fn of(decision: &Decision) -> Self {
        match decision {
            Decision::Allow { shown } => Self {
                decision: "allow",
                unasked: *shown != Shown::Quietly,
                code: None,
                reason: None,
                rule: match shown {
                    Shown::ByRule(rule) => Some(rule.clone()),
                    _ => None,
                },
            },
            Decision::Ask => Self {
                decision: "ask",
                unasked: false,
                code: None,
                reason: None,
                rule: None,
            },
            Decision::Deny { code, reason } => Self {
                decision: "deny",
                unasked: false,
                code: Some(code.as_str()),
                reason: Some(reason.clone()),
                rule: None,
            },
        }
    }
}

/// What a turn notice is about, as `stream-json` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Older history was summarised.
    Compaction,
    /// An answer ran into the output limit.
    CutOff,
    /// A tool result was shortened to fit the context window.
    Budget,
    /// A call repeated with an identical result.
    Repeat,
    /// A tool call written as text was answered with a reminder.
    Reminder,
    /// The calls of a response past `[model] max_tool_calls` were
    /// refused, each told so.
    CallsRefused,
}

impl NoticeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Compaction => "compaction",
            NoticeKind::CutOff => "cut_off",
            NoticeKind::Budget => "budget",
            NoticeKind::Repeat => "repeat",
            NoticeKind::Reminder => "reminder",
            NoticeKind::CallsRefused => "calls_refused",
        }
    }
}

/// One model `/model` can switch to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    pub name: String,
    /// Its window, where the built-in table knows it.
    pub window: Option<u64>,
    /// `[model.prices.NAME]` gives its price.
    pub priced: bool,
    /// Only the service's list names it.
    pub from_service: bool,
}

/// Everything the agent reports.
#[derive(Debug)]
pub enum AgentEvent {
    /// The banner: after start and after every session change.
    Session {
        id: String,
        mode: Mode,
        model: String,
        context_window: u64,
        /// Where the window came from when the server reported it.
        window_source: Option<String>,
        /// `[model] profile` in force and whether the window chose it.
        profile: crate::config::ProfileChoice,
    },
    /// A resumed session's earlier history, after its banner, so a front end
    /// can show the conversation the user comes back to.
    /// Shared with the agent: nothing is copied to show it.
    History(std::sync::Arc<Vec<crate::model::Item>>),
    /// A plain line of information (mode changes, recoveries, command output).
    Notice(String),
    /// Something the user should notice that is not an error.
    Warning(String),
    /// Something that happened to the turn the user should see (shown as
    /// a warning; `stream-json` names its kind).
    TurnNotice {
        kind: NoticeKind,
        message: String,
    },
    /// A command or a turn failed; the text says what and where.
    Error(String),
    /// The user's prompt, as accepted for a turn.
    Prompt(String),
    AssistantDelta(String),
    /// One response's text is complete.
    AssistantDone,
    ToolCall {
        call_id: String,
        tool: String,
        arguments: String,
    },
    /// A PreToolUse hook gave the call new arguments: what it runs with
    /// (front ends show these, not the model's).
    ToolCallRewritten {
        call_id: String,
        tool: String,
        arguments: String,
    },
    Decision {
        call_id: String,
        tool: String,
        view: DecisionView,
    },
    /// The record of a call that runs without a question.
    Record {
        call_id: String,
        tool: String,
        shown: Shown,
        fields: Vec<Field>,
    },
    Consent(ConsentRequest),
    /// The answer to a question and what it means for the session.
    Answered {
        call_id: String,
        tool: String,
        answer: ConsentAnswer,
        line: String,
    },
    ToolRunning {
        call_id: String,
        tool: String,
    },
    /// What a running call printed so far: its last lines, redacted as
    /// its result will be (`live_output`), at most once a frame. Each one
    /// replaces the one before; the call's result replaces the last.
    ToolOutput {
        call_id: String,
        tool: String,
        output: String,
    },
    ToolResult {
        call_id: String,
        tool: String,
        status: ResultStatus,
        output: String,
    },
    /// A write or edit was applied: the file's path and the unified diff
    /// its inspection made (sent before the call's result).
    FileChanged {
        call_id: String,
        tool: String,
        path: String,
        diff: String,
    },
    /// A bash call changed project files: each file with its lines added
    /// and removed (sent before the call's result).
    BashChanged {
        call_id: String,
        tool: String,
        changes: Vec<crate::checkpoint::changes::FileDelta>,
        /// Each file's diff, for a person to read (Ctrl+O); redacted.
        diffs: Vec<crate::checkpoint::diffs::FileDiff>,
    },
    /// `/diff`: each file that differs from before the session's first
    /// prompt, with its lines added and removed, and its diff (redacted).
    SessionDiff {
        changes: Vec<crate::checkpoint::changes::FileDelta>,
        diffs: Vec<crate::checkpoint::diffs::FileDiff>,
    },
    TurnEnd {
        requests: u32,
        tool_calls: u32,
        stop: TurnStop,
    },
    /// After every response: its token counts as the service reported
    /// them (0 when it did not) and why it ended.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        context_window: u64,
        finish_reason: Option<String>,
    },
    /// After every response and banner: what the session's requests
    /// spent in this run, and the cost where every model's price is known
    /// (`[model.prices.NAME]`).
    Spent {
        input_tokens: u64,
        output_tokens: u64,
        cost_usd: Option<f64>,
    },
    /// `/model`: the model in use and the ones to switch to.
    Models {
        current: String,
        entries: Vec<ModelEntry>,
    },
    /// The names `/model` takes that the settings give (their models, each
    /// preset's name and models), said at start for completion.
    ModelNames(Vec<String>),
    /// A request failed before its answer began (a 429, a 5xx, no
    /// connection) and is tried again in `delay`; `reason` is the status.
    Retrying {
        delay: std::time::Duration,
        reason: String,
    },
    ModeChanged(Mode),
    /// A loosening `/mode` needs `Switch to this mode? [y/N]`; answer with
    /// `Input::ConfirmMode`.
    ConfirmMode {
        from: Mode,
        to: Mode,
        warning: String,
    },
    /// `/permissions save N` needs `Append this rule to FILE? [y/N]`;
    /// answer with `Input::ConfirmRule`.
    ConfirmRule {
        toml: String,
        file: std::path::PathBuf,
        /// The question under the text: `Append this rule to FILE? [y/N]`.
        ask: String,
    },
    /// The MCP servers' counts for the status bar, after every change.
    McpStatus(crate::mcp::McpStatus),
    /// An MCP server's question (elicitation) for the person. A front end
    /// that cannot ask drops it, which declines it; the answer goes to the
    /// server only, never to the model or the session.
    ServerQuestion(crate::mcp::question::ServerQuestion),
    /// `/mcp`: every configured server, its state, destination and tools.
    McpServers(Vec<crate::mcp::ServerView>),
    /// The running MCP servers' prompts (`/SERVER:PROMPT`) and resources
    /// (`@SERVER:URI`), for completion and help; sent when they change.
    McpCatalog(std::sync::Arc<crate::mcp::catalog::Catalog>),
    /// The answers remembered for the session in use and the run, after
    /// every change; `listed` when `/permissions` asked for them.
    Permissions {
        grants: Vec<crate::policy::Grant>,
        listed: bool,
    },
    /// `/resume ID` of a session started in another project directory:
    /// nothing was resumed. A front end may continue it here
    /// (`Input::ResumeHere`) or start again in `project`.
    OtherProject {
        id: String,
        project: std::path::PathBuf,
        here: std::path::PathBuf,
    },
    /// `/sessions`: the saved sessions that got a prompt, newest first:
    /// this project's, or every project's when `all`.
    Sessions {
        list: Vec<crate::session::SessionSummary>,
        all: bool,
    },
    /// The session's plan: after every change, and after the banner of a
    /// session that has one (a session's banner means no plan until then).
    Plan(crate::session::Plan),
    /// `/rewind`: this session's prompts, numbered from 1, with the files
    /// each turn changed (a pruned one cannot be gone back to).
    RewindPrompts(Vec<crate::checkpoint::rewind::Listed>),
    /// `/rewind N`: what going back to before prompt N would do; answer
    /// with `Input::Rewind`.
    RewindOffer(crate::checkpoint::rewind::Offer),
    /// A rewind was done: the line that says what it did, and the prompt
    /// to put back in the input when the conversation went back.
    Rewound {
        line: String,
        prompt: Option<String>,
    },
    /// `/clear` emptied the session's history: a front end clears its
    /// view of the conversation (a notice follows).
    Cleared,
    /// `/quit`: the agent has stopped.
    Quit,
    /// The agent is done with the input it was given (a prompt, a
    /// command, a mode answer) and waits for the next: sent once per input,
    /// after everything that input made it say.
    Idle,
    /// What an asked agent (`/ask-NAME`) did; shown as a nested block.
    Asked {
        agent: String,
        event: super::asked::AskedEvent,
    },
}

impl AgentEvent {
    /// Whether this event carries words from outside mino (an error, a
    /// notice of the turn, an asked agent's words, the diffs of what a
    /// command changed) that are redacted before
    /// they are shown or sent.
    pub fn carries_outside_words(&self) -> bool {
        matches!(
            self,
            AgentEvent::Error(_)
                | AgentEvent::TurnNotice { .. }
                | AgentEvent::Asked { .. }
                | AgentEvent::BashChanged { .. }
                | AgentEvent::SessionDiff { .. }
                | AgentEvent::TurnEnd {
                    stop: TurnStop::ModelError(_)
                        | TurnStop::SaveFailed(_)
                        | TurnStop::PromptBlocked(_)
                        | TurnStop::Internal(_),
                    ..
                }
        )
    }

    /// Whether this event is a piece of something streaming (the answer's
    /// text, a command's output) that a screen may hold for its next frame.
    /// Every other event (the answer's end, a question, a tool call) is
    /// worth a wake-up of its own: it rings the channel's wake
    /// (`EventSender`).
    pub fn is_streamed_piece(&self) -> bool {
        matches!(
            self,
            AgentEvent::AssistantDelta(_) | AgentEvent::ToolOutput { .. }
        )
    }

    /// This event with every secret mino holds removed from its words.
    pub fn redacted(self, secrets: &crate::secrets::Secrets) -> Self {
        let clean = |text: String| secrets.redact(&text).text;
        match self {
            AgentEvent::Error(text) => AgentEvent::Error(clean(text)),
            AgentEvent::BashChanged {
                call_id,
                tool,
                changes,
                diffs,
            } => AgentEvent::BashChanged {
                call_id,
                tool,
                changes,
                diffs: cleaned(diffs, &clean),
            },
            AgentEvent::SessionDiff { changes, diffs } => AgentEvent::SessionDiff {
                changes,
                diffs: cleaned(diffs, &clean),
            },
            AgentEvent::TurnNotice { kind, message } => AgentEvent::TurnNotice {
                kind,
                message: clean(message),
            },
            AgentEvent::Asked { agent, event } => AgentEvent::Asked {
                agent,
                event: event.redacted(&clean),
            },
            AgentEvent::TurnEnd {
                requests,
                tool_calls,
                stop,
            } => AgentEvent::TurnEnd {
                requests,
                tool_calls,
                stop: match stop {
                    TurnStop::ModelError(text) => TurnStop::ModelError(clean(text)),
                    TurnStop::SaveFailed(text) => TurnStop::SaveFailed(clean(text)),
                    TurnStop::Internal(text) => TurnStop::Internal(clean(text)),
                    TurnStop::PromptBlocked(text) => TurnStop::PromptBlocked(clean(text)),
                    other => other,
                },
            },
            other => other,
        }
    }
}

/// Each diff of `diffs` with `clean` applied to its text.
fn cleaned(
    diffs: Vec<crate::checkpoint::diffs::FileDiff>,
    clean: &dyn Fn(String) -> String,
) -> Vec<crate::checkpoint::diffs::FileDiff> {
    diffs
        .into_iter()
        .map(|mut d| {
            d.diff = clean(d.diff);
            d
        })
        .collect()
}

/// The sending end of the agent's events: every sender (the turn, hooks,
/// MCP servers, an editor's questions) goes through it, so every event that
/// is not a streamed piece rings `wake`. A screen that holds a streaming
/// answer's pieces for its next frame listens to it, and shows the answer's
/// end or a question as it comes.
#[derive(Debug, Clone)]
pub struct EventSender {
    events: tokio::sync::mpsc::UnboundedSender<AgentEvent>,
    wake: std::sync::Arc<tokio::sync::Notify>,
}

impl EventSender {
    /// Sends `event`; an error when the receiving end is gone.
    pub fn send(&self, event: AgentEvent) -> Result<(), ReceiverGone> {
        let piece = event.is_streamed_piece();
        self.events.send(event).map_err(|_| ReceiverGone)?;
        if !piece {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// What rings after an event that is not a streamed piece.
    pub fn wake(&self) -> std::sync::Arc<tokio::sync::Notify> {
        std::sync::Arc::clone(&self.wake)
    }
}

/// The front end that received the agent's events has gone.
#[derive(Debug)]
pub struct ReceiverGone;

/// A channel of the agent's events.
pub fn channel() -> (
    EventSender,
    tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
) {
    let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
    let wake = std::sync::Arc::default();
    (EventSender { events, wake }, receiver)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_events_that_are_not_streamed_pieces_ring_the_wake() {
        use futures_util::FutureExt;
        let (sender, mut receiver) = channel();
        let wake = sender.wake();
        sender
            .send(AgentEvent::AssistantDelta("word ".into()))
            .unwrap();
        assert!(wake.notified().now_or_never().is_none());
        sender.send(AgentEvent::AssistantDone).unwrap();
        assert!(wake.notified().now_or_never().is_some());
        assert!(matches!(
            receiver.recv().await,
            Some(AgentEvent::AssistantDelta(_))
        ));
        assert!(matches!(
            receiver.recv().await,
            Some(AgentEvent::AssistantDone)
        ));
    }

    #[test]
    fn only_streamed_pieces_wait_for_the_screen_s_frame() {
        assert!(AgentEvent::AssistantDelta("word ".into()).is_streamed_piece());
        assert!(!AgentEvent::AssistantDone.is_streamed_piece());
        assert!(!AgentEvent::Idle.is_streamed_piece());
        assert!(!AgentEvent::Error("broken".into()).is_streamed_piece());
        assert!(
            !AgentEvent::TurnEnd {
                requests: 1,
                tool_calls: 0,
                stop: TurnStop::Completed,
            }
            .is_streamed_piece()
        );
    }
}
