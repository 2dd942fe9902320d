//! The background tools as a `ToolSource`: `bash_output` and `bash_kill`
//! are offered to the model only while this session has a background
//! process (a tool that can only fail is not offered), and found by name
//! always, so a call after the last one ended gets a result that says so.

use std::sync::Arc;

use super::bash::Shells;
use super::bash_kill::{self, BashKill};
use super::bash_output::{self, BashOutput};
use super::registry::ToolSource;
use super::{Tool, ToolSpec};

/// The two background tools of one session's shells.
pub struct ShellTools {
    shells: Arc<Shells>,
}

impl ShellTools {
    pub fn new(shells: Arc<Shells>) -> Self {
        Self { shells }
    }
}

impl ToolSource for ShellTools {
    fn specs(&self) -> Vec<ToolSpec> {
        if self.shells.is_empty() {
            return Vec::new();
        }
        vec![BashOutput.spec(), BashKill.spec()]
    }

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        match name {
            bash_output::NAME => Some(Arc::new(BashOutput)),
            bash_kill::NAME => Some(Arc::new(BashKill)),
            _ => None,
        }
    }
}
