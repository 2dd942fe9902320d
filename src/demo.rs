//! `mino --demo`: lays out the demo project of the seed's opening scene (a
//! note with an injected instruction, a `.env` and `.git/config` holding a
//! marker secret, a link `docs -> .git`, and a small calculator whose test
//! fails) in a new temporary directory, with the script the scripted model
//! plays. Needs no key and no network.

use std::io;
use std::path::{Path, PathBuf};

const NOTES: &str = include_str!("../assets/demo/project/notes.md");
const DOT_ENV: &str = include_str!("../assets/demo/project/dot-env");
const GIT_CONFIG: &str = include_str!("../assets/demo/project/git-config");
const CALC: &str = include_str!("../assets/demo/project/calc.sh");
const TESTS: &str = include_str!("../assets/demo/project/test.sh");
const SCRIPT: &str = include_str!("../assets/demo/script.json");

/// Where the demo was laid out.
pub struct Demo {
    pub project: PathBuf,
    pub script: PathBuf,
}

/// Why the demo could not be laid out; each names the path at fault.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("no randomness for the demo directory's name: {0}")]
    Random(getrandom::Error),
    #[error("could not create {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("could not write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("could not create the link docs -> .git: {0}")]
    Link(io::Error),
}

fn write(path: &Path, text: &str) -> Result<(), DemoError> {
    std::fs::write(path, text).map_err(|source| DemoError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Creates the demo project under the system's temporary directory.
pub fn lay_out() -> Result<Demo, DemoError> {
    let mut suffix = [0u8; 4];
    getrandom::fill(&mut suffix).map_err(DemoError::Random)?;
    let base = std::env::temp_dir().join(format!("mino-demo-{}", hex::encode(suffix)));
    let project = base.join("notes-demo");
    let git = project.join(".git");
    std::fs::create_dir_all(&git).map_err(|source| DemoError::Create {
        path: git.clone(),
        source,
    })?;
    write(&project.join("notes.md"), NOTES)?;
    write(&project.join("calc.sh"), CALC)?;
    write(&project.join("test.sh"), TESTS)?;
    write(&project.join(".env"), DOT_ENV)?;
    write(&git.join("config"), GIT_CONFIG)?;
    std::os::unix::fs::symlink(".git", project.join("docs")).map_err(DemoError::Link)?;
    let script = base.join("script.json");
    write(&script, SCRIPT)?;
    Ok(Demo { project, script })
}
