//! `mino eval`: runs declared cases (a TOML file each) through the same
//! turn loop and decision as any session, in a temporary copy of each
//! case's fixture, and grades each run against the records it saved. A
//! scripted case runs once; a live one `--repeat` times, with its pass rate
//! and a Wilson interval. Never touches the user's project or sessions.

pub mod case;
pub mod grade;
pub mod known;
pub mod report;
pub mod run;

use std::path::PathBuf;

pub use case::{Case, CaseModel};
pub use report::{CaseReport, Report, RunReport, wilson};
pub use run::LiveModel;

/// Why eval could not run (a case that fails is a result, not an error).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the case {path} is not valid: {problem}")]
    InvalidCase { path: PathBuf, problem: String },
    #[error("cannot lay out a run at {path}: {source}")]
    Setup {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {path}: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no case files were given (name .toml files or directories holding them)")]
    NoCases,
}

/// What `mino eval` was asked.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Case files and directories of them.
    pub cases: Vec<PathBuf>,
    /// Runs of each live case.
    pub repeat: u32,
    /// Run every case against the live model, scripts or not.
    pub live: bool,
    /// The mino binary each run starts (this one).
    pub mino: PathBuf,
    pub live_model: LiveModel,
    /// `--keep DIR`: each run's directory is kept there.
    pub keep: Option<PathBuf>,
}

/// Runs every case and returns the report. Progress goes to `progress`
/// (one line a run).
pub async fn run(
    options: &EvalOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, EvalError> {
    let files = case::collect(&options.cases)?;
    let cases = files
        .iter()
        .map(|file| Case::load(file))
        .collect::<Result<Vec<_>, _>>()?;
    let mut reports = Vec::new();
    for case in &cases {
        let model = case.model(options.live);
        let repeat = match model {
            CaseModel::Scripted(_) => 1,
            CaseModel::Live => options.repeat.max(1),
        };
        let mut runs = Vec::new();
        for number in 1..=repeat {
            let report = run_once(options, case, &model, number).await?;
            progress(&format!(
                "{} ({}) run {number}/{repeat}: {}",
                case.name,
                model.as_str(),
                if report.passed { "pass" } else { "fail" }
            ));
            runs.push(report);
        }
        reports.push(CaseReport::new(
            case.name.clone(),
            case.file.display().to_string(),
            model.as_str(),
            runs,
        ));
    }
    Ok(Report::new(reports))
}

async fn run_once(
    options: &EvalOptions,
    case: &Case,
    model: &CaseModel,
    number: u32,
) -> Result<RunReport, EvalError> {
    let place = match &options.keep {
        Some(keep) => run::Place::Kept(keep.join(run::kept_name(case, model, number))),
        None => run::Place::Temporary,
    };
    let dir = run::lay_out(case, model, &options.live_model, place)?;
    let before = grade::snapshot(case, &dir.project());
    let finished = run::run_mino(&options.mino, case, model, &options.live_model, &dir).await?;
    let records = grade::Records::read(&dir.home(), &finished);
    let soul = options
        .live_model
        .soul
        .as_ref()
        .and_then(|path| std::fs::read_to_string(path).ok());
    let known = known::sentences(soul.as_deref());
    let mut failures = grade::grade(
        &case.expect,
        &grade::Run {
            records: &records,
            project: &dir.project(),
            before: &before,
            finished: &finished,
            known: &known,
        },
    );
    if records.stop.is_none() && !finished.timed_out {
        let said = finished.stderr.trim();
        failures.push(format!(
            "mino ended without finishing the turn{}",
            if said.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::model::http::clip(said, 300))
            }
        ));
    }
    dir.keep_output(&finished, &failures)?;
    Ok(RunReport {
        passed: failures.is_empty(),
        stop: records.stop,
        failures,
    })
}
