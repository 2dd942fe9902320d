//! The line front end: `mino -p PROMPT` (one turn, nobody to ask),
//! `mino --ask NAME` and `mino --line` (interactive, in `interactive`).
//! Output formats `text`, `json` and `stream-json`, printed by `sink`. It
//! draws and reads; it never decides.

mod human;
mod interactive;
mod pipe;
mod records;
mod sink;

use tokio::signal::unix::{SignalKind, signal};

use crate::agent::asked::AskedEvent;
use crate::agent::commands::Command;
use crate::agent::{AgentEvent, AgentHandle, Input, TurnStop};

use super::stream_json::StreamRecord;
use super::{finish_agent, next_signal};
pub use interactive::{parse_answer, parse_reply, run_interactive};
use sink::Sink;

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// `mino -p PROMPT`: one turn, then exit. Returns the exit status.
pub async fn run_once(mut handle: AgentHandle, prompt: String, format: OutputFormat) -> i32 {
    let code = one_turn(&mut handle, prompt, format).await;
    finish_agent(handle, code).await
}

async fn one_turn(handle: &mut AgentHandle, prompt: String, format: OutputFormat) -> i32 {
    let mut sink = Sink::new(format, false);
    if handle.inputs.send(Input::Prompt(prompt)).is_err() {
        eprintln!("mino: the agent stopped before the prompt could be sent");
        return 1;
    }
    // Set up once, so no press between two passes of the loop is missed.
    let mut sigint = signal(SignalKind::interrupt()).ok();
    let mut reader_gone = std::pin::pin!(pipe::reader_gone());
    let mut stop = None;
    loop {
        tokio::select! {
            event = handle.events.recv() => match event {
                Some(event) => {
                    if let Some(end) = sink.event(event) {
                        stop = Some(end);
                        break;
                    }
                    if sink.reader_gone() {
                        return gone(handle);
                    }
                }
                None => break,
            },
            () = &mut reader_gone => return gone(handle),
            _ = next_signal(&mut sigint) => handle.interrupter.interrupt(),
        }
    }
    // Drain what the agent said before stopping (nothing else runs).
    while let Ok(event) = handle.events.try_recv() {
        sink.event(event);
    }
    if format == OutputFormat::Json {
        let stop_word = stop.as_ref().map_or("error", TurnStop::as_str);
        sink.out(&format!(
            "{}\n",
            StreamRecord::Result {
                stop: stop_word,
                text: &sink.final_answer,
                events: sink.collected(),
            }
            .to_value()
        ));
    }
    if sink.results > 0 && sink.refused == sink.results {
        eprintln!(
            "mino: every tool call of this turn was rejected or denied ({}): -p cannot answer questions; allow what the task needs with --mode (accept-edits, auto or bypass) or run mino interactively",
            super::text::plural(sink.results as usize, "call")
        );
        return 2;
    }
    match stop {
        Some(TurnStop::Completed) => 0,
        _ => 1,
    }
}

/// The reader of stdout went away: the turn ends at once (nothing more is
/// requested or run), quietly, with 141 as a pipe's writer killed by
/// SIGPIPE would.
fn gone(handle: &AgentHandle) -> i32 {
    handle.interrupter.interrupt();
    pipe::READER_GONE
}

/// `mino --ask NAME`: asks the agent NAME `question` (read from stdin),
/// prints its answer on stdout and exits. Nobody can answer questions here,
/// so the asked agent's calls that would ask are rejected (said once on
/// stderr).
pub async fn run_ask(mut handle: AgentHandle, agent: String, question: String) -> i32 {
    let code = ask_once(&mut handle, agent, question).await;
    finish_agent(handle, code).await
}

async fn ask_once(handle: &mut AgentHandle, agent: String, question: String) -> i32 {
    let mut sink = Sink::new(OutputFormat::Text, false);
    let command = Command::Ask { agent, question };
    if handle.inputs.send(Input::Command(command)).is_err() {
        eprintln!("mino: the agent stopped before the question could be sent");
        return 1;
    }
    // Set up once, so no press between two passes of the loop is missed.
    let mut sigint = signal(SignalKind::interrupt()).ok();
    let mut reader_gone = std::pin::pin!(pipe::reader_gone());
    loop {
        if sink.reader_gone() {
            return gone(handle);
        }
        tokio::select! {
            () = &mut reader_gone => return gone(handle),
            event = handle.events.recv() => match event {
                Some(AgentEvent::Asked { agent, event: AskedEvent::Ended { answer, stop } }) => {
                    let code = if stop == "end_turn" { 0 } else {
                        eprintln!("mino: {agent} ended its turn: {stop}");
                        1
                    };
                    sink.event(AgentEvent::Asked { agent, event: AskedEvent::Ended { answer, stop } });
                    return code;
                }
                Some(AgentEvent::Error(message)) => {
                    sink.event(AgentEvent::Error(message));
                    return 1;
                }
                Some(event) => {
                    sink.event(event);
                }
                None => return 1,
            },
            _ = next_signal(&mut sigint) => handle.interrupter.interrupt(),
        }
    }
}
