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

/// Drives a fresh harness into the phase named, with the calls `c1` and
/// `c2` asked for where a call is in hand.
#[test]
fn an_external_call_is_decided_and_remembered_like_the_turns_own_and_only_replied_to() {
    let mut h = Harness::new(Mode::Auto);
    h.turn = Turn::external();
    let ask = |id: &str| Event::ExternalCall(call(id, "bash"));
    assert_eq!(h.on(ask("c1")), vec![Effect::Prepare(call("c1", "bash"))]);
    let mut gated = facts("jan/bash", CallKind::Shell);
    gated.command = Some("make".into());
    gated.gate = Some(crate::policy::GateVerdict::Unresolved {
        code: "AMG_X",
        reason: "unknown".into(),
    });
    let effects = h.on(prepared("c1", gated.clone(), false));
    assert_eq!(
        effects.last(),
        Some(&Effect::Ask {
            call_id: "c1".into(),
            offer: crate::policy::Offer {
                answers: &ConsentAnswer::ALL,
                command: Some("make".into()),
            },
        })
    );
    let effects = h.on(Event::Answered {
        call_id: "c1".into(),
        answer: ConsentAnswer::AllowForSession,
        note: None,
    });
    assert!(matches!(
        effects.last(),
        Some(Effect::Reply { allow: true, .. })
    ));
    // The grant is that exact command line; nothing was saved or run.
    assert!(h.session.allows_command(&ToolKey::new("jan/bash"), "make"));
    assert!(!h.session.allows(&ToolKey::new("jan/bash")));
    assert!(
        effects
            .iter()
            .all(|e| !matches!(e, Effect::Run { .. } | Effect::SaveResult { .. }))
    );
    // The next call is waited for; one the tool could not prepare is refused.
    assert_eq!(h.on(ask("c2")), vec![Effect::Prepare(call("c2", "bash"))]);
    let effects = h.on(Event::PrepareFailed {
        call_id: "c2".into(),
        message: "no such tool".into(),
    });
    assert_eq!(
        effects,
        vec![Effect::Reply {
            call_id: "c2".into(),
            allow: false,
            why: Some("no such tool".into()),
        }]
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

/// Only the turn's first request is its first, whatever is saved between
/// (a reminder saved as a user item does not make the next one first).
#[test]
fn only_the_first_request_is_the_turns_first() {
    let mut h = Harness::new(Mode::Manual);
    h.offer(vec!["read_file".into()]);
    assert_eq!(h.on(Event::Begin), vec![Effect::Compact]);
    assert_eq!(
        h.on(Event::Compacted),
        vec![Effect::Request {
            first: true,
            answer_only: false
        }]
    );
    h.on(Event::ModelDone(Response {
        text: r#"{"name": "read_file", "arguments": {"path": "notes.md"}}"#.into(),
        ..Default::default()
    }));
    // The text call is saved, then the reminder; the next request follows.
    h.on(Event::Saved);
    assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
    assert_eq!(
        h.on(Event::Compacted),
        vec![Effect::Request {
            first: false,
            answer_only: false
        }]
    );
}

/// An `@` mention's calls are played as the first response, without a
/// request; its resource read is let through once, and the same tool named
/// by the model is told there is no such tool.
#[test]
fn an_attachment_is_the_first_response_and_only_its_resource_read_is_let_through() {
    let resource = crate::mcp::resource::RESOURCE_TOOL;
    let mut h = Harness::new(Mode::Manual);
    let attached = ToolCall {
        id: "attach-0".into(),
        name: resource.into(),
        arguments: r#"{"server":"s","uri":"file:///a"}"#.into(),
    };
    let turn = std::mem::replace(&mut h.turn, Turn::new(TurnLimits::default()));
    h.turn = turn
        .with_tools(vec!["read_file".into()])
        .attaching(Some(Response {
            tool_calls: vec![attached.clone()],
            ..Default::default()
        }));
    assert_eq!(h.on(Event::Begin), vec![Effect::Compact]);
    let effects = h.on(Event::Compacted);
    assert!(
        matches!(effects[..], [Effect::SaveResponse(_)]),
        "{effects:?}"
    );
    assert_eq!(
        h.on(Event::Saved),
        vec![
            Effect::AnnounceCall(attached.clone()),
            Effect::Prepare(attached.clone())
        ]
    );
    assert_eq!(h.turn.requests(), 1);
    // The same id again, from the model: refused without preparing.
    let effects = h.on(Event::PrepareFailed {
        call_id: "attach-0".into(),
        message: "gone".into(),
    });
    assert!(
        matches!(effects[..], [Effect::SaveResult { .. }]),
        "{effects:?}"
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
    assert_eq!(
        h.on(Event::Compacted),
        vec![Effect::Request {
            first: false,
            answer_only: false
        }]
    );
    h.on(Event::ModelDone(Response {
        tool_calls: vec![attached.clone()],
        ..Default::default()
    }));
    let effects = h.on(Event::Saved);
    assert_eq!(effects[0], Effect::AnnounceCall(attached));
    match &effects[1] {
        Effect::SaveResult { status, output, .. } => {
            assert_eq!(*status, ResultStatus::Error);
            assert!(output.contains("There is no tool named"), "{output}");
            assert!(output.contains("Available tools: read_file."), "{output}");
        }
        other => panic!("{other:?}"),
    }
}

/// The person's own `!command`: one call, marked as theirs by the machine
/// (never by the preparation), run unasked even in plan mode, its result
/// saved as what they ran, and the turn ends without a request.
#[test]
fn the_persons_command_is_one_call_run_unasked_and_saved_as_theirs() {
    let mut h = Harness::new(Mode::Plan);
    h.turn = Turn::person();
    let call = ToolCall {
        id: "user-shell-0".into(),
        name: "bash".into(),
        arguments: r#"{"command":"ls"}"#.into(),
    };
    assert_eq!(
        h.on(Event::PersonShell {
            call: call.clone(),
            command: "ls".into()
        }),
        vec![
            Effect::AnnounceCall(call.clone()),
            Effect::Prepare(call.clone())
        ]
    );
    let effects = h.on(Event::Prepared {
        call_id: call.id.clone(),
        facts: facts("bash", CallKind::Shell),
        inspect: false,
    });
    assert!(
        matches!(
            &effects[..],
            [
                Effect::AnnounceDecision {
                    decision: Decision::Allow {
                        shown: Shown::Quietly
                    },
                    ..
                },
                Effect::Run { .. }
            ]
        ),
        "{effects:?}"
    );
    let effects = h.on(Event::Ran {
        call_id: call.id.clone(),
        outcome: ToolOutcome::completed("notes.md"),
    });
    assert_eq!(
        effects,
        vec![Effect::SaveShellResult {
            call_id: call.id.clone(),
            command: "ls".into(),
            status: ResultStatus::Completed,
            output: "notes.md".into(),
        }]
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Completed)]);
    assert_eq!(h.turn.requests(), 0);
    // The same call in a model's turn is decided as the model's: refused
    // in plan mode.
    let mut h = Harness::new(Mode::Plan);
    h.begin();
    h.respond(vec![call.clone()]);
    let effects = h.on(Event::Prepared {
        call_id: call.id.clone(),
        facts: facts("bash", CallKind::Shell),
        inspect: false,
    });
    assert_eq!(saved_status(&effects), Some(ResultStatus::Denied));
}

/// A request the service refuses as too large is compacted for and sent
/// once more as the same request (first stays first, no request counted
/// twice); refused again, the turn ends with the error.
#[test]
fn a_request_too_large_is_compacted_for_and_sent_once_more() {
    let mut h = Harness::new(Mode::Manual);
    h.begin();
    let exceeded = || Event::ContextExceeded {
        error: ModelError::ContextExceeded {
            message: "too long".into(),
            window: 1000,
        },
        first: true,
    };
    assert_eq!(h.on(exceeded()), vec![Effect::CompactToRetry]);
    assert_eq!(
        h.on(Event::Compacted),
        vec![Effect::Request {
            first: true,
            answer_only: false
        }]
    );
    assert_eq!(h.turn.requests(), 1);
    let effects = h.on(exceeded());
    assert!(
        matches!(&effects[..], [Effect::End(TurnStop::ModelError(m))] if m.contains("too long")),
        "{effects:?}"
    );
}

/// A result too large for the room left: its whole text is kept in the
/// session log first, then its cut form is saved, and the turn goes on.
#[test]
fn a_result_cut_to_fit_keeps_its_whole_text_first() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    let call = ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: "{}".into(),
    };
    h.respond(vec![call.clone()]);
    h.on(Event::Prepared {
        call_id: "c1".into(),
        facts: facts("read_file", CallKind::ConfinedRead),
        inspect: false,
    });
    let effects = h.on(Event::Ran {
        call_id: "c1".into(),
        outcome: ToolOutcome::completed("long"),
    });
    assert!(
        matches!(effects[..], [Effect::SaveResult { .. }]),
        "{effects:?}"
    );
    let cut = Event::ResultCut {
        call_id: "c1".into(),
        tool: "read_file".into(),
        status: ResultStatus::Completed,
        full: "the whole".into(),
        cut: "the head".into(),
    };
    assert_eq!(
        h.on(cut),
        vec![Effect::SaveFullOutput {
            call_id: "c1".into(),
            output: "the whole".into()
        }]
    );
    assert_eq!(
        h.on(Event::Saved),
        vec![Effect::SaveFitted {
            call_id: "c1".into(),
            tool: "read_file".into(),
            status: ResultStatus::Completed,
            output: "the head".into()
        }]
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
}
