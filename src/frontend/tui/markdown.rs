//! Stand-in for the markdown renderer (another branch owns the real one):
//! turns model text into lines with control characters made visible. It
//! never styles, never wraps and never touches the terminal.

use ratatui::text::Line;

use crate::frontend::text::visible;

/// The assistant's markdown as lines (stand-in: plain text).
pub fn render(markdown: &str) -> Vec<Line<'static>> {
    plain(markdown)
}

/// Text shown as it is, one line per line, control characters visible.
pub fn plain(text: &str) -> Vec<Line<'static>> {
    text.split('\n')
        .map(|line| {
            Line::raw(visible(line.strip_suffix('\r').unwrap_or(line)).replace('\t', "    "))
        })
        .collect()
}
