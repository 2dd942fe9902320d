//! `list_dir`: lists one project directory, a confined read. Owns the
//! argument check, the facts (the directory as a `PathTarget`) and the
//! listing text. Never decides, never follows a symbolic link (a link is
//! shown as a link), and never names an entry whose path is protected: such
//! entries are only counted.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::run_blocking;
use super::fs::confine::{ConfineError, DirEntry, EntryKind};
use super::fs::near;
use super::fs::paths::{join, locate_with_facts, recheck_target, shown_path, shown_relative};
use super::wording::noun;
use super::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};
use crate::controls::one_line;
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};
use crate::tools::FieldRole;

/// The tool's name, as the model calls it.
pub const NAME: &str = "list_dir";

/// At most this many entries are listed; the rest are counted.
pub const MAX_ENTRIES: usize = 1000;

/// Lists a directory inside the project.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default = "default_path")]
    path: String,
}

fn default_path() -> String {
    ".".to_string()
}

impl Tool for ListDir {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "List the entries of a directory inside the project, one a line: \
                `name/` for a directory, `name (N bytes)` for a file, and \
                `name -> (symbolic link, not followed)` for a link. Protected entries \
                (.env, .git, keys, ...) are not shown, only counted."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory to list, relative to the project root. Default \".\"."
                    }
                },
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &args.path,
            NAME,
            CallKind::ConfinedRead,
        )?;
        Ok(Box::new(PreparedListDir {
            facts,
            target,
            project: Arc::clone(&cx.project),
            protected: Arc::clone(&cx.protected),
        }))
    }
}

/// A prepared `list_dir` call.
pub struct PreparedListDir {
    facts: CallFacts,
    target: PathTarget,
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
}

impl PreparedCall for PreparedListDir {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        vec![Field::named(FieldRole::Path, shown_path(&self.target))]
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        run_blocking(cancel, NAME, "The listing was cancelled.", move || {
            self.list()
        })
    }
}

impl PreparedListDir {
    fn list(&self) -> ToolOutcome {
        let relative = match recheck_target(&self.target, &self.protected) {
            Ok(relative) => relative,
            Err(refused) => return refused,
        };
        match self.project.list(relative) {
            Ok(entries) => ToolOutcome::completed(render(relative, &entries, &self.protected)),
            Err(e @ ConfineError::NotFound { .. }) => ToolOutcome::error(format!(
                "{e}.{}",
                near::hint(
                    &self.project,
                    &self.protected,
                    relative,
                    EntryKind::Directory
                )
            )),
            Err(e) => ToolOutcome::error(e.to_string()),
        }
    }
}

/// The listing text for `entries` of the directory `relative`.
fn render(relative: &str, entries: &[DirEntry], protected: &ProtectedPaths) -> String {
    let mut lines = Vec::new();
    let mut withheld = 0usize;
    let mut over_cap = 0usize;
    for entry in entries {
        let child = join(relative, &entry.name);
        if protected.is_protected(&child) {
            withheld += 1;
            continue;
        }
        if lines.len() >= MAX_ENTRIES {
            over_cap += 1;
            continue;
        }
        let name = one_line(&entry.name);
        lines.push(match entry.kind {
            EntryKind::Directory => format!("{name}/"),
            EntryKind::File => format!("{name} ({})", bytes(entry.size)),
            EntryKind::Link => format!("{name} -> (symbolic link, not followed)"),
            EntryKind::Other => format!("{name} (not a regular file or directory)"),
        });
    }
    let mut out = String::new();
    if lines.is_empty() && withheld == 0 {
        out.push_str(&format!("{} is empty.\n", shown_relative(relative)));
    }
    for line in &lines {
        out.push_str(line);
        out.push('\n');
    }
    if over_cap > 0 {
        out.push_str(&format!(
            "{over_cap} more {} not shown (at most {MAX_ENTRIES} are listed).\n",
            noun(over_cap, "entry", "entries")
        ));
    }
    if withheld > 0 {
        out.push_str(&format!(
            "{withheld} protected {} not shown.\n",
            noun(withheld, "entry", "entries")
        ));
    }
    out
}

fn bytes(size: u64) -> String {
    if size == 1 {
        "1 byte".to_string()
    } else {
        format!("{size} bytes")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: EntryKind, size: u64) -> DirEntry {
        DirEntry {
            name: name.to_string(),
            kind,
            size,
        }
    }

    #[test]
    fn render_marks_kinds_and_counts_protected() {
        let entries = vec![
            entry(".env", EntryKind::File, 10),
            entry(".git", EntryKind::Directory, 0),
            entry("docs", EntryKind::Link, 4),
            entry("notes.md", EntryKind::File, 412),
            entry("src", EntryKind::Directory, 0),
        ];
        let text = render("", &entries, &ProtectedPaths::builtin());
        assert_eq!(
            text,
            "docs -> (symbolic link, not followed)\nnotes.md (412 bytes)\nsrc/\n\
             2 protected entries not shown.\n"
        );
    }

    #[test]
    fn render_caps_entries() {
        let entries: Vec<DirEntry> = (0..MAX_ENTRIES + 5)
            .map(|i| entry(&format!("f{i:05}"), EntryKind::File, 1))
            .collect();
        let text = render("d", &entries, &ProtectedPaths::builtin());
        assert_eq!(text.lines().count(), MAX_ENTRIES + 1);
        assert!(text.ends_with("5 more entries not shown (at most 1000 are listed).\n"));
    }

    #[test]
    fn render_empty_and_escaped() {
        assert_eq!(render("", &[], &ProtectedPaths::builtin()), ". is empty.\n");
        let text = render(
            "d",
            &[entry("a\nb", EntryKind::File, 1)],
            &ProtectedPaths::builtin(),
        );
        assert_eq!(text, "a␊b (1 byte)\n");
    }
}
