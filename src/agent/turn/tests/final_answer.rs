//! `final_answer` in the turn machine: alone, with a text answer, and
//! offered, it ends the turn with its text saved as the answer; any other
//! shape (not offered, another name's case, beside another call, no text)
//! goes the way of any call.

use super::*;

fn answer_call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// The text of the result `effects` save.
fn saved_output(effects: &[Effect]) -> String {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::SaveResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .expect("a result is saved")
}

fn offered(h: &mut Harness) {
    h.offer(vec![
        "read_file".into(),
        crate::tools::final_answer::NAME.into(),
    ]);
}

#[test]
fn a_final_answer_alone_ends_the_turn_with_its_text_as_the_answer() {
    let mut h = Harness::new(Mode::Manual);
    offered(&mut h);
    h.begin();
    let effects = h.on(Event::ModelDone(response(vec![answer_call(
        "final_answer",
        r#"{"answer":"All done."}"#,
    )])));
    assert_eq!(
        effects,
        vec![
            Effect::Answer("All done.".into()),
            Effect::SaveResponse(Item::Assistant {
                text: "All done.".into(),
                tool_calls: Vec::new(),
            }),
        ]
    );
    assert_eq!(h.on(Event::Saved), vec![Effect::End(TurnStop::Completed)]);
    assert_eq!(h.turn.tool_calls(), 0, "no call was counted");
}

#[test]
fn any_other_final_answer_is_a_call_like_any_other() {
    let cases: Vec<(bool, Vec<ToolCall>)> = vec![
        // Not offered (the default profile).
        (
            false,
            vec![answer_call("final_answer", r#"{"answer":"x"}"#)],
        ),
        // Another name, however close.
        (true, vec![answer_call("Final_Answer", r#"{"answer":"x"}"#)]),
        (
            true,
            vec![answer_call("final_answer ", r#"{"answer":"x"}"#)],
        ),
        // No text, or more than the answer.
        (true, vec![answer_call("final_answer", r#"{"answer":""}"#)]),
        (
            true,
            vec![answer_call("final_answer", r#"{"answer":"x","y":1}"#)],
        ),
        // Beside another call.
        (
            true,
            vec![
                call("c0", "read_file"),
                answer_call("final_answer", r#"{"answer":"x"}"#),
            ],
        ),
    ];
    for (offer, calls) in cases {
        let mut h = Harness::new(Mode::Manual);
        if offer {
            offered(&mut h);
        }
        h.begin();
        let first = calls[0].clone();
        let effects = h.on(Event::ModelDone(response(calls.clone())));
        assert_eq!(
            effects,
            vec![Effect::SaveResponse(Item::Assistant {
                text: String::new(),
                tool_calls: calls.clone(),
            })],
            "{calls:?}"
        );
        assert_eq!(
            h.on(Event::Saved),
            vec![Effect::AnnounceCall(first.clone()), Effect::Prepare(first)],
            "{calls:?}"
        );
    }
}

/// Where the turn ends by `final_answer`, a refusal asked for again says to
/// end the turn that way, after its reason; where it does not, the reason
/// alone goes back.
#[test]
fn a_refusal_asked_for_again_points_to_final_answer_where_it_is_offered() {
    let env = || {
        facts("read_file", CallKind::ConfinedRead).with_target(PathTarget::Inside {
            relative: ".env".into(),
            through_link: None,
            hard_linked: false,
        })
    };
    for small in [true, false] {
        let mut h = Harness::new(Mode::Bypass);
        if small {
            offered(&mut h);
        }
        h.begin();
        h.respond(vec![call("c1", "read_file")]);
        let first = saved_output(&h.on(prepared("c1", env(), false)));
        assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
        assert!(matches!(
            h.on(Event::Compacted)[..],
            [Effect::Request { .. }]
        ));
        h.respond(vec![call("c2", "read_file")]);
        let second = saved_output(&h.on(prepared("c2", env(), false)));
        assert!(second.starts_with(&first), "{second}");
        assert_eq!(second.contains("final_answer"), small, "{second}");
    }
}

/// A read that came back with the same result, where the turn ends by
/// `final_answer`, is withheld from the next request only: forced to call
/// a tool, a small model must act on the result or answer. Elsewhere every
/// request offers every tool.
#[test]
fn a_repeated_result_withholds_its_tool_from_the_next_request_only() {
    let read = || facts("read_file", CallKind::ConfinedRead);
    let request_offer = |effects: Vec<Effect>| match &effects[..] {
        [Effect::Request { offer, .. }] => offer.clone(),
        other => panic!("{other:?}"),
    };
    for small in [true, false] {
        let mut h = Harness::new(Mode::Bypass);
        if small {
            offered(&mut h);
        }
        h.begin();
        let mut offers = Vec::new();
        for id in ["c1", "c2", "c3"] {
            let name = if id == "c3" { "edit_file" } else { "read_file" };
            h.respond(vec![call(id, name)]);
            h.on(prepared(id, read(), false));
            h.on(ok(id));
            assert_eq!(h.on(Event::Saved), vec![Effect::Compact]);
            offers.push(request_offer(h.on(Event::Compacted)));
        }
        let expected = if small {
            vec![Offer::All, Offer::AllBut("read_file".into()), Offer::All]
        } else {
            vec![Offer::All; 3]
        };
        assert_eq!(offers, expected, "small: {small}");
    }
}

/// A change that was made says, where the turn ends by `final_answer`, not
/// to make it again and how a finished task ends; a failed one, and any
/// result elsewhere, goes back as the tool said it.
#[test]
fn a_change_made_points_to_final_answer_where_it_is_offered() {
    let edit = || {
        facts("edit_file", CallKind::FileWrite).with_target(PathTarget::Inside {
            relative: "notes.md".into(),
            through_link: None,
            hard_linked: false,
        })
    };
    for small in [true, false] {
        for ran in [
            ToolOutcome::completed("Edited notes.md."),
            ToolOutcome::error("not found"),
        ] {
            let failed = ran.status != crate::tools::ToolStatus::Completed;
            let mut h = Harness::new(Mode::Bypass);
            if small {
                offered(&mut h);
            }
            h.begin();
            h.respond(vec![call("c1", "edit_file")]);
            h.on(prepared("c1", edit(), false));
            let output = saved_output(&h.on(Event::Ran {
                call_id: "c1".into(),
                outcome: ran.clone(),
            }));
            assert!(output.starts_with(&ran.output), "{output}");
            assert_eq!(
                output.contains("final_answer"),
                small && !failed,
                "small: {small}, {output}"
            );
        }
    }
}
