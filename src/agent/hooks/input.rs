//! What a hook reads about a tool call, in Claude Code's words: the tool's
//! name (`Bash`, `Read`, `Write`, `Edit`, `WebFetch`, `mcp__server__tool`,
//! ...) and its input with Claude Code's field names where they map (`path`
//! becomes an absolute `file_path`, `start_line`/`end_line` become
//! `offset`/`limit`, `background` becomes `run_in_background`). Paths come
//! from the facts mino resolved, never from the model's spelling. Pure.

use std::path::Path;

use serde_json::{Map, Value};

use crate::policy::{CallFacts, CallKind, PathTarget};

/// mino's tool names and Claude Code's.
const CLAUDE_NAMES: [(&str, &str); 9] = [
    ("bash", "Bash"),
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("edit_file", "Edit"),
    ("fetch_content", "WebFetch"),
    ("list_dir", "LS"),
    ("search", "Grep"),
    ("bash_output", "BashOutput"),
    ("bash_kill", "KillShell"),
];

/// The call's tool name as Claude Code would give it; mino's own name for
/// a tool Claude Code has none for.
pub fn claude_name(tool: &str, facts: &CallFacts) -> String {
    if let CallKind::Mcp { server, .. } = &facts.kind {
        let prefix = format!("{}{server}_", crate::mcp::names::PREFIX);
        if let Some(remote) = tool.strip_prefix(&prefix) {
            return format!("mcp__{server}__{remote}");
        }
    }
    CLAUDE_NAMES
        .iter()
        .find(|(mino, _)| *mino == tool)
        .map_or_else(|| tool.to_string(), |(_, claude)| (*claude).to_string())
}

/// The call's arguments under Claude Code's field names, with the paths
/// mino resolved (absolute, under `root`).
pub fn claude_input(tool: &str, args: &Value, facts: &CallFacts, root: &Path) -> Value {
    let Value::Object(args) = args else {
        return args.clone();
    };
    let mut out = Map::new();
    let resolved = facts.targets.first().map(|target| match target {
        PathTarget::Inside { relative, .. } => root.join(relative).to_string_lossy().into_owned(),
        PathTarget::Outside { given } => given.clone(),
    });
    let file_tool = matches!(tool, "read_file" | "write_file" | "edit_file");
    for (key, value) in args {
        let renamed = match (tool, key.as_str()) {
            (_, "path") if file_tool => "file_path",
            ("read_file", "start_line") => "offset",
            ("bash", "background") => "run_in_background",
            _ => key.as_str(),
        };
        let value = match (renamed, &resolved) {
            ("file_path" | "path", Some(path)) => Value::String(path.clone()),
            _ => value.clone(),
        };
        out.insert(renamed.to_string(), value);
    }
    if tool == "read_file"
        && let Some(end) = args.get("end_line").and_then(Value::as_u64)
    {
        let start = args.get("start_line").and_then(Value::as_u64).unwrap_or(1);
        out.remove("end_line");
        out.insert("limit".into(), Value::from(end.saturating_sub(start) + 1));
    }
    Value::Object(out)
}

/// A hook's `updatedInput` (Claude Code's fields) in mino's fields for
/// `tool`: the reverse of `claude_input`. Fields it does not know are kept,
/// for the tool's own check to name.
pub fn mino_input(tool: &str, updated: &Value) -> Value {
    let Value::Object(fields) = updated else {
        return updated.clone();
    };
    let file_tool = matches!(tool, "read_file" | "write_file" | "edit_file");
    let mut out = Map::new();
    for (key, value) in fields {
        let renamed = match (tool, key.as_str()) {
            (_, "file_path") if file_tool => "path",
            ("read_file", "offset") => "start_line",
            ("read_file", "limit") => continue,
            ("bash", "run_in_background") => "background",
            _ => key.as_str(),
        };
        out.insert(renamed.to_string(), value.clone());
    }
    if tool == "read_file"
        && let Some(limit) = fields.get("limit").and_then(Value::as_u64)
    {
        let start = fields.get("offset").and_then(Value::as_u64).unwrap_or(1);
        out.insert(
            "end_line".into(),
            Value::from((start + limit).saturating_sub(1).max(start)),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::policy::ToolKey;
    use serde_json::json;

    fn inside(relative: &str) -> PathTarget {
        PathTarget::Inside {
            relative: relative.into(),
            through_link: None,
            hard_linked: false,
        }
    }

    #[test]
    fn names_are_claude_codes() {
        let shell = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
        assert_eq!(claude_name("bash", &shell), "Bash");
        let read = CallFacts::new(ToolKey::new("read_file"), CallKind::ConfinedRead);
        assert_eq!(claude_name("read_file", &read), "Read");
        assert_eq!(claude_name("plan", &read), "plan");
        let mcp = CallFacts::new(
            ToolKey::new("mcp_my-server_get_thing"),
            CallKind::Mcp {
                server: "my-server".into(),
                trust_ask: false,
                claims: Default::default(),
            },
        );
        assert_eq!(
            claude_name("mcp_my-server_get_thing", &mcp),
            "mcp__my-server__get_thing"
        );
    }

    #[test]
    fn inputs_take_claude_codes_fields_and_mino_s_paths() {
        let facts = CallFacts::new(ToolKey::new("read_file"), CallKind::ConfinedRead)
            .with_target(inside("src/a.rs"));
        let input = claude_input(
            "read_file",
            &json!({"path": "./src/../src/a.rs", "start_line": 3, "end_line": 7}),
            &facts,
            Path::new("/p"),
        );
        assert_eq!(
            input,
            json!({"file_path": "/p/src/a.rs", "offset": 3, "limit": 5})
        );
        let facts = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
        let input = claude_input(
            "bash",
            &json!({"command": "ls", "background": true}),
            &facts,
            Path::new("/p"),
        );
        assert_eq!(input, json!({"command": "ls", "run_in_background": true}));
    }

    #[test]
    fn an_updated_input_comes_back_in_mino_s_fields() {
        assert_eq!(
            mino_input(
                "read_file",
                &json!({"file_path": "/p/src/a.rs", "offset": 3, "limit": 5})
            ),
            json!({"path": "/p/src/a.rs", "start_line": 3, "end_line": 7})
        );
        assert_eq!(
            mino_input(
                "bash",
                &json!({"command": "ls", "run_in_background": false})
            ),
            json!({"command": "ls", "background": false})
        );
        assert_eq!(
            mino_input("mcp_s_t", &json!({"file_path": "x"})),
            json!({"file_path": "x"})
        );
    }
}
