//! The rewind dialog: one prompt's three choices, each with what it would
//! do (files to restore and delete, lines, the conversation), then the
//! files changed since by something other than mino, each with a box the
//! person ticks to restore it anyway. Drawn like the other dialogs; reads
//! the state, never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use crate::controls::visible;
use crate::frontend::rewind_words::{self, CHOICES};

use super::super::rewind::RewindDialog;
use super::super::wrap::wrap;
use super::dialog::{dialog_width, place};
use super::theme;

pub fn draw(dialog: &RewindDialog, frame: &mut Frame, chat: Rect, above: Rect) {
    let width = dialog_width(above, 100);
    let inner = width.saturating_sub(4).max(1);
    let offer = &dialog.offer;
    let mut lines: Vec<Line<'static>> = Vec::new();
    // The row each line belongs to, so the focused one is highlighted.
    let mut rows: Vec<Option<usize>> = Vec::new();
    let mut push = |lines: &mut Vec<Line<'static>>, new: Vec<Line<'static>>, row| {
        for line in new {
            rows.push(row);
            lines.push(line);
        }
    };
    push(
        &mut lines,
        wrap(
            &[Line::styled(
                format!(
                    "Prompt {}: {}",
                    offer.n,
                    visible(&rewind_words::short(&offer.prompt, 200))
                ),
                theme::user(),
            )],
            inner,
        ),
        None,
    );
    push(&mut lines, vec![Line::default()], None);
    for (i, choice) in CHOICES.iter().enumerate() {
        let style = if i == dialog.selected {
            theme::focused()
        } else {
            Style::new()
        };
        let mark = if i == dialog.selected { "›" } else { " " };
        push(
            &mut lines,
            vec![Line::from(vec![Span::styled(
                format!("{mark} {}. {}", i + 1, choice.label),
                style.patch(theme::bold()),
            )])],
            Some(i),
        );
        let effect = visible(&rewind_words::effect(choice, offer));
        push(
            &mut lines,
            wrap(
                &[Line::styled(format!("    {effect}"), theme::dim())],
                inner,
            ),
            Some(i),
        );
    }
    if !offer.code.kept.is_empty() {
        push(&mut lines, vec![Line::default()], None);
        push(
            &mut lines,
            wrap(
                &[Line::styled(
                    "Changed since by something other than mino: kept unless you confirm each (Space):",
                    theme::warning(),
                )],
                inner,
            ),
            None,
        );
        for (k, path) in offer.code.kept.iter().enumerate() {
            let row = CHOICES.len() + k;
            let ticked = if dialog.confirmed.contains(path) {
                "[x] restore"
            } else {
                "[ ] keep   "
            };
            let style = if row == dialog.selected {
                theme::focused()
            } else {
                Style::new()
            };
            push(
                &mut lines,
                vec![Line::styled(format!("  {ticked} {}", visible(path)), style)],
                Some(row),
            );
        }
    }
    if !offer.code.unrestorable.is_empty() {
        push(
            &mut lines,
            wrap(
                &[Line::styled(
                    format!(
                        "Recorded by digest only (over the size limit), not restored: {}",
                        visible(&offer.code.unrestorable.join(", "))
                    ),
                    theme::dim(),
                )],
                inner,
            ),
            None,
        );
    }
    let area = place(chat, above, width, lines.len() as u16 + 2);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .title(Line::styled(
            format!(" /rewind: back to before prompt {} ", offer.n),
            theme::bold(),
        ))
        .title_bottom(Line::styled(
            " ↑↓ move · Enter chooses · Space confirms a file · Esc back ",
            theme::dim(),
        ));
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    // Keep the focused row in view.
    let height = usize::from(inside.height);
    let last_focused = rows
        .iter()
        .rposition(|r| *r == Some(dialog.selected))
        .unwrap_or(0);
    let first = (last_focused + 1).saturating_sub(height);
    let buf = frame.buffer_mut();
    for (i, line) in lines.iter().skip(first).take(height).enumerate() {
        buf.set_line(inside.x + 1, inside.y + i as u16, line, inner);
    }
}
