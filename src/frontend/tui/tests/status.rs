//! The status bar's counts: the tokens the session spent and their cost
//! where the settings price the model, and a request's retries with the
//! wait left, driven through the agent's events.

use std::time::Duration;

use crate::agent::AgentEvent;

use super::*;

fn bar(app: &App) -> String {
    let screen = shot(app, 140, 12);
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn tokens_show_after_the_first_answer_and_cost_only_when_priced() {
    let mut app = app();
    assert!(!bar(&app).contains("tokens"), "{}", bar(&app));
    agent(
        &mut app,
        AgentEvent::Spent {
            input_tokens: 1200,
            output_tokens: 34,
            cost_usd: None,
        },
    );
    let shown = bar(&app);
    assert!(shown.contains("1.2k tokens"), "{shown}");
    assert!(!shown.contains('$'), "no price, no cost: {shown}");
    agent(
        &mut app,
        AgentEvent::Spent {
            input_tokens: 200_000,
            output_tokens: 10_000,
            cost_usd: Some(0.35),
        },
    );
    let shown = bar(&app);
    assert!(shown.contains("210.0k tokens · $0.35"), "{shown}");
    agent(
        &mut app,
        AgentEvent::Spent {
            input_tokens: 100,
            output_tokens: 10,
            cost_usd: Some(0.00042),
        },
    );
    assert!(bar(&app).contains("110 tokens · $0.0004"), "{}", bar(&app));
}

#[test]
fn a_retry_shows_its_wait_and_reason_until_the_answer_comes() {
    let mut app = app();
    start_turn(&mut app, "hello", 0);
    agent(
        &mut app,
        AgentEvent::Retrying {
            delay: Duration::from_millis(1500),
            reason: "429".into(),
        },
    );
    assert!(bar(&app).contains("retrying in 2 s (429)"), "{}", bar(&app));
    app.now += Duration::from_millis(600);
    assert!(bar(&app).contains("retrying in 1 s (429)"), "{}", bar(&app));
    agent(&mut app, AgentEvent::AssistantDelta("hi".into()));
    let shown = bar(&app);
    assert!(!shown.contains("retrying"), "{shown}");
    assert!(shown.contains("streaming"), "{shown}");
}
