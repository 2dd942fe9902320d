//! How the full screen starts, frame by frame, in a pseudo-terminal: the
//! title comes first, before anything else is ready, and the banner is in
//! the very next frame, never held behind an empty one for a frame's
//! interval (the loop's first frame waits for what the agent said while
//! it started). The screen's size is the terminal's, taken again when the
//! terminal is resized (never asked per frame).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::full_screen::{FIRST_FRAME, env};
use crate::support::pty::{Pty, Screen};
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

/// The row of the screen that holds `needle`, from the top.
fn row_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|line| line.contains(needle))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resized_terminal_is_drawn_at_its_new_size() {
    let world = World::with("openai-chat", vec![], "").await;
    let home = world.home.path().to_str().unwrap();
    let project = world.project.path();
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", project.to_str().unwrap()],
        project,
        &env(&[("MINO_HOME", home)]),
    );
    let start = screen.wait_for_all(&[FIRST_FRAME, " MANUAL "]);
    let bottom = row_of(&start, " MANUAL ").unwrap();
    // The status row, the badge at its left and the help's key at its
    // right edge, is the bottom row: each time the terminal is resized, it
    // is drawn again there, as wide as the new screen.
    for (rows, cols) in [(30_u16, 100_u16), (24, 80), (40, 120)] {
        screen.resize(rows, cols);
        let moved = bottom + usize::from(rows) - 40;
        screen.wait_until(
            &format!("the status row {moved}, {cols} wide, at {rows}x{cols}"),
            |text| {
                text.lines().nth(moved).is_some_and(|row| {
                    let drawn = row.trim_end();
                    row.starts_with(" MANUAL ")
                        && drawn.ends_with("? help")
                        && (usize::from(cols) - 2..=usize::from(cols))
                            .contains(&drawn.chars().count())
                })
            },
        );
    }
    // The content of a narrower screen is wrapped to it, not cut: typed
    // text longer than 80 columns still shows whole.
    screen.resize(24, 80);
    let long = "x".repeat(70) + " theendofit";
    screen.send(long.as_bytes());
    screen.wait_for("theendofit");
}
