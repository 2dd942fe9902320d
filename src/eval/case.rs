//! One eval case as its TOML file declares it: a fixture project, a prompt,
//! a mode, a model (a script, or the configured live one) and what the run
//! must show. Reads and checks the file; never runs anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::policy::{MODE_NAMES, Mode};

use super::EvalError;

/// A case file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Option<String>,
    description: Option<String>,
    prompt: String,
    mode: Option<String>,
    /// A directory, relative to the case file, copied as the project.
    fixture: Option<String>,
    /// Files written into the project after the fixture, path → content.
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Symbolic links made in the project, path → target.
    #[serde(default)]
    links: BTreeMap<String, String>,
    #[serde(default)]
    model: RawCaseModel,
    /// Seconds one run may take before it counts as failed.
    timeout_secs: Option<u64>,
    #[serde(default)]
    expect: Expect,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCaseModel {
    /// A scripted model's script, relative to the case file. Without one
    /// the case runs only against the configured live model.
    script: Option<String>,
    /// `[model] context_window` for this case's runs.
    context_window: Option<u64>,
}

/// What a run must show. Every field is optional; an empty `[expect]`
/// only asks that the run ends.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// How the turn must end (`turn_end.stop`), e.g. `completed`.
    pub stop: Option<String>,
    /// Tools the model must have called at least once.
    #[serde(default)]
    pub called: Vec<String>,
    /// Tools the model must never have called.
    #[serde(default)]
    pub not_called: Vec<String>,
    /// Calls that must never have been made: a tool whose raw arguments
    /// contain a text.
    #[serde(default)]
    pub no_call: Vec<CallPattern>,
    /// Decisions that must each have been made at least once.
    #[serde(default)]
    pub decisions: Vec<DecisionPattern>,
    /// Project files after the run.
    #[serde(default)]
    pub files: Vec<FileCheck>,
    /// Texts that must appear nowhere in the session log (everything sent
    /// to the model but the system prompt comes from it).
    #[serde(default)]
    pub secrets_never_sent: Vec<String>,
    /// A regular expression the last answer must match (`(?i)` for any
    /// case), once the sentences mino itself gave the model (the system
    /// prompt's, the tools' descriptions) are taken out of it.
    pub final_text: Option<String>,
    /// Records the run must have left, each at least once: a call the
    /// decision denied, a tool result holding a text.
    #[serde(default)]
    pub records: Vec<RecordPattern>,
    /// Groups of expectations of which at least one must hold entirely
    /// ("done or refused"), besides everything above.
    #[serde(default)]
    pub any: Vec<Expect>,
}

/// A record a run must have left.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordPattern {
    pub kind: RecordKind,
    pub tool: String,
    /// `denied`: the denial's code (`MINO_DENY_PROTECTED_PATH`, ...); any
    /// code when absent.
    pub code: Option<String>,
    /// `result`: a text the result's output must contain.
    pub contains: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// A call of the tool that the decision denied.
    Denied,
    /// A result of a call of the tool.
    Result,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallPattern {
    pub tool: String,
    pub arguments_contain: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionPattern {
    pub tool: String,
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    pub code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    pub path: String,
    /// Whether its content must differ (true) or be the same (false) as
    /// before the run; unchecked when absent.
    pub changed: Option<bool>,
    #[serde(default)]
    pub contains: Vec<String>,
    #[serde(default)]
    pub not_contains: Vec<String>,
}

/// Which model a run talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseModel {
    Scripted(PathBuf),
    Live,
}

impl CaseModel {
    pub fn as_str(&self) -> &'static str {
        match self {
            CaseModel::Scripted(_) => "scripted",
            CaseModel::Live => "live",
        }
    }
}

/// A checked case.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
    pub prompt: String,
    pub mode: Mode,
    pub fixture: Option<PathBuf>,
    pub files: BTreeMap<String, String>,
    pub links: BTreeMap<String, String>,
    pub script: Option<PathBuf>,
    pub context_window: Option<u64>,
    pub timeout_secs: Option<u64>,
    pub expect: Expect,
}

impl Case {
    /// Reads and checks the case at `file`. Errors name the file and what
    /// is wrong.
    pub fn load(file: &Path) -> Result<Case, EvalError> {
        let text = std::fs::read_to_string(file).map_err(|source| EvalError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        let invalid = |problem: String| EvalError::InvalidCase {
            path: file.to_path_buf(),
            problem,
        };
        let raw: RawCase = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let dir = file.parent().unwrap_or(Path::new("."));
        let mode = match &raw.mode {
            Some(name) => name
                .parse::<Mode>()
                .map_err(|_| invalid(format!("mode {name:?} is not one of {MODE_NAMES}")))?,
            None => Mode::Manual,
        };
        if raw.prompt.trim().is_empty() {
            return Err(invalid("prompt is empty".into()));
        }
        for path in raw.files.keys().chain(raw.links.keys()) {
            if !is_relative_inside(path) {
                return Err(invalid(format!(
                    "{path:?} in [files] or [links] must be a relative path inside the project"
                )));
            }
        }
        check_expect(&raw.expect, "expect").map_err(invalid)?;
        let fixture = match &raw.fixture {
            Some(given) => Some(fixture_inside(dir, given).map_err(invalid)?),
            None => None,
        };
        let name = raw.name.clone().unwrap_or_else(|| {
            file.file_stem()
                .map(|stem| stem.to_string_lossy().to_string())
                .unwrap_or_default()
        });
        Ok(Case {
            name,
            description: raw.description.unwrap_or_default(),
            file: file.to_path_buf(),
            prompt: raw.prompt,
            mode,
            fixture,
            files: raw.files,
            links: raw.links,
            script: raw.model.script.map(|s| dir.join(s)),
            context_window: raw.model.context_window,
            timeout_secs: raw.timeout_secs,
            expect: raw.expect,
        })
    }

    /// The model a run of this case uses: its script, unless `live` or it
    /// has none.
    pub fn model(&self, live: bool) -> CaseModel {
        match &self.script {
            Some(script) if !live => CaseModel::Scripted(script.clone()),
            _ => CaseModel::Live,
        }
    }
}

/// Checks what `expect` (at `key` in the case file) asks: paths inside the
/// project, regular expressions, records that say what they need, and the
/// same for each group of `any`.
fn check_expect(expect: &Expect, key: &str) -> Result<(), String> {
    for check in &expect.files {
        if !is_relative_inside(&check.path) {
            return Err(format!(
                "{key}.files path {:?} must be a relative path inside the project",
                check.path
            ));
        }
    }
    if let Some(pattern) = &expect.final_text {
        regex::Regex::new(pattern)
            .map_err(|e| format!("{key}.final_text is not a regular expression: {e}"))?;
    }
    for record in &expect.records {
        match (record.kind, &record.code, &record.contains) {
            (RecordKind::Denied, _, None) => {}
            (RecordKind::Result, None, Some(text)) if !text.is_empty() => {}
            (RecordKind::Denied, _, Some(_)) => {
                return Err(format!(
                    "{key}.records: a `denied` record takes `tool` and an optional `code`, not `contains`"
                ));
            }
            (RecordKind::Result, ..) => {
                return Err(format!(
                    "{key}.records: a `result` record takes `tool` and a non-empty `contains`, not `code`"
                ));
            }
        }
    }
    for (n, group) in expect.any.iter().enumerate() {
        check_expect(group, &format!("{key}.any[{n}]"))?;
    }
    Ok(())
}

/// The fixture directory `given` names, which must lie inside the case
/// file's directory `dir` once links are followed: a cloned repository's
/// case must not copy the user's home (or anything else) into a run.
fn fixture_inside(dir: &Path, given: &str) -> Result<PathBuf, String> {
    let outside = || {
        format!(
            "fixture {given:?} must be a directory inside {} (relative, without `..`, not through a link out of it)",
            dir.display()
        )
    };
    if !is_relative_inside(given) {
        return Err(outside());
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let base =
        std::fs::canonicalize(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let real = std::fs::canonicalize(dir.join(given))
        .map_err(|e| format!("fixture {given:?} cannot be read: {e}"))?;
    if real == base || !real.starts_with(&base) || !real.is_dir() {
        return Err(outside());
    }
    Ok(real)
}

/// A relative path with no `..`, no root and no empty name.
fn is_relative_inside(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The case files `paths` name: files as given, directories' `*.toml`
/// files (not recursively), sorted.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, EvalError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|source| EvalError::Read {
                path: path.clone(),
                source,
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "toml"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        return Err(EvalError::NoCases);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_file_is_checked_and_its_paths_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("typo.toml");
        std::fs::write(
            &file,
            "prompt = \"fix\"\nmode = \"accept-edits\"\n[model]\nscript = \"s.json\"\n[files]\n\"notes.md\" = \"# Relase\"\n[expect]\nstop = \"completed\"\n[[expect.files]]\npath = \"notes.md\"\nchanged = true\n",
        )
        .unwrap();
        let case = Case::load(&file).unwrap();
        assert_eq!(case.name, "typo");
        assert_eq!(case.mode, Mode::AcceptEdits);
        assert_eq!(
            case.model(false),
            CaseModel::Scripted(dir.path().join("s.json"))
        );
        assert_eq!(case.model(true), CaseModel::Live);
        assert_eq!(case.expect.files[0].changed, Some(true));
    }

    #[test]
    fn bad_cases_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        for (text, problem) in [
            ("prompt = \"x\"\nmode = \"wild\"\n", "mode \"wild\""),
            (
                "prompt = \"x\"\n[files]\n\"../out\" = \"\"\n",
                "inside the project",
            ),
            (
                "prompt = \"x\"\n[expect]\nfinal_text = \"(\"\n",
                "regular expression",
            ),
            ("prompt = \"x\"\nsurprise = 1\n", "unknown field"),
        ] {
            let file = dir.path().join("bad.toml");
            std::fs::write(&file, text).unwrap();
            let error = Case::load(&file).unwrap_err().to_string();
            assert!(error.contains("bad.toml"), "{error}");
            assert!(error.contains(problem), "{error}");
        }
    }
}
