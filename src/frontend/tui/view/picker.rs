//! A picker (the four modes, or saved sessions): a centred list with the
//! current item marked and the selected one highlighted. Reads the state;
//! never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use super::super::app::Picker;
use super::theme;

pub fn draw(picker: &Picker, frame: &mut Frame, above: Rect) {
    let label_width = picker
        .items
        .iter()
        .map(|i| i.label.chars().count())
        .max()
        .unwrap_or(0);
    let wanted = picker
        .items
        .iter()
        .map(|i| label_width + i.detail.chars().count() + 8)
        .max()
        .unwrap_or(20)
        .max(picker.title.chars().count() + 6) as u16;
    let width = wanted.min(above.width.saturating_sub(2)).max(1);
    let height = (picker.items.len() as u16 + 2).min(above.height);
    let area = Rect::new(
        above.x + (above.width.saturating_sub(width)) / 2,
        above.y + (above.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .title(Line::styled(format!(" {} ", picker.title), theme::bold()))
        .title_bottom(Line::styled(
            " ↑↓ move · Enter choose · Esc close ",
            theme::dim(),
        ));
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    // Keep the selected row in view.
    let rows = usize::from(inside.height);
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    for (row, (i, item)) in picker
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let style = if i == picker.selected {
            theme::focused()
        } else {
            Style::new()
        };
        let mark = if item.current { "●" } else { " " };
        let line = Line::from(vec![
            Span::styled(format!(" {mark} "), style),
            Span::styled(
                format!("{:<label_width$}", item.label),
                style.patch(theme::bold()),
            ),
            Span::styled(format!("  {}", item.detail), style),
        ]);
        let line = if i == picker.selected {
            line.style(style)
        } else {
            line
        };
        frame
            .buffer_mut()
            .set_line(inside.x, inside.y + row as u16, &line, inside.width);
    }
}
