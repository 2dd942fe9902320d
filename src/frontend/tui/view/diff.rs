//! How a unified diff looks in the chat and in a question: its body
//! without the file header, each line coloured by its sign (removed on red,
//! added on green, hunks dim) and its code highlighted by the file's
//! extension, a long line cut rather than wrapped, and a collapsed change
//! cut to its first lines. Pure: text in, lines out.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::super::highlight;
use super::entry::EXPANDED_LINES;
use super::theme;
use crate::checkpoint::diffs::FileDiff;

/// Diff lines a collapsed change shows.
pub const DIFF_COLLAPSED_LINES: usize = 8;

/// The lines of a unified diff worth showing: hunks and changes, without
/// the `---`/`+++` file header.
pub fn diff_body(diff: &str) -> impl Iterator<Item = &str> {
    diff.trim_end_matches('\n')
        .split('\n')
        .filter(|line| !line.starts_with("--- ") && !line.starts_with("+++ "))
}

/// The added and removed lines of a unified diff.
pub fn diff_counts(diff: &str) -> (usize, usize) {
    diff_body(diff).fold((0, 0), |(added, removed), line| {
        if line.starts_with('+') {
            (added + 1, removed)
        } else if line.starts_with('-') {
            (added, removed + 1)
        } else {
            (added, removed)
        }
    })
}

/// The changed file's path, from the `+++ b/PATH` header of a diff.
pub fn diff_path(diff: &str) -> Option<&str> {
    diff.lines()
        .find_map(|line| line.strip_prefix("+++ "))
        .map(|path| path.strip_prefix("b/").unwrap_or(path))
}

/// Styled pieces made visible (controls shown, tabs expanded) and cut to
/// `width` characters.
pub fn cut_pieces(pieces: &[(Style, String)], width: usize) -> Vec<Span<'static>> {
    let mut left = width;
    let mut out = Vec::new();
    for (style, text) in pieces {
        if left == 0 {
            break;
        }
        let text = crate::controls::visible(text).replace('\t', "    ");
        let cut: String = text.chars().take(left).collect();
        left -= cut.chars().count();
        out.push(Span::styled(cut, *style));
    }
    out
}

/// A change, coloured: added green, removed red, hunks dim; at most
/// `DIFF_COLLAPSED_LINES` unless expanded.
pub fn diff_lines(diff: &str, expanded: bool, width: u16, out: &mut Vec<Line<'static>>) {
    let limit = if expanded {
        EXPANDED_LINES
    } else {
        DIFF_COLLAPSED_LINES
    };
    let body: Vec<&str> = diff_body(diff).collect();
    let inner = usize::from(width.saturating_sub(3).max(1));
    let pad = Span::raw("   ");
    let shown: Vec<&str> = body.iter().take(limit).copied().collect();
    let sign_style = |line: &str| {
        if line.starts_with('+') {
            theme::diff_added()
        } else if line.starts_with('-') {
            theme::diff_removed()
        } else if line.starts_with("@@") {
            theme::diff_hunk()
        } else {
            theme::dim()
        }
    };
    let highlighted = diff_path(diff).and_then(|path| highlight::diff(path, &shown, sign_style));
    let mut rows = Vec::new();
    for (i, line) in shown.iter().enumerate() {
        let pieces = match highlighted.as_ref().and_then(|all| all.get(i)) {
            Some(pieces) => pieces.clone(),
            None => vec![(sign_style(line), (*line).to_string())],
        };
        // One row per diff line: a long line is cut, not wrapped.
        let mut spans = vec![pad.clone()];
        spans.extend(cut_pieces(&pieces, inner));
        rows.push(Line::from(spans));
    }
    out.extend(rows);
    let hidden = body.len().saturating_sub(limit);
    if hidden > 0 {
        let s = if hidden == 1 { "" } else { "s" };
        out.push(Line::from(vec![
            pad,
            Span::styled(
                format!("… {hidden} more diff line{s} (Ctrl+O to expand)"),
                theme::dim(),
            ),
        ]));
    }
}

/// Each file's path and its diff (or the note that stands for it), as an
/// expanded `Changed by` line and `/diff` show them.
pub fn file_diffs(files: &[FileDiff], width: u16, out: &mut Vec<Line<'static>>) {
    let inner = usize::from(width.saturating_sub(3).max(1));
    for file in files {
        let path = vec![(theme::bold(), file.path.clone())];
        let mut head = vec![Span::raw("   ")];
        head.extend(cut_pieces(&path, inner));
        out.push(Line::from(head));
        match &file.note {
            Some(note) => out.push(Line::from(vec![
                Span::raw("   "),
                Span::styled(format!("({note})"), theme::dim()),
            ])),
            None => diff_lines(&file.diff, true, width, out),
        }
    }
}
