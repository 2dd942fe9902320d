//! The status bar's counts, end to end: the built binary on the full
//! screen in a pseudo-terminal against the loopback model service. The
//! tokens the service reported show after an answer, with their cost where
//! `[model.prices.NAME]` prices the model and without one where nothing
//! does; a 429 shows `retrying in N s (429)` while mino waits to try again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::{Reply, text};
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_their_cost_show_after_an_answer() {
    // The service reports 100 tokens in and 10 out for every answer.
    let world = World::with(
        "openai-chat",
        vec![text("first answer"), text("second answer")],
        "\n[model.prices.test-model]\ninput = 1000\noutput = 1000\n",
    )
    .await;
    let mut screen = world.full_screen();
    assert!(!status_bar(&screen.text()).contains("tokens"));
    screen.submit("hello");
    // The counts show once the answer's usage arrived, and stay once the
    // turn has ended (the end may come a frame after the count).
    screen.wait_until("the first answer's tokens, the turn ended", |s| {
        s.contains("first answer")
            && status_bar(s).contains("110 tokens · $0.11")
            && status_bar(s).contains(" idle")
    });
    screen.submit("again");
    screen.wait_until("both answers' tokens", |s| {
        status_bar(s).contains("220 tokens · $0.22")
    });
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_price_only_tokens_show() {
    let world = World::with("anthropic", vec![text("an answer")], "").await;
    let mut screen =
        world.full_screen_in(world.project.path(), &[], &[("ANTHROPIC_API_KEY", "test")]);
    screen.submit("hello");
    let after = screen.wait_until("the answer's tokens", |s| {
        s.contains("an answer") && status_bar(s).contains("tokens")
    });
    let bar = status_bar(&after);
    assert!(bar.contains("110 tokens"), "{bar}");
    assert!(!bar.contains('$'), "{bar}");
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_shows_the_retry_in_the_status_bar() {
    let world = World::with(
        "openai-chat",
        vec![Reply::Status(429, Some("3")), text("after the wait")],
        "",
    )
    .await;
    let mut screen = world.full_screen();
    screen.submit("hello");
    let waiting = screen.wait_until("the retry", |s| {
        status_bar(s).contains("retrying in ") && status_bar(s).contains(" s (429)")
    });
    assert!(!waiting.contains("after the wait"), "{waiting}");
    let done = screen.wait_for_all(&["after the wait", " idle"]);
    assert!(
        !status_bar(&done).contains("retrying"),
        "{}",
        status_bar(&done)
    );
    quit(&mut screen);
    assert_eq!(world.llm.bodies().len(), 2);
}
