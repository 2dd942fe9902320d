//! A laid-out line written into the frame: what ratatui's
//! `Buffer::set_line` does, with printable ASCII (most of what an answer
//! shows) put a byte to a cell, rather than cut into graphemes and each
//! measured. Any other span goes through ratatui as before.

use ratatui::buffer::Buffer;
use ratatui::text::Line;

/// Writes `line` at (`x`, `y`), at most `max_width` cells of it, as
/// `Buffer::set_line` would.
pub fn line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    let mut remaining = max_width.min(buf.area.right().saturating_sub(x));
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let text = span.content.as_ref();
        if text.bytes().all(|byte| matches!(byte, b' '..=b'~')) {
            let count = u16::try_from(text.len()).unwrap_or(u16::MAX).min(remaining);
            if count == 0 {
                continue;
            }
            let start = buf.index_of(x, y);
            let cells = &mut buf.content[start..start + usize::from(count)];
            for (cell, byte) in cells.iter_mut().zip(text.bytes()) {
                cell.set_char(char::from(byte)).set_style(style);
            }
            x += count;
            remaining -= count;
        } else {
            let (end, _) = buf.set_stringn(x, y, text, usize::from(remaining), style);
            remaining = remaining.saturating_sub(end.saturating_sub(x));
            x = end;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Modifier, Style};
    use ratatui::text::Span;

    use super::*;

    #[test]
    fn a_line_is_written_as_ratatui_writes_it() {
        let red = Style::new().fg(Color::Red);
        let bold_on_blue = Style::new().bg(Color::Blue).add_modifier(Modifier::BOLD);
        let lines = [
            Line::from("plain ascii, all of it printable ~!@#"),
            Line::from(vec![
                Span::styled("fn ", red),
                Span::raw("main() "),
                Span::styled("{ }", bold_on_blue),
            ]),
            Line::from(vec![
                Span::raw("tab\there"),
                Span::raw(" bell\x07 and \x7f del"),
            ]),
            Line::from(vec![
                Span::raw("a model's \x1b[2J\x1b]0;title\x07"),
                Span::raw("\r\n"),
            ]),
            Line::from(vec![
                Span::raw("wide 字 and 😀 "),
                Span::styled("then ascii", red),
            ]),
            Line::from("é combining e\u{301} and zero\u{200b}width"),
            Line::styled("the line's own style", Style::new().fg(Color::Green)).patch_style(red),
            Line::from(vec![
                Span::raw("a span long enough to run past the right edge of the area"),
                Span::raw(" and one after it"),
            ]),
            Line::from(vec![Span::raw(""), Span::raw("after an empty span")]),
            Line::from("字字字字字字字字字字字字字字字字字字字字字字字字字字字字字字字字"),
        ];
        let area = Rect::new(2, 1, 40, 3);
        for line_ in &lines {
            for (x, width) in [(2, 40), (5, 10), (7, 0), (20, 40), (41, 40), (3, 1)] {
                for y in [1, 3] {
                    let mut ours = Buffer::filled(area, ratatui::buffer::Cell::new("·"));
                    let mut theirs = ours.clone();
                    line(&mut ours, x, y, line_, width);
                    theirs.set_line(x, y, line_, width);
                    assert_eq!(ours, theirs, "{line_:?} at ({x}, {y}), {width} wide");
                }
            }
        }
    }
}
