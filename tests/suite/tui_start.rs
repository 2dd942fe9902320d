//! How the full screen starts, frame by frame, in a pseudo-terminal: the
//! title comes first, before anything else is ready, and the banner is in
//! the very next frame, never held behind an empty one for a frame's
//! interval (the loop's first frame waits for what the agent said while
//! it started).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{FIRST_FRAME, env};
use crate::support::pty::Pty;
use crate::support::world::World;

/// What each synchronized update drew, in order.
fn frames(output: &str) -> Vec<&str> {
    output.split("\u{1b}[?2026h").skip(1).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_banner_is_in_the_frame_right_after_the_title() {
    let world = World::with("openai-chat", vec![], "").await;
    let home = world.home.path().to_str().unwrap();
    let project = world.project.path();
    let mut pty = Pty::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", project.to_str().unwrap()],
        project,
        &env(&[("MINO_HOME", home)]),
    );
    pty.expect(FIRST_FRAME.split(' ').next_back().unwrap());
    let output = pty.all();
    let frames = frames(&output);
    assert!(frames.len() >= 2, "{output:?}");
    assert!(
        frames[0].contains("mino"),
        "the title first: {:?}",
        frames[0]
    );
    assert!(
        !frames[0].contains("Permission"),
        "the title does not wait for the banner: {:?}",
        frames[0]
    );
    assert!(
        frames[1].contains("Permission"),
        "the banner in the second frame: {frames:?}"
    );
}
