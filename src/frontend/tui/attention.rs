//! Calling the person when a question waits for them: the bell, the
//! terminal title (`mino: waiting for you`) and, where the terminal shows
//! them, an OSC 9 notification. Once per question: at once when the
//! terminal says it is not focused (focus reporting), else after the
//! question has waited `UNANSWERED`. The title goes back when nothing waits.
//! Pure: the instants come from the loop, and the escape sequences are
//! handed back as text for the loop to write; it never reads a clock or
//! writes to the terminal itself.

use std::time::{Duration, Instant};

use crate::config::Notify;

/// How long a question may wait in a focused terminal before mino calls.
pub const UNANSWERED: Duration = Duration::from_secs(5);

/// The terminal's title while a question waits.
pub const WAITING_TITLE: &str = "mino: waiting for you";

/// The text of the OSC 9 notification.
const NOTIFICATION: &str = "mino: a question is waiting for you";

/// What the attention side of the screen remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attention {
    /// `[ui] notify`.
    pub notify: Notify,
    /// The terminal shows OSC 9 notifications (known from its name).
    pub osc9_shown: bool,
    /// What the terminal last said about its focus; a terminal that never
    /// reports counts as focused, so it is called after `UNANSWERED`.
    pub focused: bool,
    /// When the question that was called for came on screen.
    called_for: Option<Instant>,
    /// The title says `WAITING_TITLE` (and the old one is pushed).
    title_set: bool,
}

/// What to write to the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// Call the person: the title, and the bell or a notification.
    Call { bell: bool, osc9: bool },
    /// Nothing waits any more: the title goes back.
    Clear,
}

impl Attention {
    pub fn new(notify: Notify, osc9_shown: bool) -> Self {
        Self {
            notify,
            osc9_shown,
            focused: true,
            called_for: None,
            title_set: false,
        }
    }

    /// When the question shown at `waiting_since` is to be called for;
    /// `None` when it was called for already, nothing waits or notify is
    /// off.
    pub fn due(&self, waiting_since: Option<Instant>) -> Option<Instant> {
        let shown = waiting_since?;
        if self.notify == Notify::Off || self.called_for == Some(shown) {
            return None;
        }
        Some(if self.focused {
            shown + UNANSWERED
        } else {
            shown
        })
    }

    /// What to do at `now`, when the open question (if any) came on screen
    /// at `waiting_since`.
    pub fn step(&mut self, waiting_since: Option<Instant>, now: Instant) -> Option<Signal> {
        if waiting_since.is_none() {
            self.called_for = None;
            return std::mem::take(&mut self.title_set).then_some(Signal::Clear);
        }
        let due = self.due(waiting_since)?;
        if now < due {
            return None;
        }
        self.called_for = waiting_since;
        self.title_set = true;
        Some(match self.notify {
            Notify::Bell => Signal::Call {
                bell: true,
                osc9: self.osc9_shown,
            },
            Notify::Osc9 => Signal::Call {
                bell: false,
                osc9: true,
            },
            // `due` is never set for Off.
            Notify::Off => return None,
        })
    }
}

/// The escape sequences of `signal`. The title stack (`CSI 22 t`, `CSI 23 t`)
/// puts the person's own title back where the terminal keeps one; where it
/// does not, the title reads `mino`.
pub fn sequence(signal: &Signal) -> String {
    match signal {
        Signal::Call { bell, osc9 } => {
            let mut out = format!("\x1b[22;2t\x1b]2;{WAITING_TITLE}\x07");
            if *osc9 {
                out.push_str(&format!("\x1b]9;{NOTIFICATION}\x07"));
            }
            if *bell {
                out.push('\x07');
            }
            out
        }
        Signal::Clear => "\x1b]2;mino\x07\x1b[23;2t".to_string(),
    }
}

/// Whether a terminal named by `TERM_PROGRAM` and `TERM` shows OSC 9
/// notifications.
pub fn shows_osc9(term_program: Option<&str>, term: Option<&str>) -> bool {
    matches!(term_program, Some("iTerm.app" | "WezTerm" | "ghostty"))
        || term.is_some_and(|t| t.contains("ghostty"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_focused_terminal_is_called_once_after_the_wait() {
        let t0 = Instant::now();
        let mut a = Attention::new(Notify::Bell, false);
        assert_eq!(a.step(None, t0), None, "nothing waits");
        assert_eq!(a.due(Some(t0)), Some(t0 + UNANSWERED));
        assert_eq!(a.step(Some(t0), t0 + secs(4)), None);
        assert_eq!(
            a.step(Some(t0), t0 + secs(5)),
            Some(Signal::Call {
                bell: true,
                osc9: false
            })
        );
        assert_eq!(a.step(Some(t0), t0 + secs(9)), None, "once per question");
        assert_eq!(a.due(Some(t0)), None);
        assert_eq!(a.step(None, t0 + secs(10)), Some(Signal::Clear));
        assert_eq!(a.step(None, t0 + secs(11)), None, "cleared once");
    }

    #[test]
    fn an_unfocused_terminal_is_called_at_once_and_each_question_again() {
        let t0 = Instant::now();
        let mut a = Attention::new(Notify::Bell, true);
        a.focused = false;
        assert_eq!(
            a.step(Some(t0), t0),
            Some(Signal::Call {
                bell: true,
                osc9: true
            })
        );
        let t1 = t0 + secs(1);
        assert!(a.step(Some(t1), t1).is_some(), "the next question");
    }

    #[test]
    fn osc9_and_off() {
        let t0 = Instant::now();
        let mut a = Attention::new(Notify::Osc9, false);
        a.focused = false;
        assert_eq!(
            a.step(Some(t0), t0),
            Some(Signal::Call {
                bell: false,
                osc9: true
            })
        );
        let mut off = Attention::new(Notify::Off, true);
        off.focused = false;
        assert_eq!(off.due(Some(t0)), None);
        assert_eq!(off.step(Some(t0), t0 + secs(60)), None);
        assert_eq!(off.step(None, t0 + secs(61)), None, "no title to clear");
    }

    #[test]
    fn sequences() {
        assert_eq!(
            sequence(&Signal::Call {
                bell: true,
                osc9: true
            }),
            "\x1b[22;2t\x1b]2;mino: waiting for you\x07\x1b]9;mino: a question is waiting for you\x07\x07"
        );
        assert_eq!(sequence(&Signal::Clear), "\x1b]2;mino\x07\x1b[23;2t");
        assert!(shows_osc9(Some("WezTerm"), Some("xterm-256color")));
        assert!(!shows_osc9(Some("tmux"), Some("screen")));
        assert!(!shows_osc9(None, None));
    }
}
