//! The plan's panel: drawn from the session's plan between the chat and
//! the input, `plan 2/5` in its title and the status bar, Ctrl+T hiding
//! and showing it, step text with escape sequences drawn as text, a long
//! plan kept to its share of the screen with the work at hand in view, and
//! another session starting without one.

use insta::assert_snapshot;

use crate::agent::AgentEvent;
use crate::session::{Plan, PlanChange, StepStatus};

use super::*;

fn plan_of(texts: &[&str], done: usize, in_progress: Option<usize>) -> Plan {
    let mut plan = Plan::default()
        .apply(&PlanChange::Set(
            texts.iter().map(|t| t.to_string()).collect(),
        ))
        .unwrap();
    for step in 1..=done {
        plan = plan
            .apply(&PlanChange::Update {
                step,
                text: None,
                status: Some(StepStatus::Done),
            })
            .unwrap();
    }
    if let Some(step) = in_progress {
        plan = plan
            .apply(&PlanChange::Update {
                step,
                text: None,
                status: Some(StepStatus::InProgress),
            })
            .unwrap();
    }
    plan
}

fn planned_app() -> App {
    let mut app = app();
    agent(
        &mut app,
        AgentEvent::Plan(plan_of(
            &[
                "Read notes.md",
                "Fix the title \u{1b}[2J\u{1b}]0;pwned\u{7}",
                "Check the diff",
            ],
            1,
            Some(2),
        )),
    );
    app
}

#[test]
fn the_panel_shows_each_step_with_its_mark() {
    let app = planned_app();
    let text = shot(&app, 80, 16);
    assert_snapshot!(text);
    // No escape reaches the terminal: every control is a visible picture.
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("␛[2J␛]0;pwned␇"), "{text}");
    let status = text.lines().last().unwrap();
    assert!(status.contains("plan 1/3"), "{status}");
}

#[test]
fn ctrl_t_hides_and_shows_the_panel_and_the_status_bar_keeps_the_count() {
    let mut app = planned_app();
    press(&mut app, ctrl('t'));
    let hidden = shot(&app, 80, 16);
    assert!(!hidden.contains("Check the diff"), "{hidden}");
    assert!(hidden.lines().last().unwrap().contains("plan 1/3"));
    press(&mut app, ctrl('t'));
    assert!(shot(&app, 80, 16).contains("Check the diff"));
    // Without a plan, Ctrl+T says how one comes.
    let mut empty = super::app();
    press(&mut empty, ctrl('t'));
    let said = shot(&empty, 100, 16);
    assert!(said.contains("No plan yet"), "{said}");
    assert!(!said.lines().last().unwrap().contains("plan "), "{said}");
}

#[test]
fn a_long_plan_keeps_to_its_share_with_the_work_at_hand_in_view() {
    let mut app = app();
    let texts: Vec<String> = (1..=50).map(|i| format!("step number {i}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    agent(&mut app, AgentEvent::Plan(plan_of(&texts, 30, Some(31))));
    let text = shot(&app, 80, 24);
    let panel_rows = text.lines().filter(|l| l.contains("step number")).count();
    assert!(panel_rows <= 8, "{text}");
    assert!(text.contains("[>] step number 31"), "{text}");
    assert!(text.contains("[x] step number 30"), "{text}");
    assert!(text.contains("more (Ctrl+T hides)"), "{text}");
    assert!(text.contains("plan 30/50"), "{text}");
}

#[test]
fn another_session_starts_without_the_plan() {
    let mut app = planned_app();
    agent(
        &mut app,
        AgentEvent::Session {
            id: "0123456789abcdef0123456789abcdef".into(),
            mode: crate::policy::Mode::Manual,
            model: "gpt-5-mini".into(),
            context_window: 128_000,
            window_source: None,
            profile: Default::default(),
        },
    );
    let text = shot(&app, 80, 16);
    assert!(
        !text.contains("Check the diff") && !text.contains("plan 1/3"),
        "{text}"
    );
}

#[test]
fn the_question_in_manual_lists_the_steps_with_their_controls_visible() {
    use crate::tools::Tool;
    let dir = tempfile::TempDir::new().unwrap();
    let cx = crate::tools::ToolContext::new(crate::tools::Project::new(dir.path()).unwrap());
    let prepared = crate::tools::plan::PlanTool
        .prepare(
            &serde_json::json!({"action": "set", "steps": ["Read notes.md", "Fix \u{1b}[2Jit"]}),
            &cx,
        )
        .unwrap();
    let mut app = app();
    start_turn(&mut app, "Plan the fix", 1);
    let (event, _rx) = consent("plan", "c1", prepared.fields());
    agent(&mut app, event);
    let text = shot(&app, 80, 20);
    assert_snapshot!(text);
    assert!(text.contains("plan wants to change the plan"), "{text}");
    assert!(text.contains("2. Fix ␛[2Jit"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}
