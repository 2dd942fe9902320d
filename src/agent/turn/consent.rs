//! The turn's consent phases: deciding a prepared call (the one place a
//! call is decided and remembered), inspecting a write before it is asked
//! or run, and waiting for the person's answer. Pure, like the rest of the
//! machine.

use super::*;

impl Turn {
    pub(super) fn decide(
        &mut self,
        call: ToolCall,
        facts: CallFacts,
        inspect: bool,
        cx: &mut DecideCx<'_>,
    ) -> Vec<Effect> {
        let decision = decide(
            &facts,
            cx.mode,
            cx.protected,
            cx.session,
            cx.run,
            cx.can_ask,
        );
        let mut effects = vec![Effect::AnnounceDecision {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            decision: decision.clone(),
        }];
        match decision {
            Decision::Deny { code, reason } => {
                // A call that would ask where nobody can answer is rejected
                // on the user's behalf, not denied by a rule.
                let status = if code == DenyCode::NobodyToAsk {
                    ResultStatus::Rejected
                } else {
                    ResultStatus::Denied
                };
                effects.extend(self.finish(call, status, reason));
            }
            decision if inspect => {
                effects.push(Effect::Inspect {
                    call_id: call.id.clone(),
                });
                self.phase = Phase::Inspecting {
                    call,
                    facts,
                    decision,
                };
            }
            Decision::Allow { shown } => effects.extend(self.allow(call, shown)),
            Decision::Ask => effects.extend(self.ask(call, facts, cx.mode)),
        }
        effects
    }

    pub(super) fn inspecting(
        &mut self,
        call: ToolCall,
        facts: CallFacts,
        decision: Decision,
        event: Event,
        mode: Mode,
    ) -> Vec<Effect> {
        match event {
            Event::Inspected { call_id } if call_id == call.id => match decision {
                Decision::Allow { shown } => self.allow(call, shown),
                Decision::Ask => self.ask(call, facts, mode),
                Decision::Deny { .. } => {
                    let phase = Phase::Inspecting {
                        call: call.clone(),
                        facts,
                        decision,
                    };
                    self.nonsense(&phase, &Event::Inspected { call_id }, Some(call))
                }
            },
            Event::InspectFailed { call_id, message } if call_id == call.id => {
                self.finish(call, ResultStatus::Error, message)
            }
            Event::InterruptedBeforeRun => {
                self.interrupt_call(call, ResultStatus::NotRun, NOT_RUN_BEFORE_START)
            }
            event => {
                let phase = Phase::Inspecting {
                    call: call.clone(),
                    facts,
                    decision,
                };
                self.nonsense(&phase, &event, Some(call))
            }
        }
    }

    pub(super) fn asking(
        &mut self,
        call: ToolCall,
        facts: CallFacts,
        event: Event,
        cx: &mut DecideCx<'_>,
    ) -> Vec<Effect> {
        match event {
            Event::Answered {
                call_id,
                answer,
                note,
            } if call_id == call.id => {
                // An answer the question did not offer rejects the call.
                let answer = if offer(&facts, cx.mode).allows(answer) {
                    answer
                } else {
                    ConsentAnswer::Reject
                };
                remember_call(answer, &facts, cx.mode, cx.session, cx.run);
                // Only a rejection carries a note to the model.
                let note = note.filter(|_| answer == ConsentAnswer::Reject);
                let rejected = match &note {
                    Some(note) => format!("{USER_REJECTED_WITH_NOTE}{note}"),
                    None => user_rejected(&facts.kind).to_string(),
                };
                let mut effects = vec![Effect::AnnounceAnswer {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    key: facts.tool,
                    answer,
                    note,
                }];
                if answer.allows() {
                    effects.extend(self.run(call));
                } else {
                    effects.extend(self.finish(call, ResultStatus::Rejected, rejected));
                }
                effects
            }
            Event::Interrupted { partial: None } => {
                self.interrupt_call(call, ResultStatus::NotRun, NOT_RUN_UNANSWERED)
            }
            event => {
                let phase = Phase::Asking {
                    call: call.clone(),
                    facts,
                };
                self.nonsense(&phase, &event, Some(call))
            }
        }
    }
}
