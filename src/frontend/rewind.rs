//! `mino rewind` on the command line (one JSON object out, 2 and the reason
//! on stderr when it cannot), and the checkpoint line of `mino sandbox
//! check`. The work is `checkpoint::rewind`'s.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::checkpoint::rewind::{self, What};
use crate::checkpoint::{Checkpoints, Store};
use crate::config::Settings;
use crate::home::Home;
use crate::session::SessionStore;

/// What `mino rewind` was asked.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub session: &'a str,
    pub list: bool,
    pub to: Option<usize>,
    pub what: What,
    pub force: bool,
}

/// Runs it in `project_dir`; the exit code.
pub fn run(home: &Home, settings: &Settings, project_dir: &Path, request: &Request) -> i32 {
    let root = std::fs::canonicalize(project_dir).unwrap_or_else(|_| project_dir.to_path_buf());
    let mut checkpoints =
        Checkpoints::in_home(home.root(), root.clone(), Arc::new(settings.protected()));
    // The same secret values a run holds: a file holding one is recorded
    // by digest only here too.
    if let Ok(project) = crate::tools::Project::new(&root) {
        let cx = crate::agent::build::tool_context(settings, project);
        checkpoints = checkpoints.with_secrets(cx.secrets);
    }
    let store = SessionStore::new(home.sessions_dir());
    let result = match request.to {
        Some(n) => rewind::to(
            &store,
            &checkpoints,
            request.session,
            n,
            request.what,
            request.force,
        ),
        None => rewind::list(&store, &checkpoints, request.session),
    };
    match result {
        Ok(json) => {
            println!("{json:#}");
            0
        }
        Err(e) => {
            eprintln!("mino rewind: {e}");
            2
        }
    }
}

/// Whether git objects can be hard-linked into the project's store.
pub fn links_report(home: &Home, root: &Path) -> Value {
    let store = Store::for_project(home.root(), root);
    let links = crate::checkpoint::store::links_work(&store, root);
    json!({
        "store": store.root(),
        "git_objects_hard_linked": links.as_ref().map(Result::is_ok),
        "note": match &links {
            Some(Err(e)) => e.clone(),
            Some(Ok(())) => "git objects are hard-linked into the store".to_string(),
            None => "the project has no .git objects".to_string(),
        },
    })
}
