//! Plan mode on the full screen: the built binary in a pseudo-terminal
//! against the loopback model service. Shift+Tab cycles plan, manual and
//! accept-edits without a question and never reaches auto or bypass; a
//! turn in plan mode that ends with an answer offers to run the plan, and
//! choosing auto asks its usual question first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::quit;
use crate::support::llm::text;
use crate::support::pty::Screen;
use crate::support::world::World;

/// The key Shift+Tab sends.
const SHIFT_TAB: &[u8] = b"\x1b[Z";

fn shift_tab_to(screen: &mut Screen, badge: &str, notice: &str) -> String {
    screen.send(SHIFT_TAB);
    screen.wait_for_all(&[badge, notice])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_cycles_plan_manual_accept_edits_without_a_question() {
    let world = World::with("openai-chat", vec![], "").await;
    let mut screen = world.full_screen();
    screen.wait_for(" MANUAL ");
    shift_tab_to(
        &mut screen,
        " ACCEPT-EDITS ",
        "Permission mode for this session: accept-edits.",
    );
    shift_tab_to(
        &mut screen,
        " PLAN ",
        "Permission mode for this session: plan.",
    );
    let last = shift_tab_to(
        &mut screen,
        " MANUAL ",
        "Permission mode for this session: manual.",
    );
    assert!(!last.contains("Switch to this mode?"), "{last}");
    quit(&mut screen);

    // From auto, the cycle starts over at plan: never into bypass.
    let mut screen = world.full_screen_in(world.project.path(), &["--mode", "auto"], &[]);
    screen.wait_for(" AUTO ");
    let plan = shift_tab_to(
        &mut screen,
        " PLAN ",
        "Permission mode for this session: plan.",
    );
    assert!(!plan.contains("Switch to this mode?"), "{plan}");
    assert!(!plan.contains(" BYPASS "), "{plan}");
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_hand_off_asks_before_auto_and_goes_ahead_with_the_plan() {
    let world = World::with(
        "openai-chat",
        vec![
            text("1. Fix the title of notes.md.\n2. Run the tests."),
            text("Done as planned."),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--mode", "plan"], &[]);
    screen.wait_for(" PLAN ");
    screen.submit("Plan the fix");
    screen.wait_for_all(&[
        "2. Run the tests.",
        "Run this plan in: m manual · e accept-edits · a auto · k keep planning",
    ]);
    screen.send(b"a");
    let question = screen.wait_for_all(&[
        "auto mode writes and edits project files without asking",
        "Switch to this mode? [y/N]",
        "keys armed",
    ]);
    assert!(question.contains(" PLAN "), "not switched yet: {question}");
    screen.send(b"y");
    // Nothing is trusted yet: auto mode offers the read-only tools once,
    // over the chat.
    screen.wait_for_all(&["Nothing is trusted yet", "keys armed"]);
    screen.send(b"n");
    let switched = screen.wait_for_all(&[
        "Permission mode for this session: auto.",
        " AUTO ",
        "Go ahead with the plan.",
    ]);
    assert!(
        !switched.contains("Run this plan in:"),
        "the offer closed: {switched}"
    );
    assert!(switched.contains("Nothing was saved"), "{switched}");
    // The prefilled prompt goes with Enter.
    screen.send(b"\r");
    screen.wait_for("Done as planned.");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(
        bodies[1].contains("Go ahead with the plan."),
        "{}",
        bodies[1]
    );
    quit(&mut screen);
}
