//! The table of tools: which exist in this run (tool existence settings
//! remove a tool from what the model is offered at all), lookup by name, and
//! the tools that come and go while mino runs (an MCP server's), reached
//! through `ToolSource` so this table never depends on where they come from.

use std::sync::Arc;

use super::bash::Bash;
use super::edit_file::EditFile;
use super::fetch_content::FetchContent;
use super::final_answer::FinalAnswer;
use super::list_dir::ListDir;
use super::lsp::Lsp;
use super::plan::PlanTool;
use super::read_file::ReadFile;
use super::search::Search;
use super::skill_view::SkillView;
use super::write_file::WriteFile;
use super::{Tool, ToolSpec};

/// Which optional tools exist (`[tools]` in settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switches {
    pub bash: bool,
    /// write_file and edit_file.
    pub edit: bool,
    pub fetch: bool,
    pub plan: bool,
    /// lsp (only offered where a run has language servers set up).
    pub lsp: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Self {
            bash: true,
            edit: true,
            fetch: true,
            plan: true,
            lsp: true,
        }
    }
}

/// Tools whose list changes while mino runs (the tools of MCP servers as
/// they start, stop and re-list). Their names never collide with a
/// built-in tool's: they start with `mcp_`.
pub trait ToolSource: Send + Sync {
    /// The current tools' specs, in a stable order.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The tool named `name`, when it exists now.
    fn get(&self, name: &str) -> Option<Arc<dyn Tool>>;
}

/// The tools offered to the model, in a fixed order, with the built-in
/// tools' specs built once (every request carries them).
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl Registry {
    pub fn new(switches: Switches) -> Self {
        let mut tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadFile),
            Arc::new(ListDir),
            Arc::new(Search),
            Arc::new(SkillView),
        ];
        if switches.edit {
            tools.push(Arc::new(WriteFile));
            tools.push(Arc::new(EditFile));
        }
        if switches.bash {
            tools.push(Arc::new(Bash));
        }
        if switches.fetch {
            tools.push(Arc::new(FetchContent {
                output: switches.edit,
                ..FetchContent::default()
            }));
        }
        if switches.plan {
            tools.push(Arc::new(PlanTool));
        }
        if switches.lsp {
            tools.push(Arc::new(Lsp));
        }
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self {
            tools,
            specs,
            sources: Vec::new(),
        }
    }

    /// The small profile's tools (`small.rs`): read_file, list_dir,
    /// search, the writes and bash where `switches` have them, and
    /// final_answer, each under its short spec.
    pub fn small(switches: Switches) -> Self {
        let mut tools: Vec<Arc<dyn Tool>> =
            vec![Arc::new(ReadFile), Arc::new(ListDir), Arc::new(Search)];
        if switches.edit {
            tools.push(Arc::new(EditFile));
            tools.push(Arc::new(WriteFile));
        }
        if switches.bash {
            tools.push(Arc::new(Bash));
        }
        tools.push(Arc::new(FinalAnswer));
        let specs = tools.iter().map(|t| super::small::spec(t.spec())).collect();
        Self {
            tools,
            specs,
            sources: Vec::new(),
        }
    }

    /// The same tools without the built-in one named `name` (skill_view in a
    /// project without skills: a tool that can only fail is not offered).
    pub fn without(mut self, name: &str) -> Self {
        if let Some(at) = self.specs.iter().position(|spec| spec.name == name) {
            self.specs.remove(at);
            self.tools.remove(at);
        }
        self
    }

    /// The same tools with the built-in one named as `spec` offered under
    /// `spec` instead of its own (bash without the way out of the sandbox
    /// where nobody could allow it).
    pub fn with_spec(mut self, spec: ToolSpec) -> Self {
        self.set_spec(spec);
        self
    }

    /// Replaces the spec of the built-in tool `spec` names.
    pub fn set_spec(&mut self, spec: ToolSpec) {
        if let Some(at) = self.specs.iter().position(|s| s.name == spec.name) {
            self.specs[at] = spec;
        }
    }

    /// Adds the tools of `source` after the built-in ones (and those of
    /// the sources added before).
    pub fn with_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.specs
            .iter()
            .position(|spec| spec.name == name)
            .and_then(|i| self.tools.get(i))
            .cloned()
            .or_else(|| self.sources.iter().find_map(|s| s.get(name)))
    }

    /// What a request offers: the built-in tools, then the source's.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.specs.clone();
        for source in &self.sources {
            specs.extend(source.specs());
        }
        specs
    }

    pub fn names(&self) -> Vec<String> {
        self.specs()
            .into_iter()
            .map(|spec| spec.name.into_owned())
            .collect()
    }
}
