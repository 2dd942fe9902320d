//! Auto mode's first day in a pseudo-terminal: switching to auto with
//! nothing trusted offers the read-only tools found here, shows the text
//! for the settings, writes it only after `y`, and the gate trusts them at
//! once: the next `ls` the model sends runs without a question.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::json;

use super::line_mode::Line;
use crate::support::llm::{text, tool};
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_offers_to_trust_read_only_tools_and_writes_them_only_after_yes() {
    let ls = ["/usr/bin/ls", "/bin/ls"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("ls in a system directory");
    let world = World::with(
        "openai-chat",
        vec![
            tool("bash", json!({"command": format!("{ls} -a")})),
            text("listed"),
        ],
        "",
    )
    .await;
    let config = world.home.path().join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let start = || {
        let mut pty = world.start();
        pty.expect("Use /mode to change it.");
        pty
    };

    // No: nothing is written, auto mode still asks about everything.
    let mut pty = start();
    pty.send_line("/mode auto");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("y");
    let offer = pty.expect("? [y/N]").replace("\r\n", "\n");
    assert!(
        offer.contains("[[shell_gate.trusted_executables]]\npath = \""),
        "{offer}"
    );
    assert!(
        offer.contains(&format!("path = \"{ls}\"\nsha256 = \"")),
        "{offer}"
    );
    assert!(offer.contains("Trust these read-only tools"), "{offer}");
    pty.send_line("n");
    pty.expect("Nothing was saved");
    pty.send_line("/quit");
    pty.wait();
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);

    // Yes: written, and the model's plain `ls` runs unasked in this run.
    let mut pty = start();
    pty.send_line("/mode auto");
    pty.expect("Switch to this mode? [y/N]");
    pty.send_line("y");
    pty.expect("? [y/N]");
    pty.send_line("y");
    pty.expect("auto mode runs their plain read-only commands from now on");
    pty.send_line("list the files");
    let turn = pty.expect("listed");
    assert!(
        turn.contains("[Tool: bash, allowed without confirmation in auto mode]"),
        "{turn}"
    );
    assert!(!turn.contains("Approve this operation"), "{turn}");
    pty.send_line("/quit");
    pty.wait();
    let after = std::fs::read_to_string(&config).unwrap();
    assert!(after.starts_with(&before), "{after}");
    assert!(after.contains(&format!("path = \"{ls}\"")), "{after}");
    let bodies = world.llm.bodies();
    assert!(
        bodies[0].contains(&format!("Trusted executables: {ls}"))
            || bodies[0].contains("Trusted executables: "),
        "{}",
        bodies[0]
    );
}
