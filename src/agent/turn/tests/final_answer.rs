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

fn offered(h: &mut Harness) {
    h.turn.offer(vec![
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
