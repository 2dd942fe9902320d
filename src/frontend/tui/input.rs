//! The terminal's input: a thread of its own waits for crossterm's events
//! and hands each to the event loop through a channel.
//!
//! crossterm's own `EventStream` asks for its reader's lock on every poll
//! while its waiting thread holds that lock: each poll spun through a
//! handful of `sched_yield` calls before it gave up, and the loop polls
//! the terminal at least twice a frame. A channel costs the loop nothing
//! to look at, and the thread sleeps in `poll(2)` until the terminal
//! speaks.

use std::io;

use crossterm::event::Event;
use tokio::sync::mpsc;

/// Events read but not yet taken by the loop. A full channel holds the
/// thread back, and the terminal's own buffer holds the rest.
const QUEUE: usize = 256;

/// The terminal's events, as the reading thread hands them over.
pub struct Input {
    events: mpsc::Receiver<io::Result<Event>>,
}

impl Input {
    /// Starts the reading thread. It ends after the first error it hands
    /// over (a terminal that hung up reads `EIO` from then on), or when
    /// the loop drops this; a thread still waiting for a key then ends
    /// with the process.
    pub fn start() -> io::Result<Self> {
        let (sender, events) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("mino-input".to_string())
            .spawn(move || {
                loop {
                    let event = crossterm::event::read();
                    let failed = event.is_err();
                    if sender.blocking_send(event).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(Self { events })
    }

    /// The next event; `None` once the thread has ended and everything it
    /// handed over was taken.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        self.events.recv().await
    }

    /// An event already waiting, if there is one. `Some(None)` when the
    /// thread has ended and nothing is left.
    pub fn ready(&mut self) -> Option<Option<io::Result<Event>>> {
        match self.events.try_recv() {
            Ok(event) => Some(Some(event)),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => Some(None),
        }
    }
}
