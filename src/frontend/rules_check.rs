//! `mino rules check`: which saved rule decides one call and why, as one
//! JSON object, from the facts a live call would establish (the same
//! tools prepare them); with no call, the rules of the settings, every one
//! of whose examples was checked when they loaded. Never runs anything.

use std::path::Path;

use serde_json::{Value, json};

use super::check::{CheckError, CheckRequest, facts_of};
use crate::config::Settings;
use crate::policy::Mode;
use crate::policy::saved::SavedRules;

/// The call to look up; `None` fields are absent arguments.
pub struct RulesQuery<'a> {
    pub tool: Option<&'a str>,
    pub command: Option<&'a str>,
    pub path: Option<&'a str>,
    pub url: Option<&'a str>,
}

/// The answer for `query`, or why it could not be given.
pub fn rules_check(
    settings: &Settings,
    project_dir: &Path,
    query: &RulesQuery<'_>,
) -> Result<Value, CheckError> {
    let rules = &settings.rules;
    let Some(tool) = query.tool else {
        if let Some(argument) = [
            ("command", query.command),
            ("path", query.path),
            ("url", query.url),
        ]
        .iter()
        .find_map(|(name, given)| given.map(|_| *name))
        {
            return Err(CheckError::Missing {
                argument: "tool",
                tool: format!("a call with --{argument}"),
            });
        }
        return Ok(listing(rules, settings));
    };
    let req = CheckRequest {
        mode: Mode::Manual,
        tool,
        path: query.path,
        command: query.command,
        url: query.url,
        action: None,
    };
    let facts = match facts_of(settings, project_dir, &req)? {
        Ok(facts) => facts,
        Err(message) => return Ok(json!({"tool": tool, "rule": null, "error": message})),
    };
    Ok(match rules.ruling(&facts) {
        Some(ruling) => json!({
            "tool": tool,
            "rule": ruling.number,
            "decision": ruling.decision.as_str(),
            "label": ruling.label,
            "reason": ruling.reason,
        }),
        None => json!({
            "tool": tool,
            "rule": null,
            "reason": "no rule covers this call; the mode's row decides it (see mino policy check)",
        }),
    })
}

fn listing(rules: &SavedRules, settings: &Settings) -> Value {
    let each: Vec<Value> = rules
        .rules()
        .iter()
        .map(|r| {
            json!({
                "rule": r.number,
                "tool": r.tool,
                "decision": r.decision.as_str(),
                "label": r.label(),
            })
        })
        .collect();
    json!({
        "valid": true,
        "files": settings.sources,
        "rules": each,
    })
}
