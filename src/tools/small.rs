//! The small profile's tool set: which built-in tools a small model is
//! offered (read_file, list_dir, search, edit_file, write_file, bash,
//! final_answer) and the shortest description of each that still says what
//! the model must know: paths are the project's, protected files stay
//! closed, an edit's text must match once, bash runs in a sandbox. The
//! tools themselves, their checks and the decision are the same as in the
//! default profile; only what the model reads is shorter.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::ToolSpec;

/// The built-in tools of the small profile, in the order offered.
pub const NAMES: &[&str] = &[
    super::read_file::NAME,
    super::list_dir::NAME,
    super::search::NAME,
    super::edit_file::NAME,
    super::write_file::NAME,
    super::bash::NAME,
    super::final_answer::NAME,
];

fn path(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what}, relative to the project.")})
}

/// `full`'s spec as the small profile offers it; a tool outside the small
/// set keeps its own.
pub fn spec(full: ToolSpec) -> ToolSpec {
    let (description, parameters): (&'static str, Value) = match full.name.as_ref() {
        super::read_file::NAME => (
            "Read a project file; lines are numbered. Protected files (.env, keys) are never read.",
            json!({
                "type": "object",
                "properties": {
                    "path": path("File"),
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        super::list_dir::NAME => (
            "List a project directory.",
            json!({
                "type": "object",
                "properties": {"path": path("Directory, default \".\"")},
                "additionalProperties": false
            }),
        ),
        super::search::NAME => (
            "Search file lines for the regex `pattern`, or file names for `glob`.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "glob": {"type": "string"},
                    "path": path("Where to search, default \".\"")
                },
                "additionalProperties": false
            }),
        ),
        super::edit_file::NAME => (
            "Replace old_string, which must occur exactly once, with new_string in a project file.",
            json!({
                "type": "object",
                "properties": {
                    "path": path("File"),
                    "old_string": {"type": "string", "description": "Exact text now in the file."},
                    "new_string": {"type": "string", "description": "The text to put in its place."}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        ),
        super::write_file::NAME => (
            "Create or overwrite a project file with content.",
            json!({
                "type": "object",
                "properties": {"path": path("File"), "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
        super::bash::NAME => (
            "Run a shell command in the project directory, in a sandbox; returns its exit code and output.",
            json!({
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": false
            }),
        ),
        _ => return full,
    };
    ToolSpec {
        name: full.name,
        description: Cow::Borrowed(description),
        parameters,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Registry, registry::Switches};

    #[test]
    fn the_small_set_is_seven_tools_with_short_descriptions() {
        let small = Registry::small(Switches::default());
        assert_eq!(small.names(), NAMES);
        let full = Registry::new(Switches::default());
        for spec in small.specs() {
            assert!(spec.description.len() <= 100, "{}", spec.description);
            if let Some(long) = full.specs().into_iter().find(|s| s.name == spec.name) {
                assert!(spec.description.len() < long.description.len());
                // Every argument offered is one the tool itself accepts.
                for key in spec.parameters["properties"].as_object().unwrap().keys() {
                    assert!(long.parameters["properties"].get(key).is_some(), "{key}");
                }
            }
        }
        let off = Registry::small(Switches {
            bash: false,
            edit: false,
            ..Switches::default()
        });
        assert_eq!(
            off.names(),
            ["read_file", "list_dir", "search", "final_answer"]
        );
    }
}
