//! One turn as a state machine: an event in, the effects to perform out.
//! Pure: no I/O, no async. The driver (`driver.rs`) performs the effects
//! and feeds their outcomes back. Every call the model asks for ends with
//! exactly one saved result, whatever happens.

use std::collections::VecDeque;

use crate::model::{Item, ModelError, Response, ResultStatus, ToolCall};
use crate::policy::{
    CallFacts, CanAsk, ConsentAnswer, Decision, DenyCode, Mode, ProtectedPaths, RunConsent,
    SessionConsent, Shown, USER_REJECTED, decide, remember_call,
};
use crate::tools::{ToolOutcome, ToolStatus};

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
    RequestLimit(u32),
    ToolCallLimit(u32),
    Interrupted,
    /// A model request failed; the text names the service and what happened.
    ModelError(String),
    /// A record could not be saved; chat never goes on with unsaved history.
    SaveFailed(String),
}

impl TurnStop {
    /// The stable word for `stream-json`'s `turn_end.stop`.
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnStop::Completed => "completed",
            TurnStop::RequestLimit(_) => "request_limit",
            TurnStop::ToolCallLimit(_) => "tool_call_limit",
            TurnStop::Interrupted => "interrupted",
            TurnStop::ModelError(_) => "model_error",
            TurnStop::SaveFailed(_) => "save_failed",
        }
    }

    /// A sentence for the user, or `None` for a completed turn.
    pub fn message(&self) -> Option<String> {
        match self {
            TurnStop::Completed => None,
            TurnStop::RequestLimit(n) => Some(format!(
                "The turn stopped: it reached its limit of {n} model requests."
            )),
            TurnStop::ToolCallLimit(n) => Some(format!(
                "The turn stopped: it reached its limit of {n} tool calls."
            )),
            TurnStop::Interrupted => Some("Interrupted.".to_string()),
            TurnStop::ModelError(e) => Some(format!("The model request failed: {e}")),
            TurnStop::SaveFailed(e) => Some(format!(
                "The turn stopped because history could not be saved: {e}"
            )),
        }
    }
}

/// What happened, as the driver reports it.
#[derive(Debug)]
pub enum Event {
    /// The user's prompt was saved: send the first request.
    Begin,
    ModelDone(Response),
    ModelFailed(ModelError),
    /// The last `Save` is on disk.
    Saved,
    SaveFailed(String),
    /// The current call was prepared. `write` when it must be inspected.
    Prepared {
        facts: CallFacts,
        write: bool,
    },
    PrepareFailed(String),
    Inspected,
    InspectFailed(String),
    Answered(ConsentAnswer),
    Ran(ToolOutcome),
    /// Esc or Ctrl-C: stop what runs now. `partial` is the text streamed so
    /// far when a request was interrupted.
    Interrupted {
        partial: Option<Response>,
    },
    /// Esc or Ctrl-C before the current call started: it never ran.
    InterruptedBeforeRun,
}

/// What the driver should do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Stream the next model request over the current history.
    Request,
    /// Append to the session log (fsync) and to history, then report `Saved`.
    Save(Item),
    /// Announce a call before it is prepared.
    AnnounceCall(ToolCall),
    /// Validate and prepare this call; report `Prepared` or `PrepareFailed`.
    Prepare(ToolCall),
    /// Report the decision on the current call.
    AnnounceDecision(Decision),
    /// Inspect the current (write) call.
    Inspect,
    /// Put the current call to the user.
    Ask,
    /// Report the user's answer.
    AnnounceAnswer(ConsentAnswer),
    /// Print the record line of an unasked call (after inspection).
    Record(Shown),
    /// Run the current call.
    Run,
    End(TurnStop),
}

/// The decision's inputs that live outside the turn.
pub struct DecideCx<'a> {
    pub mode: Mode,
    pub protected: &'a ProtectedPaths,
    pub session: &'a mut SessionConsent,
    pub run: &'a mut RunConsent,
    pub can_ask: CanAsk,
}

/// How far the call being handled got: what an interrupt leaves of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Validated, prepared, decided or inspected: nothing ran.
    Preparing,
    /// Put to the user, not answered.
    Asking,
    /// Started: its outcome may be partial.
    Running,
}

/// The call being handled.
#[derive(Debug)]
struct Current {
    call: ToolCall,
    facts: Option<CallFacts>,
    decision: Option<Decision>,
    stage: Stage,
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

/// One turn's state.
#[derive(Debug)]
pub struct Turn {
    limits: TurnLimits,
    requests: u32,
    tool_calls: u32,
    pending: VecDeque<ToolCall>,
    current: Option<Current>,
    /// Set when the turn must end once the remaining saves are done.
    ending: Option<TurnStop>,
    /// The last save was the assistant item of a response.
    saved_response: bool,
}

fn result(call: &ToolCall, status: ResultStatus, output: impl Into<String>) -> Item {
    Item::ToolResult {
        call_id: call.id.clone(),
        status,
        output: output.into(),
    }
}

impl Turn {
    pub fn new(limits: TurnLimits) -> Self {
        Self {
            limits,
            requests: 0,
            tool_calls: 0,
            pending: VecDeque::new(),
            current: None,
            ending: None,
            saved_response: false,
        }
    }

    pub fn requests(&self) -> u32 {
        self.requests
    }

    pub fn tool_calls(&self) -> u32 {
        self.tool_calls
    }

    /// Feeds one event; returns the effects to perform, in order.
    pub fn on(&mut self, event: Event, cx: &mut DecideCx<'_>) -> Vec<Effect> {
        match event {
            Event::Begin => self.request(),
            Event::ModelDone(response) => self.on_response(response),
            Event::ModelFailed(error) => match error {
                ModelError::Cancelled => vec![Effect::End(TurnStop::Interrupted)],
                other => vec![Effect::End(TurnStop::ModelError(other.to_string()))],
            },
            Event::Saved => self.on_saved(),
            Event::SaveFailed(error) => {
                vec![Effect::End(TurnStop::SaveFailed(error))]
            }
            Event::Prepared { facts, write } => self.on_prepared(facts, write, cx),
            Event::PrepareFailed(message) => self.finish(ResultStatus::Error, message),
            Event::Inspected => self.on_inspected(),
            Event::InspectFailed(message) => self.finish(ResultStatus::Error, message),
            Event::Answered(answer) => self.on_answer(answer, cx),
            Event::Ran(outcome) => {
                let status = match outcome.status {
                    ToolStatus::Completed => ResultStatus::Completed,
                    ToolStatus::Error => ResultStatus::Error,
                    ToolStatus::Interrupted => ResultStatus::Interrupted,
                };
                self.finish(status, outcome.output)
            }
            Event::Interrupted { partial } => self.on_interrupt(partial, false),
            Event::InterruptedBeforeRun => self.on_interrupt(None, true),
        }
    }

    fn request(&mut self) -> Vec<Effect> {
        if self.requests >= self.limits.requests {
            return vec![Effect::End(TurnStop::RequestLimit(self.limits.requests))];
        }
        self.requests += 1;
        vec![Effect::Request]
    }

    fn on_response(&mut self, response: Response) -> Vec<Effect> {
        self.pending = response.tool_calls.iter().cloned().collect();
        self.saved_response = true;
        vec![Effect::Save(Item::Assistant {
            text: response.text,
            tool_calls: response.tool_calls,
        })]
    }

    /// Saves the current call's result and forgets the call.
    fn finish(&mut self, status: ResultStatus, output: String) -> Vec<Effect> {
        match self.current.take() {
            Some(current) => vec![Effect::Save(result(&current.call, status, output))],
            None => self.on_saved(),
        }
    }

    fn on_saved(&mut self) -> Vec<Effect> {
        let after_response = std::mem::take(&mut self.saved_response);
        if let Some(stop) = self.ending.clone() {
            // Pair every remaining call with a result before ending.
            return match self.pending.pop_front() {
                Some(call) => {
                    let why = match &stop {
                        TurnStop::ToolCallLimit(n) => {
                            format!("Not run: the turn reached its limit of {n} tool calls.")
                        }
                        _ => NOT_RUN_UNREACHED.to_string(),
                    };
                    vec![Effect::Save(result(&call, ResultStatus::NotRun, why))]
                }
                None => vec![Effect::End(stop)],
            };
        }
        if after_response && self.pending.is_empty() {
            return vec![Effect::End(TurnStop::Completed)];
        }
        self.next_call()
    }

    fn next_call(&mut self) -> Vec<Effect> {
        let Some(call) = self.pending.pop_front() else {
            return self.request();
        };
        if self.tool_calls >= self.limits.tool_calls {
            self.pending.push_front(call);
            self.ending = Some(TurnStop::ToolCallLimit(self.limits.tool_calls));
            return self.on_saved();
        }
        self.tool_calls += 1;
        self.current = Some(Current {
            call: call.clone(),
            facts: None,
            decision: None,
            stage: Stage::Preparing,
        });
        vec![Effect::AnnounceCall(call.clone()), Effect::Prepare(call)]
    }

    fn on_prepared(&mut self, facts: CallFacts, write: bool, cx: &mut DecideCx<'_>) -> Vec<Effect> {
        let decision = decide(
            &facts,
            cx.mode,
            cx.protected,
            cx.session,
            cx.run,
            cx.can_ask,
        );
        let Some(current) = self.current.as_mut() else {
            return vec![];
        };
        current.facts = Some(facts);
        current.decision = Some(decision.clone());
        let mut effects = vec![Effect::AnnounceDecision(decision.clone())];
        match decision {
            Decision::Deny { code, reason } => {
                // A call that would ask where nobody can answer is rejected
                // on the user's behalf, not denied by a rule.
                let status = if code == DenyCode::NobodyToAsk {
                    ResultStatus::Rejected
                } else {
                    ResultStatus::Denied
                };
                effects.extend(self.finish(status, reason));
            }
            _ if write => effects.push(Effect::Inspect),
            Decision::Allow { shown } => effects.extend(self.allow(shown)),
            Decision::Ask => effects.extend(self.ask()),
        }
        effects
    }

    fn on_inspected(&mut self) -> Vec<Effect> {
        match self.current.as_ref().and_then(|c| c.decision.clone()) {
            Some(Decision::Allow { shown }) => self.allow(shown),
            Some(Decision::Ask) => self.ask(),
            _ => vec![],
        }
    }

    fn set_stage(&mut self, stage: Stage) {
        if let Some(current) = self.current.as_mut() {
            current.stage = stage;
        }
    }

    fn ask(&mut self) -> Vec<Effect> {
        self.set_stage(Stage::Asking);
        vec![Effect::Ask]
    }

    fn allow(&mut self, shown: Shown) -> Vec<Effect> {
        self.set_stage(Stage::Running);
        match shown {
            Shown::Quietly => vec![Effect::Run],
            shown => vec![Effect::Record(shown), Effect::Run],
        }
    }

    fn on_answer(&mut self, answer: ConsentAnswer, cx: &mut DecideCx<'_>) -> Vec<Effect> {
        let Some(current) = self.current.as_ref() else {
            return vec![];
        };
        if let Some(facts) = &current.facts {
            remember_call(answer, facts, cx.mode, cx.session, cx.run);
        }
        let mut effects = vec![Effect::AnnounceAnswer(answer)];
        if answer.allows() {
            self.set_stage(Stage::Running);
            effects.push(Effect::Run);
        } else {
            effects.extend(self.finish(ResultStatus::Rejected, USER_REJECTED.to_string()));
        }
        effects
    }

    /// Esc or Ctrl-C. A call that started is interrupted (its outcome may
    /// be partial); one that was never answered or never started did not
    /// run, and its record says so. `before_start`: the driver stopped the
    /// call before starting it.
    fn on_interrupt(&mut self, partial: Option<Response>, before_start: bool) -> Vec<Effect> {
        self.ending = Some(TurnStop::Interrupted);
        if let Some(current) = self.current.take() {
            let (status, why) = match current.stage {
                Stage::Running if !before_start => (ResultStatus::Interrupted, INTERRUPTED_RUNNING),
                Stage::Asking => (ResultStatus::NotRun, NOT_RUN_UNANSWERED),
                _ => (ResultStatus::NotRun, NOT_RUN_BEFORE_START),
            };
            return vec![Effect::Save(result(&current.call, status, why))];
        }
        match partial {
            Some(response) if !response.text.is_empty() => {
                // Tool calls of a cut response never ran and are not kept.
                vec![Effect::Save(Item::Assistant {
                    text: format!("{}\n[interrupted by the user]", response.text),
                    tool_calls: Vec::new(),
                })]
            }
            _ => self.on_saved(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CallKind, PathTarget, ToolKey};

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        }
    }

    fn response(calls: Vec<ToolCall>) -> Response {
        Response {
            text: String::new(),
            tool_calls: calls,
            usage: Default::default(),
        }
    }

    struct Memory {
        session: SessionConsent,
        run: RunConsent,
        protected: ProtectedPaths,
    }

    impl Memory {
        fn new() -> Self {
            Self {
                session: SessionConsent::default(),
                run: RunConsent::default(),
                protected: ProtectedPaths::builtin(),
            }
        }

        fn on(
            &mut self,
            turn: &mut Turn,
            mode: Mode,
            can_ask: CanAsk,
            event: Event,
        ) -> Vec<Effect> {
            let mut cx = DecideCx {
                mode,
                protected: &self.protected,
                session: &mut self.session,
                run: &mut self.run,
                can_ask,
            };
            turn.on(event, &mut cx)
        }
    }

    fn saved_status(effects: &[Effect]) -> Option<ResultStatus> {
        effects.iter().find_map(|e| match e {
            Effect::Save(Item::ToolResult { status, .. }) => Some(*status),
            _ => None,
        })
    }

    #[test]
    fn a_text_answer_completes_the_turn() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits::default());
        assert_eq!(
            m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Begin),
            vec![Effect::Request]
        );
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::ModelDone(Response {
                text: "hi".into(),
                ..Default::default()
            }),
        );
        assert!(matches!(effects[0], Effect::Save(Item::Assistant { .. })));
        assert_eq!(
            m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved),
            vec![Effect::End(TurnStop::Completed)]
        );
    }

    #[test]
    fn a_protected_read_is_denied_and_saved_before_the_next_request() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits::default());
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::ModelDone(response(vec![call("c1", "read_file")])),
        );
        let effects = m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        assert_eq!(
            effects,
            vec![
                Effect::AnnounceCall(call("c1", "read_file")),
                Effect::Prepare(call("c1", "read_file"))
            ]
        );
        let facts = CallFacts::new(ToolKey::new("read_file"), CallKind::ConfinedRead).with_target(
            PathTarget::Inside {
                relative: ".env".into(),
                through_link: None,
                hard_linked: false,
            },
        );
        let effects = m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Prepared {
                facts,
                write: false,
            },
        );
        assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
        assert!(!effects.contains(&Effect::Run) && !effects.contains(&Effect::Inspect));
        assert_eq!(
            m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved),
            vec![Effect::Request]
        );
    }

    #[test]
    fn an_asked_write_is_inspected_first_and_a_rejection_is_remembered_as_never() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits::default());
        m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::ModelDone(response(vec![
                call("c1", "edit_file"),
                call("c2", "edit_file"),
            ])),
        );
        m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved);
        let facts = CallFacts::new(ToolKey::new("edit_file"), CallKind::FileWrite);
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::Prepared {
                facts: facts.clone(),
                write: true,
            },
        );
        assert_eq!(effects.last(), Some(&Effect::Inspect));
        assert_eq!(
            m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Inspected),
            vec![Effect::Ask]
        );
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::Answered(ConsentAnswer::NeverThisRun),
        );
        assert_eq!(saved_status(&effects), Some(ResultStatus::Rejected));
        // The second edit is denied without a question.
        m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved);
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::Prepared { facts, write: true },
        );
        assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
    }

    #[test]
    fn the_tool_call_limit_pairs_every_remaining_call_and_ends_the_turn() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits {
            requests: 8,
            tool_calls: 1,
        });
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::ModelDone(response(vec![
                call("c1", "bash"),
                call("c2", "bash"),
                call("c3", "bash"),
            ])),
        );
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        let facts = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
        let effects = m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Prepared {
                facts,
                write: false,
            },
        );
        assert!(effects.contains(&Effect::Run));
        let effects = m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Ran(ToolOutcome::completed("ok")),
        );
        assert_eq!(saved_status(&effects), Some(ResultStatus::Completed));
        // c2 and c3 are paired with "not run" results, then the turn ends.
        let effects = m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        assert_eq!(saved_status(&effects), Some(ResultStatus::NotRun));
        let effects = m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        assert_eq!(saved_status(&effects), Some(ResultStatus::NotRun));
        assert_eq!(
            m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved),
            vec![Effect::End(TurnStop::ToolCallLimit(1))]
        );
    }

    #[test]
    fn an_interrupt_on_an_open_question_records_not_run() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits::default());
        m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::ModelDone(response(vec![call("c1", "bash"), call("c2", "bash")])),
        );
        m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved);
        let facts = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::Prepared {
                facts,
                write: false,
            },
        );
        assert!(effects.contains(&Effect::Ask));
        let effects = m.on(
            &mut turn,
            Mode::Manual,
            CanAsk::Yes,
            Event::Interrupted { partial: None },
        );
        let saved = |effects: &[Effect]| {
            effects.iter().find_map(|e| match e {
                Effect::Save(Item::ToolResult { status, output, .. }) => {
                    Some((*status, output.clone()))
                }
                _ => None,
            })
        };
        assert_eq!(
            saved(&effects),
            Some((ResultStatus::NotRun, NOT_RUN_UNANSWERED.to_string()))
        );
        let effects = m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved);
        assert_eq!(
            saved(&effects),
            Some((ResultStatus::NotRun, NOT_RUN_UNREACHED.to_string()))
        );
        assert_eq!(
            m.on(&mut turn, Mode::Manual, CanAsk::Yes, Event::Saved),
            vec![Effect::End(TurnStop::Interrupted)]
        );
    }

    #[test]
    fn the_request_limit_ends_the_turn() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits {
            requests: 1,
            tool_calls: 16,
        });
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::ModelDone(response(vec![call("c1", "read_file")])),
        );
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        let facts = CallFacts::new(ToolKey::new("read_file"), CallKind::ConfinedRead);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Prepared {
                facts,
                write: false,
            },
        );
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Ran(ToolOutcome::completed("ok")),
        );
        assert_eq!(
            m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved),
            vec![Effect::End(TurnStop::RequestLimit(1))]
        );
    }

    #[test]
    fn an_interrupt_during_a_tool_records_it_as_interrupted() {
        let mut m = Memory::new();
        let mut turn = Turn::new(TurnLimits::default());
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Begin);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::ModelDone(response(vec![call("c1", "bash"), call("c2", "bash")])),
        );
        m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        let facts = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
        m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Prepared {
                facts,
                write: false,
            },
        );
        let effects = m.on(
            &mut turn,
            Mode::Bypass,
            CanAsk::Yes,
            Event::Interrupted { partial: None },
        );
        assert_eq!(saved_status(&effects), Some(ResultStatus::Interrupted));
        let effects = m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved);
        assert_eq!(
            saved_status(&effects),
            Some(ResultStatus::NotRun),
            "c2 is paired too, as not run"
        );
        assert_eq!(
            m.on(&mut turn, Mode::Bypass, CanAsk::Yes, Event::Saved),
            vec![Effect::End(TurnStop::Interrupted)]
        );
    }
}
