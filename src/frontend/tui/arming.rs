//! When a question may take an answer. A key pressed before the person
//! could have read the question is not an answer: a question's keys arm
//! only once it has been on screen for `ON_SCREEN` and no key has arrived
//! for `QUIET`. A question that opened while the person was typing is
//! `hurried`: its session-wide answers ask once more. Pure arithmetic on
//! instants the loop hands in; it never reads a clock, a key or a screen.

use std::time::{Duration, Instant};

/// How long a question is on screen before its keys arm.
pub const ON_SCREEN: Duration = Duration::from_millis(500);
/// How long no key may have arrived before a question's keys arm.
pub const QUIET: Duration = Duration::from_millis(300);
/// A question that opens this soon after a key is hurried.
pub const HURRIED: Duration = Duration::from_secs(1);

/// The arming of one question on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arming {
    /// When the question came on screen.
    pub shown_at: Instant,
    /// A key arrived less than `HURRIED` before it came on screen, or one
    /// was typed over it before it armed.
    pub hurried: bool,
    /// A key reached it once armed: it stays armed, so moving the focus
    /// and then pressing Enter works at any speed.
    pub latched: bool,
}

impl Arming {
    /// A question shown at `now`; `last_key` is when the last key arrived.
    pub fn new(now: Instant, last_key: Option<Instant>) -> Self {
        Self {
            shown_at: now,
            hurried: last_key.is_some_and(|key| now.saturating_duration_since(key) < HURRIED),
            latched: false,
        }
    }

    /// When the keys arm, given the last key so far.
    pub fn armed_at(&self, last_key: Option<Instant>) -> Instant {
        let on_screen = self.shown_at + ON_SCREEN;
        match last_key {
            Some(key) => on_screen.max(key + QUIET),
            None => on_screen,
        }
    }

    pub fn is_armed(&self, now: Instant, last_key: Option<Instant>) -> bool {
        self.latched || now >= self.armed_at(last_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn arms_after_the_time_on_screen_and_the_quiet() {
        let t0 = Instant::now();
        let quiet = Arming::new(t0, None);
        assert!(!quiet.hurried);
        assert!(!quiet.is_armed(t0 + ms(499), None));
        assert!(quiet.is_armed(t0 + ms(500), None));
        // A key at 400 ms pushes arming to 700 ms.
        let key = Some(t0 + ms(400));
        assert!(!quiet.is_armed(t0 + ms(699), key));
        assert!(quiet.is_armed(t0 + ms(700), key));
        // Once a key reached it armed, it stays armed.
        let mut latched = quiet;
        latched.latched = true;
        assert!(latched.is_armed(t0, Some(t0)));
        // Typing every 120 ms never arms it.
        for n in 0..50 {
            let key = Some(t0 + ms(120 * n));
            assert!(!quiet.is_armed(t0 + ms(120 * n + 119), key), "{n}");
        }
    }

    #[test]
    fn a_question_opened_under_typing_is_hurried() {
        let t0 = Instant::now();
        assert!(Arming::new(t0 + ms(999), Some(t0)).hurried);
        assert!(!Arming::new(t0 + ms(1000), Some(t0)).hurried);
    }
}
