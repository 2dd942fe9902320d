//! The full screen whose terminal goes away while no hang-up signal
//! reaches mino (its session leader keeps the signal, as a tracer or a
//! wrapper may): mino notices the hang-up on its terminal and exits,
//! instead of its terminal reader reading end of file in a loop, and
//! without a panic on the way out.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_closed_without_a_hang_up_signal_ends_mino() {
    let world = World::with("openai-chat", vec![], "").await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hang_up.py");
    let out = tokio::process::Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_mino"))
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "test")
        .env("AGENT_YOLO", "")
        .env("TERM", "xterm-256color")
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 128 + SIGHUP, as for the signal itself: not 101, a panic on the way
    // out (ratatui's drop and `println!` print to the closed terminal).
    assert_eq!(said.trim(), "exited 129");
}
