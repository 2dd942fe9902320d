//! `mino policy check`: what the decision would say about one call, with
//! the same settings, the same facts (established on the real filesystem)
//! and the same decision function as a live call. Prints one JSON object.

use std::path::Path;

use serde_json::{Value, json};

use crate::agent::build::{hook, registry, tool_context};
use crate::config::Settings;
use crate::policy::{CanAsk, Decision, Mode, RunConsent, SessionConsent, Shown, decide};
use crate::tools::Project;

/// The call to check.
pub struct CheckRequest<'a> {
    pub mode: Mode,
    pub tool: &'a str,
    pub path: Option<&'a str>,
    pub command: Option<&'a str>,
    pub url: Option<&'a str>,
}

/// The arguments a live call of `tool` would carry for this check.
fn arguments(req: &CheckRequest<'_>) -> Result<Value, String> {
    let need_path = || {
        req.path
            .ok_or_else(|| format!("--path is required to check {}", req.tool))
    };
    Ok(match req.tool {
        "read_file" | "list_dir" => json!({"path": need_path()?}),
        "search" => json!({"path": req.path.unwrap_or("."), "pattern": "."}),
        "write_file" => json!({"path": need_path()?, "content": ""}),
        "edit_file" => json!({"path": need_path()?, "old_string": "a", "new_string": "b"}),
        "skill_view" => json!({"name": need_path()?}),
        "bash" => json!({"command": req.command.ok_or("--command is required to check bash")?}),
        "fetch_content" => {
            let mut args = json!({"url": req.url.unwrap_or("https://example.com/")});
            if let Some(path) = req.path {
                args["output"] = json!(path);
            }
            args
        }
        other => return Err(format!("unknown tool {other:?}")),
    })
}

/// Runs the check; the JSON object on success, a sentence on failure.
pub async fn check(
    settings: &Settings,
    project_dir: &Path,
    req: &CheckRequest<'_>,
) -> Result<Value, String> {
    let tools = registry(settings);
    let Some(tool) = tools.get(req.tool) else {
        return Err(format!(
            "the tool {:?} does not exist in this project's settings; existing tools: {}",
            req.tool,
            tools.names().join(", ")
        ));
    };
    let project = Project::new(project_dir).map_err(|e| {
        format!(
            "the project directory {} cannot be used: {e}",
            project_dir.display()
        )
    })?;
    let cx = tool_context(settings, project);
    let args = arguments(req)?;
    let prepared = match tool.prepare(&args, &cx) {
        Ok(prepared) => prepared,
        Err(e) => {
            return Ok(
                json!({"decision": "error", "shown": false, "code": null, "reason": e.to_string()}),
            );
        }
    };
    let mut facts = prepared.facts().clone();
    if let Some(hook) = hook(settings) {
        facts.hook = Some(hook.check(req.tool, &args, &facts).await);
    }
    let decision = decide(
        &facts,
        req.mode,
        &settings.protected(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::Yes,
    );
    Ok(match decision {
        Decision::Allow { shown } => json!({
            "decision": "allow", "shown": shown != Shown::Quietly, "code": null, "reason": null
        }),
        Decision::Ask => json!({"decision": "ask", "shown": false, "code": null, "reason": null}),
        Decision::Deny { code, reason } => json!({
            "decision": "deny", "shown": false, "code": code.as_str(), "reason": reason
        }),
    })
}
