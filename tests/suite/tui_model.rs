//! `/model` end to end: the built binary on the full screen in a
//! pseudo-terminal against the loopback model service, which lists its
//! models at `GET /v1/models`. `/model` offers the settings' models and
//! the service's; a name that is neither changes nothing and names what is
//! accepted; a switch shows in the banner and the status bar, and the next
//! request carries the new model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::text;
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_lists_switches_and_refuses_a_bad_name() {
    let world = World::with(
        "openai-chat",
        vec![text("answered by the other model")],
        "models = [\"other-model\"]\n[model.prices.other-model]\ninput = 1000\noutput = 1000\n",
    )
    .await;
    let mut screen = world.full_screen();
    assert!(status_bar(&screen.text()).contains("test-model"));
    screen.submit("/model");
    let picker = screen.wait_for("served-model");
    assert!(picker.contains("other-model"), "{picker}");
    assert!(picker.contains("from the service"), "{picker}");
    screen.esc();
    screen.wait_until("the picker closed", |s| !s.contains("Enter switches"));
    screen.submit("/model gpt\u{7}-x");
    let refused = screen.wait_for("not a model this session can switch to");
    assert!(
        refused.contains("accepted: test-model, other-model, served-model"),
        "{refused}"
    );
    assert!(status_bar(&refused).contains("test-model"));
    screen.submit("/model other-model");
    screen.wait_until("the switch, in the banner and the status bar", |s| {
        s.contains("Model: other-model.") && status_bar(s).contains("other-model")
    });
    screen.submit("hello");
    let answered = screen.wait_until("the answer and its cost", |s| {
        s.contains("answered by the other model") && status_bar(s).contains("$0.11")
    });
    assert!(answered.contains("Model for this session from now on: other-model"));
    quit(&mut screen);
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 1, "the list is not a model request");
    assert!(
        bodies[0].contains("\"model\":\"other-model\""),
        "{}",
        bodies[0]
    );
}
