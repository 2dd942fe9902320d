//! What an `edit_file` whose `old_string` was not found shows of the file,
//! so the next call can copy the text exactly instead of reading again: a
//! small text file whole, otherwise the lines nearest to `old_string` (the
//! same number of lines, most alike character by character), when they
//! are alike enough to be the ones meant. Shows nothing of a file that is
//! not UTF-8 text. Bounded work: the nearest lines are looked for in the
//! first `SCANNED_LINES` lines only, for at most `SEARCH_TIME`, and a line
//! past `LONG_LINE` bytes is never compared.

use std::time::{Duration, Instant};

use similar::TextDiff;

/// A text file at most this long is shown whole.
const WHOLE_BYTES: usize = 2_048;
/// ... and with at most this many lines.
const WHOLE_LINES: usize = 40;
/// The nearest lines are looked for in this many lines of the file.
const SCANNED_LINES: usize = 5_000;
/// Lines longer than this (bytes) are not compared.
const LONG_LINE: usize = 400;
/// How alike (0 to 1, `similar`'s ratio) the nearest lines must be.
const ALIKE: f32 = 0.6;
/// At most this many lines of `old_string` are compared.
const COMPARED_LINES: usize = 8;
/// The look for the nearest lines stops after this long, with the best
/// found so far (a file of many look-alike lines cannot stall a call).
const SEARCH_TIME: Duration = Duration::from_millis(150);

/// The sentences to add to the not-found error for `old` in `hay`, or
/// nothing when no part of the file would help.
pub fn shown(hay: &[u8], old: &str) -> Option<String> {
    let text = std::str::from_utf8(hay).ok()?;
    if text.len() <= WHOLE_BYTES && text.lines().count() <= WHOLE_LINES {
        return Some(format!(
            " The file's whole text is, between the lines of dashes:\n-----\n{}\n-----",
            text.strip_suffix('\n').unwrap_or(text)
        ));
    }
    let (first, lines) = nearest(text, old)?;
    let count = lines.lines().count();
    let which = if count == 1 {
        format!("line {first}")
    } else {
        format!("lines {first}-{}", first + count - 1)
    };
    Some(format!(
        " The nearest text is on {which}, between the lines of dashes:\n-----\n{lines}\n-----"
    ))
}

/// The 1-based first line and the text of the run of lines most like
/// `old`, when alike enough.
fn nearest<'a>(text: &'a str, old: &str) -> Option<(usize, &'a str)> {
    let old = old.trim_matches('\n');
    let wanted = old.lines().count().clamp(1, COMPARED_LINES);
    if old.trim().is_empty() || old.lines().any(|line| line.len() > LONG_LINE) {
        return None;
    }
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .filter(|&at| at < text.len())
        .take(SCANNED_LINES)
        .collect();
    let deadline = Instant::now() + SEARCH_TIME;
    let mut best: Option<(f32, usize, &str)> = None;
    for (index, &start) in starts.iter().enumerate() {
        let end = starts
            .get(index + wanted)
            .map_or(text.len(), |&next| next - 1);
        let window = text[start..end].trim_end_matches('\n');
        let (short, long) = (window.len().min(old.len()), window.len().max(old.len()));
        // similar's ratio is at most 2 * short / (short + long).
        if window.len() > LONG_LINE * wanted || ((2 * short) as f32) < ALIKE * (short + long) as f32
        {
            continue;
        }
        if Instant::now() >= deadline {
            break;
        }
        let ratio = TextDiff::configure()
            .deadline(deadline)
            .diff_chars(window, old)
            .ratio();
        if best.is_none_or(|(top, _, _)| ratio > top) {
            best = Some((ratio, index + 1, window));
        }
    }
    best.filter(|(ratio, _, _)| *ratio >= ALIKE)
        .map(|(_, line, window)| (line, window))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_is_shown_whole() {
        let shown = shown(b"# Relase notes\n\n- one\n", "old text").unwrap();
        assert!(
            shown.contains("-----\n# Relase notes\n\n- one\n-----"),
            "{shown}"
        );
    }

    #[test]
    fn a_large_file_shows_the_nearest_lines_with_their_numbers() {
        let mut text: String = (1..=200)
            .map(|n| format!("let value_{n} = {n};\n"))
            .collect();
        text.push_str("fn main() {\n    println!(\"helo\");\n}\n");
        let shown = shown(text.as_bytes(), "fn main() {\n    println!(\"hello\");").unwrap();
        assert!(
            shown.contains("on lines 201-202, between the lines of dashes:\n-----\nfn main() {\n    println!(\"helo\");\n-----"),
            "{shown}"
        );
    }

    #[test]
    fn nothing_alike_or_not_text_shows_nothing() {
        let text: String = (1..=200)
            .map(|n| format!("let value_{n} = {n};\n"))
            .collect();
        assert_eq!(
            shown(text.as_bytes(), "completely different words here"),
            None
        );
        assert_eq!(shown(b"\xff\xfe binary", "x"), None);
        assert_eq!(shown(text.as_bytes(), "   "), None);
    }
}
