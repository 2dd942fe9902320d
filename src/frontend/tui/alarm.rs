//! The event loop's one timer: it rings at the earliest of the loop's
//! deadlines (the next frame, the spinner's tick, a question that arms or
//! calls the person).
//!
//! A timer made afresh for each deadline on each pass was entered into
//! tokio's timer wheel and taken out again a few times a frame, each time
//! under the wheel's lock, which the runtime's worker wanted too while an
//! answer streamed (it spun on it through `sched_yield`). This one stays
//! where it is while the earliest deadline does not move.

use std::pin::Pin;
use std::time::Instant;

use tokio::time::Sleep;

pub struct Alarm {
    sleep: Pin<Box<Sleep>>,
    /// When it rings; `None`: it does not.
    at: Option<Instant>,
}

impl Alarm {
    pub fn new() -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep_until(Instant::now().into())),
            at: None,
        }
    }

    /// Rings at `at`, or never. The timer is moved only when `at` changed
    /// (or rang).
    pub fn set(&mut self, at: Option<Instant>) {
        if at == self.at {
            return;
        }
        if let Some(at) = at {
            self.sleep.as_mut().reset(at.into());
        }
        self.at = at;
    }

    /// Waits for the deadline set and returns it; pending while none is.
    pub async fn rung(&mut self) -> Instant {
        let Some(at) = self.at else {
            return std::future::pending().await;
        };
        self.sleep.as_mut().await;
        self.at = None;
        at
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn it_rings_at_the_deadline_set_last_and_again_once_set_again() {
        let mut alarm = Alarm::new();
        let start = Instant::now();
        // None set: it never rings.
        let none = tokio::time::timeout(Duration::from_millis(100), alarm.rung()).await;
        assert!(none.is_err());
        let first = Instant::now() + Duration::from_millis(40);
        alarm.set(Some(first + Duration::from_millis(100)));
        alarm.set(Some(first));
        assert_eq!(alarm.rung().await, first);
        assert!(Instant::now() >= first, "rang early");
        // Rung: it waits until a deadline is set again.
        let again = tokio::time::timeout(Duration::from_millis(100), alarm.rung()).await;
        assert!(again.is_err(), "rang twice for one deadline");
        let later = Instant::now() + Duration::from_millis(16);
        alarm.set(Some(later));
        assert_eq!(alarm.rung().await, later);
        // A deadline already past rings at once.
        alarm.set(Some(start));
        assert_eq!(alarm.rung().await, start);
        alarm.set(None);
        let off = tokio::time::timeout(Duration::from_millis(100), alarm.rung()).await;
        assert!(off.is_err());
    }
}
