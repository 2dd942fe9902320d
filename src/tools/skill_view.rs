//! `skill_view`: reads one project skill, `.mino/skills/NAME/SKILL.md`, a
//! confined read; and `discover`, which lists the project's skills from
//! their front matter for the system prompt. Owns the name check, the facts
//! (the skill file as a `PathTarget`) and the front-matter parsing. Never
//! decides, never follows a symbolic link (files are read only through
//! `Project::read`), and never reads a protected path.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::run_blocking;
use super::fs::confine::{ConfineError, EntryKind};
use super::fs::paths::{locate_with_facts, recheck_target};
use super::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};

/// The tool's name, as the model calls it.
pub const NAME: &str = "skill_view";

/// Where project skills live, relative to the project root.
pub const SKILLS_DIR: &str = ".mino/skills";

/// The file that holds a skill, inside its directory.
pub const SKILL_FILE: &str = "SKILL.md";

/// The longest skill name accepted.
pub const MAX_NAME_CHARS: usize = 100;

/// Only this much of a skill file is returned.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// `discover` lists at most this many skills.
pub const MAX_SKILLS: usize = 200;

/// Descriptions longer than this (in characters) are shortened.
pub const MAX_DESCRIPTION_CHARS: usize = 300;

/// Reads a project skill.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkillView;

/// One skill, as the system prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    /// The skill's directory name: what `skill_view` accepts. A different
    /// `name:` in the front matter does not change it, because `skill_view`
    /// resolves skills by directory.
    pub name: String,
    /// The front matter's `description:`, else the first non-empty line of
    /// the text (without a leading `#`). One line, at most
    /// `MAX_DESCRIPTION_CHARS` characters; empty when the file has none.
    pub description: String,
    /// The size of its `SKILL.md`, as read.
    pub bytes: usize,
    /// The SHA-256 of its `SKILL.md`, lower-case hex.
    pub digest: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    name: String,
}

/// Whether `name` is an acceptable skill name: `[A-Za-z0-9_-]+`, at most
/// `MAX_NAME_CHARS` long.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The project-relative path of the skill `name`.
pub fn skill_path(name: &str) -> String {
    format!("{SKILLS_DIR}/{name}/{SKILL_FILE}")
}

impl Tool for SkillView {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Read one of the project's skills (.mino/skills/NAME/SKILL.md) by name: \
                instructions for a task the project describes."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "pattern": "^[A-Za-z0-9_-]+$",
                        "maxLength": MAX_NAME_CHARS,
                        "description": "The skill's name: its directory under .mino/skills."
                    }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        if !valid_name(&args.name) {
            return Err(ToolError::InvalidArguments {
                tool: NAME,
                message: format!(
                    "`name` must be 1 to {MAX_NAME_CHARS} characters, each a letter A-Z or a-z, \
                     a digit 0-9, `_` or `-` (the skill's directory under {SKILLS_DIR})"
                ),
            });
        }
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &skill_path(&args.name),
            NAME,
            CallKind::ConfinedRead,
        )?;
        Ok(Box::new(PreparedSkillView {
            facts,
            name: args.name,
            target,
            project: Arc::clone(&cx.project),
            protected: Arc::clone(&cx.protected),
        }))
    }
}

/// A prepared `skill_view` call.
pub struct PreparedSkillView {
    facts: CallFacts,
    name: String,
    target: PathTarget,
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
}

impl PreparedCall for PreparedSkillView {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::text("Skill", self.name.clone())]
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        run_blocking(
            cancel,
            NAME,
            "Reading the skill was cancelled.",
            move || self.view(),
        )
    }
}

impl PreparedSkillView {
    fn view(&self) -> ToolOutcome {
        let relative = match recheck_target(&self.target, &self.protected) {
            Ok(relative) => relative,
            Err(refused) => return refused,
        };
        match self.project.read(relative, MAX_SKILL_BYTES) {
            Ok(contents) => {
                let mut text = String::from_utf8_lossy(&contents.bytes).into_owned();
                if contents.truncated {
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                    text.push_str(&format!(
                        "[skill truncated: showing the first {} KiB of {} bytes]\n",
                        MAX_SKILL_BYTES / 1024,
                        contents.size
                    ));
                }
                ToolOutcome::completed(text)
            }
            Err(ConfineError::NotFound { .. } | ConfineError::NotADirectory { .. }) => {
                let names: Vec<String> = discover_with(&self.project, &self.protected)
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                let available = if names.is_empty() {
                    format!("There are no skills in {SKILLS_DIR}.")
                } else {
                    format!("Available skills: {}.", names.join(", "))
                };
                ToolOutcome::error(format!("No skill named {:?}. {available}", self.name))
            }
            Err(e) => ToolOutcome::error(e.to_string()),
        }
    }
}

/// The project's skills, sorted by name, described by their front matter.
/// Uses the built-in protected patterns; see `discover_with`.
pub fn discover(project: &Project) -> Vec<SkillInfo> {
    discover_with(project, &ProtectedPaths::builtin())
}

/// The project's skills, sorted by name, skipping any whose file is
/// protected by `protected`, cannot be read through the confined open (a
/// link, a hard-linked file), or whose directory name is not a valid skill
/// name. Never fails: a missing or unreadable skills directory lists none.
pub fn discover_with(project: &Project, protected: &ProtectedPaths) -> Vec<SkillInfo> {
    let Ok(entries) = project.list(SKILLS_DIR) else {
        return Vec::new();
    };
    let mut skills = Vec::new();
    for entry in entries {
        if skills.len() >= MAX_SKILLS {
            break;
        }
        if entry.kind != EntryKind::Directory || !valid_name(&entry.name) {
            continue;
        }
        let path = skill_path(&entry.name);
        if protected.is_protected(&path) {
            continue;
        }
        let Ok(contents) = project.read(&path, MAX_SKILL_BYTES) else {
            continue;
        };
        let text = String::from_utf8_lossy(&contents.bytes);
        skills.push(SkillInfo {
            description: description(&text),
            name: entry.name,
            bytes: contents.bytes.len(),
            digest: crate::checkpoint::store::digest_bytes(&contents.bytes),
        });
    }
    skills
}

/// The skill's one-line description: the front matter's `description:`, or
/// the first non-empty line after it (or of the whole text without one).
pub fn description(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (fields, body) = match front_matter(text) {
        Some((fields, body)) => (fields, body),
        None => (Vec::new(), text),
    };
    let from_front = fields
        .into_iter()
        .find(|(key, _)| key == "description")
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty());
    let raw = match from_front {
        Some(value) => value,
        None => body
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(|line| line.trim_start_matches('#').trim().to_string())
            .unwrap_or_default(),
    };
    one_line(&raw)
}

/// Parses `---\nkey: value\n...\n---` at the start of `text`: the top-level
/// keys with their values (quotes removed, folded `>`/`|` blocks joined),
/// and the text after the closing line. `None` when there is no complete
/// front matter.
pub fn front_matter(text: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut rest = text;
    let first = next_line(&mut rest)?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut lines = Vec::new();
    loop {
        let line = next_line(&mut rest)?;
        if line.trim_end() == "---" {
            break;
        }
        lines.push(line.trim_end());
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with([' ', '\t']) || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let value = if matches!(value, ">" | ">-" | ">+" | "|" | "|-" | "|+") {
            let mut block = Vec::new();
            while i < lines.len() && (lines[i].starts_with([' ', '\t']) || lines[i].is_empty()) {
                block.push(lines[i].trim());
                i += 1;
            }
            block.join(" ")
        } else {
            unquote(value).to_string()
        };
        fields.push((key.trim().to_string(), value));
    }
    Some((fields, rest))
}

/// Takes the next line (without its `\n`) off the front of `rest`.
fn next_line<'a>(rest: &mut &'a str) -> Option<&'a str> {
    if rest.is_empty() {
        return None;
    }
    match rest.split_once('\n') {
        Some((line, after)) => {
            *rest = after;
            Some(line)
        }
        None => {
            let line = *rest;
            *rest = "";
            Some(line)
        }
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

/// Whitespace collapsed to single spaces, control characters dropped, and
/// shortened to `MAX_DESCRIPTION_CHARS`.
fn one_line(text: &str) -> String {
    let cleaned: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if cleaned.chars().count() <= MAX_DESCRIPTION_CHARS {
        return cleaned;
    }
    let mut short: String = cleaned.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["deploy", "a", "A_b-9", "-"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "a/b", "..", ".git", "a b", "é", "a.b", &"x".repeat(101)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn front_matter_keys_quotes_and_blocks() {
        let text = "---\nname: deploy\ndescription: \"Ship it: carefully\"\n---\n# Deploy\n";
        let (fields, body) = front_matter(text).unwrap();
        assert_eq!(
            fields,
            vec![
                ("name".to_string(), "deploy".to_string()),
                ("description".to_string(), "Ship it: carefully".to_string())
            ]
        );
        assert_eq!(body, "# Deploy\n");
        assert_eq!(description(text), "Ship it: carefully");

        let folded = "---\r\ndescription: >\r\n  one\r\n  two\r\nname: x\r\n---\r\nbody";
        assert_eq!(description(folded), "one two");
    }

    #[test]
    fn description_falls_back_to_first_line() {
        assert_eq!(description("\n\n# Release steps\nmore"), "Release steps");
        assert_eq!(
            description("---\nname: x\n---\n\nFirst line.\n"),
            "First line."
        );
        assert_eq!(description("---\nname: x\nunclosed"), "---");
        assert_eq!(description(""), "");
        let long = "y".repeat(400);
        assert_eq!(description(&long).chars().count(), MAX_DESCRIPTION_CHARS);
    }
}
