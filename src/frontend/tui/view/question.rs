//! An MCP server's question, drawn where a permission question goes and
//! bordered like one, but titled as the server's (naming it): its message,
//! each field with what it takes and the text typed so far (the focused
//! one with a cursor), why the last answer was refused, and the keys. It
//! only shows.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use crate::controls::one_line;

use super::super::app::App;
use super::super::server_question::OpenQuestion;
use super::super::wrap::wrap;
use super::dialog::{arming_note, dialog_width, place};
use super::theme;

/// Widest the dialog gets.
const MAX_WIDTH: u16 = 100;

/// The message, then each field (label, typed text; what it takes below).
fn body(open: &OpenQuestion, inner: u16) -> Vec<Line<'static>> {
    let mut out = vec![Line::raw(open.question.message.clone()), Line::default()];
    let room = usize::from(inner).saturating_sub(8).max(1);
    for (i, (field, text)) in open.question.fields.iter().zip(&open.texts).enumerate() {
        let focused = i == open.focus;
        let required = if field.required { " *" } else { "" };
        let shown = one_line(text);
        let count = shown.chars().count();
        let tail: String = shown.chars().skip(count.saturating_sub(room)).collect();
        let mut spans = vec![
            Span::styled(if focused { "▸ " } else { "  " }, theme::key()),
            Span::styled(format!("{}{required}: ", field.title), theme::bold()),
            Span::raw(tail),
        ];
        if focused {
            spans.push(Span::styled("▏", theme::key()));
        }
        out.push(Line::from(spans));
        let takes = match &field.description {
            Some(description) => format!("    {description} ({})", field.kind.hint()),
            None => format!("    {}", field.kind.hint()),
        };
        out.push(Line::styled(takes, theme::dim()));
    }
    if let Some(problem) = &open.problem {
        out.push(Line::default());
        out.push(Line::styled(one_line(problem), theme::warning()));
    }
    out
}

pub fn draw(
    app: &App,
    open: &OpenQuestion,
    waiting: usize,
    frame: &mut Frame,
    chat: Rect,
    above: Rect,
) {
    let width = dialog_width(above, MAX_WIDTH);
    let inner = width.saturating_sub(4).max(1);
    let mut lines = wrap(&body(open, inner), inner);
    // The focused field stays in view when the body is taller than the room.
    let keys = Line::styled(
        "Enter sends · Tab next field · Ctrl-D declines · Esc cancels",
        theme::dim(),
    );
    let wanted = lines.len() + 4;
    let area = place(
        chat,
        above,
        width,
        u16::try_from(wanted).unwrap_or(u16::MAX),
    );
    let rows = usize::from(area.height.saturating_sub(4));
    let focus_row = 2 + open.focus * 2;
    if lines.len() > rows && focus_row + 2 > rows {
        let skip = (focus_row + 2 - rows).min(lines.len().saturating_sub(rows));
        lines.drain(..skip);
    }
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::warning())
        .title(Line::styled(
            format!(
                " The MCP server {} asks (the answers go to it, never to the model) ",
                one_line(&open.question.server)
            ),
            theme::bold(),
        ))
        .title_bottom(arming_note(app));
    if waiting > 0 {
        block = block.title_bottom(
            Line::styled(format!(" {waiting} more waiting "), theme::bold()).right_aligned(),
        );
    }
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    let buf = frame.buffer_mut();
    let x = inside.x + 1;
    for (y, line) in (inside.y..).zip(lines.iter().take(rows)) {
        buf.set_line(x, y, line, inner);
    }
    let last = inside.bottom().saturating_sub(1);
    if last > inside.y {
        buf.set_line(x, last, &keys, inner);
    }
}
