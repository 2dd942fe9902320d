//! The calls of a response past the bound on calls: saved with the
//! response, refused at once in one batch, and the turn goes on with the
//! calls kept and then the next request.

use super::*;
use crate::model::PastBound;

/// A response of `kept` calls and, past a bound of that many, `past` more.
fn flooded(kept: usize, past: usize) -> Response {
    let calls = |from: usize, to: usize| -> Vec<ToolCall> {
        (from..to)
            .map(|i| call(&format!("c{i}"), "read_file"))
            .collect()
    };
    let past_calls = calls(kept, kept + past)
        .into_iter()
        .map(|mut c| {
            c.arguments.clear();
            c
        })
        .collect();
    Response {
        tool_calls: calls(0, kept),
        past_bound: Some(PastBound {
            bound: kept,
            calls: past_calls,
        }),
        ..Default::default()
    }
}

#[test]
fn calls_past_the_bound_are_saved_then_refused_at_once_and_the_turn_goes_on() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    let effects = h.on(Event::ModelDone(flooded(2, 3)));
    // Every call is in the saved response, those past the bound with no
    // arguments: every wire needs a result for each call it is sent.
    let [Effect::SaveResponse(Item::Assistant { tool_calls, .. })] = &effects[..] else {
        panic!("{effects:?}");
    };
    let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4"]);
    assert_eq!(tool_calls[1].arguments, "{}");
    assert_eq!(tool_calls[2].arguments, "");
    // Once the response is on disk: one batch of refusals, before any
    // call kept is announced or decided.
    let effects = h.on(Event::Saved);
    let [
        Effect::SaveRefusals {
            bound,
            calls,
            output,
        },
    ] = &effects[..]
    else {
        panic!("{effects:?}");
    };
    assert_eq!(*bound, 2);
    let refused: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(refused, ["c2", "c3", "c4"]);
    assert_eq!(
        output,
        "Refused: one response may ask for at most 2 tool calls, and this one came after them; it did not run."
    );
    assert_eq!(h.turn.phase(), &Phase::SavingRefusals);
    // The calls kept go on as usual; the refused ones are no call of the
    // turn's count.
    assert_eq!(
        h.on(Event::Saved),
        vec![
            Effect::AnnounceCall(call("c0", "read_file")),
            Effect::Prepare(call("c0", "read_file"))
        ]
    );
    assert_eq!(h.turn.tool_calls(), 1);
    for id in ["c0", "c1"] {
        let effects = h.on(prepared(
            id,
            facts("read_file", CallKind::ConfinedRead),
            false,
        ));
        assert!(
            matches!(effects.last(), Some(Effect::Run { .. })),
            "{effects:?}"
        );
        assert_eq!(saved_status(&h.on(ok(id))), Some(ResultStatus::Completed));
        h.on(Event::Saved);
    }
    // Then the model is asked again: it sees the refusals.
    assert_eq!(h.turn.phase(), &Phase::Compacting);
    assert_eq!(h.turn.tool_calls(), 2);
}

#[test]
fn a_failed_save_of_the_refusals_ends_the_turn() {
    let mut h = Harness::new(Mode::Bypass);
    h.begin();
    h.on(Event::ModelDone(flooded(1, 4)));
    h.on(Event::Saved);
    assert_eq!(
        h.on(Event::SaveFailed("disk full".into())),
        vec![Effect::End(TurnStop::SaveFailed("disk full".into()))]
    );
}

#[test]
fn the_refusals_are_one_line_naming_the_bound_and_the_tools() {
    let mut calls: Vec<ToolCall> = (0..9_936)
        .map(|i| call(&format!("c{i}"), "read_file"))
        .collect();
    calls.push(call("x", "bash"));
    calls.push(call("y", &"n".repeat(100)));
    calls.push(call("z", "edit_file"));
    calls.push(call("w", "edit_file"));
    let line = past_bound_notice(64, &calls);
    assert_eq!(line.lines().count(), 1);
    assert!(
        line.starts_with("9940 tool calls of one response were refused without running")
            && line.contains("at most 64 (`[model] max_tool_calls`)")
            && line.contains("(read_file 9936, edit_file 2, bash 1, 1 other tools)"),
        "{line}"
    );
}
