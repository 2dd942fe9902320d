//! `plan`: the model's list of steps for the current task, kept with the
//! session. `show` is a confined read; `set`, `add`, `update` and `remove`
//! are plan changes (their own kind in the mode table). Owns the arguments,
//! the fields a question shows, and running a change against the plan the
//! driver hands over (`give_plan`): the step texts are redacted and kept to
//! one line first, then the change is applied (`session::plan`). Never
//! decides and never saves: the driver saves the plan the outcome carries.

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec, parse_args,
};
use crate::policy::{CallFacts, CallKind, ToolKey};
use crate::secrets::HeldSecrets;
use crate::session::plan::{MAX_STEP_CHARS, MAX_STEPS, STATUS_NAMES};
use crate::session::{Plan, PlanChange, StepStatus};

/// The tool's name, as the model calls it.
pub const NAME: &str = "plan";

/// The actions, as the schema lists them.
const ACTIONS: &str = "show, set, add, update, remove";

/// The session's plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    action: String,
    #[serde(default)]
    steps: Option<Vec<String>>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    status: Option<String>,
}

fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: NAME,
        message: message.into(),
    }
}

impl Tool for PlanTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Your step list for this task, shown to the user. \
                set replaces it; update a step's status as you work."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["show", "set", "add", "update", "remove"]},
                    "steps": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_STEPS, "description": "set: every step"},
                    "text": {"type": "string", "maxLength": MAX_STEP_CHARS},
                    "step": {"type": "integer", "minimum": 1, "description": "update, remove: number from 1"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                },
                "required": ["action"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        let change = change_of(args)?;
        if let Some(change) = &change {
            change.check().map_err(|e| invalid(e.to_string()))?;
        }
        let kind = match change {
            None => CallKind::ConfinedRead,
            Some(_) => CallKind::PlanChange,
        };
        Ok(Box::new(PreparedPlan {
            facts: CallFacts::new(ToolKey::new(NAME), kind),
            change,
            plan: Plan::default(),
            secrets: cx.secrets.clone(),
        }))
    }
}

/// A step number as given: from 1.
fn step_number(step: Option<u64>, action: &str) -> Result<usize, ToolError> {
    match step {
        Some(n) if n >= 1 => usize::try_from(n).map_err(|_| invalid("`step` is too large")),
        Some(_) => Err(invalid("`step` is numbered from 1")),
        None => Err(invalid(format!("{action} needs `step` (numbered from 1)"))),
    }
}

/// The status word, with the spellings models use for the same three.
fn status_of(text: &str) -> Result<StepStatus, ToolError> {
    StepStatus::parse(text)
        .or(match text {
            "in progress" | "in-progress" => Some(StepStatus::InProgress),
            "completed" => Some(StepStatus::Done),
            _ => None,
        })
        .ok_or_else(|| invalid(format!("unknown status {text:?}; accepted: {STATUS_NAMES}")))
}

/// The change the arguments ask for; `None` for `show`.
fn change_of(args: Args) -> Result<Option<PlanChange>, ToolError> {
    let change = match args.action.as_str() {
        "show" => return Ok(None),
        "set" => PlanChange::Set(
            args.steps
                .ok_or_else(|| invalid("set needs `steps`: the whole list"))?,
        ),
        "add" => PlanChange::Add(args.text.ok_or_else(|| invalid("add needs `text`"))?),
        "update" => {
            let step = step_number(args.step, "update")?;
            let status = args.status.as_deref().map(status_of).transpose()?;
            if args.text.is_none() && status.is_none() {
                return Err(invalid("update needs `text`, `status` or both"));
            }
            PlanChange::Update {
                step,
                text: args.text,
                status,
            }
        }
        "remove" => PlanChange::Remove(step_number(args.step, "remove")?),
        other => {
            return Err(invalid(format!(
                "unknown action {other:?}; accepted: {ACTIONS}"
            )));
        }
    };
    Ok(Some(change))
}

/// A prepared `plan` call.
pub struct PreparedPlan {
    facts: CallFacts,
    /// `None` for `show`.
    change: Option<PlanChange>,
    /// The session's plan, given by the driver just before the run.
    plan: Plan,
    secrets: HeldSecrets,
}

impl PreparedPlan {
    fn action(&self) -> &'static str {
        match &self.change {
            None => "show",
            Some(PlanChange::Set(_)) => "set",
            Some(PlanChange::Add(_)) => "add",
            Some(PlanChange::Update { .. }) => "update",
            Some(PlanChange::Remove(_)) => "remove",
        }
    }
}

impl PreparedCall for PreparedPlan {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = vec![Field::text("Action", self.action())];
        match &self.change {
            None => {}
            Some(PlanChange::Set(steps)) => {
                let list: Vec<String> = steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{}. {s}", i + 1))
                    .collect();
                fields.push(Field::block("Steps", list.join("\n")));
            }
            Some(PlanChange::Add(text)) => fields.push(Field::text("Text", text.clone())),
            Some(PlanChange::Update { step, text, status }) => {
                fields.push(Field::text("Step", step.to_string()));
                if let Some(text) = text {
                    fields.push(Field::text("Text", text.clone()));
                }
                if let Some(status) = status {
                    fields.push(Field::text("Status", status.name()));
                }
            }
            Some(PlanChange::Remove(step)) => fields.push(Field::text("Step", step.to_string())),
        }
        fields
    }

    fn give_plan(&mut self, plan: &Plan) {
        self.plan = plan.clone();
    }

    fn run(self: Box<Self>, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let PreparedPlan {
                change,
                plan,
                secrets,
                ..
            } = *self;
            let Some(mut change) = change else {
                return ToolOutcome::completed(plan.text());
            };
            // What the plan keeps is shown, saved and sent: no secret mino
            // holds, and one line per step.
            let secrets = secrets.get().await;
            for text in change.texts_mut() {
                *text = one_line(&secrets.redact(text).text);
            }
            match plan.apply(&change) {
                Ok(next) => ToolOutcome {
                    plan: Some(next.clone()),
                    ..ToolOutcome::completed(next.text())
                },
                Err(e) => ToolOutcome::error(e.to_string()),
            }
        })
    }
}

/// `text` on one line (line breaks and tabs become spaces), and no longer
/// than a step may be (a redaction's marker can lengthen it).
fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    if flat.chars().count() <= MAX_STEP_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX_STEP_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::secrets::Secrets;
    use crate::tools::Project;

    fn cx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::TempDir::new().unwrap();
        let mut cx = ToolContext::new(Project::new(dir.path()).unwrap());
        let mut secrets = Secrets::new();
        secrets.add("API_TOKEN", "sk-live-0123456789abcdef");
        cx.secrets = HeldSecrets::ready(secrets);
        (dir, cx)
    }

    async fn run(args: Value, plan: &Plan) -> Result<ToolOutcome, ToolError> {
        let (_dir, cx) = cx();
        let mut prepared = PlanTool.prepare(&args, &cx)?;
        prepared.give_plan(plan);
        Ok(prepared.run(CancellationToken::new()).await)
    }

    #[test]
    fn show_is_a_confined_read_and_changes_are_plan_changes() {
        let (_dir, cx) = cx();
        let show = PlanTool.prepare(&json!({"action": "show"}), &cx).unwrap();
        assert_eq!(show.facts().kind, CallKind::ConfinedRead);
        for args in [
            json!({"action": "set", "steps": ["a"]}),
            json!({"action": "add", "text": "a"}),
            json!({"action": "update", "step": 1, "status": "done"}),
            json!({"action": "remove", "step": 1}),
        ] {
            let call = PlanTool.prepare(&args, &cx).unwrap();
            assert_eq!(call.facts().kind, CallKind::PlanChange, "{args}");
        }
    }

    #[test]
    fn bad_arguments_say_what_is_accepted() {
        let (_dir, cx) = cx();
        let err = |args: Value| PlanTool.prepare(&args, &cx).err().unwrap().to_string();
        assert!(
            err(json!({"action": "wipe"})).contains("accepted: show, set, add, update, remove")
        );
        assert!(err(json!({"action": "set"})).contains("set needs `steps`"));
        assert!(err(json!({"action": "update", "step": 1})).contains("`text`, `status` or both"));
        assert!(
            err(json!({"action": "update", "step": 1, "status": "half"}))
                .contains("accepted: pending, in_progress, done")
        );
        assert!(err(json!({"action": "remove", "step": 0})).contains("numbered from 1"));
        let many: Vec<String> = (0..10_000).map(|i| format!("step {i}")).collect();
        assert!(err(json!({"action": "set", "steps": many})).contains("at most 50 steps"));
        let long = "y".repeat(100_000);
        assert!(err(json!({"action": "add", "text": long})).contains("at most 300 characters"));
    }

    #[tokio::test]
    async fn a_change_returns_the_whole_plan_with_secrets_removed_and_one_line_a_step() {
        let out = run(
            json!({"action": "set", "steps": ["read sk-live-0123456789abcdef", "fix\nthe bug", "test"]}),
            &Plan::default(),
        )
        .await
        .unwrap();
        let plan = out.plan.clone().unwrap();
        assert_eq!(plan.steps[0].text, "read [redacted: API_TOKEN]");
        assert_eq!(plan.steps[1].text, "fix the bug");
        assert!(!out.output.contains("sk-live"), "{}", out.output);
        let out = run(
            json!({"action": "update", "step": 2, "status": "in_progress"}),
            &plan,
        )
        .await
        .unwrap();
        assert_eq!(
            out.output,
            "Plan (0/3 done):\n1. [ ] read [redacted: API_TOKEN]\n2. [>] fix the bug\n3. [ ] test\n"
        );
        let out = run(json!({"action": "remove", "step": 9}), &plan)
            .await
            .unwrap();
        assert_eq!(out.status, crate::tools::ToolStatus::Error);
        assert!(out.plan.is_none());
        assert!(out.output.contains("there is no step 9"), "{}", out.output);
        let shown = run(json!({"action": "show"}), &plan).await.unwrap();
        assert!(shown.plan.is_none());
        assert!(shown.output.starts_with("Plan (0/3 done):"));
    }

    #[test]
    fn a_step_lengthened_by_redaction_is_cut_to_the_limit() {
        let text = format!("{}\t{}", "a".repeat(200), "b".repeat(200));
        let line = one_line(&text);
        assert_eq!(line.chars().count(), MAX_STEP_CHARS);
        assert!(line.ends_with('…') && !line.contains('\t'));
    }
}
