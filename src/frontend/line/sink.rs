//! How the line front end prints what the agent says: what every output
//! format shares (stdout and its reader going away, the counts `-p`'s exit
//! status reads, the turn's answer, the lines always on stderr, refusing a
//! question nobody can answer here), and one renderer per format: text
//! (`human.rs`) or records (`records.rs`, `json` and `stream-json`). It
//! prints; it never reads input or decides.

use std::io::Write;

use serde_json::Value;

use crate::agent::asked::AskedEvent;
use crate::agent::{AgentEvent, TurnStop};
use crate::model::ResultStatus;
use crate::policy::{ConsentAnswer, DenyCode};

use super::OutputFormat;
use super::human::Human;
use super::records::Records;

/// Stdout, and whether its reader went away; and where informational text
/// goes: stdout interactively, stderr in `-p` (stdout is the answer's).
pub(super) struct Out {
    interactive: bool,
    /// A write to stdout found its reader gone (`pipe::is_gone`).
    gone: std::cell::Cell<bool>,
}

impl Out {
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

    /// Informational text: stdout interactively, stderr otherwise.
    pub(super) fn info(&self, text: &str) {
        if self.interactive {
            self.out(text);
        } else {
            eprint!("{text}");
        }
    }

    pub(super) fn interactive(&self) -> bool {
        self.interactive
    }
}

/// One output format's rendering of the agent's events.
pub(super) trait Render {
    /// `answer`: the current response's text before a delta is added, and
    /// the whole of it at `AssistantDone`.
    fn event(&mut self, out: &Out, event: &AgentEvent, answer: &str);
    /// An asked agent's turn.
    fn asked(&mut self, out: &Out, agent: &str, event: &AskedEvent);
    /// Everything said so far, where the format collects it (`json`).
    fn collected(&self) -> &[Value] {
        &[]
    }
}

/// The line front end's output.
pub(super) struct Sink {
    out: Out,
    render: Box<dyn Render + Send>,
    /// The assistant text of the current response.
    answer: String,
    said_nobody_can_ask: bool,
    /// The last response's text that was not empty: the turn's answer.
    pub(super) final_answer: String,
    /// Tool results seen, and how many of them were rejected or denied.
    pub(super) results: u32,
    pub(super) refused: u32,
}

impl Sink {
    pub(super) fn new(format: OutputFormat, interactive: bool) -> Self {
        let render: Box<dyn Render + Send> = match format {
            OutputFormat::Text => Box::new(Human),
            OutputFormat::Json => Box::new(Records::collecting()),
            OutputFormat::StreamJson => Box::new(Records::streaming()),
        };
        Self {
            out: Out {
                interactive,
                gone: std::cell::Cell::new(false),
            },
            render,
            answer: String::new(),
            said_nobody_can_ask: false,
            final_answer: String::new(),
            results: 0,
            refused: 0,
        }
    }

    /// Writes `text` to stdout (see `Out::out`).
    pub(super) fn out(&self, text: &str) {
        self.out.out(text);
    }

    /// Whether stdout can no longer be written.
    pub(super) fn reader_gone(&self) -> bool {
        self.out.gone.get()
    }

    /// Everything said in `json` format, returned as one object at the end.
    pub(super) fn collected(&self) -> &[Value] {
        self.render.collected()
    }

    /// Handles one event; returns the turn's end when it ends.
    pub(super) fn event(&mut self, event: AgentEvent) -> Option<TurnStop> {
        match event {
            AgentEvent::Consent(request) => {
                // Only an interactive line front end is ever asked; it
                // answers in `interactive`, never here.
                let _ = request.reply.send(ConsentAnswer::Reject.into());
                None
            }
            AgentEvent::ServerQuestion(question) => {
                // Only the full screen answers a server's question.
                eprintln!(
                    "mino: the MCP server {} asked a question; declined (only the full screen answers a server's questions)",
                    question.server
                );
                let _ = question
                    .reply
                    .send(crate::mcp::question::QuestionAnswer::Decline);
                None
            }
            AgentEvent::Asked { agent, event } => {
                self.render.asked(&self.out, &agent, &event);
                None
            }
            event => {
                self.before(&event);
                self.render.event(&self.out, &event, &self.answer);
                self.after(event)
            }
        }
    }

    /// What every format does before it renders `event`.
    fn before(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Retrying { delay, reason } => {
                let secs = delay.as_millis().div_ceil(1000);
                eprintln!("mino: retrying in {secs} s ({reason})");
            }
            AgentEvent::Warning(line) => eprintln!("mino: warning: {line}"),
            // The call written as text was not an answer.
            AgentEvent::TurnNotice { kind, .. } if *kind == crate::agent::NoticeKind::Reminder => {
                self.final_answer.clear();
            }
            AgentEvent::TurnEnd {
                stop: TurnStop::TextCallRepeated(_),
                ..
            } => {
                self.final_answer.clear();
            }
            AgentEvent::Decision { view, .. }
                if view.code == Some(DenyCode::NobodyToAsk.as_str())
                    && !self.said_nobody_can_ask =>
            {
                self.said_nobody_can_ask = true;
                eprintln!(
                    "mino: calls that need your confirmation are rejected here, because nobody can answer (-p, --ask, or input that is not a terminal)."
                );
            }
            AgentEvent::ToolResult { status, .. } => {
                self.results += 1;
                if matches!(status, ResultStatus::Rejected | ResultStatus::Denied) {
                    self.refused += 1;
                }
            }
            _ => self.said_everywhere(event),
        }
    }

    /// What a command shows the same way in every format.
    fn said_everywhere(&self, event: &AgentEvent) {
        let text = match event {
            AgentEvent::RewindPrompts(prompts) => {
                format!("{}\n", crate::frontend::rewind_words::prompts_text(prompts))
            }
            AgentEvent::RewindOffer(offer) => format!(
                "{}\nThe full screen (or mino rewind --session ID --to N) does it.\n",
                crate::frontend::rewind_words::offer_text(offer)
            ),
            AgentEvent::Rewound { line, .. } => format!("{line}\n"),
            AgentEvent::Sessions { list, all } => {
                format!("{}\n", super::super::text::sessions(list, *all))
            }
            AgentEvent::OtherProject { id, project, here } => {
                format!("{}\n", super::super::text::other_project(id, project, here))
            }
            _ => return,
        };
        self.out.info(&text);
    }

    /// What every format does after it rendered `event`.
    fn after(&mut self, event: AgentEvent) -> Option<TurnStop> {
        match event {
            AgentEvent::AssistantDelta(delta) => {
                self.answer.push_str(&delta);
                None
            }
            AgentEvent::AssistantDone => {
                // Moved, never copied: an answer may be megabytes.
                let answer = std::mem::take(&mut self.answer);
                if !answer.trim().is_empty() {
                    self.final_answer = answer;
                }
                None
            }
            AgentEvent::TurnEnd { stop, .. } => Some(stop),
            _ => None,
        }
    }
}

/// An unasked call's record lines, control characters made visible; none
/// for a call shown quietly.
pub(super) fn record_block(
    tool: &str,
    shown: &crate::policy::Shown,
    fields: &[crate::tools::Field],
) -> Option<String> {
    let lines = super::super::text::record_lines(tool, shown, fields);
    (!lines.is_empty()).then(|| crate::controls::visible(&(lines.join("\n") + "\n")))
}

/// The line that names what a bash call changed.
pub(super) fn changed_line(
    tool: &str,
    changes: &[crate::checkpoint::changes::FileDelta],
) -> String {
    crate::controls::visible(&format!(
        "Changed by {tool}: {}\n",
        crate::checkpoint::changes::line(changes)
    ))
}
