//! The execution surfaces: project paths whose contents run later, or steer
//! an agent later, without another question: git hooks, other agents'
//! settings and instructions, editors' task files, MCP server lists,
//! direnv files, CI workflows, mino's own settings and skills. A file
//! tool's write there is its own kind of call (it asks in every mode), and
//! the sandbox makes the same paths read-only. Pure: the directory the
//! repository's `core.hooksPath` names arrives as a fact read by mino.

/// Directories (a path component) whose files run or steer something.
/// Matched in any case, at any depth: agents and editors read nested ones.
const DIRECTORIES: &[(&str, &str)] = &[
    (
        ".claude",
        "another agent's settings and hooks (Claude Code)",
    ),
    (".gemini", "another agent's settings (Gemini CLI)"),
    (".codex", "another agent's settings (Codex)"),
    (".cursor", "another agent's settings and rules (Cursor)"),
    (".vscode", "editor tasks and launch settings (VS Code)"),
    (".idea", "editor run settings (JetBrains)"),
    (".mino", "mino's own settings and skills"),
    (".husky", "git hooks (husky)"),
];

/// File names that run or steer something, in any directory.
const FILES: &[(&str, &str)] = &[
    ("claude.md", "another agent's instructions (Claude Code)"),
    ("gemini.md", "another agent's instructions (Gemini CLI)"),
    (
        "agents.md",
        "agent instructions (AGENTS.md), read into later sessions",
    ),
    (".mcp.json", "MCP servers another agent starts"),
    (
        ".envrc",
        "a direnv file, run by the shell on entering the directory",
    ),
    ("skill.md", "a skill, read into later sessions"),
];

/// Paths from the project root that run something.
const ROOTED: &[(&str, &str)] = &[(".github/workflows", "CI workflows")];

/// What a surface is, for the dialog: "code written here runs later: WHY".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    pub why: String,
}

impl Surface {
    /// The dialog's sentence.
    pub fn sentence(&self) -> String {
        format!("code written here runs later: {}", self.why)
    }
}

/// The table, with this repository's hooks directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surfaces {
    /// `core.hooksPath` as a normalized project-relative path, when it
    /// names a directory inside the project.
    hooks: Option<String>,
}

/// A project-relative path, lowercased, `/`-separated, without `.` parts
/// or trailing slashes.
fn normal(relative: &str) -> String {
    relative
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("/")
}

fn under(path: &str, dir: &str) -> bool {
    !dir.is_empty() && (path == dir || path.starts_with(&format!("{dir}/")))
}

impl Surfaces {
    /// The table with `hooks`, the project-relative directory the
    /// repository's `core.hooksPath` names (`None` when unset or outside
    /// the project).
    pub fn new(hooks: Option<&str>) -> Self {
        Self {
            hooks: hooks.map(normal).filter(|h| !h.is_empty()),
        }
    }

    /// The hooks directory, project-relative, for the sandbox.
    pub fn hooks_dir(&self) -> Option<&str> {
        self.hooks.as_deref()
    }

    /// The directory names and file names of the table, for the sandbox.
    pub fn names() -> impl Iterator<Item = &'static str> {
        DIRECTORIES
            .iter()
            .chain(FILES)
            .chain(ROOTED)
            .map(|(name, _)| *name)
    }

    /// Whether a surface named from the project's root (CI workflows, the
    /// hooks directory) lies strictly below `relative`: a link there would
    /// lead the surface's path elsewhere.
    pub fn holds(&self, relative: &str) -> bool {
        let path = normal(relative);
        !path.is_empty()
            && ROOTED
                .iter()
                .map(|(dir, _)| *dir)
                .chain(self.hooks.as_deref())
                .any(|surface| surface.len() > path.len() && under(surface, &path))
    }

    /// Whether writing `relative` (project-relative) plants code, and why.
    pub fn surface(&self, relative: &str) -> Option<Surface> {
        let path = normal(relative);
        let found = |why: &str| {
            Some(Surface {
                why: why.to_string(),
            })
        };
        if let Some(hooks) = &self.hooks
            && under(&path, hooks)
        {
            return found("git hooks (core.hooksPath)");
        }
        if let Some((_, why)) = ROOTED.iter().find(|(dir, _)| under(&path, dir)) {
            return found(why);
        }
        let components: Vec<&str> = path.split('/').collect();
        let name = components.last();
        if let Some((_, why)) = DIRECTORIES.iter().find(|(dir, _)| components.contains(dir)) {
            return found(why);
        }
        let name = name.copied().unwrap_or_default();
        FILES
            .iter()
            .find(|(file, _)| name == *file)
            .and_then(|(_, why)| found(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_directory_and_every_entry_are_surfaces_in_any_case() {
        let table = Surfaces::new(Some("./.husky/_/"));
        for path in [
            ".husky/_/pre-commit",
            ".HUSKY/_/pre-commit",
            ".claude/settings.json",
            "sub/.Claude/settings.local.json",
            ".gemini/settings.json",
            ".codex/config.toml",
            ".cursor/rules/x.mdc",
            "CLAUDE.md",
            "docs/GEMINI.md",
            ".vscode/tasks.json",
            ".idea/workspace.xml",
            ".mcp.json",
            ".envrc",
            "tools/.envrc",
            ".github/workflows/ci.yml",
            ".GitHub/Workflows/ci.yml",
            ".mino/config.toml",
            ".mino/skills/x/SKILL.md",
            "AGENTS.md",
            "sub/agents.md",
        ] {
            assert!(table.surface(path).is_some(), "{path}");
        }
        let hooks = table.surface(".husky/_/pre-commit").unwrap_or_else(|| {
            panic!("no surface");
        });
        assert_eq!(
            hooks.sentence(),
            "code written here runs later: git hooks (core.hooksPath)"
        );
    }

    #[test]
    fn a_directory_a_rooted_surface_or_the_hooks_lie_below_holds_them() {
        let table = Surfaces::new(Some("tools/githooks"));
        for path in [".github", ".GitHub", "tools", "./tools/"] {
            assert!(table.holds(path), "{path}");
        }
        for path in [
            "",
            ".github/workflows",
            "tools/githooks",
            "tool",
            "src",
            "tools/x",
        ] {
            assert!(!table.holds(path), "{path}");
        }
    }

    #[test]
    fn ordinary_files_are_not_surfaces() {
        let table = Surfaces::new(Some("githooks"));
        for path in [
            "src/main.rs",
            "README.md",
            "github/workflows/x.yml",
            "docs/workflows/ci.yml",
            "agents.md.bak",
            "githooksx/pre-commit",
            "claude/notes.md",
        ] {
            assert_eq!(table.surface(path), None, "{path}");
        }
        assert_eq!(Surfaces::new(None).surface("githooks/pre-commit"), None);
        assert!(table.surface("githooks/pre-commit").is_some());
    }
}
