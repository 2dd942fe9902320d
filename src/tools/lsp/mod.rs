//! `lsp`: one tool whose `action` asks the project's language server for a
//! definition, references, hover text, symbols or diagnostics (confined
//! reads, `nav.rs`) or a rename (a write over every file the server's edit
//! touches, `rename.rs`). Owns the arguments, the checks that every action
//! has what it needs, and the facts. Positions are a path, a line and a
//! symbol's name; mino finds the column. Never decides.

mod after_edit;
mod diagnostics;
mod nav;
mod position;
mod rename;
mod results;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::fs::paths::locate_with_facts;
use super::{PreparedCall, Tool, ToolContext, ToolError, ToolSpec, parse_args};
use crate::lsp::LspHub;
use crate::policy::{CallFacts, CallKind, ToolKey};
pub use after_edit::{after_edit, edited_files};

pub(crate) const NAME: &str = "lsp";

/// The language servers' navigation and rename.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lsp;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Definition,
    References,
    Hover,
    Symbols,
    Diagnostics,
    Rename,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Definition => "definition",
            Action::References => "references",
            Action::Hover => "hover",
            Action::Symbols => "symbols",
            Action::Diagnostics => "diagnostics",
            Action::Rename => "rename",
        }
    }

    /// Whether the action is given a place: path, line and symbol.
    fn at_symbol(self) -> bool {
        matches!(
            self,
            Action::Definition | Action::References | Action::Hover | Action::Rename
        )
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    action: Action,
    path: Option<String>,
    line: Option<u64>,
    symbol: Option<String>,
    query: Option<String>,
    new_name: Option<String>,
}

/// A place in a file as the model names it.
#[derive(Debug, Clone)]
pub(crate) struct At {
    pub relative: String,
    /// Zero-based.
    pub line: u32,
    pub symbol: String,
}

fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: NAME,
        message: message.into(),
    }
}

impl Tool for Lsp {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Ask the language server. definition, references, hover, rename: path, \
                line, symbol (rename also new_name). symbols: path, or query for the workspace. \
                diagnostics: path, or none for all open files."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["definition", "references", "hover", "symbols", "diagnostics", "rename"]
                    },
                    "path": {"type": "string", "description": "File, relative to the project."},
                    "line": {"type": "integer", "minimum": 1},
                    "symbol": {"type": "string", "description": "The name on that line."},
                    "query": {"type": "string"},
                    "new_name": {"type": "string"}
                },
                "required": ["action"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        let hub = cx.lsp.clone();
        let no_servers = || ToolError::Failed("No language servers are set up in this run.".into());
        let action = args.action;
        if action != Action::Rename && args.new_name.is_some() {
            return Err(invalid("new_name is only for action rename"));
        }
        if action != Action::Symbols && args.query.is_some() {
            return Err(invalid("query is only for action symbols"));
        }
        if !action.at_symbol() && (args.line.is_some() || args.symbol.is_some()) {
            return Err(invalid(format!(
                "{} takes no line or symbol; give path",
                action.name()
            )));
        }
        let Some(path) = args.path.as_deref() else {
            return match action {
                Action::Symbols if args.query.as_deref().is_some_and(|q| !q.trim().is_empty()) => {
                    let hub = hub.ok_or_else(no_servers)?;
                    Ok(nav::workspace_symbols(
                        cx,
                        hub,
                        args.query.unwrap_or_default(),
                    ))
                }
                Action::Diagnostics => Ok(nav::all_diagnostics(cx, hub.ok_or_else(no_servers)?)),
                Action::Symbols => Err(invalid(
                    "symbols needs path (a file's) or query (the workspace's)",
                )),
                _ => Err(invalid(format!(
                    "{} needs path, line and symbol",
                    action.name()
                ))),
            };
        };
        if action == Action::Symbols && args.query.is_some() {
            return Err(invalid("symbols takes path or query, not both"));
        }
        let kind = if action == Action::Rename {
            CallKind::FileWrite
        } else {
            CallKind::ConfinedRead
        };
        let (target, facts) = locate_with_facts(&cx.project, &cx.protected, path, NAME, kind)?;
        let relative = match &target {
            crate::policy::PathTarget::Inside { relative, .. } => relative.clone(),
            // The decision refuses it; the call carries the facts there.
            crate::policy::PathTarget::Outside { given } => given.clone(),
        };
        // Without servers (`mino policy check`) the call still carries its
        // facts to the decision; it cannot run.
        let Some(hub) = hub else {
            return Ok(Box::new(nav::Refused {
                facts,
                why: "No language servers are set up in this run.",
            }));
        };
        if !action.at_symbol() {
            return Ok(nav::file_call(cx, hub, action, facts, target, relative));
        }
        let line = match args.line {
            Some(line) if line >= 1 => {
                u32::try_from(line - 1).map_err(|_| invalid("line is too large"))?
            }
            _ => return Err(invalid(format!("{} needs line (1-based)", action.name()))),
        };
        let symbol = match args.symbol {
            Some(symbol) if !symbol.trim().is_empty() => symbol,
            _ => {
                return Err(invalid(format!(
                    "{} needs symbol: the name on that line",
                    action.name()
                )));
            }
        };
        let at = At {
            relative,
            line,
            symbol,
        };
        if action == Action::Rename {
            let new_name = match args.new_name {
                Some(name) if !name.trim().is_empty() => name,
                _ => return Err(invalid("rename needs new_name")),
            };
            // A target the decision refuses is never read: it carries the
            // facts to the decision alone.
            if !facts_allow_reading(&facts, cx) {
                return Ok(Box::new(nav::Refused {
                    facts,
                    why: "lsp did not run: its file may not be read.",
                }));
            }
            return rename::prepare(cx, hub, target, at, new_name);
        }
        Ok(nav::symbol_call(cx, hub, action, facts, target, at))
    }
}

/// Whether the call's one target may be read to prepare it: inside, not
/// protected, no link.
fn facts_allow_reading(facts: &CallFacts, cx: &ToolContext) -> bool {
    facts.targets.iter().all(|t| match t {
        crate::policy::PathTarget::Inside {
            relative,
            through_link: None,
            hard_linked: false,
        } => cx.protected.protection(relative).is_none(),
        _ => false,
    })
}

/// The facts of a call on no file (workspace symbols, every open file's
/// diagnostics).
fn no_file_facts() -> CallFacts {
    CallFacts::new(ToolKey::new(NAME), CallKind::ConfinedRead)
}

/// The hub a call uses.
type Hub = Arc<LspHub>;
