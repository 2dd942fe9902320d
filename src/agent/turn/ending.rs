//! How a turn's calls and the turn itself end: a result saved (as a tool
//! result, an asked agent's reply, or what the person ran), a repeat or a
//! refusal asked for again noted, an interrupt, the one `End`, and an event
//! that makes no sense. Pure, like the rest of the machine.

use super::*;

/// The line a cut-off answer is saved with.
pub fn cut_off_marker(error: &ModelError) -> String {
    format!("[cut off: {error}]")
}

pub(super) fn save_result(
    call: &ToolCall,
    status: ResultStatus,
    output: impl Into<String>,
) -> Effect {
    Effect::SaveResult {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        status,
        output: output.into(),
    }
}

impl Turn {
    /// A result cut to fit: its whole text is kept first, then its cut
    /// form is saved, and the turn goes on in `then`.
    pub(super) fn keep_full_output(&mut self, then: Phase, cut: Event) -> Vec<Effect> {
        let Event::ResultCut {
            call_id,
            tool,
            status,
            full,
            cut,
        } = cut
        else {
            return self.nonsense(&then, &cut, None);
        };
        let fitted = Effect::SaveFitted {
            call_id: call_id.clone(),
            tool,
            status,
            output: cut,
        };
        self.phase = Phase::SavingFullOutput {
            fitted: Box::new(fitted),
            then: Box::new(then),
        };
        vec![Effect::SaveFullOutput {
            call_id,
            output: full,
        }]
    }

    pub(super) fn saving_full_output(
        &mut self,
        fitted: Effect,
        then: Phase,
        event: Event,
    ) -> Vec<Effect> {
        match event {
            Event::Saved => {
                self.phase = then;
                vec![fitted]
            }
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            event => {
                let phase = Phase::SavingFullOutput {
                    fitted: Box::new(fitted),
                    then: Box::new(then),
                };
                self.nonsense(&phase, &event, None)
            }
        }
    }

    /// Saving `call`'s result: as a tool result, or, for the person's own
    /// command, as what they ran and saw.
    pub(super) fn saving(
        &self,
        call: &ToolCall,
        status: ResultStatus,
        output: impl Into<String>,
    ) -> Effect {
        match &self.person {
            Some(command) => Effect::SaveShellResult {
                call_id: call.id.clone(),
                command: command.clone(),
                status,
                output: output.into(),
            },
            None => save_result(call, status, output),
        }
    }
}

/// The result of a call stopped while it ran: what the tool said when it
/// noticed the interrupt (a command's output so far), or, when it ended
/// on its own as the interrupt came, that it was interrupted and what it
/// returned.
pub(super) fn stopped_text(outcome: &ToolOutcome) -> String {
    match outcome.status {
        ToolStatus::Interrupted if !outcome.output.is_empty() => outcome.output.clone(),
        _ if outcome.output.is_empty() => INTERRUPTED_RUNNING.to_string(),
        _ => format!("{INTERRUPTED_RUNNING}\n{}", outcome.output),
    }
}

/// Whether `call` is one of the tools that change a project's files.
fn changes_files(call: &ToolCall) -> bool {
    call.name == crate::tools::edit_file::NAME || call.name == crate::tools::write_file::NAME
}

pub(super) fn status_of(outcome: &ToolOutcome) -> ResultStatus {
    match outcome.status {
        ToolStatus::Completed => ResultStatus::Completed,
        ToolStatus::Error => ResultStatus::Error,
        ToolStatus::Interrupted => ResultStatus::Interrupted,
    }
}

impl Turn {
    /// Saves `call`'s result; the next call follows once it is on disk.
    pub(super) fn finish(
        &mut self,
        call: ToolCall,
        status: ResultStatus,
        output: impl Into<String>,
    ) -> Vec<Effect> {
        if self.external {
            // What refused the call was announced (a decision, an answer),
            // except a call that could not be prepared.
            let why = (status == ResultStatus::Error).then(|| output.into());
            return self.reply(call, false, why);
        }
        // A refused call repeated counts as a run one does: a model that
        // asks for the same denied read again and again ends the turn. A
        // refusal keeps its reason every time (it is short, and the reason
        // is what the model needs to hear again).
        let output = output.into();
        let repeat = self.repeats.result(&call, self.tool_calls, status, &output);
        let refused = matches!(status, ResultStatus::Denied | ResultStatus::Rejected);
        // Where the turn ends by `final_answer` (the small profile), a
        // repeat says what to do instead: a small model repeats a call
        // whose answer it does not take in.
        let ends_by_answer = self.offers(final_answer::NAME);
        let text = match repeat {
            Repeat::Same { number } if !refused && ends_by_answer => {
                self.withheld = Some(call.name.clone());
                format!("{} {REPEAT_HINT}", same_as(number))
            }
            Repeat::Same { .. } if ends_by_answer => {
                self.answer_only = true;
                format!("{output}\n{REFUSED_AGAIN_HINT}")
            }
            Repeat::Same { number } | Repeat::Again { number } if !refused => same_as(number),
            // A small model that made its change tends to make it again
            // (and then fails to find what it replaced): it is told how a
            // finished task ends.
            Repeat::New
                if ends_by_answer && status == ResultStatus::Completed && changes_files(&call) =>
            {
                format!("{output} {CHANGED_HINT}")
            }
            _ => output,
        };
        let effect = self.saving(&call, status, text);
        self.phase = match repeat {
            Repeat::Again { number } => Phase::Ending {
                stop: TurnStop::Repeated(number),
            },
            _ => Phase::SavingResult { call },
        };
        vec![effect]
    }

    /// Saves what an interrupt left of `call` (interrupted when it had
    /// started, not run otherwise), then pairs the calls left and ends.
    pub(super) fn interrupt_call(
        &mut self,
        call: ToolCall,
        status: ResultStatus,
        why: &str,
    ) -> Vec<Effect> {
        if self.external {
            let mut effects = self.reply(call, false, None);
            effects.extend(self.end(TurnStop::Interrupted));
            return effects;
        }
        self.phase = Phase::Ending {
            stop: TurnStop::Interrupted,
        };
        vec![self.saving(&call, status, why)]
    }

    /// Pairs the next call left with a "not run" result, announced first
    /// (the turn never reached it, so it shows with its command or path),
    /// or ends when none is left.
    pub(super) fn stop_after_saves(&mut self, stop: TurnStop) -> Vec<Effect> {
        let Some(call) = self.pending.pop_front() else {
            return self.end(stop);
        };
        let why = match &stop {
            TurnStop::ToolCallLimit(n) => {
                format!("Not run: the turn reached its limit of {n} tool calls.")
            }
            TurnStop::Interrupted => NOT_RUN_UNREACHED.to_string(),
            _ => "Not run: the turn stopped before it reached this call.".to_string(),
        };
        let effects = vec![
            Effect::AnnounceCall(call.clone()),
            self.saving(&call, ResultStatus::NotRun, why),
        ];
        self.phase = Phase::Ending { stop };
        effects
    }

    /// Answers an asked agent's call; the turn waits for the next one.
    pub(super) fn reply(
        &mut self,
        call: ToolCall,
        allow: bool,
        why: Option<String>,
    ) -> Vec<Effect> {
        self.phase = Phase::Waiting;
        vec![Effect::Reply {
            call_id: call.id,
            allow,
            why,
        }]
    }

    pub(super) fn end(&mut self, stop: TurnStop) -> Vec<Effect> {
        self.phase = Phase::Ended;
        vec![Effect::End(stop)]
    }

    /// An event that makes no sense in `phase`: a log line, then the turn
    /// ends with an internal-error stop. `call`, when one is in hand, and
    /// the calls left are paired with error results first, so history stays
    /// whole.
    pub(super) fn nonsense(
        &mut self,
        phase: &Phase,
        event: &Event,
        call: Option<ToolCall>,
    ) -> Vec<Effect> {
        let message = nonsense_message(phase, event);
        tracing::error!("{message}");
        let stop = TurnStop::Internal(message);
        if self.external {
            // An asked agent's call in hand is refused; nothing is saved.
            let mut effects = match call {
                Some(call) => self.reply(call, false, None),
                None => Vec::new(),
            };
            effects.extend(self.end(stop));
            return effects;
        }
        match (phase, call) {
            (_, Some(call)) => {
                self.phase = Phase::Ending { stop };
                vec![self.saving(
                    &call,
                    ResultStatus::Error,
                    "Not completed: mino stopped the turn on an internal error.",
                )]
            }
            // Whether the response is on disk is unknown (its calls are
            // acknowledged when the session is next used), or nothing is
            // left to pair.
            (Phase::Starting | Phase::SavingResponse { .. } | Phase::Ended, None) => {
                self.pending.clear();
                self.end(stop)
            }
            (_, None) => self.stop_after_saves(stop),
        }
    }
}

pub(super) fn nonsense_message(phase: &Phase, event: &Event) -> String {
    if let Event::Internal(message) = event {
        return format!("{message} (while {})", phase.name());
    }
    let id = match event {
        Event::Prepared { call_id, .. }
        | Event::PrepareFailed { call_id, .. }
        | Event::Inspected { call_id }
        | Event::InspectFailed { call_id, .. }
        | Event::Answered { call_id, .. }
        | Event::Ran { call_id, .. } => format!(" for call {call_id:?}"),
        _ => String::new(),
    };
    format!(
        "the turn got \"{}\"{id} while {}",
        event.name(),
        phase.name()
    )
}
