//! `mino --line` with its input piped: every line is read and handled, in
//! order, one at a time, and end of input ends mino after the last turn
//! (issue 24, bug 2: lines were lost to a race with end of input).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::llm::text;
use crate::support::run::mino;
use crate::support::world::World;

/// Runs `mino --line` in `world` with `input` piped: (status, stdout).
async fn piped(world: &World, input: &str) -> (i32, String) {
    let out = mino(world, &["--line"], Some(input.as_bytes())).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_piped_line_is_handled_in_order_before_mino_ends() {
    // Repeated: the lost lines were a race, won by end of input most runs.
    for run in 0..20 {
        let world = World::with(
            "openai-chat",
            vec![text("ANSWER-ONE"), text("ANSWER-TWO")],
            "",
        )
        .await;
        let (status, out) = piped(
            &world,
            "/help\n/mode\nfirst prompt\n\n/mode\nsecond prompt\n",
        )
        .await;
        assert_eq!(status, 0, "run {run}: {out}");
        let at = |needle: &str, from: usize| {
            out[from..]
                .find(needle)
                .map(|i| i + from)
                .unwrap_or_else(|| panic!("run {run}: {needle:?} after byte {from} in {out}"))
        };
        let help = at("Commands:\n", 0);
        let mode = at("Permission mode: manual. Modes:", help);
        let one = at("ANSWER-ONE", mode);
        let mode_again = at("Permission mode: manual. Modes:", one);
        at("ANSWER-TWO", mode_again);
        let bodies = world.llm.bodies();
        assert_eq!(bodies.len(), 2, "run {run}: one request per prompt");
        assert!(bodies[0].contains("first prompt"), "{}", bodies[0]);
        assert!(!bodies[0].contains("second prompt"), "{}", bodies[0]);
        assert!(bodies[1].contains("second prompt"), "{}", bodies[1]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_alone_on_piped_input_all_print() {
    for run in 0..20 {
        let world = World::with("openai-chat", vec![], "").await;
        let (status, out) = piped(&world, "/mode\n/mode\n/mode\n").await;
        assert_eq!(status, 0, "run {run}: {out}");
        assert_eq!(
            out.matches("Permission mode: manual. Modes:").count(),
            3,
            "run {run}: {out}"
        );
        assert!(world.llm.bodies().is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_in_piped_input_stops_reading() {
    let world = World::with("openai-chat", vec![text("ANSWER-ONE")], "").await;
    let (status, out) = piped(&world, "/mode\n/quit\nnever sent\n").await;
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("Permission mode: manual. Modes:"), "{out}");
    assert!(world.llm.bodies().is_empty(), "nothing after /quit is sent");
}
