//! The help overlay: every key and every command, scrollable. Reads the
//! state; never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use crate::agent::commands::COMMANDS;
use crate::policy::ConsentAnswer;

use super::super::app::App;
use super::super::keymap::binding::{Group, Help};
use super::super::keymap::table::BINDINGS;
use super::super::wrap::wrap;
use super::theme;

fn key_line(key: &str, what: &'static str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("  {key:<28}"), theme::key()),
        Span::raw(what),
    ])
}

/// Every line of the overlay: the keymap's bindings by group, in the
/// table's order, then the commands.
pub fn lines() -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for group in Group::ALL {
        out.push(Line::styled(group.title(), theme::bold()));
        for binding in BINDINGS {
            match binding.help {
                Help::Line {
                    group: of,
                    keys,
                    what,
                } if of == group => out.push(key_line(keys, what)),
                Help::Answers if group == Group::Questions => {
                    for answer in ConsentAnswer::ALL {
                        if answer != ConsentAnswer::Reject {
                            out.push(key_line(&answer.key().to_string(), answer.label()));
                        }
                    }
                }
                _ => {}
            }
        }
        out.push(Line::default());
    }
    out.push(Line::styled("In a prompt", theme::bold()));
    out.push(key_line(
        "@PATH",
        "attach a project file (Tab completes the path)",
    ));
    out.push(key_line(
        "!COMMAND",
        "run a command yourself; the model sees its output",
    ));
    out.push(Line::default());
    out.push(Line::styled("Commands", theme::bold()));
    for spec in COMMANDS {
        out.push(key_line(spec.name, spec.help));
    }
    out
}

pub fn draw(app: &App, scroll: u16, frame: &mut Frame, above: Rect) {
    let width = above.width.saturating_sub(4).clamp(1, 100);
    let body = wrap(&lines(), width.saturating_sub(4).max(1));
    let wanted = u16::try_from(body.len() + 2).unwrap_or(u16::MAX);
    let height = above.height.saturating_sub(2).clamp(1, wanted);
    let area = Rect::new(
        above.x + (above.width.saturating_sub(width)) / 2,
        above.y + (above.height.saturating_sub(height)) / 2,
        width,
        height,
    );
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::border())
        .title(Line::styled(" mino help ", theme::bold()))
        .title_bottom(Line::styled(" ↑↓ scroll · Esc close ", theme::dim()));
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    let inner = inside.width.saturating_sub(2).max(1);
    let total = u16::try_from(body.len()).unwrap_or(u16::MAX);
    app.layout.help_rows.set((inside.height, total));
    let scroll = scroll.min(total.saturating_sub(inside.height));
    for (i, line) in body
        .iter()
        .skip(usize::from(scroll))
        .take(usize::from(inside.height))
        .enumerate()
    {
        frame
            .buffer_mut()
            .set_line(inside.x + 1, inside.y + i as u16, line, inner);
    }
}
