//! The line front end's record formats: `stream-json`, one record a line
//! on stdout as it happens, and `json`, the same records collected into
//! one object printed at the end. Record lines and bash's changes, which
//! have no record, go to stderr. Prints only.

use serde_json::Value;

use crate::agent::AgentEvent;
use crate::agent::asked::AskedEvent;

use super::super::stream_json::StreamRecord;
use super::super::text;
use super::sink::{Out, Render, changed_line, record_block};

/// The records renderer: streamed, or collected for one object.
pub(super) struct Records {
    streaming: bool,
    collected: Vec<Value>,
}

impl Records {
    pub(super) fn streaming() -> Self {
        Self {
            streaming: true,
            collected: Vec::new(),
        }
    }

    pub(super) fn collecting() -> Self {
        Self {
            streaming: false,
            collected: Vec::new(),
        }
    }

    fn record(&mut self, out: &Out, record: StreamRecord<'_>) {
        if self.streaming {
            out.out(&format!("{}\n", record.to_value()));
        } else {
            self.collected.push(record.to_value());
        }
    }
}

impl Render for Records {
    fn event(&mut self, out: &Out, event: &AgentEvent, answer: &str) {
        let record = match event {
            AgentEvent::Session {
                id,
                mode,
                model,
                profile,
                ..
            } => StreamRecord::Session {
                session_id: id,
                mode: mode.name(),
                model,
                profile: profile.banner_line().map(|_| profile.profile.name()),
            },
            AgentEvent::Notice(line) => StreamRecord::Notice {
                kind: "info",
                message: line,
            },
            AgentEvent::Models { current, entries } => {
                let text = text::models(current, entries);
                return self.record(
                    out,
                    StreamRecord::Notice {
                        kind: "info",
                        message: &text,
                    },
                );
            }
            AgentEvent::SessionDiff { changes, diffs } => {
                let text = text::session_diff(changes, diffs);
                return self.record(
                    out,
                    StreamRecord::Notice {
                        kind: "info",
                        message: &text,
                    },
                );
            }
            AgentEvent::Warning(line) => StreamRecord::Notice {
                kind: "warning",
                message: line,
            },
            AgentEvent::TurnNotice { kind, message } => StreamRecord::Notice {
                kind: kind.as_str(),
                message,
            },
            AgentEvent::Error(message) => StreamRecord::Error { message },
            AgentEvent::AssistantDone => StreamRecord::Assistant { text: answer },
            // A call a hook rewrote is sent again with what it runs with.
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
            }
            | AgentEvent::ToolCallRewritten {
                call_id,
                tool,
                arguments,
            } => StreamRecord::ToolCall {
                call_id,
                tool,
                arguments: serde_json::from_str(arguments)
                    .unwrap_or_else(|_| Value::String(arguments.clone())),
            },
            AgentEvent::Decision {
                call_id,
                tool,
                view,
            } => StreamRecord::Decision {
                call_id,
                tool,
                view,
            },
            AgentEvent::ToolResult {
                call_id,
                status,
                output,
                ..
            } => StreamRecord::ToolResult {
                call_id,
                status: status.as_str(),
                output,
            },
            AgentEvent::TurnEnd {
                requests,
                tool_calls,
                stop,
            } => StreamRecord::TurnEnd {
                requests: *requests,
                tool_calls: *tool_calls,
                stop: stop.as_str(),
            },
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
                context_window,
                finish_reason,
            } => StreamRecord::Usage {
                prompt_tokens: *input_tokens,
                completion_tokens: *output_tokens,
                context_window: *context_window,
                finish_reason: finish_reason.as_deref(),
            },
            AgentEvent::Plan(plan) => StreamRecord::Plan { steps: &plan.steps },
            AgentEvent::Record {
                tool,
                shown,
                fields,
                ..
            } => {
                if let Some(block) = record_block(tool, shown, fields) {
                    eprint!("{block}");
                }
                return;
            }
            AgentEvent::BashChanged { tool, changes, .. } => {
                eprint!("{}", changed_line(tool, changes));
                return;
            }
            _ => return,
        };
        self.record(out, record);
    }

    fn asked(&mut self, out: &Out, agent: &str, event: &AskedEvent) {
        let record = match event {
            AskedEvent::Started { question } => StreamRecord::AskedStarted { agent, question },
            AskedEvent::Text(_) => return,
            AskedEvent::ToolCall { call_id, title } => StreamRecord::AskedToolCall {
                agent,
                call_id,
                title,
            },
            AskedEvent::ToolUpdate {
                call_id,
                status,
                text,
            } => StreamRecord::AskedToolUpdate {
                agent,
                call_id,
                status: *status,
                text,
            },
            AskedEvent::Ended { answer, stop } => StreamRecord::AskedAnswer {
                agent,
                text: answer,
                stop,
            },
        };
        self.record(out, record);
    }

    fn collected(&self) -> &[Value] {
        &self.collected
    }
}
