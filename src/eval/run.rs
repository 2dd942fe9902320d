//! One run of a case: a temporary copy of its fixture as the project, a
//! temporary mino home whose settings name the case's model, and the mino
//! binary itself run as `mino -p PROMPT --output-format stream-json` in it,
//! so the run goes through the same turn loop and the same decision as any
//! other. Never touches the user's own home or project. With `--keep`,
//! a run happens in a directory of its own under the one given, and stays.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::EvalError;
use super::case::{Case, CaseModel};

/// Where one run happens: removed when dropped, unless it was kept.
pub struct RunDir {
    root: PathBuf,
    /// The temporary directory that removes `root` when dropped; `None`
    /// for a kept run.
    _temporary: Option<tempfile::TempDir>,
}

/// Where a run's directory goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A temporary directory, removed after grading.
    Temporary,
    /// This directory, made new (it must not exist yet) and kept.
    Kept(PathBuf),
}

/// The name of a kept run's directory: `CASE-MODEL-N`, the case's name
/// with anything but letters, digits, `-` and `_` replaced by `_` (a case
/// file names itself; it must not name a place).
pub fn kept_name(case: &Case, model: &CaseModel, number: u32) -> String {
    let name: String = case
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{name}-{}-{number}", model.as_str())
}

impl RunDir {
    fn new(place: Place) -> Result<Self, EvalError> {
        match place {
            Place::Temporary => {
                let dir = tempfile::Builder::new()
                    .prefix("mino-eval-")
                    .tempdir()
                    .map_err(|source| EvalError::Setup {
                        path: std::env::temp_dir(),
                        source,
                    })?;
                Ok(Self {
                    root: dir.path().to_path_buf(),
                    _temporary: Some(dir),
                })
            }
            Place::Kept(root) => {
                if let Some(parent) = root.parent() {
                    std::fs::create_dir_all(parent).map_err(|source| EvalError::Setup {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                // A run never lands in, or mixes with, what is there.
                std::fs::create_dir(&root).map_err(|source| EvalError::Setup {
                    path: root.clone(),
                    source,
                })?;
                Ok(Self {
                    root,
                    _temporary: None,
                })
            }
        }
    }

    pub fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// A kept run also keeps what mino printed and how it was graded:
    /// `stream.jsonl`, `stderr.txt`, `failures.txt`.
    pub fn keep_output(&self, finished: &Finished, failures: &[String]) -> Result<(), EvalError> {
        if self._temporary.is_some() {
            return Ok(());
        }
        let stream: String = finished
            .events
            .iter()
            .map(|event| format!("{event}\n"))
            .collect();
        for (name, text) in [
            ("stream.jsonl", stream),
            ("stderr.txt", finished.stderr.clone()),
            ("failures.txt", failures.join("\n")),
        ] {
            let path = self.root.join(name);
            std::fs::write(&path, text).map_err(|source| EvalError::Setup { path, source })?;
        }
        Ok(())
    }
}

/// What the live model is, for runs that use it.
#[derive(Debug, Clone, Default)]
pub struct LiveModel {
    /// The user's `config.toml`, copied into each run's home.
    pub config: Option<PathBuf>,
    /// The user's `SOUL.md`, likewise.
    pub soul: Option<PathBuf>,
    /// `--provider`, `--base-url`, `--model` given to `mino eval`.
    pub flags: Vec<String>,
}

/// What a run left: its `stream-json` events and whether it ended in time.
pub struct Finished {
    pub events: Vec<Value>,
    pub timed_out: bool,
    pub stderr: String,
}

/// Lays out the project and home of one run of `case`.
pub fn lay_out(
    case: &Case,
    model: &CaseModel,
    live: &LiveModel,
    place: Place,
) -> Result<RunDir, EvalError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EvalError::Setup { path, source }
    };
    let run = RunDir::new(place)?;
    let project = run.project();
    std::fs::create_dir_all(&project).map_err(io(&project))?;
    if let Some(fixture) = &case.fixture {
        copy_tree(fixture, &project)?;
    }
    for (path, content) in &case.files {
        no_link_on_the_way(case, &project, path, "[files]")?;
        let target = project.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&target, content).map_err(io(&target))?;
    }
    for (path, target) in &case.links {
        no_link_on_the_way(case, &project, path, "[links]")?;
        let link = project.join(path);
        std::os::unix::fs::symlink(target, &link).map_err(io(&link))?;
    }
    let home = run.home();
    std::fs::create_dir_all(&home).map_err(io(&home))?;
    let config = home_config(case, model, live)?;
    let config_file = home.join("config.toml");
    std::fs::write(&config_file, config).map_err(io(&config_file))?;
    if let (CaseModel::Live, Some(soul)) = (model, &live.soul) {
        let target = home.join("SOUL.md");
        std::fs::copy(soul, &target).map_err(io(&target))?;
    }
    Ok(run)
}

/// The settings of a run's home: for a scripted case, only its script;
/// for a live one, the user's own settings with the case's window.
fn home_config(case: &Case, model: &CaseModel, live: &LiveModel) -> Result<String, EvalError> {
    let mut doc = match (model, &live.config) {
        (CaseModel::Live, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|source| EvalError::Read {
                path: path.clone(),
                source,
            })?;
            text.parse::<toml_edit::DocumentMut>()
                .map_err(|e| EvalError::InvalidCase {
                    path: path.clone(),
                    problem: e.to_string(),
                })?
        }
        _ => toml_edit::DocumentMut::new(),
    };
    // The mode comes from the case (--mode); a start mode in the user's
    // settings must not disagree with it.
    doc.remove("default_mode");
    doc.remove("yolo");
    if !doc.contains_table("model") {
        doc["model"] = toml_edit::table();
    }
    if let CaseModel::Scripted(script) = model {
        doc["model"]["provider"] = toml_edit::value("scripted");
        doc["model"]["model"] = toml_edit::value("eval-script");
        doc["model"]["script"] = toml_edit::value(script.display().to_string());
    }
    if let Some(window) = case.context_window {
        doc["model"]["context_window"] =
            toml_edit::value(i64::try_from(window).unwrap_or(i64::MAX));
    }
    Ok(doc.to_string())
}

/// Refuses a `[files]` or `[links]` path (relative, without `..`) that
/// passes through, or ends on, a link the fixture or an earlier entry
/// made: writing there would land outside the run's directory.
fn no_link_on_the_way(
    case: &Case,
    project: &Path,
    path: &str,
    table: &str,
) -> Result<(), EvalError> {
    let mut at = project.to_path_buf();
    for component in Path::new(path).components() {
        at.push(component);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(EvalError::InvalidCase {
                    path: case.file.clone(),
                    problem: format!(
                        "{table} path {path:?} passes through the link {}; files and links are made only inside the project, never through a link",
                        at.strip_prefix(project).unwrap_or(&at).display()
                    ),
                });
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// Copies a fixture directory: files with their permissions, links as
/// links, directories recursively; anything else (a pipe, a device) is
/// left out.
fn copy_tree(from: &Path, to: &Path) -> Result<(), EvalError> {
    let entries = std::fs::read_dir(from).map_err(|source| EvalError::Read {
        path: from.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| EvalError::Read {
            path: from.to_path_buf(),
            source,
        })?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let setup = |e| EvalError::Setup {
            path: target.clone(),
            source: e,
        };
        let kind = entry.file_type().map_err(setup)?;
        if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(setup)?;
            std::os::unix::fs::symlink(link, &target).map_err(setup)?;
        } else if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(setup)?;
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(setup)?;
        }
    }
    Ok(())
}

/// Runs `mino -p` for `case` in `run` and collects its `stream-json`.
pub async fn run_mino(
    mino: &Path,
    case: &Case,
    model: &CaseModel,
    live: &LiveModel,
    run: &RunDir,
) -> Result<Finished, EvalError> {
    let mut command = tokio::process::Command::new(mino);
    command
        .arg("-p")
        .arg(&case.prompt)
        .args(["--output-format", "stream-json", "--mode", case.mode.name()])
        .arg("--cd")
        .arg(run.project())
        .current_dir(run.project())
        .env("MINO_HOME", run.home())
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    if *model == CaseModel::Live {
        command.args(&live.flags);
    }
    let default = match model {
        CaseModel::Scripted(_) => 120,
        CaseModel::Live => 1800,
    };
    let limit = Duration::from_secs(case.timeout_secs.unwrap_or(default));
    let child = command.output();
    let (output, timed_out) = match tokio::time::timeout(limit, child).await {
        Ok(output) => (
            Some(output.map_err(|source| EvalError::Spawn {
                path: mino.to_path_buf(),
                source,
            })?),
            false,
        ),
        Err(_) => (None, true),
    };
    let (stdout, stderr) = output
        .map(|o| {
            (
                String::from_utf8_lossy(&o.stdout).to_string(),
                String::from_utf8_lossy(&o.stderr).to_string(),
            )
        })
        .unwrap_or_default();
    let events = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .collect();
    Ok(Finished {
        events,
        timed_out,
        stderr,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A case directory whose fixture holds `notes.md` and `docs` linking
    /// to a file and a directory outside; `extra` is appended to the case.
    fn case_with(extra: &str) -> (tempfile::TempDir, PathBuf, Result<Case, EvalError>) {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("bashrc"), "kept").unwrap();
        let cases = dir.path().join("cases");
        std::fs::create_dir_all(cases.join("fixture")).unwrap();
        symlink(outside.join("bashrc"), cases.join("fixture/notes.md")).unwrap();
        symlink(&outside, cases.join("fixture/docs")).unwrap();
        let file = cases.join("case.toml");
        std::fs::write(
            &file,
            format!("prompt = \"x\"\nfixture = \"fixture\"\n{extra}"),
        )
        .unwrap();
        let case = Case::load(&file);
        (dir, outside, case)
    }

    #[test]
    fn files_and_links_are_never_made_through_a_fixture_link() {
        for (extra, through) in [
            ("[files]\n\"notes.md\" = \"overwritten\"\n", "notes.md"),
            ("[files]\n\"docs/new.txt\" = \"planted\"\n", "docs"),
            ("[links]\n\"docs/new.txt\" = \"/etc/passwd\"\n", "docs"),
        ] {
            let (_dir, outside, case) = case_with(extra);
            let case = case.unwrap();
            let Err(EvalError::InvalidCase { problem, .. }) = lay_out(
                &case,
                &CaseModel::Live,
                &LiveModel::default(),
                Place::Temporary,
            ) else {
                panic!("{extra} was laid out");
            };
            assert!(
                problem.contains(&format!("the link {through}")),
                "{problem}"
            );
            assert_eq!(
                std::fs::read_to_string(outside.join("bashrc")).unwrap(),
                "kept"
            );
            assert!(!outside.join("new.txt").exists(), "{extra}");
        }
        let (_dir, _outside, case) = case_with("[files]\n\"src/new.txt\" = \"fine\"\n");
        let run = lay_out(
            &case.unwrap(),
            &CaseModel::Live,
            &LiveModel::default(),
            Place::Temporary,
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(run.project().join("src/new.txt")).unwrap(),
            "fine"
        );
    }

    #[test]
    fn a_fixture_outside_the_cases_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cases = dir.path().join("cases");
        std::fs::create_dir_all(&cases).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.config")).unwrap();
        symlink(dir.path().join("home"), cases.join("fixtures")).unwrap();
        for fixture in ["../home", "fixtures", "fixtures/.config", "/etc"] {
            let file = cases.join("case.toml");
            std::fs::write(&file, format!("prompt = \"x\"\nfixture = {fixture:?}\n")).unwrap();
            let Err(EvalError::InvalidCase { problem, .. }) = Case::load(&file) else {
                panic!("fixture {fixture} was accepted");
            };
            assert!(problem.contains("must be a directory inside"), "{problem}");
        }
    }
}
