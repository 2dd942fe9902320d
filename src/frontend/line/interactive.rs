//! `mino --line`: an interactive session on plain lines, its `[y/N]`
//! questions with the four answers, and the answer lines' parsing. It
//! reads and prints; it never decides.

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal};

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::agent::commands::{self, Command};
use crate::agent::{AgentEvent, AgentHandle, ConsentReply, Input};
use crate::policy::{ConsentAnswer, Mode};

use super::super::{finish_agent, next_signal, text};
use super::OutputFormat;
use super::sink::Sink;

/// What the next typed line answers.
enum Pending {
    Nothing,
    Consent(crate::agent::ConsentRequest),
    Mode(Mode),
    Rule,
}

/// Reads stdin lines on a thread of its own (stdin is blocking).
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            match line {
                Ok(line) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    });
    rx
}

/// `Approve this operation? [y/N]` and the other answers the question
/// offers, by their letters.
fn approve_line(request: &crate::agent::ConsentRequest) -> String {
    let tool = request.tool.as_str();
    let mut others: Vec<String> = request
        .offer
        .answers
        .iter()
        .filter(|a| {
            matches!(
                a,
                ConsentAnswer::AllowForSession | ConsentAnswer::NeverThisRun
            )
        })
        .map(|a| match a {
            ConsentAnswer::NeverThisRun => format!("{}: never", a.key()),
            _ => format!("{}: {}", a.key(), request.offer.label(*a, tool)),
        })
        .collect();
    others.push("n NOTE: reject and tell the model NOTE".into());
    format!("Approve this operation? [y/N]  ({})\n", others.join(", "))
}

/// Parses an answer to a question: y, a, n (and Enter), v.
/// An answer line: `n NOTE` (or `no NOTE`) rejects and tells the model
/// NOTE; anything else is read by `parse_answer`.
pub fn parse_reply(line: &str) -> ConsentReply {
    let trimmed = line.trim();
    let (word, rest) = trimmed
        .split_once(char::is_whitespace)
        .unwrap_or((trimmed, ""));
    if matches!(word.to_ascii_lowercase().as_str(), "n" | "no") && !rest.trim().is_empty() {
        return ConsentReply::reject_with(rest);
    }
    parse_answer(line).into()
}

pub fn parse_answer(line: &str) -> ConsentAnswer {
    let line = line.trim().to_ascii_lowercase();
    let mut chars = line.chars();
    let key = match (chars.next(), chars.next()) {
        (Some(key), None) => ConsentAnswer::from_key(key),
        _ => None,
    };
    match (key, line.as_str()) {
        (Some(answer), _) => answer,
        (None, "yes") => ConsentAnswer::AllowOnce,
        (None, "always") => ConsentAnswer::AllowForSession,
        (None, "never") => ConsentAnswer::NeverThisRun,
        _ => ConsentAnswer::Reject,
    }
}

/// `mino --line`: an interactive session on plain lines.
pub async fn run_interactive(mut handle: AgentHandle) -> i32 {
    let mut saved = None;
    let code = interactive(&mut handle, &mut saved).await;
    if let Some(id) = saved {
        eprintln!("mino: session {id} is saved. To continue it: mino --resume {id}");
    }
    finish_agent(handle, code).await
}

/// The line mode's state: the lines read and not yet handled, the
/// question they may answer, and the inputs the agent has not finished.
///
/// Lines are handled strictly in order, one input at a time: a line read
/// while the agent works waits in `queue` until the agent says `Idle`, so
/// piped input (`printf '/help\nfix it\n' | mino --line`) is read whole
/// and end of input ends mino only after the last input is done.
struct Lines {
    queue: VecDeque<String>,
    /// Lines before this index were read before the question now
    /// pending was shown: typed at a terminal, they never answer it (they
    /// wait for the next prompt). Piped input answers in order.
    answerable_from: usize,
    pending: Pending,
    /// Inputs sent to the agent whose `Idle` has not come.
    outstanding: usize,
    eof: bool,
    /// Stdin is not a terminal: its lines are a script, answers included.
    scripted: bool,
    /// The start's banner is shown: `You> ` may be said.
    started: bool,
    /// `You> ` is shown for the input now awaited.
    prompted: bool,
}

impl Lines {
    /// A question was shown: from here on, lines answer it.
    fn ask(&mut self, pending: Pending) {
        self.pending = pending;
        self.answerable_from = if self.scripted { 0 } else { self.queue.len() };
    }

    /// The line that answers the pending question, if one was read.
    fn answer_line(&mut self) -> Option<String> {
        if matches!(self.pending, Pending::Nothing) {
            return None;
        }
        self.queue.remove(self.answerable_from)
    }
}

/// The line mode's loop. `saved` holds the session in use once it has a
/// file (a prompt, or a resumed history), for the line said on leaving.
async fn interactive(handle: &mut AgentHandle, saved: &mut Option<String>) -> i32 {
    let mut session = String::new();
    let mut sigint = signal(SignalKind::interrupt()).ok();
    let mut sink = Sink::new(OutputFormat::Text, true);
    let mut lines = stdin_lines();
    let mut state = Lines {
        queue: VecDeque::new(),
        answerable_from: 0,
        pending: Pending::Nothing,
        outstanding: 0,
        eof: false,
        scripted: !std::io::stdin().is_terminal(),
        started: false,
        prompted: false,
    };
    let mut reader_gone = std::pin::pin!(super::pipe::reader_gone());
    loop {
        if sink.reader_gone() {
            return super::gone(handle);
        }
        // In this order: what the agent already said (the banner and the
        // notices after it) is printed before the end of the input can end
        // the line mode, and an interrupt is never starved by a stream.
        tokio::select! {
            biased;
            () = &mut reader_gone => return super::gone(handle),
            _ = next_signal(&mut sigint) => {
                if state.outstanding > 0 {
                    handle.interrupter.interrupt();
                } else {
                    return 0;
                }
            }
            event = handle.events.recv() => {
                let Some(event) = event else { return 0 };
                match &event {
                    AgentEvent::Session { id, .. } if *id != session => {
                        session.clone_from(id);
                        *saved = None;
                    }
                    AgentEvent::Prompt(_) | AgentEvent::History(_) => {
                        *saved = Some(session.clone());
                    }
                    _ => {}
                }
                match event {
                    AgentEvent::Consent(request) => {
                        sink.out(&text::question(request.tool.as_str(), &request.fields));
                        sink.out(&approve_line(&request));
                        state.ask(Pending::Consent(request));
                    }
                    AgentEvent::ConfirmMode { to, warning, .. } => {
                        sink.out(&format!("{warning}\nSwitch to this mode? [y/N]\n"));
                        state.ask(Pending::Mode(to));
                    }
                    AgentEvent::ConfirmRule { toml, ask, .. } => {
                        sink.out(&format!("{toml}\n{ask}\n"));
                        state.ask(Pending::Rule);
                    }
                    AgentEvent::Quit => return 0,
                    AgentEvent::Idle => {
                        state.outstanding = state.outstanding.saturating_sub(1);
                    }
                    AgentEvent::Session { id, mode, model, context_window, window_source, profile } => {
                        sink.event(AgentEvent::Session { id, mode, model, context_window, window_source, profile });
                        state.started = true;
                    }
                    other => {
                        sink.event(other);
                    }
                }
            }
            line = lines.recv(), if !state.eof => match line {
                Some(line) => state.queue.push_back(line),
                None => state.eof = true,
            },
        }
        if let Some(code) = advance(handle, &mut sink, &mut state) {
            return code;
        }
    }
}

/// Answers the pending question from the lines read, then hands the next
/// line to the agent once it is idle. `Some(code)` ends the line mode.
fn advance(handle: &AgentHandle, sink: &mut Sink, state: &mut Lines) -> Option<i32> {
    loop {
        if let Some(line) = state.answer_line() {
            match std::mem::replace(&mut state.pending, Pending::Nothing) {
                Pending::Consent(request) => {
                    let _ = request.reply.send(parse_reply(&line));
                }
                Pending::Mode(to) => {
                    let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
                    send(handle, state, Input::ConfirmMode { to, yes });
                }
                Pending::Rule => {
                    let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
                    send(handle, state, Input::ConfirmRule { yes });
                }
                Pending::Nothing => {}
            }
            continue;
        }
        if !matches!(state.pending, Pending::Nothing) {
            if !state.eof {
                return None;
            }
            // End of input: what waits is answered "no".
            match std::mem::replace(&mut state.pending, Pending::Nothing) {
                Pending::Consent(request) => {
                    let _ = request.reply.send(ConsentAnswer::Reject.into());
                }
                Pending::Mode(to) => {
                    send(handle, state, Input::ConfirmMode { to, yes: false });
                }
                Pending::Rule => {
                    send(handle, state, Input::ConfirmRule { yes: false });
                }
                Pending::Nothing => {}
            }
            continue;
        }
        if state.outstanding > 0 {
            return None;
        }
        let Some(line) = state.queue.pop_front() else {
            if state.eof {
                return Some(0);
            }
            if state.started && !state.prompted {
                sink.out("You> ");
                state.prompted = true;
            }
            return None;
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let input = if commands::is_command(trimmed) {
            match commands::parse(trimmed) {
                Ok(Command::Quit) => return Some(0),
                Ok(command) => Input::Command(command),
                Err(e) => {
                    sink.out(&format!("{e}\n"));
                    continue;
                }
            }
        } else {
            Input::Prompt(trimmed.to_string())
        };
        if !send(handle, state, input) {
            return Some(0);
        }
        return None;
    }
}

/// Hands `input` to the agent, which says `Idle` when it is done with it.
fn send(handle: &AgentHandle, state: &mut Lines, input: Input) -> bool {
    state.prompted = false;
    let sent = handle.inputs.send(input).is_ok();
    if sent {
        state.outstanding += 1;
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(scripted: bool, queued: &[&str]) -> Lines {
        Lines {
            queue: queued.iter().map(|l| l.to_string()).collect(),
            answerable_from: 0,
            pending: Pending::Nothing,
            outstanding: 1,
            eof: false,
            scripted,
            started: true,
            prompted: false,
        }
    }

    #[test]
    fn a_line_typed_before_a_question_never_answers_it() {
        let mut typed = lines(false, &["y"]);
        assert_eq!(typed.answer_line(), None, "no question yet");
        typed.ask(Pending::Mode(Mode::Bypass));
        assert_eq!(typed.answer_line(), None);
        typed.queue.push_back("n".into());
        assert_eq!(typed.answer_line().as_deref(), Some("n"));
        assert_eq!(typed.queue, ["y"], "kept for the next prompt");
    }

    #[test]
    fn piped_lines_answer_in_order() {
        let mut piped = lines(true, &["y", "next prompt"]);
        piped.ask(Pending::Mode(Mode::Bypass));
        assert_eq!(piped.answer_line().as_deref(), Some("y"));
        assert_eq!(piped.queue, ["next prompt"]);
    }

    #[test]
    fn an_answer_line_may_carry_a_rejection_note() {
        assert_eq!(
            parse_reply("n use rg instead"),
            ConsentReply::reject_with("use rg instead")
        );
        assert_eq!(
            parse_reply("No  not now "),
            ConsentReply::reject_with("not now")
        );
        for (line, answer) in [
            ("n", ConsentAnswer::Reject),
            ("y", ConsentAnswer::AllowOnce),
            ("yes", ConsentAnswer::AllowOnce),
            ("a", ConsentAnswer::AllowForSession),
            ("never", ConsentAnswer::NeverThisRun),
            ("y please", ConsentAnswer::Reject),
            ("", ConsentAnswer::Reject),
        ] {
            assert_eq!(parse_reply(line), answer.into(), "{line:?}");
        }
    }
}
