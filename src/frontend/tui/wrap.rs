//! Word wrapping of styled lines to the chat pane's width, keeping each
//! span's style across breaks and a hanging indent under list markers,
//! quote bars and indentation. It never parses markdown or changes text
//! (beyond dropping the spaces where it breaks), and never does I/O. Time
//! and memory are linear in the text: every byte is copied once.

use std::iter::Peekable;

use ratatui::buffer::CellWidth;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

/// Characters that, followed by a space, mark a list item.
const BULLETS: [char; 6] = ['•', '◦', '▪', '-', '*', '+'];
const QUOTE_BAR: char = '│';
const RULE: char = '─';

/// Wraps each line to `width` display columns. Words move whole to the next
/// line when they fit there, and are broken wherever needed when longer
/// than a line. Continuation lines repeat quote bars and indent under list
/// markers and leading spaces, unless that indent would take more than half
/// the width. A line made only of `─` (a rule) is clipped, not wrapped.
/// Width 0 leaves the lines as they are, since nothing can be shown.
pub fn wrap(lines: &[Line<'static>], width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if width == 0 || line_width(line) <= width {
            out.push(line.clone());
        } else if is_rule(line) {
            out.push(clip(line, width));
        } else {
            wrap_line(line, width, &mut out);
        }
    }
    out
}

/// Cuts `line` into rows of at most `width` columns as it is: no word is
/// kept whole, no indent repeated, no space dropped, so the rows one after
/// another are the line again (code, which a reader selects on screen and
/// pastes). A cluster wider than `width` still gets a row of its own.
pub fn cut_rows(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width);
    if width == 0 || line_width(line) <= width {
        return vec![line.clone()];
    }
    let mut rows = Vec::new();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut column = 0;
    for span in &line.spans {
        let mut start = 0;
        for (offset, _, cells) in clusters(&span.content) {
            if column > 0 && column + cells > width {
                if let Some(piece) = span.content.get(start..offset).filter(|p| !p.is_empty()) {
                    spans.push(Span::styled(piece.to_owned(), span.style));
                }
                rows.push(like(line, std::mem::take(&mut spans)));
                start = offset;
                column = 0;
            }
            column += cells;
        }
        if let Some(piece) = span.content.get(start..).filter(|p| !p.is_empty()) {
            spans.push(Span::styled(piece.to_owned(), span.style));
        }
    }
    rows.push(like(line, spans));
    rows
}

/// The columns one grapheme cluster takes, as the screen buffer counts
/// them: a flag, a skin-toned emoji or a joined family is one cluster of
/// two columns, not the sum of its characters.
fn grapheme_width(grapheme: &str) -> usize {
    match grapheme.as_bytes() {
        [byte] => usize::from(!byte.is_ascii_control()),
        _ => usize::from(grapheme.cell_width()),
    }
}

/// The grapheme clusters of `text` with their byte offsets and widths.
fn clusters(text: &str) -> impl Iterator<Item = (usize, &str, usize)> {
    text.grapheme_indices(true)
        .map(|(offset, grapheme)| (offset, grapheme, grapheme_width(grapheme)))
}

fn text_width(text: &str) -> usize {
    if text.is_ascii() {
        return text.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    clusters(text).map(|(_, _, width)| width).sum()
}

fn line_width(line: &Line<'_>) -> usize {
    line.spans
        .iter()
        .map(|span| text_width(&span.content))
        .sum()
}

fn is_rule(line: &Line<'_>) -> bool {
    line.spans
        .iter()
        .flat_map(|span| span.content.chars())
        .all(|c| c == RULE)
}

/// The line cut at `width` columns.
fn clip(line: &Line<'static>, width: usize) -> Line<'static> {
    let mut column = 0;
    let mut spans = Vec::new();
    for span in &line.spans {
        let mut end = 0;
        for (offset, grapheme, cells) in clusters(&span.content) {
            if column + cells > width {
                break;
            }
            column += cells;
            end = offset + grapheme.len();
        }
        if let Some(kept) = span.content.get(..end).filter(|kept| !kept.is_empty()) {
            spans.push(Span::styled(kept.to_owned(), span.style));
        }
        if end < span.content.len() {
            break;
        }
    }
    like(line, spans)
}

fn like(line: &Line<'static>, spans: Vec<Span<'static>>) -> Line<'static> {
    let mut out = Line::from(spans).style(line.style);
    out.alignment = line.alignment;
    out
}

/// A byte range of one span of the source line.
#[derive(Clone, Copy)]
struct Piece {
    span: usize,
    start: usize,
    end: usize,
}

/// Adds a piece, merged into the last one when it continues it.
fn extend(pieces: &mut Vec<Piece>, piece: Piece) {
    match pieces.last_mut() {
        Some(last) if last.span == piece.span && last.end == piece.start => last.end = piece.end,
        _ => pieces.push(piece),
    }
}

fn wrap_line(line: &Line<'static>, width: usize, out: &mut Vec<Line<'static>>) {
    let (prefix, prefix_width) = hanging_prefix(&line.spans, width);
    let mut breaker = Breaker {
        line,
        width,
        prefix,
        prefix_width,
        out,
        pieces: Vec::new(),
        column: 0,
        line_start: 0,
        space: Vec::new(),
        space_width: 0,
        emitted: false,
    };
    let mut token = Vec::new();
    let mut token_width = 0;
    let mut token_is_space = false;
    for (index, span) in line.spans.iter().enumerate() {
        for (offset, grapheme, cells) in clusters(&span.content) {
            let is_space = grapheme.chars().all(|c| c.is_whitespace() && c != '\u{a0}');
            if is_space != token_is_space && !token.is_empty() {
                breaker.token(&token, token_width, token_is_space);
                token.clear();
                token_width = 0;
            }
            token_is_space = is_space;
            extend(
                &mut token,
                Piece {
                    span: index,
                    start: offset,
                    end: offset + grapheme.len(),
                },
            );
            token_width += cells;
        }
    }
    if !token.is_empty() {
        breaker.token(&token, token_width, token_is_space);
    }
    breaker.finish();
}

/// Lays words onto output lines greedily.
struct Breaker<'a> {
    line: &'a Line<'static>,
    width: usize,
    /// Spans that start every continuation line, and their width.
    prefix: Vec<Span<'static>>,
    prefix_width: usize,
    out: &'a mut Vec<Line<'static>>,
    /// What the current output line holds after its prefix, if any.
    pieces: Vec<Piece>,
    column: usize,
    /// The column where the current output line's own text starts.
    line_start: usize,
    /// Spaces seen after the last word, placed only if a word follows them
    /// on the same line.
    space: Vec<Piece>,
    space_width: usize,
    emitted: bool,
}

impl Breaker<'_> {
    fn token(&mut self, pieces: &[Piece], width: usize, is_space: bool) {
        if is_space {
            // Spaces at the start of a continuation line are the break itself.
            if self.column > self.line_start || !self.emitted {
                for piece in pieces {
                    extend(&mut self.space, *piece);
                }
                self.space_width += width;
            }
            return;
        }
        if self.column + self.space_width + width <= self.width {
            self.commit_space();
            self.commit(pieces, width);
            return;
        }
        if self.column + self.space_width <= self.prefix_width {
            // Only the marker or indentation so far: break the word here.
            self.commit_space();
        } else if self.column > self.line_start {
            self.break_line();
            if self.column + width <= self.width {
                self.commit(pieces, width);
                return;
            }
        } else {
            // Indentation wider than the line allows: drop it.
            self.drop_space();
            if self.column + width <= self.width {
                self.commit(pieces, width);
                return;
            }
        }
        self.split(pieces);
    }

    /// Places a word too long for any line, breaking it between characters.
    /// After a break at least one character always goes on the new line,
    /// so even a double-width character at width 1 makes progress.
    fn split(&mut self, pieces: &[Piece]) {
        let spans = &self.line.spans;
        for piece in pieces {
            let Some(text) = spans
                .get(piece.span)
                .and_then(|span| span.content.get(piece.start..piece.end))
            else {
                continue;
            };
            for (offset, grapheme, width) in clusters(text) {
                if self.column > self.line_start && self.column + width > self.width {
                    self.break_line();
                }
                let start = piece.start + offset;
                extend(
                    &mut self.pieces,
                    Piece {
                        span: piece.span,
                        start,
                        end: start + grapheme.len(),
                    },
                );
                self.column += width;
            }
        }
    }

    fn commit(&mut self, pieces: &[Piece], width: usize) {
        for piece in pieces {
            extend(&mut self.pieces, *piece);
        }
        self.column += width;
    }

    fn commit_space(&mut self) {
        for piece in self.space.drain(..) {
            extend(&mut self.pieces, piece);
        }
        self.column += std::mem::take(&mut self.space_width);
    }

    fn drop_space(&mut self) {
        self.space.clear();
        self.space_width = 0;
    }

    fn break_line(&mut self) {
        self.emit();
        self.drop_space();
        self.column = self.prefix_width;
        self.line_start = self.prefix_width;
    }

    fn emit(&mut self) {
        let mut spans = if self.emitted {
            self.prefix.clone()
        } else {
            Vec::new()
        };
        for piece in self.pieces.drain(..) {
            let text = self
                .line
                .spans
                .get(piece.span)
                .map(|span| (span.content.get(piece.start..piece.end), span.style));
            if let Some((Some(text), style)) = text {
                spans.push(Span::styled(text.to_owned(), style));
            }
        }
        self.out.push(like(self.line, spans));
        self.emitted = true;
    }

    fn finish(mut self) {
        if !self.pieces.is_empty() || !self.emitted {
            self.emit();
        }
    }
}

/// What continuation lines start with: the first line's quote bars kept,
/// its leading spaces and list markers turned into spaces. Empty when the
/// line is nothing but such a prefix or the indent exceeds half the width.
fn hanging_prefix(spans: &[Span<'static>], width: usize) -> (Vec<Span<'static>>, usize) {
    let mut chars = spans
        .iter()
        .flat_map(|span| span.content.chars().map(move |c| (c, span.style)))
        .peekable();
    let mut prefix = Vec::new();
    let mut total = 0;
    let mut blanks = 0;
    loop {
        let Some((c, style)) = chars.next() else {
            return (Vec::new(), 0);
        };
        match c {
            ' ' => blanks += 1,
            QUOTE_BAR if skip_space(&mut chars) => {
                if blanks > 0 {
                    prefix.push(Span::raw(" ".repeat(blanks)));
                    total += std::mem::take(&mut blanks);
                }
                prefix.push(Span::styled(format!("{QUOTE_BAR} "), style));
                total += 2;
            }
            c if BULLETS.contains(&c) && skip_space(&mut chars) => blanks += 2,
            c if c.is_ascii_digit() => {
                let mut digits = 1;
                while digits < 10 && chars.next_if(|(c, _)| c.is_ascii_digit()).is_some() {
                    digits += 1;
                }
                if chars.next_if(|&(c, _)| c == '.' || c == ')').is_none()
                    || !skip_space(&mut chars)
                {
                    break;
                }
                blanks += digits + 2;
            }
            _ => break,
        }
    }
    if blanks > 0 {
        prefix.push(Span::raw(" ".repeat(blanks)));
    }
    total += blanks;
    if total * 2 > width {
        return (Vec::new(), 0);
    }
    (prefix, total)
}

fn skip_space(chars: &mut Peekable<impl Iterator<Item = (char, Style)>>) -> bool {
    chars.next_if(|&(c, _)| c == ' ').is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::tui::markdown::{plain, render, tests::styled};
    use ratatui::style::{Color, Modifier};

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn wrapped(text: &str, width: u16) -> Vec<String> {
        texts(&wrap(&plain(text), width))
    }

    fn assert_fits(lines: &[Line<'_>], width: usize) {
        for line in lines {
            assert!(line_width(line) <= width, "{line:?} wider than {width}");
        }
    }

    #[test]
    fn cut_rows_keep_every_space_and_add_none() {
        let line = Line::from(vec![
            Span::styled("    out = f(a)", Style::new().fg(Color::Red)),
            Span::raw(" "),
            Span::styled("if  x", Style::new().fg(Color::Blue)),
            Span::raw("  🇫🇷"),
        ]);
        for width in 1..=22 {
            let rows = cut_rows(&line, width);
            assert_fits(&rows, usize::from(width).max(2));
            let joined: String = texts(&rows).concat();
            assert_eq!(joined, "    out = f(a) if  x  🇫🇷", "at {width}");
        }
        assert_eq!(
            texts(&cut_rows(&line, 14)),
            ["    out = f(a)", " if  x  🇫🇷"]
        );
        assert_eq!(
            texts(&cut_rows(&line, 6)),
            ["    ou", "t = f(", "a) if ", " x  🇫🇷"]
        );
    }

    const PROSE: &str = "The quick brown fox jumps over the lazy dog and keeps on running \
        until the end of a rather long sentence that must wrap.";

    #[test]
    fn short_lines_are_untouched() {
        assert_eq!(wrapped("hello world", 20), ["hello world"]);
        assert_eq!(wrapped("hello world", 11), ["hello world"]);
    }

    #[test]
    fn words_move_whole_and_the_break_drops_its_spaces() {
        assert_eq!(wrapped("hello   world", 10), ["hello", "world"]);
        assert_eq!(wrapped("aa bb cc dd", 5), ["aa bb", "cc dd"]);
    }

    #[test]
    fn long_words_break_between_characters() {
        assert_eq!(wrapped("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrapped("x abcdefghij", 4), ["x", "abcd", "efgh", "ij"]);
    }

    #[test]
    fn wide_characters_count_double() {
        assert_eq!(wrapped("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(wrapped("日本", 3), ["日", "本"]);
    }

    #[test]
    fn combining_marks_stay_with_their_letter() {
        assert_eq!(
            wrapped("e\u{301}e\u{301}e\u{301}", 2),
            ["e\u{301}e\u{301}", "e\u{301}"]
        );
    }

    #[test]
    fn width_zero_and_one_terminate() {
        assert_eq!(wrapped("ab cd", 0), ["ab cd"]);
        assert_eq!(wrapped("ab cd", 1), ["a", "b", "c", "d"]);
        assert_eq!(wrapped("日本", 1), ["日", "本"]);
        assert_eq!(wrapped("   ", 1), [""]);
        let list = wrap(&render("- > item text\n\n```\n\tcode\n```"), 1);
        assert!(!list.is_empty());
    }

    #[test]
    fn empty_lines_stay() {
        assert_eq!(wrap(&[Line::default()], 10), [Line::default()]);
    }

    #[test]
    fn styles_survive_the_break() {
        let line = Line::from(vec![
            Span::raw("plain "),
            Span::styled("bold words here", Style::new().add_modifier(Modifier::BOLD)),
        ]);
        let lines = wrap(&[line], 11);
        assert_eq!(texts(&lines), ["plain bold", "words here"]);
        assert_eq!(lines[1].spans.len(), 1);
        assert!(lines[1].spans[0].style.has_modifier(Modifier::BOLD));
    }

    #[test]
    fn a_word_across_spans_stays_whole() {
        let line = Line::from(vec![
            Span::raw("aaaa bb"),
            Span::styled("cc", Style::new().fg(Color::Red)),
        ]);
        assert_eq!(texts(&wrap(&[line], 6)), ["aaaa", "bbcc"]);
    }

    #[test]
    fn list_items_hang_under_their_text() {
        assert_eq!(
            wrapped("  • one two three four", 12),
            ["  • one two", "    three", "    four"]
        );
        assert_eq!(
            wrapped("12. one two three", 10),
            ["12. one", "    two", "    three"]
        );
    }

    #[test]
    fn quote_bars_repeat() {
        assert_eq!(
            texts(&wrap(&render("> one two three four"), 10)),
            ["│ one two", "│ three", "│ four"]
        );
    }

    #[test]
    fn a_long_word_after_a_marker_starts_beside_it() {
        assert_eq!(wrapped("- abcdefgh", 6), ["- abcd", "  efgh"]);
    }

    #[test]
    fn an_indent_over_half_the_width_is_dropped() {
        assert_eq!(wrapped("        aaa bbb", 12), ["        aaa", "bbb"]);
        assert_eq!(wrapped("        aaa bbb", 10), ["aaa bbb"]);
        assert_eq!(wrapped("                aaa", 10), ["aaa"]);
    }

    #[test]
    fn line_style_and_alignment_are_kept() {
        let mut line = Line::from("aaa bbb").style(Style::new().fg(Color::Green));
        line.alignment = Some(ratatui::layout::Alignment::Right);
        let lines = wrap(&[line.clone()], 4);
        assert_eq!(lines.len(), 2);
        assert!(
            lines
                .iter()
                .all(|l| l.style == line.style && l.alignment == line.alignment)
        );
    }

    #[test]
    fn rules_are_clipped() {
        let lines = wrap(&render("---"), 7);
        assert_eq!(texts(&lines), ["───────"]);
    }

    #[test]
    fn prose_fits_every_width() {
        let lines = render(&format!("- {PROSE}\n\n> {PROSE}\n\n    {PROSE}\n\n{PROSE}"));
        for width in 1..=100 {
            let wrapped = wrap(&lines, width);
            if width >= 2 {
                assert_fits(&wrapped, usize::from(width));
            }
            let words = |lines: &[Line<'_>]| -> String {
                let text = texts(lines).concat().replace(['│', '•', '─'], "");
                text.split_whitespace().collect()
            };
            assert_eq!(words(&lines), words(&wrapped), "width {width}");
        }
    }

    #[test]
    fn a_one_megabyte_line_wraps_whole() {
        let line = "word ".repeat(200_000) + &"x".repeat(50_000);
        let lines = wrap(&plain(&line), 80);
        assert_fits(&lines, 80);
        // 16 words a line, then the x's in lines of 80.
        assert_eq!(lines.len(), 12_500 + 625);
        let total: usize = lines
            .iter()
            .flat_map(|l| &l.spans)
            .map(|s| s.content.len())
            .sum();
        // Only the space at each break between words is dropped.
        assert_eq!(total, line.len() - 12_500);
    }

    fn sample() -> Vec<Line<'static>> {
        render(
            "# Wrapping a heading that is rather long indeed\n\n\
             Some **bold text that goes on**, `inline code`, and *emphasis* in a long \
             paragraph, plus a link to [the docs](https://docs.example/a/very/long/path/indeed).\n\n\
             - a list item long enough to wrap onto a second line at forty\n  \
               1. nested numbered item that also wraps around the edge\n\n\
             > a quoted remark that is long enough to need a second line\n\n\
             ```rust\nfn main() { println!(\"a code line that is long enough to wrap\"); }\n```\n\n\
             ---\n\nhttps://example.com/averyveryveryveryveryverylongurlwithoutanyspacesinit",
        )
    }

    #[test]
    fn snapshot_wrap_at_40() {
        insta::assert_snapshot!(styled(&wrap(&sample(), 40)));
    }

    #[test]
    fn snapshot_wrap_at_200() {
        let lines = sample();
        assert_eq!(wrap(&lines, 200), lines);
        insta::assert_snapshot!(styled(&wrap(&lines, 200)));
    }

    #[test]
    fn snapshot_wrap_at_1() {
        insta::assert_snapshot!(styled(&wrap(&render("# Hi\n\n- a **b**\n> `c`"), 1)));
    }
}
