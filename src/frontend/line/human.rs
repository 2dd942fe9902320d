//! The line front end's text format: the answer as it streams, the banner,
//! notices, record lines, results and command output as lines (on stdout
//! interactively; in `-p` the answer alone on stdout, the rest on
//! stderr). Control characters a model or a command sent are made visible
//! before they reach the terminal. Prints only.

use crate::agent::AgentEvent;
use crate::agent::asked::AskedEvent;
use crate::controls::visible;

use super::super::text;
use super::sink::{Out, Render, changed_line, record_block};

/// The text renderer.
pub(super) struct Human;

impl Render for Human {
    fn event(&mut self, out: &Out, event: &AgentEvent, answer: &str) {
        let info = |line: &str| out.info(&format!("{line}\n"));
        match event {
            AgentEvent::Session {
                id,
                mode,
                model,
                context_window,
                window_source,
                profile,
            } => info(&text::banner(
                id,
                *mode,
                model,
                *context_window,
                window_source.as_deref(),
                *profile,
            )),
            AgentEvent::Notice(line) => info(line),
            AgentEvent::Models { current, entries } => info(&text::models(current, entries)),
            AgentEvent::SessionDiff { changes, diffs } => {
                out.info(&text::session_diff(changes, diffs))
            }
            AgentEvent::TurnNotice { message, .. } => {
                if out.interactive() {
                    out.out(&format!("{}\n", visible(message)));
                } else {
                    eprintln!("mino: {}", visible(message));
                }
            }
            AgentEvent::Error(message) => eprintln!("mino: {message}"),
            AgentEvent::History(items) => out.info(&text::history(items, 40)),
            AgentEvent::AssistantDelta(delta) => {
                if answer.is_empty() && out.interactive() {
                    out.out("Assistant> ");
                }
                out.out(&visible(delta));
            }
            AgentEvent::AssistantDone if !answer.ends_with('\n') => out.out("\n"),
            AgentEvent::Record {
                tool,
                shown,
                fields,
                ..
            } => {
                if let Some(block) = record_block(tool, shown, fields) {
                    out.info(&block);
                }
            }
            AgentEvent::Answered { line, .. } => info(line),
            AgentEvent::BashChanged { tool, changes, .. } => out.info(&changed_line(tool, changes)),
            AgentEvent::ToolResult {
                tool,
                status,
                output,
                ..
            } => {
                // Interactive lines follow the call they answer; `-p`'s
                // stderr may not, so there the tool is named.
                let named = (!out.interactive()).then_some(tool.as_str());
                let lines = if out.interactive() { 12 } else { 4 };
                out.info(&text::result(*status, named, output, lines));
            }
            AgentEvent::McpServers(list) => info(&text::mcp_servers(list)),
            AgentEvent::Permissions { grants, listed } if *listed => {
                info(&text::permissions(grants))
            }
            _ => {}
        }
    }

    /// Its calls as `NAME: ...` lines, its answer as `NAME> ...`
    /// (interactive) or alone on stdout (`--ask`).
    fn asked(&mut self, out: &Out, agent: &str, event: &AskedEvent) {
        let said = |text: &str| {
            let lines: String = text
                .lines()
                .map(|l| format!("{agent}: {}\n", visible(l)))
                .collect();
            out.info(&lines);
        };
        match event {
            AskedEvent::Started { question } => said(&format!("[Asked {agent}] {question}")),
            AskedEvent::Text(_) => {}
            AskedEvent::ToolCall { title, .. } => said(&format!("[Tool call: {title}]")),
            AskedEvent::ToolUpdate { status, text, .. } => {
                if let Some(status @ ("completed" | "failed")) = status {
                    said(&format!("[Tool result: {status}]"));
                }
                let short: Vec<&str> = text.lines().take(4).collect();
                said(&short.join("\n"));
            }
            AskedEvent::Ended { answer, .. } => {
                let answer = visible(answer);
                if out.interactive() {
                    out.out(&format!("{agent}> {answer}\n"));
                } else {
                    out.out(&format!("{answer}\n"));
                }
            }
        }
    }
}
