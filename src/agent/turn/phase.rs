//! What the turn machine speaks: its phases, the events the driver reports,
//! the effects it asks for, its limits and why a turn stops. Data only:
//! the transitions are in `mod.rs`.

use crate::model::{Item, ModelError, PastBound, Response, ResultStatus, ToolCall};
use crate::policy::{CallFacts, ConsentAnswer, Decision, Shown, ToolKey};
use crate::tools::ToolOutcome;

/// Per-turn limits (DESIGN section 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnLimits {
    pub requests: u32,
    pub tool_calls: u32,
}

impl Default for TurnLimits {
    fn default() -> Self {
        Self {
            requests: 8,
            tool_calls: 16,
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnStop {
    /// The model answered without asking for a tool.
    Completed,
    /// The answer ran into the output limit and was cut off.
    Length,
    RequestLimit(u32),
    ToolCallLimit(u32),
    /// The model made call N again with the same arguments and got the same
    /// result a third time.
    Repeated(u32),
    /// After the reminder, the model wrote a call (to this tool) as text
    /// again; nothing ran.
    TextCallRepeated(String),
    Interrupted,
    /// A model request failed; the text names the service and what happened.
    ModelError(String),
    /// A record could not be saved; chat never goes on with unsaved history.
    SaveFailed(String),
    /// A UserPromptSubmit hook blocked the prompt (the reason is the
    /// hook's, redacted); nothing was sent or saved.
    PromptBlocked(String),
    /// mino's own mistake: an outcome that makes no sense where the turn
    /// was. The text says which.
    Internal(String),
}

impl TurnStop {
    /// The stable word for `stream-json`'s `turn_end.stop`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnStop::Completed => "completed",
            TurnStop::Length => "length",
            TurnStop::RequestLimit(_) => "request_limit",
            TurnStop::ToolCallLimit(_) => "tool_call_limit",
            TurnStop::Repeated(_) => "repeated_call",
            TurnStop::TextCallRepeated(_) => "text_call_repeated",
            TurnStop::Interrupted => "interrupted",
            TurnStop::ModelError(_) => "model_error",
            TurnStop::SaveFailed(_) => "save_failed",
            TurnStop::PromptBlocked(_) => "prompt_blocked",
            TurnStop::Internal(_) => "internal_error",
        }
    }

    /// A sentence for the user, or `None` for a completed turn.
    pub fn message(&self) -> Option<String> {
        match self {
            TurnStop::Completed => None,
            TurnStop::Length => Some(
                "The answer was cut off: the model reached its output limit (`[model] max_output_tokens`)."
                    .to_string(),
            ),
            TurnStop::RequestLimit(n) => Some(format!(
                "The turn stopped: it reached its limit of {n} model requests. What it did so far is kept: type \"continue\" to go on, or raise `[limits] turn_requests` in your settings for longer turns."
            )),
            TurnStop::ToolCallLimit(n) => Some(format!(
                "The turn stopped: it reached its limit of {n} tool calls. What it did so far is kept: type \"continue\" to go on, or raise `[limits] turn_tool_calls` in your settings for longer turns."
            )),
            TurnStop::Repeated(n) => Some(format!(
                "The turn stopped: the model made call {n} again with the same arguments and got the same result a third time."
            )),
            TurnStop::TextCallRepeated(tool) => Some(format!(
                "The turn stopped: after the reminder, the model again wrote its call to {tool} as text instead of calling it; nothing ran, and that text is not an answer."
            )),
            TurnStop::Interrupted => Some("Interrupted.".to_string()),
            TurnStop::ModelError(e) => Some(format!("The model request failed: {e}")),
            TurnStop::SaveFailed(e) => Some(format!(
                "The turn stopped because history could not be saved: {e}"
            )),
            TurnStop::PromptBlocked(reason) => Some(format!(
                "A UserPromptSubmit hook blocked this prompt; it was not sent: {reason}"
            )),
            TurnStop::Internal(e) => Some(format!(
                "The turn stopped on an internal error (please report it): {e}"
            )),
        }
    }
}

/// What happened, as the driver reports it. Outcomes of a call name the
/// call they belong to.
#[derive(Debug)]
pub enum Event {
    /// The user's prompt was saved: start.
    Begin,
    /// Compaction before a request is over (done, not needed, or failed
    /// with a warning already given).
    Compacted,
    ModelDone(Response),
    ModelFailed(ModelError),
    /// The service said the request (the turn's `first`, or a later one)
    /// is larger than the model's context; `error` is what the turn ends
    /// with when a retry after compaction fails the same way.
    ContextExceeded {
        error: ModelError,
        first: bool,
    },
    /// The request failed after the model had said something (a bound, a
    /// stall, a dropped stream): what it said is kept, cut off.
    ModelCutOff {
        error: ModelError,
        partial: Response,
    },
    /// The last save is on disk.
    Saved,
    /// A result was too large for the room the context window has left:
    /// `full` is kept in the session log first, `cut` (head and tail)
    /// becomes the result.
    ResultCut {
        call_id: String,
        tool: String,
        status: ResultStatus,
        full: String,
        cut: String,
    },
    SaveFailed(String),
    /// The call was prepared. `inspect` when the prepared call must be
    /// inspected before it may run (a write).
    Prepared {
        call_id: String,
        facts: CallFacts,
        inspect: bool,
    },
    PrepareFailed {
        call_id: String,
        message: String,
    },
    Inspected {
        call_id: String,
    },
    InspectFailed {
        call_id: String,
        message: String,
    },
    Answered {
        call_id: String,
        answer: ConsentAnswer,
        /// What a rejection tells the model, when the user wrote a note.
        note: Option<String>,
    },
    Ran {
        call_id: String,
        outcome: ToolOutcome,
    },
    /// Esc or Ctrl-C: stop what runs now. `partial` is the text streamed so
    /// far when a request was interrupted.
    Interrupted {
        partial: Option<Response>,
    },
    /// Esc or Ctrl-C while call `call_id` ran: it was stopped, and
    /// `outcome` is what it left (a command's output so far).
    Stopped {
        call_id: String,
        outcome: ToolOutcome,
    },
    /// Esc or Ctrl-C before the current call started: it never ran.
    InterruptedBeforeRun,
    /// The driver could not perform the last effect (mino's own mistake,
    /// such as no prepared call with the id asked for).
    Internal(String),
    /// An asked agent asks permission for `call` (its tool and arguments,
    /// as the asked agent will run them). Only a turn made with
    /// `Turn::external` takes it: the call is prepared, decided and
    /// remembered here like the turn's own, and answered with `Reply`.
    ExternalCall(ToolCall),
    /// The person's own `!command`, as the bash call that runs it. Only a
    /// turn made with `Turn::person` takes it, as its first event.
    PersonShell {
        call: ToolCall,
        command: String,
    },
}

/// Which of the turn's tools a request offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// All of them.
    All,
    /// All but this one, for one request: the tool of a call that came
    /// back with the same result where the turn ends by `final_answer` (a
    /// small model repeats a read it does not take in; forced to call a
    /// tool, it must now act on the result or answer).
    AllBut(String),
    /// Only `final_answer`: the turn has nothing left to do but answer.
    AnswerOnly,
}

impl Offer {
    /// Whether a request under this offer offers `tool`.
    pub fn offers(&self, tool: &str) -> bool {
        match self {
            Offer::All => true,
            Offer::AllBut(withheld) => tool != withheld,
            Offer::AnswerOnly => tool == crate::tools::final_answer::NAME,
        }
    }
}

/// What the driver should do next. Effects on a call carry its id; the
/// driver checks it against the one call it holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Compact history first if the next request would not fit; report
    /// `Compacted` (or `Interrupted`).
    Compact,
    /// Compact history because the service refused the request as too
    /// large (saying so first), then report `Compacted` (or
    /// `Interrupted`): the same request is sent once more.
    CompactToRetry,
    /// Stream the next model request over the current history: the
    /// turn's `first` or a later one, offering the tools `offer` says.
    Request { first: bool, offer: Offer },
    /// Append the model's response to the session log (fsync) and to
    /// history, then report `Saved`.
    SaveResponse(Item),
    /// Append a call's result the same way, and show it.
    SaveResult {
        call_id: String,
        tool: String,
        status: ResultStatus,
        output: String,
    },
    /// Save the result of the person's own `command` as what they ran and
    /// saw (a user item: the model made no call), and show it.
    SaveShellResult {
        call_id: String,
        command: String,
        status: ResultStatus,
        output: String,
    },
    /// Answer each of `calls`, the calls of one response past the bound
    /// on calls (`bound`), with a `not_run` result of `output`: appended to
    /// the session log in one write and one fsync and to history, and
    /// shown as one line; report `Saved`.
    SaveRefusals {
        bound: usize,
        calls: Vec<ToolCall>,
        output: String,
    },
    /// Keep a result's whole text in the session log (it is cut to fit the
    /// context window), then report `Saved`.
    SaveFullOutput { call_id: String, output: String },
    /// Save a result already redacted, told to the hooks and fitted, and
    /// show it; report `Saved`.
    SaveFitted {
        call_id: String,
        tool: String,
        status: ResultStatus,
        output: String,
    },
    /// Announce a call before it is prepared.
    AnnounceCall(ToolCall),
    /// Validate and prepare this call; report `Prepared` or `PrepareFailed`.
    Prepare(ToolCall),
    /// Report the decision on a call.
    AnnounceDecision {
        call_id: String,
        tool: String,
        decision: Decision,
    },
    /// Inspect the prepared (write) call.
    Inspect { call_id: String },
    /// Put the prepared call to the user.
    /// `offer`: the answers the question offers (the turn rejects any other).
    Ask {
        call_id: String,
        offer: crate::policy::Offer,
    },
    /// Report the user's answer.
    AnnounceAnswer {
        call_id: String,
        tool: String,
        key: ToolKey,
        answer: ConsentAnswer,
        note: Option<String>,
    },
    /// Print the record line of an unasked call (after inspection).
    Record {
        call_id: String,
        tool: String,
        shown: Shown,
    },
    /// Run the prepared call.
    Run { call_id: String },
    /// Show `final_answer`'s text as the model's answer (before it is
    /// saved as one).
    Answer(String),
    /// Tell the front ends the model wrote a call to `tool` as text and is
    /// reminded to use the tool-call format.
    Remind { tool: String },
    /// Answer an asked agent's permission request: `allow` lets it run
    /// once; `why` says what refused it when no decision or answer did
    /// (a call that could not be prepared).
    Reply {
        call_id: String,
        allow: bool,
        why: Option<String>,
    },
    /// The turn is over: say why, once.
    End(TurnStop),
}

impl Effect {
    /// Whether the driver reports an event after performing this effect.
    /// A list of effects the machine returns ends with one that does, or
    /// with `End`.
    pub fn answers(&self) -> bool {
        matches!(
            self,
            Effect::Compact
                | Effect::CompactToRetry
                | Effect::Request { .. }
                | Effect::SaveResponse(_)
                | Effect::SaveResult { .. }
                | Effect::SaveRefusals { .. }
                | Effect::SaveShellResult { .. }
                | Effect::SaveFullOutput { .. }
                | Effect::SaveFitted { .. }
                | Effect::Prepare(_)
                | Effect::Inspect { .. }
                | Effect::Ask { .. }
                | Effect::Run { .. }
        )
    }
}

/// Where a turn is. Each phase holds what it acts on; nothing else in the
/// turn says where it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Created; waiting for `Begin`.
    Starting,
    /// History is compacted, if it must be, before a request.
    Compacting,
    /// A model request streams.
    Requesting,
    /// The model's response is being saved; its calls past the bound on
    /// calls, if it had any, are refused next.
    SavingResponse { past_bound: Option<PastBound> },
    /// The calls of the response past the bound on calls are being saved,
    /// each with its refusal; the calls kept follow.
    SavingRefusals,
    /// An answer that wrote a call to `tool` as text is being saved; the
    /// reminder follows.
    SavingTextCall { tool: String },
    /// The reminder to use the tool-call format is being saved; the model
    /// is asked again next.
    Reminding,
    /// `call` is validated and its facts established (with the hook).
    Preparing { call: ToolCall },
    /// The prepared write is read and previewed; `decision` was made on
    /// its `facts`.
    Inspecting {
        call: ToolCall,
        facts: CallFacts,
        decision: Decision,
    },
    /// The user is asked about `call`, whose facts the answer is kept for.
    Asking { call: ToolCall, facts: CallFacts },
    /// `call` runs.
    Running { call: ToolCall },
    /// `call`'s result is being saved.
    SavingResult { call: ToolCall },
    /// A result's whole text is being kept before its cut form (`fitted`)
    /// is saved; the turn goes on in `then`.
    SavingFullOutput {
        fitted: Box<Effect>,
        then: Box<Phase>,
    },
    /// The turn ends with `stop` once what is being saved is on disk and
    /// every call left is paired with a result.
    Ending { stop: TurnStop },
    /// An external turn waits for the asked agent's next call.
    Waiting,
    /// `End` was given; nothing more happens.
    Ended,
}

impl Phase {
    /// A short name for logs and internal-error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Compacting => "compacting",
            Phase::Requesting => "requesting",
            Phase::SavingResponse { .. } => "saving the response",
            Phase::SavingRefusals => "saving the refusals",
            Phase::SavingTextCall { .. } => "saving a call written as text",
            Phase::Reminding => "saving the reminder",
            Phase::Preparing { .. } => "preparing",
            Phase::Inspecting { .. } => "inspecting",
            Phase::Asking { .. } => "asking",
            Phase::Running { .. } => "running",
            Phase::SavingResult { .. } => "saving the result",
            Phase::SavingFullOutput { .. } => "keeping a result's whole text",
            Phase::Ending { .. } => "ending",
            Phase::Waiting => "waiting for an asked agent's call",
            Phase::Ended => "ended",
        }
    }
}

impl Event {
    /// A short name for logs and internal-error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Begin => "begin",
            Event::Compacted => "compacted",
            Event::ModelDone(_) => "model done",
            Event::ContextExceeded { .. } => "context exceeded",
            Event::ResultCut { .. } => "a result cut to fit",
            Event::ModelFailed(_) => "model failed",
            Event::ModelCutOff { .. } => "model cut off",
            Event::Saved => "saved",
            Event::SaveFailed(_) => "save failed",
            Event::Prepared { .. } => "prepared",
            Event::PrepareFailed { .. } => "prepare failed",
            Event::Inspected { .. } => "inspected",
            Event::InspectFailed { .. } => "inspect failed",
            Event::Answered { .. } => "answered",
            Event::Ran { .. } => "ran",
            Event::Interrupted { .. } => "interrupted",
            Event::Stopped { .. } => "stopped",
            Event::InterruptedBeforeRun => "interrupted before run",
            Event::Internal(_) => "internal error",
            Event::ExternalCall(_) => "external call",
            Event::PersonShell { .. } => "the person's command",
        }
    }
}
