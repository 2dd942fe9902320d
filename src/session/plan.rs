//! The session's plan: the model's list of steps for the current task, its
//! bounds, the changes the `plan` tool makes to it, and its text. Kept in
//! the session file as `{"type":"plan","steps":[...]}` (the whole list after
//! every change); the last such record is the session's plan. Pure: no
//! I/O, and nothing here decides whether a change may happen.

use serde::{Deserialize, Serialize};

/// The most steps a plan holds.
pub const MAX_STEPS: usize = 50;

/// The longest step text, in characters.
pub const MAX_STEP_CHARS: usize = 300;

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Done,
}

/// The status words the tool accepts, in the order they are listed.
pub const STATUS_NAMES: &str = "pending, in_progress, done";

impl StepStatus {
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in_progress",
            StepStatus::Done => "done",
        }
    }

    /// The mark a step's line starts with in the tool's text and the panel.
    pub fn mark(self) -> &'static str {
        match self {
            StepStatus::Pending => "[ ]",
            StepStatus::InProgress => "[>]",
            StepStatus::Done => "[x]",
        }
    }

    pub fn parse(text: &str) -> Option<StepStatus> {
        match text {
            "pending" => Some(StepStatus::Pending),
            "in_progress" => Some(StepStatus::InProgress),
            "done" => Some(StepStatus::Done),
            _ => None,
        }
    }
}

/// One step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub text: String,
    pub status: StepStatus,
}

/// The whole list, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub steps: Vec<Step>,
}

/// A change to a plan, as the `plan` tool asks for it. Steps are numbered
/// from 1, as the tool's text shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanChange {
    /// The whole list, every step pending.
    Set(Vec<String>),
    /// A pending step at the end.
    Add(String),
    Update {
        step: usize,
        text: Option<String>,
        status: Option<StepStatus>,
    },
    Remove(usize),
}

/// Why a change cannot be made; the text is what the model receives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("a plan holds at most {MAX_STEPS} steps; this change would make it {0}")]
    TooManySteps(usize),
    #[error(
        "step text is at most {MAX_STEP_CHARS} characters; one given has {0} (keep each step to one short line)"
    )]
    TooLong(usize),
    #[error("step text must not be empty")]
    Empty,
    #[error("there is no step {step}; the plan has {len} (steps are numbered from 1)")]
    NoSuchStep { step: usize, len: usize },
}

/// Checks one step's text: not blank, at most `MAX_STEP_CHARS` characters.
pub fn check_text(text: &str) -> Result<(), PlanError> {
    let chars = text.chars().count();
    if chars > MAX_STEP_CHARS {
        return Err(PlanError::TooLong(chars));
    }
    if text.trim().is_empty() {
        return Err(PlanError::Empty);
    }
    Ok(())
}

impl PlanChange {
    /// Every text the change carries, for checking and redaction.
    pub fn texts_mut(&mut self) -> Vec<&mut String> {
        match self {
            PlanChange::Set(steps) => steps.iter_mut().collect(),
            PlanChange::Add(text) => vec![text],
            PlanChange::Update { text, .. } => text.iter_mut().collect(),
            PlanChange::Remove(_) => Vec::new(),
        }
    }

    /// Checks what can be checked without the plan: the texts and, for
    /// `set`, the number of steps.
    pub fn check(&self) -> Result<(), PlanError> {
        let texts: Vec<&String> = match self {
            PlanChange::Set(steps) => {
                if steps.len() > MAX_STEPS {
                    return Err(PlanError::TooManySteps(steps.len()));
                }
                steps.iter().collect()
            }
            PlanChange::Add(text) => vec![text],
            PlanChange::Update { text, .. } => text.iter().collect(),
            PlanChange::Remove(_) => Vec::new(),
        };
        texts.into_iter().try_for_each(|t| check_text(t))
    }
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Steps done, and steps in all: the status bar's `plan 2/5`.
    pub fn progress(&self) -> (usize, usize) {
        let done = self
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Done)
            .count();
        (done, self.steps.len())
    }

    /// The plan after `change`, or why it cannot be made (the plan is
    /// then unchanged).
    pub fn apply(&self, change: &PlanChange) -> Result<Plan, PlanError> {
        change.check()?;
        let mut steps = self.steps.clone();
        let index = |step: usize| {
            step.checked_sub(1)
                .filter(|i| *i < steps.len())
                .ok_or(PlanError::NoSuchStep {
                    step,
                    len: steps.len(),
                })
        };
        match change {
            PlanChange::Set(texts) => {
                steps = texts
                    .iter()
                    .map(|text| Step {
                        text: text.clone(),
                        status: StepStatus::Pending,
                    })
                    .collect();
            }
            PlanChange::Add(text) => {
                if steps.len() >= MAX_STEPS {
                    return Err(PlanError::TooManySteps(steps.len() + 1));
                }
                steps.push(Step {
                    text: text.clone(),
                    status: StepStatus::Pending,
                });
            }
            PlanChange::Update { step, text, status } => {
                let at = index(*step)?;
                if let Some(entry) = steps.get_mut(at) {
                    if let Some(text) = text {
                        entry.text.clone_from(text);
                    }
                    if let Some(status) = status {
                        entry.status = *status;
                    }
                }
            }
            PlanChange::Remove(step) => {
                let at = index(*step)?;
                steps.remove(at);
            }
        }
        Ok(Plan { steps })
    }

    /// The text the model receives: one numbered line per step with its
    /// mark, and the count done.
    pub fn text(&self) -> String {
        if self.steps.is_empty() {
            return "The plan is empty.".to_string();
        }
        let (done, all) = self.progress();
        let mut out = format!("Plan ({done}/{all} done):\n");
        for (i, step) in self.steps.iter().enumerate() {
            out.push_str(&format!(
                "{}. {} {}\n",
                i + 1,
                step.status.mark(),
                step.text
            ));
        }
        out
    }
}

/// The plan that `records` leave: the last plan record's, held to the
/// bounds a change is (a file written by hand may hold more).
pub fn last_plan(records: &[super::LogEntry]) -> Plan {
    let mut plan = records
        .iter()
        .rev()
        .find_map(|record| match record {
            super::LogEntry::Plan(plan) => Some(plan.clone()),
            _ => None,
        })
        .unwrap_or_default();
    plan.steps.truncate(MAX_STEPS);
    for step in &mut plan.steps {
        if let Some((cut, _)) = step.text.char_indices().nth(MAX_STEP_CHARS) {
            step.text.truncate(cut);
        }
    }
    plan
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn plan(texts: &[&str]) -> Plan {
        Plan::default()
            .apply(&PlanChange::Set(
                texts.iter().map(|t| t.to_string()).collect(),
            ))
            .unwrap()
    }

    #[test]
    fn changes_apply_in_order_and_progress_counts_done_steps() {
        let p = plan(&["read", "fix", "test"]);
        assert_eq!(p.progress(), (0, 3));
        let p = p
            .apply(&PlanChange::Update {
                step: 1,
                text: None,
                status: Some(StepStatus::Done),
            })
            .unwrap();
        let p = p
            .apply(&PlanChange::Update {
                step: 2,
                text: Some("fix the bug".into()),
                status: Some(StepStatus::InProgress),
            })
            .unwrap();
        let p = p.apply(&PlanChange::Add("commit".into())).unwrap();
        let p = p.apply(&PlanChange::Remove(3)).unwrap();
        assert_eq!(p.progress(), (1, 3));
        assert_eq!(
            p.text(),
            "Plan (1/3 done):\n1. [x] read\n2. [>] fix the bug\n3. [ ] commit\n"
        );
    }

    #[test]
    fn a_missing_step_or_a_bad_text_leaves_the_plan_unchanged() {
        let p = plan(&["one"]);
        assert_eq!(
            p.apply(&PlanChange::Remove(0)),
            Err(PlanError::NoSuchStep { step: 0, len: 1 })
        );
        assert_eq!(
            p.apply(&PlanChange::Remove(2)),
            Err(PlanError::NoSuchStep { step: 2, len: 1 })
        );
        assert_eq!(
            p.apply(&PlanChange::Add("  ".into())),
            Err(PlanError::Empty)
        );
        let long = "x".repeat(MAX_STEP_CHARS + 1);
        assert_eq!(
            p.apply(&PlanChange::Add(long)),
            Err(PlanError::TooLong(MAX_STEP_CHARS + 1))
        );
        // A step of exactly the limit in characters (not bytes) is fine.
        assert!(
            p.apply(&PlanChange::Add("é".repeat(MAX_STEP_CHARS)))
                .is_ok()
        );
    }

    #[test]
    fn the_last_plan_record_holds_and_is_kept_to_the_bounds() {
        use super::super::LogEntry;
        let huge = Plan {
            steps: (0..MAX_STEPS + 10)
                .map(|_| Step {
                    text: "é".repeat(MAX_STEP_CHARS + 5),
                    status: StepStatus::Pending,
                })
                .collect(),
        };
        let records = [
            LogEntry::Plan(plan(&["old"])),
            LogEntry::Clear,
            LogEntry::Plan(huge),
        ];
        let last = last_plan(&records);
        assert_eq!(last.steps.len(), MAX_STEPS);
        assert!(
            last.steps
                .iter()
                .all(|s| s.text.chars().count() == MAX_STEP_CHARS)
        );
        assert_eq!(last_plan(&records[..2]), plan(&["old"]));
        assert!(last_plan(&[]).is_empty());
    }

    #[test]
    fn the_number_of_steps_is_bounded_for_set_and_add() {
        let many: Vec<String> = (0..=MAX_STEPS).map(|i| format!("s{i}")).collect();
        assert_eq!(
            Plan::default().apply(&PlanChange::Set(many.clone())),
            Err(PlanError::TooManySteps(MAX_STEPS + 1))
        );
        let full = Plan::default()
            .apply(&PlanChange::Set(many[..MAX_STEPS].to_vec()))
            .unwrap();
        assert_eq!(
            full.apply(&PlanChange::Add("one more".into())),
            Err(PlanError::TooManySteps(MAX_STEPS + 1))
        );
        let err = PlanError::TooManySteps(51).to_string();
        assert!(err.contains("at most 50 steps"), "{err}");
    }
}
