//! Stand-in for the line wrapper (another branch owns the real one): breaks
//! styled lines at a display width, character by character. Pure; it never
//! changes text or styles.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// `lines` broken so that no line is wider than `width` cells.
pub fn wrap(lines: &[Line<'static>], width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let mut current: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for span in &line.spans {
            let mut piece = String::new();
            for c in span.content.chars() {
                let w = c.width().unwrap_or(0);
                if used + w > width && used > 0 {
                    if !piece.is_empty() {
                        current.push(Span::styled(std::mem::take(&mut piece), span.style));
                    }
                    out.push(Line::from(std::mem::take(&mut current)).style(line.style));
                    used = 0;
                }
                piece.push(c);
                used += w;
            }
            if !piece.is_empty() {
                current.push(Span::styled(piece, span.style));
            }
        }
        out.push(Line::from(current).style(line.style));
    }
    out
}
