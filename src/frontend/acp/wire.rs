//! What mino's events look like in the Agent Client Protocol: tool kinds and
//! titles, the four answers as permission options, the modes as a session's
//! modes, a call's fields as tool call content and locations. Pure
//! conversions; nothing here sends, decides or touches a file.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, PermissionOption, PermissionOptionId, PermissionOptionKind, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, RequestPermissionOutcome, SessionMode,
    SessionModeState, StopReason, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
};
use serde_json::Value;

use crate::agent::TurnStop;
use crate::model::ResultStatus;
use crate::policy::{BashConfinement, ConsentAnswer, Mode, Offer};
use crate::session::StepStatus;
use crate::tools::{Field, FieldKind, FieldRole};

/// The four answers, in the order an editor shows them, with the option id
/// and kind each one has on the wire (the id is the kind's own name).
pub const ANSWERS: [(ConsentAnswer, &str, PermissionOptionKind); 4] = [
    (
        ConsentAnswer::AllowOnce,
        "allow_once",
        PermissionOptionKind::AllowOnce,
    ),
    (
        ConsentAnswer::AllowForSession,
        "allow_always",
        PermissionOptionKind::AllowAlways,
    ),
    (
        ConsentAnswer::Reject,
        "reject_once",
        PermissionOptionKind::RejectOnce,
    ),
    (
        ConsentAnswer::NeverThisRun,
        "reject_always",
        PermissionOptionKind::RejectAlways,
    ),
];

/// The option's label: the dialog's words for the same answer, capitalised.
fn label(offer: &Offer, answer: ConsentAnswer, tool: &str) -> String {
    let words = offer.label(answer, tool);
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

/// The options of a permission request about `tool` (a `ToolKey`'s
/// text): the answers `offer` holds, in the order the dialog shows them.
pub fn options(tool: &str, offer: &Offer) -> Vec<PermissionOption> {
    ANSWERS
        .iter()
        .filter(|(answer, _, _)| offer.allows(*answer))
        .map(|(answer, id, kind)| PermissionOption::new(*id, label(offer, *answer, tool), *kind))
        .collect()
}

/// The answer an option id stands for; `None` for an id mino never offered.
pub fn answer_of(id: &PermissionOptionId) -> Option<ConsentAnswer> {
    ANSWERS
        .iter()
        .find(|(_, wire, _)| *wire == &*id.0)
        .map(|(answer, _, _)| *answer)
}

/// The client's outcome as an answer: `cancelled`, or an option mino never
/// offered, rejects the call.
pub fn outcome_answer(outcome: &RequestPermissionOutcome) -> ConsentAnswer {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => {
            answer_of(&selected.option_id).unwrap_or(ConsentAnswer::Reject)
        }
        _ => ConsentAnswer::Reject,
    }
}

/// The option id an asking agent sends back for its own decision: only the
/// once-answers, so the asked agent never remembers anything.
pub fn once_option(allowed: bool) -> &'static str {
    if allowed { "allow_once" } else { "reject_once" }
}

/// mino's modes as the session's modes, `current` selected.
pub fn modes(current: Mode, bash: &BashConfinement) -> SessionModeState {
    SessionModeState::new(
        current.name(),
        Mode::ALL
            .iter()
            .map(|m| SessionMode::new(m.name(), m.name()).description(m.warning(bash)))
            .collect(),
    )
}

/// A session's plan as the editor draws it: every step, with its status.
pub fn plan(plan: &crate::session::Plan) -> Plan {
    Plan::new(
        plan.steps
            .iter()
            .map(|step| {
                let status = match step.status {
                    StepStatus::Pending => PlanEntryStatus::Pending,
                    StepStatus::InProgress => PlanEntryStatus::InProgress,
                    StepStatus::Done => PlanEntryStatus::Completed,
                };
                PlanEntry::new(step.text.clone(), PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// The tool kind an editor draws a call with.
pub fn kind(tool: &str) -> ToolKind {
    match tool {
        "bash" => ToolKind::Execute,
        "read_file" | "skill_view" => ToolKind::Read,
        "list_dir" | "search" => ToolKind::Search,
        "write_file" | "edit_file" => ToolKind::Edit,
        "fetch_content" => ToolKind::Fetch,
        "plan" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A short title: the tool and the argument that says what it acts on.
pub fn title(tool: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let what = ["command", "path", "url", "pattern", "name"]
        .iter()
        .find_map(|key| args.get(key).and_then(Value::as_str));
    match what {
        Some(what) => {
            let line = what.lines().next().unwrap_or_default();
            let short: String = line.chars().take(80).collect();
            format!("{tool} {}", crate::controls::visible(&short))
        }
        None => tool.to_string(),
    }
}

/// The arguments as JSON (their text when they are not JSON).
pub fn raw_input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// A call's fields as text content, `Label: "value"` a line, diffs and
/// warnings as they are.
pub fn fields_content(fields: &[Field]) -> Vec<ToolCallContent> {
    if fields.is_empty() {
        return Vec::new();
    }
    let text = fields
        .iter()
        .map(|f| match f.kind {
            FieldKind::Text => format!("{}: {:?}", f.label, f.value),
            FieldKind::Block => format!("{}:\n{}", f.label, f.value.trim_end()),
            FieldKind::Diff | FieldKind::Warning => f.value.trim_end().to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    vec![text_content(text)]
}

pub fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::from(text.into()))
}

/// An edit's preview as ACP `diff` content, one per hunk of its unified
/// diff, so an editor draws it as a diff of that file. A hunk that starts
/// at line 0 of the old side (a new file) has no old text.
pub fn diffs(project: &Path, fields: &[Field]) -> Vec<ToolCallContent> {
    let Some(path) = Field::find(fields, FieldRole::Path).map(|p| project.join(p)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for field in fields.iter().filter(|f| f.kind == FieldKind::Diff) {
        for hunk in hunks(&field.value) {
            let diff = Diff::new(path.clone(), hunk.new).old_text(hunk.old);
            out.push(ToolCallContent::Diff(diff));
        }
    }
    out
}

/// One hunk's two sides.
struct Hunk {
    old: Option<String>,
    new: String,
}

/// The hunks of a unified diff: context lines on both sides, `-` lines on
/// the old one, `+` lines on the new one.
fn hunks(unified: &str) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for line in unified.lines() {
        if let Some(header) = line.strip_prefix("@@ ") {
            let new_file = header.starts_with("-0,0 ");
            out.push(Hunk {
                old: if new_file { None } else { Some(String::new()) },
                new: String::new(),
            });
            continue;
        }
        let Some(hunk) = out.last_mut() else { continue };
        let (old, new) = match line.chars().next() {
            Some(' ') => (true, true),
            Some('-') => (true, false),
            Some('+') => (false, true),
            _ => continue,
        };
        let text = &line[1..];
        if old && let Some(side) = hunk.old.as_mut() {
            side.push_str(text);
            side.push('\n');
        }
        if new {
            hunk.new.push_str(text);
            hunk.new.push('\n');
        }
    }
    out
}

/// The project files a call's fields name, with the line an edit starts at.
pub fn locations(project: &Path, fields: &[Field]) -> Vec<ToolCallLocation> {
    let line = Field::find(fields, FieldRole::StartingLine).and_then(|v| v.parse::<u32>().ok());
    fields
        .iter()
        .filter(|f| f.kind == FieldKind::Text && f.role == FieldRole::Path)
        .map(|f| ToolCallLocation::new(project.join(&f.value)).line(line))
        .collect()
}

/// A result's status as a tool call's status.
pub fn status(status: ResultStatus) -> ToolCallStatus {
    match status {
        ResultStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    }
}

/// How a turn's end answers `session/prompt`: a stop reason, or the error
/// the turn ended with.
pub fn stop_reason(stop: &TurnStop) -> Result<StopReason, String> {
    match stop {
        TurnStop::Completed => Ok(StopReason::EndTurn),
        TurnStop::Length => Ok(StopReason::MaxTokens),
        TurnStop::Interrupted => Ok(StopReason::Cancelled),
        TurnStop::RequestLimit(_)
        | TurnStop::ToolCallLimit(_)
        | TurnStop::Repeated(_)
        | TurnStop::TextCallRepeated(_) => Ok(StopReason::MaxTurnRequests),
        TurnStop::PromptBlocked(_) => Ok(StopReason::Refusal),
        TurnStop::ModelError(_) | TurnStop::SaveFailed(_) | TurnStop::Internal(_) => {
            Err(stop.message().unwrap_or_else(|| stop.as_str().to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn the_four_answers_round_trip_through_their_option_ids() {
        let offered = options("jan/bash", &Offer::all());
        assert_eq!(offered.len(), 4);
        for (option, (answer, id, kind)) in offered.iter().zip(ANSWERS) {
            assert_eq!(&*option.option_id.0, id);
            assert_eq!(option.kind, kind);
            assert_eq!(answer_of(&option.option_id), Some(answer));
        }
        assert_eq!(offered[1].name, "Allow jan/bash for this session");
    }

    #[test]
    fn a_narrower_offer_has_only_its_options_and_words() {
        let once_or_not = Offer {
            answers: &[ConsentAnswer::AllowOnce, ConsentAnswer::Reject],
            command: None,
        };
        let ids: Vec<String> = options("bash", &once_or_not)
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect();
        assert_eq!(ids, ["allow_once", "reject_once"]);
        let one_line = Offer {
            answers: &ConsentAnswer::ALL,
            command: Some("ls -l".into()),
        };
        assert_eq!(
            options("bash", &one_line)[1].name,
            "Allow this exact command line for this session"
        );
    }

    #[test]
    fn cancelled_and_unknown_options_reject() {
        assert_eq!(
            outcome_answer(&RequestPermissionOutcome::Cancelled),
            ConsentAnswer::Reject
        );
        let made_up =
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow_everything"));
        assert_eq!(outcome_answer(&made_up), ConsentAnswer::Reject);
        let once = RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("allow_once"));
        assert_eq!(outcome_answer(&once), ConsentAnswer::AllowOnce);
    }

    #[test]
    fn modes_offer_all_four_with_the_current_selected() {
        let state = modes(Mode::AcceptEdits, &BashConfinement::Unconfined);
        assert_eq!(&*state.current_mode_id.0, "accept-edits");
        let ids: Vec<&str> = state.available_modes.iter().map(|m| &*m.id.0).collect();
        assert_eq!(ids, ["plan", "manual", "accept-edits", "auto", "bypass"]);
    }

    #[test]
    fn a_title_names_what_the_call_acts_on_with_controls_visible() {
        let arguments = r#"{"command":"echo \u001b[2J hi\nrm x"}"#;
        assert_eq!(title("bash", arguments), "bash echo ␛[2J hi");
    }

    #[test]
    fn locations_come_from_the_path_field_with_the_starting_line() {
        let fields = vec![
            Field::named(crate::tools::FieldRole::Path, "src/a.rs"),
            Field::named(crate::tools::FieldRole::StartingLine, "12"),
        ];
        let locs = locations(Path::new("/p"), &fields);
        assert_eq!(locs.len(), 1);
        assert_eq!(locs[0].path, Path::new("/p/src/a.rs"));
        assert_eq!(locs[0].line, Some(12));
    }

    #[test]
    fn an_edit_preview_becomes_diff_content_per_hunk() {
        let fields = vec![
            Field::named(crate::tools::FieldRole::Path, "notes.md"),
            Field::diff(
                "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n-# Relase\n+# Release\n keep\n"
                    .to_string(),
            ),
        ];
        let content = diffs(Path::new("/p"), &fields);
        assert_eq!(content.len(), 1);
        let ToolCallContent::Diff(diff) = &content[0] else {
            panic!("not a diff: {content:?}")
        };
        assert_eq!(diff.path, Path::new("/p/notes.md"));
        assert_eq!(diff.old_text.as_deref(), Some("# Relase\nkeep\n"));
        assert_eq!(diff.new_text, "# Release\nkeep\n");

        let created = vec![
            Field::named(crate::tools::FieldRole::Path, "new.txt"),
            Field::diff("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n".to_string()),
        ];
        let ToolCallContent::Diff(diff) = &diffs(Path::new("/p"), &created)[0] else {
            panic!("not a diff")
        };
        assert_eq!(diff.old_text, None);
        assert_eq!(diff.new_text, "hello\n");
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(stop_reason(&TurnStop::Completed), Ok(StopReason::EndTurn));
        assert_eq!(
            stop_reason(&TurnStop::Interrupted),
            Ok(StopReason::Cancelled)
        );
        assert!(stop_reason(&TurnStop::ModelError("down".into())).is_err());
    }
}
