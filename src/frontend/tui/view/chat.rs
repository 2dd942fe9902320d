//! The chat pane: the transcript's visible lines, drawn straight from each
//! entry's cached wrapped lines (nothing else is laid out), and "↓ new
//! output below" while the view is scrolled up and output arrived. Reads
//! the state; writes only the layout cache.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::super::app::App;

pub const NEW_OUTPUT: &str = " ↓ new output below (End) ";

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    app.layout.chat_width.set(area.width);
    app.layout.chat_height.set(area.height);
    let transcript = &app.transcript;
    let rows = transcript.visible(area.width, usize::from(area.height));
    let first = rows.first().map_or(0, |(entry, _)| *entry);
    let end = rows.last().map_or(0, |(entry, _)| entry + 1);
    app.layout.chat_entries.set((first, end));
    let buf = frame.buffer_mut();
    let mut y = area.y;
    for (entry, range) in rows {
        transcript.with_lines(entry, area.width, |lines| {
            for line in &lines[range] {
                super::paint::line(buf, area.x, y, line, area.width);
                y += 1;
            }
        });
    }
    if transcript.new_below() {
        let width = NEW_OUTPUT.chars().count() as u16;
        let x = area.right().saturating_sub(width + 1).max(area.x);
        let style = Style::new()
            .fg(Color::Black)
            .bg(Color::Yellow)
            .add_modifier(Modifier::BOLD);
        buf.set_line(
            x,
            area.bottom() - 1,
            &Line::styled(NEW_OUTPUT, style),
            area.width.min(width),
        );
    }
}
