//! The full screen's record lines, shorter than the shared ones: a command
//! as its own lines (a here-document as the lines it has, not a string of
//! `\n`), the place a call runs (working directory, sandbox) only when it
//! differs from the last record's, and no text the call's diff says again
//! (the diff is under the call). State: the places last shown; it never
//! draws and never decides.

use crate::controls::visible;
use crate::frontend::text::{field_line, record_header};
use crate::policy::Shown;
use crate::tools::{Field, FieldKind, FieldRole};

/// The places the last records showed, by their label.
#[derive(Debug, Default)]
pub struct Places(Vec<(String, String)>);

impl Places {
    /// Whether `field` says something new, remembering it.
    fn changed(&mut self, field: &Field) -> bool {
        if self
            .0
            .iter()
            .any(|(label, value)| *label == field.label && *value == field.value)
        {
            return false;
        }
        self.0.retain(|(label, _)| *label != field.label);
        self.0.push((field.label.clone(), field.value.clone()));
        true
    }

    /// A new session: its first record says where it runs.
    pub fn forget(&mut self) {
        self.0.clear();
    }
}

/// A record's lines: its header, then its fields as `record` keeps them.
pub fn lines(places: &mut Places, tool: &str, shown: &Shown, fields: &[Field]) -> Vec<String> {
    let Some(head) = record_header(tool, shown) else {
        return Vec::new();
    };
    let has_diff = fields.iter().any(|f| f.kind == FieldKind::Diff);
    let mut out = vec![head];
    for field in fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Text | FieldKind::Block))
    {
        match field.role {
            FieldRole::SaidByDiff if has_diff => {}
            FieldRole::Command => command_lines(field, &mut out),
            FieldRole::Place => {
                if places.changed(field) {
                    out.push(field_line(field));
                }
            }
            _ => out.push(field_line(field)),
        }
    }
    out
}

/// `Command: FIRST LINE`, then each further line indented, control
/// characters visible.
fn command_lines(field: &Field, out: &mut Vec<String>) {
    let mut lines = field.value.lines();
    let first = lines.next().unwrap_or_default();
    out.push(format!("{}: {}", field.label, visible(first)));
    for line in lines {
        out.push(format!("  {}", visible(line)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Mode;

    fn bash(command: &str, cwd: &str) -> Vec<Field> {
        vec![
            Field::text("Command", command).with_role(FieldRole::Command),
            Field::text("Working directory", cwd).with_role(FieldRole::Place),
            Field::text("Sandbox", "project writable").with_role(FieldRole::Place),
        ]
    }

    #[test]
    fn a_command_takes_its_lines_and_the_place_shows_when_it_changes() {
        let shown = Shown::ByMode(Mode::Bypass);
        let mut places = Places::default();
        let first = lines(&mut places, "bash", &shown, &bash("ls -l", "/p"));
        assert_eq!(
            first,
            vec![
                "[Tool: bash, allowed without confirmation in bypass mode]",
                "Command: ls -l",
                "Working directory: \"/p\"",
                "Sandbox: \"project writable\"",
            ]
        );
        let heredoc = "cat > a.txt <<'EOF'\nhello\n\tworld \u{1b}[2J\nEOF";
        let second = lines(&mut places, "bash", &shown, &bash(heredoc, "/p"));
        assert_eq!(
            second,
            vec![
                "[Tool: bash, allowed without confirmation in bypass mode]",
                "Command: cat > a.txt <<'EOF'",
                "  hello",
                "  \tworld ␛[2J",
                "  EOF",
            ]
        );
        let third = lines(&mut places, "bash", &shown, &bash("pwd", "/p/src"));
        assert_eq!(third[2], "Working directory: \"/p/src\"");
        assert_eq!(third.len(), 3, "the sandbox did not change: {third:?}");
        places.forget();
        assert_eq!(
            lines(&mut places, "bash", &shown, &bash("pwd", "/p/src")).len(),
            4
        );
    }

    #[test]
    fn an_edit_shows_its_diff_once() {
        let shown = Shown::ByMode(Mode::AcceptEdits);
        let fields = vec![
            Field::named(crate::tools::FieldRole::Path, "notes.md"),
            Field::text("Remove", "# Relase").with_role(FieldRole::SaidByDiff),
            Field::text("Insert", "# Release").with_role(FieldRole::SaidByDiff),
            Field::diff("-# Relase\n+# Release"),
        ];
        let out = lines(&mut Places::default(), "edit_file", &shown, &fields);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[1], "Path: \"notes.md\"");
        // Without the diff, Remove and Insert are what says the change.
        let out = lines(&mut Places::default(), "edit_file", &shown, &fields[..3]);
        assert_eq!(out.len(), 4, "{out:?}");
    }
}
