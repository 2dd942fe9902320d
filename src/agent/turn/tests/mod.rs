//! The turn machine's tests: a harness that holds the decision's memory and
//! feeds events, and the paths a turn takes (every phase fed every event
//! is in `every_event`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use super::*;
use crate::model::Response;
use crate::policy::{CallKind, ConsentAnswer, PathTarget, ToolKey};

mod every_event;
mod final_answer;
mod own_state;
mod past_bound;

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

fn response(calls: Vec<ToolCall>) -> Response {
    Response {
        tool_calls: calls,
        ..Default::default()
    }
}

fn facts(tool: &str, kind: CallKind) -> CallFacts {
    CallFacts::new(ToolKey::new(tool), kind)
}

fn prepared(id: &str, facts: CallFacts, inspect: bool) -> Event {
    Event::Prepared {
        call_id: id.into(),
        facts,
        inspect,
    }
}

/// A turn with the decision's memory around it, in one mode.
struct Harness {
    turn: Turn,
    mode: Mode,
    can_ask: CanAsk,
    session: SessionConsent,
    run: RunConsent,
    protected: ProtectedPaths,
}

impl Harness {
    fn new(mode: Mode) -> Self {
        Self::with_limits(mode, TurnLimits::default())
    }

    fn with_limits(mode: Mode, limits: TurnLimits) -> Self {
        Self {
            turn: Turn::new(limits),
            mode,
            can_ask: CanAsk::Yes,
            session: SessionConsent::default(),
            run: RunConsent::default(),
            protected: ProtectedPaths::builtin(),
        }
    }

    /// The turn offers `tools` (made anew: a turn learns them when made).
    fn offer(&mut self, tools: Vec<String>) {
        let turn = std::mem::replace(&mut self.turn, Turn::new(TurnLimits::default()));
        self.turn = turn.with_tools(tools);
    }

    fn on(&mut self, event: Event) -> Vec<Effect> {
        let mut cx = DecideCx {
            mode: self.mode,
            protected: &self.protected,
            session: &mut self.session,
            run: &mut self.run,
            can_ask: self.can_ask,
        };
        self.turn.on(event, &mut cx)
    }

    /// Begin, then compaction done: the first request is asked for.
    fn begin(&mut self) {
        assert_eq!(self.on(Event::Begin), vec![Effect::Compact]);
        assert!(matches!(
            self.on(Event::Compacted)[..],
            [Effect::Request { .. }]
        ));
    }

    /// The model answers with `calls`, the response is saved: the first
    /// call is announced and prepared.
    fn respond(&mut self, calls: Vec<ToolCall>) -> Vec<Effect> {
        let effects = self.on(Event::ModelDone(response(calls)));
        assert!(matches!(effects[..], [Effect::SaveResponse(_)]));
        self.on(Event::Saved)
    }
}

fn saved_status(effects: &[Effect]) -> Option<ResultStatus> {
    effects.iter().find_map(|e| match e {
        Effect::SaveResult { status, .. } => Some(*status),
        _ => None,
    })
}

fn ok(id: &str) -> Event {
    Event::Ran {
        call_id: id.into(),
        outcome: ToolOutcome::completed("ok"),
    }
}

#[test]
fn a_text_answer_completes_the_turn() {
    let mut h = Harness::new(Mode::Manual);
    h.begin();
    let effects = h.on(Event::ModelDone(Response {
        text: "hi".into(),
        ..Default::default()
    }));
    assert!(matches!(
        effects[..],
        [Effect::SaveResponse(Item::Assistant { .. })]
    ));
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Completed)]);
    assert_eq!(h.turn.phase(), &Phase::Ended);
}

#[test]
fn a_call_written_as_text_is_reminded_once_as_mino_s_and_again_ends_the_turn() {
    let mut h = Harness::new(Mode::Manual);
    h.offer(vec!["read_file".into()]);
    h.begin();
    let written = || {
        Event::ModelDone(Response {
            text: r#"{"name": "read_file", "arguments": {"path": "notes.md"}}"#.into(),
            ..Default::default()
        })
    };
    assert!(matches!(
        h.on(written())[..],
        [Effect::SaveResponse(Item::Assistant { .. })]
    ));
    let effects = h.on(Event::Saved);
    assert!(
        matches!(
            &effects[..],
            [Effect::Remind { tool }, Effect::SaveResponse(Item::Reminder { .. })] if tool == "read_file"
        ),
        "{effects:?}"
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
    assert!(matches!(
        h.on(Event::Compacted)[..],
        [Effect::Request { .. }]
    ));
    assert!(matches!(
        h.on(written())[..],
        [Effect::SaveResponse(Item::Assistant { .. })]
    ));
    assert_eq!(
        h.on(Event::Saved),
        vec![Effect::End(TurnStop::TextCallRepeated("read_file".into()))]
    );
}

#[test]
fn a_text_answer_cut_off_at_the_output_limit_ends_the_turn_as_length() {
    let mut h = Harness::new(Mode::Manual);
    h.begin();
    let effects = h.on(Event::ModelDone(Response {
        text: "The answer is".into(),
        finish: Some(crate::model::FinishReason::Length),
        ..Default::default()
    }));
    assert!(matches!(
        effects[..],
        [Effect::SaveResponse(Item::Assistant { .. })]
    ));
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Length)]);
}

#[test]
fn a_protected_read_is_denied_and_saved_before_the_next_request() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    let effects = h.respond(vec![call("c1", "read_file")]);
    assert_eq!(
        effects,
        vec![
            Effect::AnnounceCall(call("c1", "read_file")),
            Effect::Prepare(call("c1", "read_file"))
        ]
    );
    let facts = facts("read_file", CallKind::ConfinedRead).with_target(PathTarget::Inside {
        relative: ".env".into(),
        through_link: None,
        hard_linked: false,
    });
    let effects = h.on(prepared("c1", facts, false));
    assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
    assert!(
        !effects
            .iter()
            .any(|e| matches!(e, Effect::Run { .. } | Effect::Inspect { .. }))
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
    assert!(matches!(
        h.on(Event::Compacted)[..],
        [Effect::Request { .. }]
    ));
}

#[test]
fn the_same_denied_call_a_third_time_ends_the_turn_with_its_reason_each_time() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    let env = || {
        facts("read_file", CallKind::ConfinedRead).with_target(PathTarget::Inside {
            relative: ".env".into(),
            through_link: None,
            hard_linked: false,
        })
    };
    let saved_output = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::SaveResult { output, status, .. } => Some((*status, output.clone())),
            _ => None,
        })
    };
    let mut reasons = Vec::new();
    for round in 1..=3 {
        let id = format!("c{round}");
        h.respond(vec![call(&id, "read_file")]);
        let effects = h.on(prepared(&id, env(), false));
        let (status, output) = saved_output(&effects).expect("a result is saved");
        assert_eq!(status, ResultStatus::Denied);
        reasons.push(output);
        if round < 3 {
            assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
            assert!(matches!(
                h.on(Event::Compacted)[..],
                [Effect::Request { .. }]
            ));
        }
    }
    assert!(!reasons[0].is_empty());
    assert!(reasons.iter().all(|r| r == &reasons[0]), "{reasons:?}");
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Repeated(1))]);
}

#[test]
fn a_denied_call_with_other_arguments_starts_its_count_again() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    let env = facts("read_file", CallKind::ConfinedRead).with_target(PathTarget::Inside {
        relative: ".env".into(),
        through_link: None,
        hard_linked: false,
    });
    for (round, arguments) in [
        r#"{"path":".env"}"#,
        r#"{"path":"./.env"}"#,
        r#"{"path":".env"}"#,
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("c{round}");
        let mut asked = call(&id, "read_file");
        asked.arguments = arguments.into();
        h.respond(vec![asked]);
        let effects = h.on(prepared(&id, env.clone(), false));
        assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
        assert_eq!(h.on(Event::Saved), vec![Effect::Compact], "round {round}");
        assert!(matches!(
            h.on(Event::Compacted)[..],
            [Effect::Request { .. }]
        ));
    }
}

#[test]
fn an_asked_write_is_inspected_first_and_a_never_is_remembered() {
    let mut h = Harness::new(Mode::Manual);
    h.begin();
    h.respond(vec![call("c1", "edit_file"), call("c2", "edit_file")]);
    let write = facts("edit_file", CallKind::FileWrite);
    let effects = h.on(prepared("c1", write.clone(), true));
    assert_eq!(
        effects.last(),
        Some(&Effect::Inspect {
            call_id: "c1".into()
        })
    );
    assert_eq!(
        h.on(Event::Inspected {
            call_id: "c1".into()
        }),
        vec![Effect::Ask {
            call_id: "c1".into(),
            offer: crate::policy::Offer::all(),
        }]
    );
    let effects = h.on(Event::Answered {
        call_id: "c1".into(),
        answer: ConsentAnswer::NeverThisRun,
        note: None,
    });
    assert!(matches!(effects[0], Effect::AnnounceAnswer { .. }));
    assert_eq!(saved_status(&effects), Some(ResultStatus::Rejected));
    // The second edit is denied without a question.
    h.on(Event::Saved);
    let effects = h.on(prepared("c2", write, true));
    assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
}

#[test]
fn an_unasked_shown_call_prints_its_record_before_it_runs() {
    let mut h = Harness::new(Mode::AcceptEdits);
    h.begin();
    h.respond(vec![call("c1", "write_file")]);
    h.on(prepared(
        "c1",
        facts("write_file", CallKind::FileWrite),
        true,
    ));
    let effects = h.on(Event::Inspected {
        call_id: "c1".into(),
    });
    assert_eq!(
        effects,
        vec![
            Effect::Record {
                call_id: "c1".into(),
                tool: "write_file".into(),
                shown: Shown::ByMode(Mode::AcceptEdits),
            },
            Effect::Run {
                call_id: "c1".into()
            },
        ]
    );
}

#[test]
fn the_tool_call_limit_pairs_every_remaining_call_and_ends_the_turn() {
    let mut h = Harness::with_limits(
        Mode::Bypass,
        TurnLimits {
            requests: 8,
            tool_calls: 1,
        },
    );
    h.begin();
    h.respond(vec![
        call("c1", "bash"),
        call("c2", "bash"),
        call("c3", "bash"),
    ]);
    let effects = h.on(prepared("c1", facts("bash", CallKind::Shell), false));
    assert!(effects.iter().any(|e| matches!(e, Effect::Run { .. })));
    let effects = h.on(ok("c1"));
    assert_eq!(saved_status(&effects), Some(ResultStatus::Completed));
    // c2 and c3 are announced and paired with "not run" results, then the
    // turn ends.
    let effects = h.on(Event::Saved);
    assert_eq!(effects[0], Effect::AnnounceCall(call("c2", "bash")));
    assert_eq!(saved_status(&effects), Some(ResultStatus::NotRun));
    let effects = h.on(Event::Saved);
    assert_eq!(saved_status(&effects), Some(ResultStatus::NotRun));
    assert_eq!(
        h.on(Event::Saved),
        vec![Effect::End(TurnStop::ToolCallLimit(1))]
    );
}

#[test]
fn the_request_limit_ends_the_turn() {
    let mut h = Harness::with_limits(
        Mode::Bypass,
        TurnLimits {
            requests: 1,
            tool_calls: 16,
        },
    );
    h.begin();
    h.respond(vec![call("c1", "read_file")]);
    h.on(prepared(
        "c1",
        facts("read_file", CallKind::ConfinedRead),
        false,
    ));
    h.on(ok("c1"));
    assert_eq!(
        h.on(Event::Saved),
        vec![Effect::End(TurnStop::RequestLimit(1))]
    );
}

#[test]
fn an_interrupt_during_a_tool_records_it_as_interrupted() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    h.respond(vec![call("c1", "bash"), call("c2", "bash")]);
    h.on(prepared("c1", facts("bash", CallKind::Shell), false));
    let effects = h.on(Event::Interrupted { partial: None });
    assert_eq!(saved_status(&effects), Some(ResultStatus::Interrupted));
    let effects = h.on(Event::Saved);
    assert_eq!(
        saved_status(&effects),
        Some(ResultStatus::NotRun),
        "c2 is paired too, as not run"
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Interrupted)]);
}

#[test]
fn a_call_stopped_while_it_ran_keeps_what_it_left() {
    let saved = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::SaveResult { status, output, .. } => Some((*status, output.clone())),
            _ => None,
        })
    };
    let stopped = |outcome: ToolOutcome| {
        let mut h = Harness::new(Mode::Bypass);
        h.begin();
        h.respond(vec![call("c1", "bash"), call("c2", "bash")]);
        h.on(prepared("c1", facts("bash", CallKind::Shell), false));
        let effects = h.on(Event::Stopped {
            call_id: "c1".into(),
            outcome,
        });
        let first = saved(&effects);
        let effects = h.on(Event::Saved);
        assert_eq!(
            saved(&effects).map(|(status, _)| status),
            Some(ResultStatus::NotRun),
            "c2 is paired too"
        );
        assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Interrupted)]);
        first
    };
    let partial = "Interrupted by the user; the command's process group was killed.\nline one";
    assert_eq!(
        stopped(ToolOutcome::interrupted(partial)),
        Some((ResultStatus::Interrupted, partial.to_string()))
    );
    // A call that finished as the interrupt came says both.
    assert_eq!(
        stopped(ToolOutcome::completed("done")),
        Some((
            ResultStatus::Interrupted,
            format!("{INTERRUPTED_RUNNING}\ndone")
        ))
    );
    assert_eq!(
        stopped(ToolOutcome::interrupted("")),
        Some((ResultStatus::Interrupted, INTERRUPTED_RUNNING.to_string()))
    );
}

#[test]
fn an_interrupt_on_an_open_question_records_not_run() {
    let mut h = Harness::new(Mode::Manual);
    h.begin();
    h.respond(vec![call("c1", "bash"), call("c2", "bash")]);
    let effects = h.on(prepared("c1", facts("bash", CallKind::Shell), false));
    assert_eq!(
        effects.last(),
        Some(&Effect::Ask {
            call_id: "c1".into(),
            offer: crate::policy::Offer::all(),
        })
    );
    let saved = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::SaveResult { status, output, .. } => Some((*status, output.clone())),
            _ => None,
        })
    };
    let effects = h.on(Event::Interrupted { partial: None });
    assert_eq!(
        saved(&effects),
        Some((ResultStatus::NotRun, NOT_RUN_UNANSWERED.to_string()))
    );
    let effects = h.on(Event::Saved);
    assert_eq!(
        saved(&effects),
        Some((ResultStatus::NotRun, NOT_RUN_UNREACHED.to_string()))
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Interrupted)]);
}

#[test]
fn an_outcome_for_another_call_ends_the_turn_with_an_internal_error() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    h.respond(vec![call("c1", "bash")]);
    h.on(prepared("c1", facts("bash", CallKind::Shell), false));
    let effects = h.on(ok("c9"));
    assert_eq!(saved_status(&effects), Some(ResultStatus::Error));
    let end = h.on(Event::Saved);
    let [Effect::End(TurnStop::Internal(message))] = &end[..] else {
        panic!("{end:?}");
    };
    assert_eq!(
        message,
        "the turn got \"ran\" for call \"c9\" while running"
    );
}

#[test]
fn an_answer_the_question_did_not_offer_rejects_and_is_not_remembered() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    h.respond(vec![call("c1", "bash")]);
    let mut guarded = facts("bash", CallKind::Shell);
    guarded.command = Some("rm -rf ~".into());
    guarded.guard = Some("rm removes ~ recursively".into());
    let effects = h.on(prepared("c1", guarded, false));
    assert_eq!(
        effects.last(),
        Some(&Effect::Ask {
            call_id: "c1".into(),
            offer: crate::policy::Offer {
                answers: &[ConsentAnswer::AllowOnce, ConsentAnswer::Reject],
                command: None,
            },
        })
    );
    // An editor (or a front end) answering "allow for session" anyway.
    let effects = h.on(Event::Answered {
        call_id: "c1".into(),
        answer: ConsentAnswer::AllowForSession,
        note: None,
    });
    assert_eq!(saved_status(&effects), Some(ResultStatus::Rejected));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Run { .. })),
        "{effects:?}"
    );
    assert!(
        crate::policy::grants(&h.session, &h.run).is_empty(),
        "nothing remembered"
    );
}
