//! `mino policy check`: what the decision would say about one call, with
//! the same settings, the same facts (established on the real filesystem,
//! the shell gate's evidence included) and the same decision function as a
//! live call. Prints one JSON object. It never runs the call, and never
//! asks the judge (a model request).

use std::path::{Path, PathBuf};

use crate::agent::hooks::PreToolOutcome;
use serde_json::{Value, json};

use crate::agent::DecisionView;
use crate::agent::build::{hooks, registry, tool_context};
use crate::config::Settings;
use crate::policy::shell::Verdict;
use crate::policy::{CallFacts, CallKind, CanAsk, Mode, RunConsent, SessionConsent, decide};
use crate::tools::gate::examine;
use crate::tools::{PreparedCall, Project, ToolContext};

/// The call to check.
pub struct CheckRequest<'a> {
    pub mode: Mode,
    pub tool: &'a str,
    pub path: Option<&'a str>,
    pub command: Option<&'a str>,
    pub url: Option<&'a str>,
    /// plan's action (show, set, add, update, remove) or lsp's
    /// (definition, references, hover, symbols, diagnostics, rename).
    pub action: Option<&'a str>,
}

/// Why a check could not be made; each names the argument at fault.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("--{argument} is required to check {tool}")]
    Missing {
        argument: &'static str,
        tool: String,
    },
    #[error("unknown tool {0:?}")]
    UnknownTool(String),
    #[error(
        "the tool {tool:?} does not exist in this project's settings; existing tools: {existing}"
    )]
    Absent { tool: String, existing: String },
    #[error("the project directory {} cannot be used: {source}", path.display())]
    Project {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The arguments a live call of `tool` would carry for this check.
fn arguments(req: &CheckRequest<'_>) -> Result<Value, CheckError> {
    let missing = |argument| CheckError::Missing {
        argument,
        tool: req.tool.to_string(),
    };
    let need_path = || req.path.ok_or_else(|| missing("path"));
    Ok(match req.tool {
        "read_file" | "list_dir" => json!({"path": need_path()?}),
        "search" => json!({"path": req.path.unwrap_or("."), "pattern": "."}),
        "write_file" => json!({"path": need_path()?, "content": ""}),
        "edit_file" => json!({"path": need_path()?, "old_string": "a", "new_string": "b"}),
        "skill_view" => json!({"name": need_path()?}),
        "plan" => match req.action.ok_or_else(|| missing("action"))? {
            "set" => json!({"action": "set", "steps": ["a step"]}),
            "add" => json!({"action": "add", "text": "a step"}),
            "update" => json!({"action": "update", "step": 1, "status": "done"}),
            "remove" => json!({"action": "remove", "step": 1}),
            other => json!({"action": other}),
        },
        "lsp" => match req.action.ok_or_else(|| missing("action"))? {
            action @ ("definition" | "references" | "hover" | "rename") => {
                let mut args =
                    json!({"action": action, "path": need_path()?, "line": 1, "symbol": "x"});
                if action == "rename" {
                    args["new_name"] = json!("y");
                }
                args
            }
            other => json!({"action": other, "path": need_path()?}),
        },
        "bash" => json!({"command": req.command.ok_or_else(|| missing("command"))?}),
        "fetch_content" => {
            let mut args = json!({"url": req.url.unwrap_or("https://example.com/")});
            if let Some(path) = req.path {
                args["output"] = json!(path);
            }
            args
        }
        other => return Err(CheckError::UnknownTool(other.to_string())),
    })
}

/// A call as a live one would be prepared here: the tool context, the
/// arguments, and what the tool made of them (its own message when it
/// refused them).
struct Prepared {
    cx: ToolContext,
    args: Value,
    call: Result<Box<dyn PreparedCall>, String>,
}

fn prepared(
    settings: &Settings,
    project_dir: &Path,
    req: &CheckRequest<'_>,
) -> Result<Prepared, CheckError> {
    let tools = registry(settings);
    let Some(tool) = tools.get(req.tool) else {
        return Err(CheckError::Absent {
            tool: req.tool.to_string(),
            existing: tools.names().join(", "),
        });
    };
    let project = Project::new(project_dir).map_err(|source| CheckError::Project {
        path: project_dir.to_path_buf(),
        source,
    })?;
    let cx = tool_context(settings, project);
    let args = arguments(req)?;
    let call = tool.prepare(&args, &cx).map_err(|e| e.to_string());
    Ok(Prepared { cx, args, call })
}

/// The facts a live call of `req.tool` would establish here (`Err` with
/// the tool's own message when its arguments are refused).
pub fn facts_of(
    settings: &Settings,
    project_dir: &Path,
    req: &CheckRequest<'_>,
) -> Result<Result<CallFacts, String>, CheckError> {
    Ok(prepared(settings, project_dir, req)?
        .call
        .map(|p| p.facts().clone()))
}

/// Runs the check; the JSON object on success, a sentence on failure.
pub async fn check(
    settings: &Settings,
    project_dir: &Path,
    req: &CheckRequest<'_>,
) -> Result<Value, CheckError> {
    let Prepared { cx, args, call } = prepared(settings, project_dir, req)?;
    let mut prepared = match call {
        Ok(prepared) => prepared,
        Err(reason) => {
            return Ok(
                json!({"decision": "error", "unasked": false, "code": null, "reason": reason}),
            );
        }
    };
    let hook_cx = crate::agent::hooks::HookCx {
        session: "",
        mode: req.mode,
        audit: None,
    };
    // A hook's updatedInput is prepared anew, as a live call's is.
    let (hooks, tools) = (hooks(settings, cx.project.root()), registry(settings));
    let (mut args, mut from, mut updated) = (args, 0, None);
    let mut facts = prepared.facts().clone();
    loop {
        match hooks
            .pre_tool_use(&hook_cx, ("", req.tool), &args, &facts, from)
            .await
        {
            Some(PreToolOutcome::Rewrite { at, arguments, key }) => {
                let again = tools
                    .get(req.tool)
                    .map(|tool| tool.prepare(&arguments, &cx));
                prepared = match again {
                    Some(Ok(prepared)) => prepared,
                    Some(Err(e)) => {
                        let reason = format!(
                            "the hook {key} changed the input, and {} refused it: {e}",
                            req.tool
                        );
                        return Ok(
                            json!({"decision": "error", "unasked": false, "code": null, "reason": reason}),
                        );
                    }
                    None => return Err(CheckError::UnknownTool(req.tool.to_string())),
                };
                facts = prepared.facts().clone();
                (args, from) = (arguments, at + 1);
                updated = Some(args.clone());
            }
            verdict => {
                facts.hook = verdict.map(|v| match v {
                    PreToolOutcome::Verdict(v) => v,
                    PreToolOutcome::Rewrite { .. } => crate::policy::HookVerdict::Continue,
                });
                break;
            }
        }
    }
    // The shell gate, as a live call has it (without the judge, which is a
    // model request): its verdict in auto mode, the guard in bypass.
    let mut gate = None;
    if let (CallKind::Shell, Some(command)) = (&facts.kind, facts.command.clone()) {
        let setup = cx.gate.clone();
        let dir = project_dir.to_path_buf();
        let verdict = tokio::task::spawn_blocking(move || examine("bash", &command, &setup, &dir))
            .await
            .unwrap_or_else(|e| Verdict::internal(format!("the gate's evaluation stopped: {e}")));
        if verdict.catastrophic && cx.gate.guard_bypass {
            facts.guard = Some(verdict.reason.clone());
        }
        if req.mode == Mode::Auto {
            facts.gate = Some(verdict.for_decision());
        }
        gate = Some(verdict.describe());
    }
    let decision = decide(
        &facts,
        req.mode,
        &settings.protected(),
        &SessionConsent::default(),
        &RunConsent::with_rules(settings.rules.clone()),
        CanAsk::Yes,
    );
    // The words stream-json uses for a decision.
    let mut answer = serde_json::to_value(DecisionView::of(&decision)).unwrap_or(Value::Null);
    if let Some(gate) = gate {
        answer["gate"] = json!(gate);
    }
    if let Some(updated) = updated {
        answer["updated_input"] = updated;
    }
    Ok(answer)
}
