//! The machine fed every event in every phase: each combination ends the
//! turn exactly once, with every call paired.

use super::*;

fn in_phase(name: &str) -> Harness {
    let mut h = Harness::new(Mode::Manual);
    let write = || facts("edit_file", CallKind::FileWrite);
    let calls = || vec![call("c1", "edit_file"), call("c2", "edit_file")];
    match name {
        "starting" => {}
        "compacting" => {
            h.on(Event::Begin);
        }
        "requesting" => h.begin(),
        "saving the response" => {
            h.begin();
            h.on(Event::ModelDone(response(calls())));
        }
        "saving the refusals" => {
            h.begin();
            let mut flooded = response(calls());
            flooded.past_bound = Some(crate::model::PastBound {
                bound: 2,
                calls: vec![call("c3", "bash"), call("c4", "bash")],
            });
            h.on(Event::ModelDone(flooded));
            h.on(Event::Saved);
        }
        "preparing" => {
            h.begin();
            h.respond(calls());
        }
        "inspecting" => {
            h.begin();
            h.respond(calls());
            h.on(prepared("c1", write(), true));
        }
        "asking" => {
            h.begin();
            h.respond(calls());
            h.on(prepared("c1", write(), true));
            h.on(Event::Inspected {
                call_id: "c1".into(),
            });
        }
        "running" => {
            h = in_phase("asking");
            h.on(Event::Answered {
                call_id: "c1".into(),
                answer: ConsentAnswer::AllowOnce,
                note: None,
            });
        }
        "saving the result" => {
            h = in_phase("running");
            h.on(ok("c1"));
        }
        "ending" => {
            h = in_phase("running");
            h.on(Event::Interrupted { partial: None });
        }
        "ended" => {
            h.begin();
            h.on(Event::ModelDone(response(Vec::new())));
            h.on(Event::Saved);
        }
        other => panic!("no phase {other}"),
    }
    assert_eq!(h.turn.phase().name(), name);
    h
}

const PHASES: [&str; 12] = [
    "starting",
    "compacting",
    "requesting",
    "saving the response",
    "saving the refusals",
    "preparing",
    "inspecting",
    "asking",
    "running",
    "saving the result",
    "ending",
    "ended",
];

/// Every event there is, for the call `id`.
fn every_event(id: &str) -> Vec<Event> {
    let id = id.to_string();
    vec![
        Event::Begin,
        Event::Compacted,
        Event::ModelDone(response(vec![call("c7", "bash")])),
        Event::ModelDone(Response {
            past_bound: Some(crate::model::PastBound {
                bound: 1,
                calls: vec![call("c8", "bash")],
            }),
            ..response(vec![call("c7", "bash")])
        }),
        Event::ModelDone(Response {
            text: "done".into(),
            ..Default::default()
        }),
        Event::ModelFailed(ModelError::Cancelled),
        Event::ModelFailed(ModelError::Setup("boom".into())),
        Event::ModelCutOff {
            error: ModelError::Setup("stalled".into()),
            partial: Response {
                text: "half".into(),
                ..Default::default()
            },
        },
        Event::Saved,
        Event::SaveFailed("disk full".into()),
        prepared(&id, facts("edit_file", CallKind::FileWrite), true),
        prepared(&id, facts("read_file", CallKind::ConfinedRead), false),
        Event::PrepareFailed {
            call_id: id.clone(),
            message: "bad".into(),
        },
        Event::Inspected {
            call_id: id.clone(),
        },
        Event::InspectFailed {
            call_id: id.clone(),
            message: "changed".into(),
        },
        Event::Answered {
            call_id: id.clone(),
            answer: ConsentAnswer::AllowOnce,
            note: None,
        },
        Event::Answered {
            call_id: id.clone(),
            answer: ConsentAnswer::Reject,
            note: None,
        },
        Event::Ran {
            call_id: id.clone(),
            outcome: ToolOutcome::completed("ok"),
        },
        // Only an external turn takes an asked agent's call.
        Event::ExternalCall(call(&id, "bash")),
        Event::Interrupted { partial: None },
        Event::Interrupted {
            partial: Some(Response {
                text: "half".into(),
                ..Default::default()
            }),
        },
        Event::Stopped {
            call_id: id.clone(),
            outcome: ToolOutcome::interrupted("partial output"),
        },
        Event::InterruptedBeforeRun,
        Event::Internal("no prepared call".into()),
    ]
}

/// What a driver that always succeeds answers to `effect`.
fn answer(effect: &Effect) -> Option<Event> {
    Some(match effect {
        Effect::Compact => Event::Compacted,
        Effect::Request { .. } => Event::ModelDone(Response {
            text: "done".into(),
            ..Default::default()
        }),
        Effect::SaveResponse(_) | Effect::SaveResult { .. } | Effect::SaveRefusals { .. } => {
            Event::Saved
        }
        Effect::Prepare(call) => Event::PrepareFailed {
            call_id: call.id.clone(),
            message: "bad".into(),
        },
        Effect::Inspect { call_id } => Event::Inspected {
            call_id: call_id.clone(),
        },
        Effect::Ask { call_id, .. } => Event::Answered {
            call_id: call_id.clone(),
            answer: ConsentAnswer::Reject,
            note: None,
        },
        Effect::Run { call_id } => ok(call_id),
        _ => return None,
    })
}

/// The lists of effects a machine returns: never empty, ending with an
/// effect the driver answers or with `End`, and `End` only last.
fn check_shape(effects: &[Effect], what: &str) {
    let last = effects
        .last()
        .unwrap_or_else(|| panic!("{what}: no effects"));
    assert!(
        last.answers() || matches!(last, Effect::End(_)),
        "{what}: ends with {last:?}"
    );
    let ends = effects
        .iter()
        .filter(|e| matches!(e, Effect::End(_)))
        .count();
    assert!(
        ends == 0 || (ends == 1 && matches!(last, Effect::End(_))),
        "{what}: {effects:?}"
    );
}

#[test]
fn every_phase_fed_every_event_ends_the_turn_exactly_once() {
    for phase in PHASES {
        // Outcomes for the call in hand, and for one that is not.
        for event in every_event("c1").into_iter().chain(every_event("c9")) {
            let what = format!("{phase} + {}", event.name());
            // A failed save stops everything: no later result can be saved.
            let save_failed = matches!(event, Event::SaveFailed(_));
            let mut h = in_phase(phase);
            // Calls saved in a response that is on disk, and results.
            let mut asked: Vec<String> = match phase {
                "starting" | "compacting" | "requesting" | "saving the response" => Vec::new(),
                // The refusals being saved may or may not be on disk: the
                // kept calls are paired either way.
                _ => vec!["c1".into(), "c2".into()],
            };
            let mut results: BTreeMap<String, usize> = BTreeMap::new();
            if phase == "ending" {
                // c1's interrupted result is being saved.
                results.insert("c1".into(), 1);
            }
            if phase == "saving the result" {
                results.insert("c1".into(), 1);
            }
            let mut effects = h.on(event);
            let mut ends = 0;
            let mut last_save: Option<Vec<String>> = None;
            for _ in 0..100 {
                check_shape(&effects, &what);
                let mut next = None;
                for effect in &effects {
                    match effect {
                        Effect::End(_) => ends += 1,
                        Effect::SaveResult { call_id, .. } => {
                            *results.entry(call_id.clone()).or_default() += 1;
                        }
                        Effect::SaveRefusals { calls, .. } => {
                            for call in calls {
                                *results.entry(call.id.clone()).or_default() += 1;
                            }
                        }
                        Effect::SaveResponse(Item::Assistant { tool_calls, .. }) => {
                            last_save = Some(tool_calls.iter().map(|c| c.id.clone()).collect());
                        }
                        _ => {}
                    }
                    next = answer(effect);
                }
                let Some(event) = next else { break };
                if matches!(event, Event::Saved)
                    && let Some(ids) = last_save.take()
                {
                    asked.extend(ids);
                }
                effects = h.on(event);
            }
            assert_eq!(ends, 1, "{what}: {ends} ends");
            assert_eq!(h.turn.phase(), &Phase::Ended, "{what}");
            if phase != "ended" && phase != "saving the response" && !save_failed {
                for id in &asked {
                    assert_eq!(
                        results.get(id),
                        Some(&1),
                        "{what}: call {id} has {:?} results",
                        results.get(id)
                    );
                }
            }
        }
    }
}
