//! The composer's completion popup: what is being completed (a command,
//! a mode, a model, a project file, an MCP server's prompt or resource) and
//! what is offered for it. Reads the app; changes nothing.

use super::app::App;
use crate::agent::commands::COMMANDS;

/// What the completion popup completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completing {
    /// A slash command: the input's only line so far.
    Command(String),
    /// A project file: what follows `@` before the cursor.
    File(String),
    /// A mode's name: what follows `/mode `.
    Mode(String),
    /// A model's (or a preset's) name: what follows `/model `.
    Model(String),
}

/// Files the `@` popup offers at once.
pub const FILES_OFFERED: usize = 8;

impl App {
    /// What the popup would complete: a `/word` alone on the input's only
    /// line, or an `@path` word just before the cursor.
    pub fn completing(&self) -> Option<Completing> {
        if self.completion_dismissed {
            return None;
        }
        let lines = self.input.lines();
        if let [line] = lines
            && line.starts_with('/')
            && !line.contains(char::is_whitespace)
        {
            return Some(Completing::Command(line.clone()));
        }
        if let [line] = lines
            && let Some(partial) = line.strip_prefix("/mode ")
            && !partial.contains(char::is_whitespace)
        {
            return Some(Completing::Mode(partial.to_string()));
        }
        if let [line] = lines
            && let Some(partial) = line.strip_prefix("/model ")
            && !partial.contains(char::is_whitespace)
        {
            return Some(Completing::Model(partial.to_string()));
        }
        let ratatui_textarea::DataCursor(row, col) = self.input.cursor();
        let line = lines.get(row)?;
        let before: String = line.chars().take(col).collect();
        let word = before.rsplit(char::is_whitespace).next()?;
        let partial = word.strip_prefix('@')?;
        Some(Completing::File(partial.to_string()))
    }

    /// The MCP resources an `@SERVER:` word names, their URIs starting with
    /// what follows it (none until a known server's name and `:` are typed).
    fn resource_completions(&self, partial: &str) -> Vec<(String, &'static str)> {
        let Some((server, uri)) = partial.split_once(':') else {
            return Vec::new();
        };
        self.mcp_catalog
            .resources
            .iter()
            .filter(|r| r.server == server && r.uri.starts_with(uri) && r.uri != uri)
            .take(FILES_OFFERED)
            .map(|r| (crate::controls::visible(&r.mention()), "MCP resource"))
            .collect()
    }

    /// What the popup offers for what is typed (label, what it is): the
    /// commands a `/word` starts, or the project files (as listed by the
    /// confined walk, so never a protected path) whose path contains what
    /// follows `@`, those that start with it first.
    pub fn completions(&self) -> Vec<(String, &'static str)> {
        match self.completing() {
            None => Vec::new(),
            // A whole name typed is what Enter sends (`/mode`, not `/model`).
            Some(Completing::Command(line)) if COMMANDS.iter().any(|spec| spec.name == line) => {
                Vec::new()
            }
            Some(Completing::Command(line)) => {
                let prompts = self.mcp_catalog.prompts.iter().map(|p| p.command());
                COMMANDS
                    .iter()
                    .filter(|spec| spec.name.starts_with(line.as_str()))
                    .map(|spec| (spec.name.to_string(), spec.help))
                    .chain(
                        prompts
                            .filter(|c| c.starts_with(line.as_str()) && *c != line)
                            .take(FILES_OFFERED)
                            .map(|c| (crate::controls::visible(&c), "MCP prompt")),
                    )
                    .collect()
            }
            Some(Completing::Mode(partial)) => crate::policy::Mode::ALL
                .iter()
                .map(|mode| mode.name())
                .filter(|name| name.starts_with(partial.as_str()) && *name != partial)
                .map(|name| (name.to_string(), "permission mode"))
                .collect(),
            Some(Completing::Model(partial)) => self
                .model_names
                .iter()
                .filter(|name| name.starts_with(partial.as_str()) && **name != partial)
                .take(FILES_OFFERED)
                .map(|name| (name.clone(), "model"))
                .collect(),
            Some(Completing::File(partial)) => {
                let resources = self.resource_completions(&partial);
                if !resources.is_empty() {
                    return resources;
                }
                let Some(files) = &self.files else {
                    return Vec::new();
                };
                let needle = partial.to_lowercase();
                let mut starts = Vec::new();
                let mut contains = Vec::new();
                for path in files {
                    let lower = path.to_lowercase();
                    if lower == needle {
                        continue;
                    }
                    if lower.starts_with(&needle)
                        || lower
                            .rsplit('/')
                            .next()
                            .is_some_and(|n| n.starts_with(&needle))
                    {
                        starts.push(path);
                    } else if lower.contains(&needle) {
                        contains.push(path);
                    }
                    if starts.len() >= FILES_OFFERED {
                        break;
                    }
                }
                starts
                    .into_iter()
                    .chain(contains)
                    .take(FILES_OFFERED)
                    .map(|path| (format!("@{path}"), "file"))
                    .collect()
            }
        }
    }
}
