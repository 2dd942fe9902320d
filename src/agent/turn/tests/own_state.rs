//! What the turn itself holds since it became the only path for a call:
//! an asked agent's calls, the first-request flag, the `@` mention's calls and their one-time
//! pass, the person's own `!command`, the retry after a request too large,
//! and the whole text of a result cut to fit.

use super::*;

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
            offer: Offer::All
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
            offer: Offer::All
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
            offer: Offer::All
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
            offer: Offer::All
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
