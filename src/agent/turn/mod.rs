//! One turn as a state machine: an event in, the effects to perform out.
//! The turn is always in exactly one `Phase`; each transition matches the
//! phase and the event, and an event that makes no sense in the phase ends
//! the turn with an internal-error stop (never an empty list of effects).
//! Pure: no I/O, no async. The driver (`driver.rs`) performs the effects and
//! feeds their outcomes back. Every call the model asks for ends with exactly
//! one saved result, and every turn with exactly one `End`.

use std::collections::{HashSet, VecDeque};

use crate::model::{FinishReason, Item, ModelError, PastBound, Response, ResultStatus, ToolCall};
use crate::policy::{
    CallFacts, CanAsk, ConsentAnswer, Decision, DenyCode, Mode, ProtectedPaths, RunConsent,
    SessionConsent, Shown, USER_REJECTED_WITH_NOTE, decide, offer, remember_call, user_rejected,
};
use crate::tools::{ToolOutcome, ToolStatus, final_answer};

mod consent;
mod ending;
pub use ending::cut_off_marker;
use ending::{nonsense_message, status_of, stopped_text};
mod past_bound;
mod phase;
mod repeats;
mod text_call;

pub use past_bound::{notice as past_bound_notice, refusal as past_bound_refusal};
pub use phase::{Effect, Event, Offer, Phase, TurnLimits, TurnStop};
use repeats::{Repeat, Repeats, same_as};
pub use text_call::notice as text_call_notice;
use text_call::{reminder, written_call};

/// The decision's inputs that live outside the turn.
pub struct DecideCx<'a> {
    pub mode: Mode,
    pub protected: &'a ProtectedPaths,
    pub session: &'a mut SessionConsent,
    pub run: &'a mut RunConsent,
    pub can_ask: CanAsk,
}

/// One turn's state.
#[derive(Debug)]
pub struct Turn {
    limits: TurnLimits,
    requests: u32,
    tool_calls: u32,
    /// Calls of the last response not yet handled.
    pending: VecDeque<ToolCall>,
    phase: Phase,
    /// What the turn's calls returned, to spot a call repeated unchanged.
    repeats: Repeats,
    /// The names of the tools the model is offered this turn (all of
    /// them; a request that offers only `final_answer` narrows them).
    tools: Vec<String>,
    /// `@` mentions made into the turn's first response by mino (a
    /// `read_file` per path, a resource read per `@server:uri`), played
    /// instead of the first request.
    attachment: Option<Response>,
    /// The resource reads of that response: mino's own calls, each let
    /// through once; a model or an asked agent that names the tool is told
    /// there is no such tool.
    attached: HashSet<String>,
    /// Whether a request was asked for (or the attachment played): only
    /// the turn's first request is its first, whatever it saves between.
    requested: bool,
    /// Whether a call written as text was already answered with a reminder
    /// (once a turn).
    reminded: bool,
    /// Whether the rest of the turn's requests offer only `final_answer`:
    /// set where the turn ends by it once a refused call was asked for
    /// again, since asking a third time can only end the turn unanswered.
    answer_only: bool,
    /// The tool the next request withholds (`Offer::AllBut`), cleared when
    /// its response comes.
    withheld: Option<String>,
    /// An asked agent's calls: each ends in `Reply`, never in a saved
    /// result, and the turn waits for the next one.
    external: bool,
    /// The request being retried once after the service said it was too
    /// large for the context (whether it was the turn's first), while
    /// history is compacted for it.
    retrying: Option<bool>,
    /// Whether the current request was already retried so.
    retried: bool,
    /// The person's own `!command`: the turn runs that one call, marked
    /// as theirs (`typed_by_person`), saves its result as what they ran
    /// and saw, and ends; no request is made.
    person: Option<String>,
}

/// The result text of a call the user never answered.
pub const NOT_RUN_UNANSWERED: &str = "Not run: the user interrupted the turn before answering the question about this call. It did not run.";
/// The result text of a call the turn was interrupted before it started.
pub const NOT_RUN_BEFORE_START: &str =
    "Not run: the user interrupted the turn before this call started. It did not run.";
/// The result text of a call the turn never reached.
pub const NOT_RUN_UNREACHED: &str =
    "Not run: the user interrupted the turn before it reached this call. It did not run.";
/// The result text of a call that started and was stopped.
pub const INTERRUPTED_RUNNING: &str =
    "Interrupted by the user; the call was stopped and its outcome may be partial.";

/// What a repeated call's result adds where the turn ends by `final_answer`.
const REPEAT_HINT: &str =
    "Do not make this call again: act on that result, or end the turn with final_answer.";

/// What a change that was made adds there.
const CHANGED_HINT: &str = "The change is made: do not make it again. If the task is done, end the turn with final_answer.";

/// What a refused call asked for again adds there.
const REFUSED_AGAIN_HINT: &str = "Refused again: asking again gets the same answer. End the turn with final_answer, telling the user what was blocked and why.";

impl Turn {
    pub fn new(limits: TurnLimits) -> Self {
        Self {
            limits,
            requests: 0,
            tool_calls: 0,
            pending: VecDeque::new(),
            phase: Phase::Starting,
            repeats: Repeats::default(),
            tools: Vec::new(),
            attachment: None,
            attached: HashSet::new(),
            requested: false,
            retrying: None,
            retried: false,
            person: None,
            reminded: false,
            answer_only: false,
            withheld: None,
            external: false,
        }
    }

    /// The turn that decides an asked agent's calls: it takes
    /// `ExternalCall` events and answers each with `Reply`; nothing is
    /// requested or saved. It waits from the start.
    pub fn external() -> Self {
        Self {
            phase: Phase::Waiting,
            external: true,
            ..Self::new(TurnLimits::default())
        }
    }

    /// The turn that runs the person's own `!command`: it takes one
    /// `PersonShell` event.
    pub fn person() -> Self {
        Self::new(TurnLimits::default())
    }

    /// Whether this turn runs the person's own command.
    pub fn is_persons(&self) -> bool {
        self.person.is_some()
    }

    /// The turn with the names of the tools its requests offer, so a call
    /// written as text in an answer is told from other JSON, and
    /// `final_answer` is known for what it is.
    pub fn with_tools(mut self, tools: Vec<String>) -> Self {
        self.tools = tools;
        self
    }

    /// The turn whose first response is `attachment` (the calls mino
    /// makes for `@` mentions) instead of a request.
    pub fn attaching(mut self, attachment: Option<Response>) -> Self {
        self.attachment = attachment;
        self
    }

    /// What the next request offers: only `final_answer` once the turn
    /// can only end by it; all but a tool withheld for one request.
    fn offer(&self) -> Offer {
        match &self.withheld {
            _ if self.answer_only => Offer::AnswerOnly,
            Some(tool) => Offer::AllBut(tool.clone()),
            None => Offer::All,
        }
    }

    /// The tools the next request offers.
    fn offered(&self) -> impl Iterator<Item = &String> {
        let offer = self.offer();
        self.tools.iter().filter(move |t| offer.offers(t))
    }

    fn offers(&self, tool: &str) -> bool {
        self.offered().any(|t| t == tool)
    }

    pub fn requests(&self) -> u32 {
        self.requests
    }

    pub fn tool_calls(&self) -> u32 {
        self.tool_calls
    }

    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Feeds one event; returns the effects to perform, in order. The list
    /// ends with an effect the driver answers with an event, or with `End`.
    pub fn on(&mut self, event: Event, cx: &mut DecideCx<'_>) -> Vec<Effect> {
        let phase = std::mem::replace(&mut self.phase, Phase::Ended);
        match phase {
            Phase::Starting => self.starting(event),
            Phase::Compacting => self.compacting(event),
            Phase::Requesting => self.requesting(event),
            Phase::SavingResponse { past_bound } => self.saving_response(past_bound, event),
            Phase::SavingRefusals => self.saving_refusals(event),
            Phase::SavingTextCall { tool } => self.saving_text_call(tool, event),
            Phase::Reminding => self.reminding(event),
            Phase::Preparing { call } => self.preparing(call, event, cx),
            Phase::Inspecting {
                call,
                facts,
                decision,
            } => self.inspecting(call, facts, decision, event, cx.mode),
            Phase::Asking { call, facts } => self.asking(call, facts, event, cx),
            Phase::Running { call } => self.running(call, event),
            Phase::SavingResult { call } => self.saving_result(call, event),
            Phase::SavingFullOutput { fitted, then } => {
                self.saving_full_output(*fitted, *then, event)
            }
            Phase::Ending { stop } => self.ending(stop, event),
            Phase::Waiting => self.waiting(event),
            Phase::Ended => self.nonsense(&Phase::Ended, &event, None),
        }
    }

    fn starting(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Begin => self.request(),
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            Event::PersonShell { call, command } if self.requests == 0 && self.tool_calls == 0 => {
                self.person = Some(command);
                self.tool_calls += 1;
                self.phase = Phase::Preparing { call: call.clone() };
                vec![Effect::AnnounceCall(call.clone()), Effect::Prepare(call)]
            }
            event => self.nonsense(&Phase::Starting, &event, None),
        }
    }

    fn waiting(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::ExternalCall(call) => {
                self.phase = Phase::Preparing { call: call.clone() };
                if let Some(message) = self.not_a_tool(&call) {
                    return self.finish(call, ResultStatus::Error, message);
                }
                vec![Effect::Prepare(call)]
            }
            event => self.nonsense(&Phase::Waiting, &event, None),
        }
    }

    fn compacting(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Compacted => {
                self.phase = Phase::Requesting;
                if let Some(first) = self.retrying.take() {
                    return vec![Effect::Request {
                        first,
                        offer: self.offer(),
                    }];
                }
                self.retried = false;
                if let Some(response) = self.attachment.take() {
                    self.requested = true;
                    self.attached = response
                        .tool_calls
                        .iter()
                        .filter(|c| c.name == crate::mcp::resource::RESOURCE_TOOL)
                        .map(|c| c.id.clone())
                        .collect();
                    return self.requesting(Event::ModelDone(response));
                }
                vec![Effect::Request {
                    first: !std::mem::replace(&mut self.requested, true),
                    offer: self.offer(),
                }]
            }
            Event::Interrupted { .. } => self.stop_after_saves(TurnStop::Interrupted),
            event => self.nonsense(&Phase::Compacting, &event, None),
        }
    }

    fn requesting(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::ModelDone(response) => {
                // A tool is withheld from one request only.
                self.withheld = None;
                if let Some(answer) = self.final_answer(&response.tool_calls) {
                    // The answer is the model's text to the person: saved
                    // and shown as an answer, never as a call.
                    self.phase = Phase::Ending {
                        stop: TurnStop::Completed,
                    };
                    return vec![
                        Effect::Answer(answer.clone()),
                        Effect::SaveResponse(Item::Assistant {
                            text: answer,
                            tool_calls: Vec::new(),
                        }),
                    ];
                }
                self.pending = response.tool_calls.iter().cloned().collect();
                let cut_off = response.finish == Some(FinishReason::Length);
                let text_call = (response.tool_calls.is_empty() && !cut_off)
                    .then(|| {
                        let offered: Vec<String> = self.offered().cloned().collect();
                        written_call(&response.text, &offered)
                    })
                    .flatten();
                // A text answer cut off at the output limit is not a
                // finished one; one that wrote a call as text gets one
                // reminder a turn, and writing one again after it ends the
                // turn (its JSON is not an answer).
                self.phase = if let Some(tool) = text_call {
                    if std::mem::replace(&mut self.reminded, true) {
                        Phase::Ending {
                            stop: TurnStop::TextCallRepeated(tool),
                        }
                    } else {
                        Phase::SavingTextCall { tool }
                    }
                } else if cut_off && response.tool_calls.is_empty() {
                    Phase::Ending {
                        stop: TurnStop::Length,
                    }
                } else {
                    Phase::SavingResponse {
                        past_bound: response.past_bound.clone(),
                    }
                };
                let tool_calls =
                    past_bound::all_calls(response.tool_calls, response.past_bound.as_ref());
                vec![Effect::SaveResponse(Item::Assistant {
                    text: response.text,
                    tool_calls,
                })]
            }
            Event::ModelFailed(ModelError::Cancelled) => self.end(TurnStop::Interrupted),
            // Too large for the model's context: compacted and sent once
            // more, then it is the request's error.
            Event::ContextExceeded { first, .. } if !self.retried => {
                self.retried = true;
                self.retrying = Some(first);
                self.phase = Phase::Compacting;
                vec![Effect::CompactToRetry]
            }
            Event::ContextExceeded { error, .. } => {
                self.end(TurnStop::ModelError(error.to_string()))
            }
            Event::ModelFailed(other) => self.end(TurnStop::ModelError(other.to_string())),
            Event::ModelCutOff { error, partial } => {
                // Saved as said, with why it stops there; its calls (their
                // arguments may be incomplete) never run and are not kept.
                // The text is moved, not copied: it may be megabytes.
                self.phase = Phase::Ending {
                    stop: TurnStop::ModelError(error.to_string()),
                };
                let marker = cut_off_marker(&error);
                let mut text = partial.text;
                text.reserve_exact(marker.len() + 1);
                text.push('\n');
                text.push_str(&marker);
                vec![Effect::SaveResponse(Item::Assistant {
                    text,
                    tool_calls: Vec::new(),
                })]
            }
            Event::Interrupted { partial } => match partial {
                Some(response) if !response.text.is_empty() => {
                    // Tool calls of a cut response never ran and are not kept.
                    self.phase = Phase::Ending {
                        stop: TurnStop::Interrupted,
                    };
                    const MARK: &str = "\n[interrupted by the user]";
                    let mut text = response.text;
                    text.reserve_exact(MARK.len());
                    text.push_str(MARK);
                    vec![Effect::SaveResponse(Item::Assistant {
                        text,
                        tool_calls: Vec::new(),
                    })]
                }
                _ => self.end(TurnStop::Interrupted),
            },
            event => self.nonsense(&Phase::Requesting, &event, None),
        }
    }

    /// The answer of a response whose only call is a `final_answer` with
    /// a text answer, when the request offered that tool (the small
    /// profile). Any other `final_answer` call is prepared like a call of
    /// any tool, and its error says how to end the turn.
    fn final_answer(&self, calls: &[ToolCall]) -> Option<String> {
        let [call] = calls else {
            return None;
        };
        (call.name == final_answer::NAME && self.offers(final_answer::NAME))
            .then(|| final_answer::answer(&call.arguments))
            .flatten()
    }

    fn saving_response(&mut self, past_bound: Option<PastBound>, event: Event) -> Vec<Effect> {
        match (event, past_bound) {
            (Event::Saved, Some(past)) => self.refuse_past_bound(past),
            (Event::Saved, None) if self.pending.is_empty() => self.end(TurnStop::Completed),
            (Event::Saved, None) => self.next_call(),
            (Event::SaveFailed(e), _) => self.end(TurnStop::SaveFailed(e)),
            (event, past_bound) => {
                self.nonsense(&Phase::SavingResponse { past_bound }, &event, None)
            }
        }
    }

    fn saving_text_call(&mut self, tool: String, event: Event) -> Vec<Effect> {
        match event {
            Event::Saved => {
                self.phase = Phase::Reminding;
                let text = reminder(&tool);
                vec![
                    Effect::Remind { tool },
                    Effect::SaveResponse(Item::Reminder { text }),
                ]
            }
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            event => self.nonsense(&Phase::SavingTextCall { tool }, &event, None),
        }
    }

    fn reminding(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Saved => self.request(),
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            event => self.nonsense(&Phase::Reminding, &event, None),
        }
    }

    fn preparing(&mut self, call: ToolCall, event: Event, cx: &mut DecideCx<'_>) -> Vec<Effect> {
        match event {
            Event::Prepared {
                call_id,
                mut facts,
                inspect,
            } if call_id == call.id => {
                // Only the machine's own person's turn marks a call as
                // typed by the person.
                facts.typed_by_person = self.person.is_some();
                self.decide(call, facts, inspect, cx)
            }
            Event::PrepareFailed { call_id, message } if call_id == call.id => {
                self.finish(call, ResultStatus::Error, message)
            }
            Event::InterruptedBeforeRun => {
                self.interrupt_call(call, ResultStatus::NotRun, NOT_RUN_BEFORE_START)
            }
            event => self.nonsense(&Phase::Preparing { call: call.clone() }, &event, Some(call)),
        }
    }

    fn running(&mut self, call: ToolCall, event: Event) -> Vec<Effect> {
        match event {
            Event::Ran { call_id, outcome } if call_id == call.id => {
                let status = status_of(&outcome);
                self.finish(call, status, outcome.output)
            }
            Event::Interrupted { partial: None } => {
                self.interrupt_call(call, ResultStatus::Interrupted, INTERRUPTED_RUNNING)
            }
            Event::Stopped { call_id, outcome } if call_id == call.id => {
                let why = stopped_text(&outcome);
                self.interrupt_call(call, ResultStatus::Interrupted, &why)
            }
            Event::InterruptedBeforeRun => {
                self.interrupt_call(call, ResultStatus::NotRun, NOT_RUN_BEFORE_START)
            }
            event => self.nonsense(&Phase::Running { call: call.clone() }, &event, Some(call)),
        }
    }

    fn saving_result(&mut self, call: ToolCall, event: Event) -> Vec<Effect> {
        match event {
            Event::Saved => self.next_call(),
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            Event::ResultCut { ref call_id, .. } if *call_id == call.id => {
                self.keep_full_output(Phase::SavingResult { call }, event)
            }
            event => self.nonsense(&Phase::SavingResult { call }, &event, None),
        }
    }

    fn ending(&mut self, stop: TurnStop, event: Event) -> Vec<Effect> {
        match event {
            Event::Saved => self.stop_after_saves(stop),
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            Event::ResultCut { .. } => self.keep_full_output(Phase::Ending { stop }, event),
            event => {
                // What was being saved may or may not be on disk; the calls
                // left are still paired, one at a time.
                let message = nonsense_message(&Phase::Ending { stop }, &event);
                tracing::error!("{message}");
                self.stop_after_saves(TurnStop::Internal(message))
            }
        }
    }

    /// Starts the next request, or ends the turn at its request limit.
    fn request(&mut self) -> Vec<Effect> {
        if self.requests >= self.limits.requests {
            return self.end(TurnStop::RequestLimit(self.limits.requests));
        }
        self.requests += 1;
        self.phase = Phase::Compacting;
        vec![Effect::Compact]
    }

    fn next_call(&mut self) -> Vec<Effect> {
        let Some(call) = self.pending.pop_front() else {
            if self.person.is_some() {
                return self.end(TurnStop::Completed);
            }
            return self.request();
        };
        if self.tool_calls >= self.limits.tool_calls {
            self.pending.push_front(call);
            return self.stop_after_saves(TurnStop::ToolCallLimit(self.limits.tool_calls));
        }
        self.tool_calls += 1;
        self.phase = Phase::Preparing { call: call.clone() };
        if let Some(message) = self.not_a_tool(&call) {
            let mut effects = vec![Effect::AnnounceCall(call.clone())];
            effects.extend(self.finish(call, ResultStatus::Error, message));
            return effects;
        }
        vec![Effect::AnnounceCall(call.clone()), Effect::Prepare(call)]
    }

    /// The resource read is mino's own call for an `@server:uri` mention,
    /// never a tool the model (or an asked agent) may name: each
    /// attachment's id is let through once.
    fn not_a_tool(&mut self, call: &ToolCall) -> Option<String> {
        if call.name != crate::mcp::resource::RESOURCE_TOOL || self.attached.remove(&call.id) {
            return None;
        }
        let mut message = format!("There is no tool named {:?}.", call.name);
        if !self.tools.is_empty() {
            message.push_str(&format!(" Available tools: {}.", self.tools.join(", ")));
        }
        Some(message)
    }

    fn allow(&mut self, call: ToolCall, shown: Shown) -> Vec<Effect> {
        let mut effects = Vec::new();
        if shown != Shown::Quietly {
            effects.push(Effect::Record {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                shown,
            });
        }
        effects.extend(self.run(call));
        effects
    }

    fn ask(&mut self, call: ToolCall, facts: CallFacts, mode: Mode) -> Vec<Effect> {
        let effect = Effect::Ask {
            call_id: call.id.clone(),
            offer: offer(&facts, mode),
        };
        self.phase = Phase::Asking { call, facts };
        vec![effect]
    }

    fn run(&mut self, call: ToolCall) -> Vec<Effect> {
        if self.external {
            return self.reply(call, true, None);
        }
        let effect = Effect::Run {
            call_id: call.id.clone(),
        };
        self.phase = Phase::Running { call };
        vec![effect]
    }
}

#[cfg(test)]
mod tests;
