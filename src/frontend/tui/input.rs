//! The terminal's input: a thread of its own waits for crossterm's events
//! and hands each to the event loop through a channel, and a run of plain
//! characters already read together becomes one intent.
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

use super::app::App;
use super::keymap::{self, Plain, Run};
use super::msg::Msg;

/// Events read but not yet taken by the loop. A full channel holds the
/// thread back, and the terminal's own buffer holds the rest.
const QUEUE: usize = 256;

/// The most a run of typing takes before it is handed on: a paste sent as
/// keys keeps coming while it is read, and the loop draws, and hears
/// Ctrl+C, between runs.
const RUN_BYTES: usize = 64 * 1024;

/// The terminal's events, as the reading thread hands them over.
pub struct Input {
    events: mpsc::Receiver<io::Result<Event>>,
    /// The event that ended a run of typing: handed out next.
    held: Option<io::Result<Event>>,
    /// `RUN_BYTES`, smaller in tests.
    run_bytes: usize,
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
        Ok(Self::with(events))
    }

    fn with(events: mpsc::Receiver<io::Result<Event>>) -> Self {
        Self {
            events,
            held: None,
            run_bytes: RUN_BYTES,
        }
    }

    /// The next event; `None` once the thread has ended and everything it
    /// handed over was taken.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        if let Some(event) = self.held.take() {
            return Some(event);
        }
        self.events.recv().await
    }

    /// An event already waiting, if there is one. `Some(None)` when the
    /// thread has ended and nothing is left.
    pub fn ready(&mut self) -> Option<Option<io::Result<Event>>> {
        if let Some(event) = self.held.take() {
            return Some(Some(event));
        }
        match self.events.try_recv() {
            Ok(event) => Some(Some(event)),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => Some(None),
        }
    }

    /// The intent of `event`, just taken from here. A plain character
    /// that may begin a run (`keymap::begins_run`) takes the plain
    /// characters already read after it, and the event that ends the run
    /// is handed out next. Typed into the input, the run is one insertion:
    /// a terminal without bracketed paste sends a paste as keys, and each
    /// insertion walks its line up to the cursor, so one a key made a long
    /// line cost the square of its length. Over a question, the run is a
    /// paste and answers nothing.
    pub fn intent(&mut self, app: &App, event: &Event) -> Option<Msg> {
        let (first, run) = match keymap::begins_run(app, event) {
            Some(begun) if self.held.is_none() => begun,
            _ => return keymap::map(app, event),
        };
        let mut text = String::from(first);
        while text.len() < self.run_bytes
            && let Ok(next) = self.events.try_recv()
        {
            match next.as_ref().map(keymap::plain) {
                Ok(Plain::Char(c)) => text.push(c),
                Ok(Plain::Release) => {}
                _ => {
                    self.held = Some(next);
                    break;
                }
            }
        }
        if text.len() == first.len_utf8() {
            return keymap::map(app, event);
        }
        match run {
            Run::Typed => Some(Msg::Type(text)),
            Run::Pasted => keymap::map(app, &Event::Paste(text)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

    use super::super::tests::{app, open_question, sent};
    use super::super::update::update;
    use super::*;
    use crate::agent::Input as Sent;

    fn press(code: KeyCode, modifiers: KeyModifiers) -> io::Result<Event> {
        Ok(Event::Key(KeyEvent::new(code, modifiers)))
    }

    #[test]
    fn plain_keys_read_together_on_typed_text_are_one_insertion_and_the_key_after_them_follows() {
        let (sender, events) = mpsc::channel(QUEUE);
        let mut input = Input::with(events);
        let mut app = app();
        let plain = |c| press(KeyCode::Char(c), KeyModifiers::NONE);
        sender.try_send(plain('x')).unwrap();
        for c in "yZ é字?".chars() {
            let mods = if c.is_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            sender.try_send(press(KeyCode::Char(c), mods)).unwrap();
            // A terminal that reports releases: they type nothing.
            let mut release = KeyEvent::new(KeyCode::Char(c), mods);
            release.kind = KeyEventKind::Release;
            sender.try_send(Ok(Event::Key(release))).unwrap();
        }
        sender
            .try_send(press(KeyCode::Enter, KeyModifiers::NONE))
            .unwrap();
        sender.try_send(plain('?')).unwrap();
        let mut intents = Vec::new();
        let mut actions = Vec::new();
        while let Some(Some(event)) = input.ready() {
            let event = event.unwrap();
            let Some(msg) = input.intent(&app, &event) else {
                continue;
            };
            intents.push(format!("{msg:?}"));
            actions.extend(update(&mut app, msg));
        }
        // The first key, on an empty input, is a key of its own; the rest
        // of the run is one insertion; Enter sends all of it; `?` on the
        // emptied input opens help, as it does typed alone.
        assert_eq!(intents.len(), 4, "{intents:#?}");
        assert!(intents[0].starts_with("Edit("), "{intents:#?}");
        assert_eq!(intents[1], "Type(\"yZ é字?\")");
        assert_eq!(intents[2], "Submit");
        assert_eq!(intents[3], "OpenHelp");
        assert_eq!(sent(&actions), vec![Sent::Prompt("xyZ é字?".into())]);
    }

    #[test]
    fn a_long_run_is_taken_in_bounded_pieces_and_nothing_is_lost() {
        let (sender, events) = mpsc::channel(QUEUE);
        let mut input = Input::with(events);
        input.run_bytes = 40;
        let mut app = app();
        app.set_input(">");
        let text: String = "abcdefghij字".repeat(20);
        for c in text.chars() {
            sender
                .try_send(press(KeyCode::Char(c), KeyModifiers::NONE))
                .unwrap();
        }
        drop(sender);
        let mut runs = Vec::new();
        while let Some(Some(event)) = input.ready() {
            match input.intent(&app, &event.unwrap()) {
                Some(Msg::Type(run)) => runs.push(run),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(runs.concat(), text);
        // Each piece stops at the first character that reaches the bound.
        assert!(
            runs.iter().all(|run| run.len() < 40 + '字'.len_utf8()),
            "{runs:?}"
        );
        assert!(runs.len() >= text.len() / 42, "{runs:?}");
    }

    /// A terminal without bracketed paste sends a paste as keys: pasted
    /// over an armed question, "typed" held a `y` that allowed the call.
    #[test]
    fn keys_read_together_over_an_armed_question_are_a_paste_and_answer_nothing() {
        let (sender, events) = mpsc::channel(QUEUE);
        let mut input = Input::with(events);
        let mut app = app();
        let mut answers = open_question(&mut app);
        assert!(app.question_armed());
        for c in "typed yes".chars() {
            sender
                .try_send(press(KeyCode::Char(c), KeyModifiers::NONE))
                .unwrap();
        }
        while let Some(Some(event)) = input.ready() {
            if let Some(msg) = input.intent(&app, &event.unwrap()) {
                assert!(!matches!(msg, Msg::Answer(_)), "{msg:?}");
                update(&mut app, msg);
            }
        }
        assert!(answers.try_recv().is_err(), "the question was answered");
        // A key pressed alone still answers.
        let y = press(KeyCode::Char('y'), KeyModifiers::NONE).unwrap();
        let msg = input.intent(&app, &y).unwrap();
        assert!(matches!(msg, Msg::Answer(_)), "{msg:?}");
    }

    #[test]
    fn a_key_alone_on_typed_text_stays_a_key() {
        let (sender, events) = mpsc::channel(QUEUE);
        let mut input = Input::with(events);
        let mut app = app();
        app.set_input("draft");
        let event = press(KeyCode::Char('s'), KeyModifiers::NONE).unwrap();
        assert!(matches!(input.intent(&app, &event), Some(Msg::Edit(_))));
        // A run ended by the terminal going away hands that on after it.
        sender
            .try_send(press(KeyCode::Char('t'), KeyModifiers::NONE))
            .unwrap();
        drop(sender);
        assert!(matches!(input.intent(&app, &event), Some(Msg::Type(t)) if t == "st"));
        assert!(matches!(input.ready(), Some(None)));
    }
}
