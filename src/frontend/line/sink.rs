//! How the line front end prints what the agent says, in each output
//! format: text (the answer on stdout, the rest on stderr in `-p`; all on
//! stdout interactively), `json` collected into one object, `stream-json`
//! one record a line. It prints; it never reads input or decides.

use std::io::Write;

use serde_json::Value;

use crate::agent::asked::AskedEvent;
use crate::agent::{AgentEvent, TurnStop};
use crate::model::ResultStatus;
use crate::policy::{ConsentAnswer, DenyCode};

use super::super::stream_json::StreamRecord;
use super::super::text;
use super::OutputFormat;

/// Where text goes: the answer to stdout, everything about calls to stderr
/// in `-p` text mode; all to stdout interactively.
pub(super) struct Sink {
    format: OutputFormat,
    interactive: bool,
    /// The assistant text of the current response.
    answer: String,
    /// Everything said in `json` format, returned as one object at the end.
    pub(super) collected: Vec<Value>,
    said_nobody_can_ask: bool,
    /// The last response's text that was not empty: the turn's answer.
    pub(super) final_answer: String,
    /// Tool results seen, and how many of them were rejected or denied.
    pub(super) results: u32,
    pub(super) refused: u32,
    /// A write to stdout found its reader gone (`pipe::is_gone`).
    gone: std::cell::Cell<bool>,
}

impl Sink {
    pub(super) fn new(format: OutputFormat, interactive: bool) -> Self {
        Self {
            format,
            interactive,
            answer: String::new(),
            collected: Vec::new(),
            said_nobody_can_ask: false,
            final_answer: String::new(),
            results: 0,
            refused: 0,
            gone: std::cell::Cell::new(false),
        }
    }

    /// Writes `text` to stdout. Once the reader is gone nothing more is
    /// written and `reader_gone` says so (the front end ends the turn);
    /// another failure is said once on stderr.
    pub(super) fn out(&self, text: &str) {
        if self.gone.get() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let written = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
        if let Err(e) = written {
            self.gone.set(true);
            if !super::pipe::is_gone(&e) {
                eprintln!("mino: the output could not be written: {e}");
            }
        }
    }

    /// Whether stdout can no longer be written.
    pub(super) fn reader_gone(&self) -> bool {
        self.gone.get()
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
    pub(super) fn event(&mut self, event: AgentEvent) -> Option<TurnStop> {
        let text_mode = self.format == OutputFormat::Text;
        match event {
            AgentEvent::Session {
                id,
                mode,
                model,
                context_window,
                window_source,
                profile,
            } => {
                if text_mode {
                    self.info(&format!(
                        "{}\n",
                        text::banner(
                            &id,
                            mode,
                            &model,
                            context_window,
                            window_source.as_deref(),
                            profile
                        )
                    ));
                }
                self.json(StreamRecord::Session {
                    session_id: &id,
                    mode: mode.name(),
                    model: &model,
                    profile: profile.banner_line().map(|_| profile.profile.name()),
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
            AgentEvent::Spent { .. } => {}
            AgentEvent::Models { current, entries } => {
                let text = crate::frontend::text::models(&current, &entries);
                if text_mode {
                    self.info(&format!("{text}\n"));
                }
                self.json(StreamRecord::Notice {
                    kind: "info",
                    message: &text,
                });
            }
            AgentEvent::SessionDiff { changes, diffs } => {
                let text = crate::frontend::text::session_diff(&changes, &diffs);
                if text_mode {
                    self.info(&text);
                }
                self.json(StreamRecord::Notice {
                    kind: "info",
                    message: &text,
                });
            }
            AgentEvent::Retrying { delay, reason } => {
                let secs = delay.as_millis().div_ceil(1000);
                eprintln!("mino: retrying in {secs} s ({reason})");
            }
            AgentEvent::Warning(line) => {
                eprintln!("mino: warning: {line}");
                self.json(StreamRecord::Notice {
                    kind: "warning",
                    message: &line,
                });
            }
            AgentEvent::TurnNotice { kind, message } => {
                if kind == crate::agent::NoticeKind::Reminder {
                    // The call written as text was not an answer.
                    self.final_answer.clear();
                }
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
                if !answer.trim().is_empty() {
                    self.final_answer = answer;
                }
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
                if view.code == Some(DenyCode::NobodyToAsk.as_str()) && !self.said_nobody_can_ask {
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
                let lines = text::record_lines(&tool, &shown, &fields);
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
            // Line mode and -p show a call's output once, with its result.
            AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::FileChanged { .. } => {}
            AgentEvent::BashChanged { tool, changes, .. } => {
                let line = format!(
                    "Changed by {tool}: {}\n",
                    crate::checkpoint::changes::line(&changes)
                );
                if text_mode {
                    self.info(&crate::controls::visible(&line));
                } else {
                    eprint!("{}", crate::controls::visible(&line));
                }
            }
            AgentEvent::ToolResult {
                call_id,
                tool,
                status,
                output,
            } => {
                self.results += 1;
                if matches!(status, ResultStatus::Rejected | ResultStatus::Denied) {
                    self.refused += 1;
                }
                if text_mode {
                    // Interactive lines follow the call they answer; `-p`'s
                    // stderr may not, so there the tool is named.
                    let named = (!self.interactive).then_some(tool.as_str());
                    self.info(&text::result(
                        status,
                        named,
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
                if matches!(stop, TurnStop::TextCallRepeated(_)) {
                    self.final_answer.clear();
                }
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
            // The text says a change with the call's result.
            AgentEvent::Plan(plan) => self.json(StreamRecord::Plan { steps: &plan.steps }),
            AgentEvent::ModeChanged(_)
            | AgentEvent::Quit
            | AgentEvent::Idle
            | AgentEvent::Cleared => {}
            AgentEvent::ConfirmMode { .. } | AgentEvent::ConfirmRule { .. } => {}
            AgentEvent::McpStatus(_) => {}
            AgentEvent::ServerQuestion(question) => {
                // Only the full screen answers a server's question.
                eprintln!(
                    "mino: the MCP server {} asked a question; declined (only the full screen answers a server's questions)",
                    question.server
                );
                let _ = question
                    .reply
                    .send(crate::mcp::question::QuestionAnswer::Decline);
            }
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
            AgentEvent::RewindPrompts(prompts) => {
                self.info(&format!(
                    "{}\n",
                    crate::frontend::rewind_words::prompts_text(&prompts)
                ));
            }
            AgentEvent::RewindOffer(offer) => {
                self.info(&format!(
                    "{}\nThe full screen (or mino rewind --session ID --to N) does it.\n",
                    crate::frontend::rewind_words::offer_text(&offer)
                ));
            }
            AgentEvent::Rewound { line, .. } => self.info(&format!("{line}\n")),
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
