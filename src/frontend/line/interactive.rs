//! `mino --line`: an interactive session on plain lines, its `[y/N]`
//! questions with the four answers, and the answer lines' parsing. It
//! reads and prints; it never decides.

use std::io::BufRead;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::agent::asked::AskedEvent;
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

/// The line mode's loop. `saved` holds the session in use once it has a
/// file (a prompt, or a resumed history), for the line said on leaving.
async fn interactive(handle: &mut AgentHandle, saved: &mut Option<String>) -> i32 {
    let mut session = String::new();
    let mut sigint = signal(SignalKind::interrupt()).ok();
    let mut sink = Sink::new(OutputFormat::Text, true);
    let mut lines = stdin_lines();
    let mut pending = Pending::Nothing;
    let mut busy = false;
    let mut reader_gone = std::pin::pin!(super::pipe::reader_gone());
    loop {
        if sink.reader_gone() {
            return super::gone(handle);
        }
        tokio::select! {
            () = &mut reader_gone => return super::gone(handle),
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
                        sink.out(&format!(
                            "Approve this operation? [y/N]  (a: allow {} for this session, v: never, n NOTE: reject and tell the model NOTE)\n",
                            request.tool
                        ));
                        pending = Pending::Consent(request);
                    }
                    AgentEvent::ConfirmMode { to, warning, .. } => {
                        sink.out(&format!("{warning}\nSwitch to this mode? [y/N]\n"));
                        pending = Pending::Mode(to);
                    }
                    AgentEvent::Quit => return 0,
                    AgentEvent::Session { id, mode, model, context_window } => {
                        sink.event(AgentEvent::Session { id, mode, model, context_window });
                        if !busy {
                            sink.out("You> ");
                        }
                    }
                    AgentEvent::Asked { agent, event } => {
                        // An asked agent's turn can be interrupted like a turn.
                        let (started, ended) = (
                            matches!(event, AskedEvent::Started { .. }),
                            matches!(event, AskedEvent::Ended { .. }),
                        );
                        busy |= started;
                        sink.event(AgentEvent::Asked { agent, event });
                        if ended {
                            busy = false;
                            sink.out("You> ");
                        }
                    }
                    other => {
                        if sink.event(other).is_some() {
                            busy = false;
                            sink.out("You> ");
                        }
                    }
                }
            }
            line = lines.recv() => {
                let Some(line) = line else {
                    // End of input: answer what waits with "no" and leave.
                    if let Pending::Consent(request) = std::mem::replace(&mut pending, Pending::Nothing) {
                        let _ = request.reply.send(ConsentAnswer::Reject.into());
                    }
                    if !busy {
                        return 0;
                    }
                    continue;
                };
                match std::mem::replace(&mut pending, Pending::Nothing) {
                    Pending::Consent(request) => {
                        let _ = request.reply.send(parse_reply(&line));
                    }
                    Pending::Mode(to) => {
                        let yes = matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes");
                        let _ = handle.inputs.send(Input::ConfirmMode { to, yes });
                    }
                    Pending::Nothing => {
                        let trimmed = line.trim();
                        if trimmed.is_empty() {
                            continue;
                        }
                        if commands::is_command(trimmed) {
                            match commands::parse(trimmed) {
                                Ok(Command::Quit) => return 0,
                                Ok(command) => {
                                    if busy {
                                        sink.out("The command runs when the turn ends.\n");
                                    }
                                    let _ = handle.inputs.send(Input::Command(command));
                                }
                                Err(e) => sink.out(&format!("{e}\n")),
                            }
                        } else {
                            busy = true;
                            let _ = handle.inputs.send(Input::Prompt(trimmed.to_string()));
                        }
                    }
                }
            }
            _ = next_signal(&mut sigint) => {
                if busy {
                    handle.interrupter.interrupt();
                } else {
                    return 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
