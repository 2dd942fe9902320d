//! The calls of one response past `[model] max_tool_calls`. The response
//! keeps each as its id and name only; the turn saves them in the response
//! with the calls kept (every wire needs a result for each call it was
//! sent), then answers them all at once, before the calls kept are
//! decided: one refusal result each, never prepared, decided or run,
//! saved in one batch and shown as one line. Pure, like the rest of the
//! machine.

use std::collections::BTreeMap;

use crate::model::PastBound;

use super::*;

/// What the model is told for each call past the bound.
pub fn refusal(bound: usize) -> String {
    format!(
        "Refused: one response may ask for at most {bound} tool calls, and this one came after them; it did not run."
    )
}

/// The one line that stands for the refused calls on screen and in
/// `stream-json`: how many, the bound, and the tools most asked for.
pub fn notice(bound: usize, calls: &[ToolCall]) -> String {
    let mut by_tool: BTreeMap<&str, usize> = BTreeMap::new();
    for call in calls {
        *by_tool.entry(call.name.as_str()).or_default() += 1;
    }
    let mut tools: Vec<(&str, usize)> = by_tool.into_iter().collect();
    tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut named: Vec<String> = tools
        .iter()
        .take(NAMED_TOOLS)
        .map(|(name, count)| format!("{} {count}", clipped(name)))
        .collect();
    if tools.len() > NAMED_TOOLS {
        named.push(format!("{} other tools", tools.len() - NAMED_TOOLS));
    }
    format!(
        "{} tool calls of one response were refused without running: one response may ask for at most {bound} (`[model] max_tool_calls`), and the model was told so for each ({}).",
        calls.len(),
        named.join(", ")
    )
}

/// The tools the notice names.
const NAMED_TOOLS: usize = 3;

/// A tool's name as the notice shows it: a service may send long ones.
fn clipped(name: &str) -> String {
    const SHOWN: usize = 40;
    if name.chars().count() <= SHOWN {
        return name.to_string();
    }
    let head: String = name.chars().take(SHOWN).collect();
    format!("{head}…")
}

impl Turn {
    /// The response is saved: its calls past the bound are refused at
    /// once, or the calls kept go on.
    pub(super) fn refuse_past_bound(&mut self, past: PastBound) -> Vec<Effect> {
        self.phase = Phase::SavingRefusals;
        vec![Effect::SaveRefusals {
            bound: past.bound,
            output: refusal(past.bound),
            calls: past.calls,
        }]
    }

    pub(super) fn saving_refusals(&mut self, event: Event) -> Vec<Effect> {
        match event {
            Event::Saved => self.next_call(),
            Event::SaveFailed(e) => self.end(TurnStop::SaveFailed(e)),
            event => self.nonsense(&Phase::SavingRefusals, &event, None),
        }
    }
}

/// The calls of a response as its saved item carries them: the calls kept,
/// then those past the bound (their arguments empty).
pub(super) fn all_calls(kept: Vec<ToolCall>, past: Option<&PastBound>) -> Vec<ToolCall> {
    let mut calls = kept;
    if let Some(past) = past {
        calls.extend(past.calls.iter().cloned());
    }
    calls
}
