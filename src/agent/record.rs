//! The text of a record line: what an unasked call prints before it runs.
//! Shared by every front end so the wording never drifts.

use crate::policy::Shown;
use crate::tools::{Field, FieldKind};

/// The header line: `[Tool: NAME, allowed without confirmation in MODE mode]`
/// or `[Tool: NAME, allowed for this session]`; `None` for a quiet read.
pub fn header(tool: &str, shown: Shown) -> Option<String> {
    match shown {
        Shown::Quietly => None,
        Shown::ByMode(mode) => Some(format!(
            "[Tool: {tool}, allowed without confirmation in {mode} mode]"
        )),
        Shown::ForSession => Some(format!("[Tool: {tool}, allowed for this session]")),
    }
}

/// `Label: "value"`, the way a confirmation and a record show one field.
pub fn field_line(field: &Field) -> String {
    format!("{}: {:?}", field.label, field.value)
}

/// The header and one line per text field; warnings and diffs belong to the
/// dialog only.
pub fn lines(tool: &str, shown: Shown, fields: &[Field]) -> Vec<String> {
    let Some(head) = header(tool, shown) else {
        return Vec::new();
    };
    let mut out = vec![head];
    out.extend(
        fields
            .iter()
            .filter(|f| f.kind == FieldKind::Text)
            .map(field_line),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Mode;

    #[test]
    fn record_matches_the_seed() {
        let fields = vec![
            Field::text("Path", "notes.md"),
            Field::text("Starting line", "1"),
            Field::diff("-a\n+b"),
            Field::warning("Runs with your account permissions; this is not a sandbox."),
        ];
        assert_eq!(
            lines("edit_file", Shown::ByMode(Mode::AcceptEdits), &fields),
            vec![
                "[Tool: edit_file, allowed without confirmation in accept-edits mode]",
                "Path: \"notes.md\"",
                "Starting line: \"1\"",
            ]
        );
        assert_eq!(
            header("bash", Shown::ForSession).as_deref(),
            Some("[Tool: bash, allowed for this session]")
        );
        assert!(lines("read_file", Shown::Quietly, &fields).is_empty());
    }
}
