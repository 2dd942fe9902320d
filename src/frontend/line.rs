//! The line front end: `mino -p PROMPT` (one turn, nobody to ask) and
//! `mino --line` (interactive, `[y/N]` questions with the four answers).
//! Output formats `text`, `json` and `stream-json`. It draws and reads; it
//! never decides.

use std::io::{BufRead, Write};

use serde_json::Value;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::agent::asked::AskedEvent;
use crate::agent::commands::{self, Command};
use crate::agent::{AgentEvent, AgentHandle, ConsentReply, Input, TurnStop};
use crate::policy::{ConsentAnswer, Mode};

use super::stream_json::StreamRecord;
use super::{finish_agent, next_signal, text};

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// Where text goes: the answer to stdout, everything about calls to stderr
/// in `-p` text mode; all to stdout interactively.
struct Sink {
    format: OutputFormat,
    interactive: bool,
    /// The assistant text of the current response.
    answer: String,
    /// Everything said in `json` format, returned as one object at the end.
    collected: Vec<Value>,
    said_nobody_can_ask: bool,
}

impl Sink {
    fn new(format: OutputFormat, interactive: bool) -> Self {
        Self {
            format,
            interactive,
            answer: String::new(),
            collected: Vec::new(),
            said_nobody_can_ask: false,
        }
    }

    fn out(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    fn info(&self, text: &str) {
        if self.interactive {
            self.out(text);
        } else {
            eprint!("{text}");
        }
    }

    fn json(&mut self, record: StreamRecord<'_>) {
        match self.format {
            OutputFormat::StreamJson => self.out(&format!("{}\n", record.to_value())),
            OutputFormat::Json => self.collected.push(record.to_value()),
            OutputFormat::Text => {}
        }
    }

    /// An asked agent's turn: its calls as `NAME: ...` lines, its answer
    /// as `NAME> ...` (interactive) or alone on stdout (`--ask`).
    fn asked(&mut self, agent: &str, event: AskedEvent) {
        let text_mode = self.format == OutputFormat::Text;
        let said = |sink: &Self, text: &str| {
            if text_mode {
                let lines: String = text
                    .lines()
                    .map(|l| format!("{agent}: {}\n", crate::controls::visible(l)))
                    .collect();
                sink.info(&lines);
            }
        };
        match event {
            AskedEvent::Started { question } => {
                said(self, &format!("[Asked {agent}] {question}"));
                self.json(StreamRecord::AskedStarted {
                    agent,
                    question: &question,
                });
            }
            AskedEvent::Text(_) => {}
            AskedEvent::ToolCall { call_id, title } => {
                said(self, &format!("[Tool call: {title}]"));
                self.json(StreamRecord::AskedToolCall {
                    agent,
                    call_id: &call_id,
                    title: &title,
                });
            }
            AskedEvent::ToolUpdate {
                call_id,
                status,
                text,
            } => {
                if let Some(status @ ("completed" | "failed")) = status {
                    said(self, &format!("[Tool result: {status}]"));
                }
                let short: Vec<&str> = text.lines().take(4).collect();
                said(self, &short.join("\n"));
                self.json(StreamRecord::AskedToolUpdate {
                    agent,
                    call_id: &call_id,
                    status,
                    text: &text,
                });
            }
            AskedEvent::Ended { answer, stop } => {
                if text_mode {
                    let answer = crate::controls::visible(&answer);
                    if self.interactive {
                        self.out(&format!("{agent}> {answer}\n"));
                    } else {
                        self.out(&format!("{answer}\n"));
                    }
                }
                self.json(StreamRecord::AskedAnswer {
                    agent,
                    text: &answer,
                    stop: &stop,
                });
            }
        }
    }

    /// Handles one event; returns the turn's end when it ends.
    fn event(&mut self, event: AgentEvent) -> Option<TurnStop> {
        let text_mode = self.format == OutputFormat::Text;
        match event {
            AgentEvent::Session {
                id,
                mode,
                model,
                context_window,
            } => {
                if text_mode {
                    self.info(&format!("{}\n", text::banner(&id, mode, context_window)));
                }
                self.json(StreamRecord::Session {
                    session_id: &id,
                    mode: mode.name(),
                    model: &model,
                });
            }
            AgentEvent::Notice(line) => {
                if text_mode {
                    self.info(&format!("{line}\n"));
                }
                self.json(StreamRecord::Notice {
                    kind: "info",
                    message: &line,
                });
            }
            AgentEvent::Warning(line) => {
                eprintln!("mino: warning: {line}");
                self.json(StreamRecord::Notice {
                    kind: "warning",
                    message: &line,
                });
            }
            AgentEvent::TurnNotice { kind, message } => {
                if text_mode {
                    if self.interactive {
                        self.out(&format!("{}\n", crate::controls::visible(&message)));
                    } else {
                        eprintln!("mino: {}", crate::controls::visible(&message));
                    }
                }
                self.json(StreamRecord::Notice {
                    kind: kind.as_str(),
                    message: &message,
                });
            }
            AgentEvent::Error(message) => {
                if text_mode {
                    eprintln!("mino: {message}");
                }
                self.json(StreamRecord::Error { message: &message });
            }
            AgentEvent::Prompt(_) => {}
            AgentEvent::History(items) => {
                if text_mode {
                    self.info(&text::history(&items, 40));
                }
            }
            AgentEvent::AssistantDelta(delta) => {
                if text_mode {
                    if self.answer.is_empty() && self.interactive {
                        self.out("Assistant> ");
                    }
                    self.out(&crate::controls::visible(&delta));
                }
                self.answer.push_str(&delta);
            }
            AgentEvent::AssistantDone => {
                if text_mode && !self.answer.ends_with('\n') {
                    self.out("\n");
                }
                let answer = std::mem::take(&mut self.answer);
                self.json(StreamRecord::Assistant { text: &answer });
            }
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
            } => {
                let args: Value =
                    serde_json::from_str(&arguments).unwrap_or(Value::String(arguments));
                self.json(StreamRecord::ToolCall {
                    call_id: &call_id,
                    tool: &tool,
                    arguments: args,
                });
            }
            AgentEvent::Decision {
                call_id,
                tool,
                view,
            } => {
                if view.code == Some("MINO_DENY_NOBODY_TO_ASK") && !self.said_nobody_can_ask {
                    self.said_nobody_can_ask = true;
                    eprintln!(
                        "mino: calls that need your confirmation are rejected here, because nobody can answer (-p, --ask, or input that is not a terminal)."
                    );
                }
                self.json(StreamRecord::Decision {
                    call_id: &call_id,
                    tool: &tool,
                    view: &view,
                });
            }
            AgentEvent::Record {
                tool,
                shown,
                fields,
                ..
            } => {
                let lines = text::record_lines(&tool, shown, &fields);
                if !lines.is_empty() {
                    let block = lines.join("\n") + "\n";
                    if text_mode {
                        self.info(&crate::controls::visible(&block));
                    } else {
                        eprint!("{}", crate::controls::visible(&block));
                    }
                }
            }
            AgentEvent::Consent(request) => {
                // Only an interactive line front end is ever asked; it
                // answers in `interactive`, never here.
                let _ = request.reply.send(ConsentAnswer::Reject.into());
            }
            AgentEvent::Answered { line, .. } => {
                if text_mode {
                    self.info(&format!("{line}\n"));
                }
            }
            AgentEvent::ToolRunning { .. } | AgentEvent::FileChanged { .. } => {}
            AgentEvent::ToolResult {
                call_id,
                status,
                output,
                ..
            } => {
                if text_mode {
                    self.info(&text::result(
                        status,
                        &output,
                        if self.interactive { 12 } else { 4 },
                    ));
                }
                self.json(StreamRecord::ToolResult {
                    call_id: &call_id,
                    status: status.as_str(),
                    output: &output,
                });
            }
            AgentEvent::TurnEnd {
                requests,
                tool_calls,
                stop,
            } => {
                self.json(StreamRecord::TurnEnd {
                    requests,
                    tool_calls,
                    stop: stop.as_str(),
                });
                return Some(stop);
            }
            AgentEvent::Asked { agent, event } => self.asked(&agent, event),
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
                context_window,
                finish_reason,
            } => {
                self.json(StreamRecord::Usage {
                    prompt_tokens: input_tokens,
                    completion_tokens: output_tokens,
                    context_window,
                    finish_reason: finish_reason.as_deref(),
                });
            }
            AgentEvent::ModeChanged(_) | AgentEvent::Quit => {}
            AgentEvent::ConfirmMode { .. } => {}
            AgentEvent::McpStatus(_) => {}
            AgentEvent::McpServers(list) => {
                if text_mode {
                    self.info(&format!("{}\n", text::mcp_servers(&list)));
                }
            }
            AgentEvent::Permissions { grants, listed } => {
                if listed && text_mode {
                    self.info(&format!("{}\n", text::permissions(&grants)));
                }
            }
            AgentEvent::Sessions { list, all } => {
                self.info(&format!("{}\n", text::sessions(&list, all)));
            }
            AgentEvent::OtherProject { id, project, here } => {
                self.info(&format!("{}\n", text::other_project(&id, &project, &here)));
            }
        }
        None
    }
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
    let mut stop = None;
    loop {
        tokio::select! {
            event = handle.events.recv() => match event {
                Some(event) => {
                    if let Some(end) = sink.event(event) {
                        stop = Some(end);
                        break;
                    }
                }
                None => break,
            },
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
                events: &sink.collected,
            }
            .to_value()
        ));
    }
    match stop {
        Some(TurnStop::Completed) => 0,
        _ => 1,
    }
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
    loop {
        tokio::select! {
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
    loop {
        tokio::select! {
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
