//! The table of tools: which exist in this run (tool existence settings
//! remove a tool from what the model is offered at all) and lookup by name.

use super::bash::Bash;
use super::edit_file::EditFile;
use super::fetch_content::FetchContent;
use super::list_dir::ListDir;
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
}

impl Default for Switches {
    fn default() -> Self {
        Self {
            bash: true,
            edit: true,
            fetch: true,
        }
    }
}

/// The tools offered to the model, in a fixed order, with their specs
/// built once (every request carries them).
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
    specs: Vec<ToolSpec>,
}

impl Registry {
    pub fn new(switches: Switches) -> Self {
        let mut tools: Vec<Box<dyn Tool>> = vec![
            Box::new(ReadFile),
            Box::new(ListDir),
            Box::new(Search),
            Box::new(SkillView),
        ];
        if switches.edit {
            tools.push(Box::new(WriteFile));
            tools.push(Box::new(EditFile));
        }
        if switches.bash {
            tools.push(Box::new(Bash));
        }
        if switches.fetch {
            tools.push(Box::new(FetchContent {
                output: switches.edit,
                ..FetchContent::default()
            }));
        }
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self { tools, specs }
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.specs
            .iter()
            .position(|spec| spec.name == name)
            .and_then(|i| self.tools.get(i))
            .map(|t| t.as_ref())
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.specs.iter().map(|spec| spec.name).collect()
    }
}
