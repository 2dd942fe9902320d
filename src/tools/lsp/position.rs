//! Positions as the model gives them (a line and a symbol's name) and as a
//! language server takes them (a zero-based line and a UTF-16 column), and
//! text edits applied to a file's text. Pure: never reads a file.

use lsp_types::{Position, TextEdit};

/// Line `line` (zero-based) of `text`, without its line break.
pub fn line_of(text: &str, line: usize) -> Option<&str> {
    text.split('\n')
        .nth(line)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The UTF-16 column where `symbol` starts on `line_text`: its first
/// occurrence as a whole word, else its first occurrence at all.
pub fn column_of(line_text: &str, symbol: &str) -> Option<u32> {
    if symbol.is_empty() {
        return None;
    }
    let starts: Vec<usize> = line_text.match_indices(symbol).map(|(at, _)| at).collect();
    let whole = starts.iter().copied().find(|&at| {
        let before = line_text[..at].chars().next_back();
        let after = line_text[at + symbol.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    });
    let at = whole.or_else(|| starts.first().copied())?;
    u32::try_from(line_text[..at].encode_utf16().count()).ok()
}

/// The byte offset of `position` in `text`; a column past the line's end
/// is its end, as the protocol says.
pub fn offset_of(text: &str, position: Position) -> Option<usize> {
    let mut start = 0usize;
    for _ in 0..position.line {
        start += text[start..].find('\n')? + 1;
    }
    let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let line = &text[start..end];
    let mut units = 0u32;
    for (at, c) in line.char_indices() {
        if units >= position.character {
            return Some(start + at);
        }
        units += u32::try_from(c.len_utf16()).unwrap_or(1);
    }
    Some(end)
}

/// `text` with `edits` applied (they must not overlap); `None` when one
/// names a place the text does not have.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> Option<String> {
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(edits.len());
    for edit in edits {
        let start = offset_of(text, edit.range.start)?;
        let end = offset_of(text, edit.range.end)?;
        if end < start {
            return None;
        }
        spans.push((start, end, edit.new_text.as_str()));
    }
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    if spans.windows(2).any(|w| w[0].1 > w[1].0) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new_text) in spans {
        out.push_str(&text[at..start]);
        out.push_str(new_text);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use lsp_types::Range;

    #[test]
    fn a_symbol_is_found_as_a_word_first() {
        assert_eq!(column_of("total = subtotal + total", "total"), Some(0));
        assert_eq!(column_of("subtotal + total", "total"), Some(11));
        assert_eq!(column_of("subtotal", "total"), Some(3));
        assert_eq!(column_of("é = x", "x"), Some(4));
        assert_eq!(column_of("😀x", "x"), Some(2));
        assert_eq!(column_of("abc", "z"), None);
    }

    #[test]
    fn edits_apply_by_utf16_positions() {
        let text = "a😀b\nsecond\n";
        let edit = |l1, c1, l2, c2, t: &str| TextEdit {
            range: Range::new(Position::new(l1, c1), Position::new(l2, c2)),
            new_text: t.into(),
        };
        assert_eq!(
            apply_edits(text, &[edit(0, 3, 0, 4, "B"), edit(1, 0, 1, 6, "2nd")]).unwrap(),
            "a😀B\n2nd\n"
        );
        assert!(apply_edits(text, &[edit(0, 0, 0, 2, "x"), edit(0, 1, 0, 3, "y")]).is_none());
        assert!(apply_edits(text, &[edit(9, 0, 9, 1, "x")]).is_none());
        assert_eq!(line_of("x\r\ny", 0), Some("x"));
    }
}
