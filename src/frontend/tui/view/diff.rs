//! How a unified diff looks in the chat and in a question: its body
//! without the file header, each line coloured by its sign (removed on red,
//! added on green, hunks dim) and its code highlighted by the file's
//! extension, a long line cut rather than wrapped, and a collapsed change
//! cut to its first lines. Pure: text in, lines out.

use ratatui::style::{Color, Modifier, Style};
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

/// A change, coloured: added lines on a green ground and removed ones on a
/// red one across the width, the words that changed between a removed line
/// and the added line paired with it on a brighter ground, hunks dim; at
/// most `DIFF_COLLAPSED_LINES` unless expanded.
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
    let pieces = painted(diff, &shown, |line| sign_style(line, theme::dim()));
    let mut rows = Vec::new();
    for (line, pieces) in shown.iter().zip(&pieces) {
        // One row per diff line: a long line is cut, not wrapped; a change
        // has its ground across the whole width.
        let mut spans = vec![pad.clone()];
        let cut = cut_pieces(pieces, inner);
        let used: usize = cut.iter().map(|s| s.content.chars().count()).sum();
        spans.extend(cut);
        if let Some(ground) = ground_of(line) {
            spans.push(Span::styled(
                " ".repeat(inner.saturating_sub(used)),
                Style::new().bg(ground),
            ));
        }
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

/// The ground of a changed line: added or removed (never a file header).
fn ground_of(line: &str) -> Option<Color> {
    if line.starts_with("+++ ") || line.starts_with("--- ") {
        None
    } else if line.starts_with('+') {
        Some(theme::ADDED_GROUND)
    } else if line.starts_with('-') {
        Some(theme::REMOVED_GROUND)
    } else {
        None
    }
}

/// Lines longer than this get their ground but no changed words (the
/// word diff's cost grows with the line).
const WORDS_MAX_BYTES: usize = 2000;

/// `pieces` (the styled pieces of each of `lines`) with each changed line
/// on its ground, and in each run of removed lines followed by added ones,
/// the n-th removed and n-th added lines' changed words emphasised.
/// A diff line's style by its sign: file headers bold, added and removed
/// lines on their grounds, hunk headers their own, context `plain`.
pub fn sign_style(line: &str, plain: Style) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme::bold()
    } else if line.starts_with('+') {
        theme::diff_added()
    } else if line.starts_with('-') {
        theme::diff_removed()
    } else if line.starts_with("@@") {
        theme::diff_hunk()
    } else {
        plain
    }
}

/// `lines` of `diff` as styled pieces: highlighted in the language of the
/// file it names where the highlighter knows it, else each line in its
/// sign's style; then grounded (`grounded`).
pub fn painted(
    diff: &str,
    lines: &[&str],
    sign_style: impl Fn(&str) -> Style,
) -> Vec<Vec<(Style, String)>> {
    let highlighted = diff_path(diff).and_then(|path| highlight::diff(path, lines, &sign_style));
    let pieces = lines
        .iter()
        .enumerate()
        .map(
            |(i, line)| match highlighted.as_ref().and_then(|all| all.get(i)) {
                Some(pieces) => pieces.clone(),
                None => vec![(sign_style(line), (*line).to_string())],
            },
        )
        .collect();
    grounded(lines, pieces)
}

pub fn grounded(
    lines: &[&str],
    mut pieces: Vec<Vec<(Style, String)>>,
) -> Vec<Vec<(Style, String)>> {
    let mut i = 0;
    while i < lines.len() {
        let removed = run(lines, i, '-');
        let added = run(lines, i + removed, '+');
        for k in 0..removed.min(added) {
            let (old, new) = (i + k, i + removed + k);
            if let Some((old_words, new_words)) = changed_words(&lines[old][1..], &lines[new][1..])
            {
                pieces[old] = emphasise(&pieces[old], &old_words, theme::REMOVED_WORDS);
                pieces[new] = emphasise(&pieces[new], &new_words, theme::ADDED_WORDS);
            }
        }
        i += (removed + added).max(1);
    }
    for (line, pieces) in lines.iter().zip(pieces.iter_mut()) {
        if let Some(ground) = ground_of(line) {
            for (style, _) in pieces.iter_mut() {
                if style.bg.is_none() {
                    *style = style.bg(ground);
                }
            }
        }
    }
    pieces
}

/// How many lines from `at` start with `sign` (file headers aside).
fn run(lines: &[&str], at: usize, sign: char) -> usize {
    lines[at.min(lines.len())..]
        .iter()
        .take_while(|l| l.starts_with(sign) && ground_of(l).is_some())
        .count()
}

/// Bytes `from..to` of a line.
type Range = (usize, usize);

/// The byte ranges (in each line, after its sign) of the words that
/// differ, when the lines are alike enough for that to help.
fn changed_words(old: &str, new: &str) -> Option<(Vec<Range>, Vec<Range>)> {
    if old.len() > WORDS_MAX_BYTES || new.len() > WORDS_MAX_BYTES {
        return None;
    }
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(20))
        .diff_words(old, new);
    if diff.ratio() < 0.4 {
        return None;
    }
    let (mut at_old, mut at_new) = (1, 1);
    let (mut old_words, mut new_words) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            similar::ChangeTag::Equal => {
                at_old += len;
                at_new += len;
            }
            similar::ChangeTag::Delete => {
                if !change.value().trim().is_empty() {
                    old_words.push((at_old, at_old + len));
                }
                at_old += len;
            }
            similar::ChangeTag::Insert => {
                if !change.value().trim().is_empty() {
                    new_words.push((at_new, at_new + len));
                }
                at_new += len;
            }
        }
    }
    Some((old_words, new_words))
}

/// `pieces` split at the byte `ranges` of their joined text, the parts
/// inside them on the ground `words` and bold.
fn emphasise(pieces: &[(Style, String)], ranges: &[Range], words: Color) -> Vec<(Style, String)> {
    let inside = |at: usize| ranges.iter().any(|(from, to)| (*from..*to).contains(&at));
    let mut out: Vec<(Style, String)> = Vec::new();
    let mut at = 0;
    for (style, text) in pieces {
        for c in text.chars() {
            let style = if inside(at) {
                style.bg(words).add_modifier(Modifier::BOLD)
            } else {
                *style
            };
            match out.last_mut() {
                Some((last, piece)) if *last == style => piece.push(c),
                _ => out.push((style, c.to_string())),
            }
            at += c.len_utf8();
        }
    }
    out
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
