//! The sandbox's check around one call, on every way the call ends: what
//! the call left that the user's own git would run is undone (`git.rs`),
//! and an execution surface it made is set aside (`set_aside.rs`). Taken
//! before the command starts, carried out after it ended; the note it
//! returns goes into the call's result.

use std::path::Path;

use super::git;
use super::plan::Planner;
use super::set_aside::SurfacesBefore;

/// The state a call's check compares with.
#[derive(Debug)]
pub struct CallCheck {
    git: git::Before,
    surfaces: SurfacesBefore,
    planner: Planner,
}

impl CallCheck {
    /// The project before the call (blocking: walks the project where it
    /// changed, asks git).
    pub fn capture(planner: &Planner, project: &Path) -> Self {
        let (masked, surfaces) = planner.project_scan();
        Self {
            git: git::Before::capture(project, &masked),
            surfaces: SurfacesBefore::new(planner, surfaces),
            planner: planner.clone(),
        }
    }

    /// Undoes and sets aside what the call planted; what was done, if
    /// anything (blocking).
    pub fn restore(self) -> Option<String> {
        let notes: Vec<String> = [self.git.restore(), self.surfaces.set_aside(&self.planner)]
            .into_iter()
            .flatten()
            .collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }
}
