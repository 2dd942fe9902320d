//! The built binary on the full screen in a pseudo-terminal, as every
//! full-screen test starts it: the environment (a colour terminal, a dummy
//! key, no yolo from outside, a dead proxy for anything that is not
//! loopback), mino's home and project from a test `World`, and the wait for
//! the first frame; then the status bar read off the screen and `/quit`.
//! Starts and stops mino; never checks what a test is about.

use std::path::Path;

use super::pty::Screen;
use super::world::World;

/// The banner's last words: the first frame is up.
pub const FIRST_FRAME: &str = "Use /mode to change it.";

/// The environment of every full-screen run, with `extra` added (nothing
/// here should reach out; if a bug ran `curl`, it would go nowhere).
pub fn env<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut all = vec![
        ("TERM", "xterm-256color"),
        ("OPENAI_API_KEY", "test"),
        ("AGENT_YOLO", ""),
        ("https_proxy", "http://127.0.0.1:9"),
        ("HTTPS_PROXY", "http://127.0.0.1:9"),
        ("no_proxy", "127.0.0.1,localhost"),
        ("NO_PROXY", "127.0.0.1,localhost"),
    ];
    all.extend_from_slice(extra);
    all
}

impl World {
    /// mino on the full screen in this world's project, once its first
    /// frame is up.
    pub fn full_screen(&self) -> Screen {
        self.full_screen_in(self.project.path(), &[], &[])
    }

    /// mino on the full screen in `project` with `args` and the variables
    /// `extra` added, once its first frame is up.
    pub fn full_screen_in(&self, project: &Path, args: &[&str], extra: &[(&str, &str)]) -> Screen {
        let home = self.home.path().to_str().unwrap();
        let mut all = vec!["--cd", project.to_str().unwrap()];
        all.extend_from_slice(args);
        let mut vars = env(&[("MINO_HOME", home)]);
        vars.extend_from_slice(extra);
        let mut screen = Screen::spawn(env!("CARGO_BIN_EXE_mino"), &all, project, &vars);
        screen.wait_for(FIRST_FRAME);
        screen
    }
}

/// The status bar: the screen's last non-empty line.
pub fn status_bar(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

/// Quits with `/quit` and checks the exit status.
pub fn quit(screen: &mut Screen) {
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
}
