//! The input box (the text area in a border that says what Enter does) and
//! the command popup above it. Reads the state; never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding};
use unicode_width::UnicodeWidthStr;

use super::super::app::{App, Layer};
use super::theme;

/// Rows the text needs at `width` columns, at most `max`.
pub fn rows(app: &App, width: u16, max: u16) -> u16 {
    let width = usize::from(width.max(1));
    let mut rows = 0usize;
    for line in app.input.lines() {
        // Counting stops early, so a huge paste costs little here.
        let cells = if line.len() > width * usize::from(max) * 4 {
            width * usize::from(max)
        } else {
            line.width()
        };
        rows += cells.div_ceil(width).max(1);
        if rows >= usize::from(max) {
            return max;
        }
    }
    u16::try_from(rows.max(1)).unwrap_or(max)
}

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    if area.height == 0 {
        return;
    }
    let active = app.layer() == Layer::Input;
    let border = if active {
        theme::border()
    } else {
        theme::dim()
    };
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .padding(Padding::left(1));
    if active && area.width > 50 {
        block = block.title_bottom(
            Line::styled(" Enter sends · Alt+Enter newline ", theme::dim()).right_aligned(),
        );
    }
    let inside = block.inner(area);
    frame.render_widget(block, area);
    if active {
        frame.render_widget(&app.input, inside);
    } else if matches!(app.layer(), Layer::Consent | Layer::ModeQuestion) && !app.input_is_empty() {
        // Text typed before a question armed stays, and stays visible.
        frame.render_widget(&app.input, inside);
    } else {
        let hint = match app.layer() {
            Layer::Consent => "Answer the question above: y, a, n or v.".to_string(),
            Layer::ModeQuestion => {
                "Answer the question above: y switches; any other key does not.".to_string()
            }
            _ => app.input.lines().first().cloned().unwrap_or_default(),
        };
        frame.render_widget(Line::styled(hint, theme::dim()), inside);
    }
}

/// The commands matching what is typed, over the bottom of the chat.
pub fn draw_completions(app: &App, frame: &mut Frame, chat: Rect, input: Rect) {
    if app.layer() != Layer::Input {
        return;
    }
    let options = app.completions();
    if options.is_empty() || chat.height < 3 {
        return;
    }
    let height = (options.len() as u16 + 2).min(chat.height);
    let width = options
        .iter()
        // " NAME" padded to 10, then " WHAT ".
        .map(|(name, what)| 1 + name.len().max(10) + what.len() + 2)
        .max()
        .unwrap_or(20) as u16;
    let width = (width + 2).min(input.width);
    let area = Rect::new(input.x, input.y.saturating_sub(height), width, height);
    let selected = app.completion.min(options.len() - 1);
    let lines: Vec<Line> = options
        .iter()
        .enumerate()
        .map(|(i, (name, what))| {
            let style = if i == selected {
                theme::focused()
            } else {
                ratatui::style::Style::new()
            };
            Line::from(vec![
                Span::styled(format!(" {name:<10}"), theme::key().patch(style)),
                Span::styled(format!(" {what} "), style),
            ])
        })
        .collect();
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .title_bottom(Line::styled(" Tab completes ", theme::dim()));
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    for (i, line) in lines.iter().take(usize::from(inside.height)).enumerate() {
        frame
            .buffer_mut()
            .set_line(inside.x, inside.y + i as u16, line, inside.width);
    }
}
