//! The records of `--output-format stream-json` (and of `json`'s final
//! object): one tagged enum, so every record's shape is written once. The
//! decision uses the same words as `mino policy check` (`DecisionView`).
//! Only describes; never decides and never prints.

use serde::Serialize;
use serde_json::Value;

use crate::agent::DecisionView;

/// One line of `stream-json`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamRecord<'a> {
    Session {
        session_id: &'a str,
        mode: &'static str,
        model: &'a str,
        /// `[model] profile`, when the settings name one or the window
        /// chose "small"; absent for the default chosen by the window.
        #[serde(skip_serializing_if = "Option::is_none")]
        profile: Option<&'static str>,
    },
    Error {
        message: &'a str,
    },
    /// Something the user should notice: `info`, `warning`, `compaction`,
    /// `cut_off`, `budget`, ...
    Notice {
        kind: &'a str,
        message: &'a str,
    },
    /// After every model request: the service's token counts (0 when it
    /// gave none) and why the answer ended.
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
        context_window: u64,
        finish_reason: Option<&'a str>,
    },
    Assistant {
        text: &'a str,
    },
    ToolCall {
        call_id: &'a str,
        tool: &'a str,
        /// The arguments as JSON, or as the text the model sent when that
        /// is not JSON.
        arguments: Value,
    },
    Decision {
        call_id: &'a str,
        tool: &'a str,
        #[serde(flatten)]
        view: &'a DecisionView,
    },
    ToolResult {
        call_id: &'a str,
        status: &'static str,
        output: &'a str,
    },
    /// The session's whole plan: after every change, and after the
    /// session record of a session that has one.
    Plan {
        steps: &'a [crate::session::Step],
    },
    TurnEnd {
        requests: u32,
        tool_calls: u32,
        stop: &'static str,
    },
    /// An asked agent's turn began.
    AskedStarted {
        agent: &'a str,
        question: &'a str,
    },
    AskedToolCall {
        agent: &'a str,
        call_id: &'a str,
        title: &'a str,
    },
    AskedToolUpdate {
        agent: &'a str,
        call_id: &'a str,
        status: Option<&'a str>,
        text: &'a str,
    },
    /// The asked agent's answer, and how its turn ended.
    AskedAnswer {
        agent: &'a str,
        text: &'a str,
        stop: &'a str,
    },
    /// `json` only: the turn's answer (its last response's text that was
    /// not empty) and everything else, at the end.
    Result {
        stop: &'static str,
        text: &'a str,
        events: &'a [Value],
    },
}

impl StreamRecord<'_> {
    pub fn to_value(&self) -> Value {
        // Serializing these plain fields cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Decision, Shown};

    #[test]
    fn a_plan_record_carries_every_step() {
        let steps = [crate::session::Step {
            text: "fix it".into(),
            status: crate::session::StepStatus::InProgress,
        }];
        assert_eq!(
            StreamRecord::Plan { steps: &steps }.to_value().to_string(),
            r#"{"type":"plan","steps":[{"text":"fix it","status":"in_progress"}]}"#
        );
    }

    #[test]
    fn a_decision_record_carries_the_view_flat() {
        let view = DecisionView::of(&Decision::Allow {
            shown: Shown::ForSession,
        });
        let record = StreamRecord::Decision {
            call_id: "c1",
            tool: "bash",
            view: &view,
        };
        assert_eq!(
            record.to_value().to_string(),
            r#"{"type":"decision","call_id":"c1","tool":"bash","decision":"allow","unasked":true,"code":null,"reason":null}"#
        );
    }
}
