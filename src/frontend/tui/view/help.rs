//! The help overlay: every key and every command, scrollable. Reads the
//! state; never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use crate::agent::commands::COMMANDS;
use crate::policy::ConsentAnswer;

use super::super::app::App;
use super::super::keymap::EDIT_KEYS;
use super::super::wrap::wrap;
use super::theme;

/// Keys and what they do, in groups; the input's readline keys come from
/// the keymap's table and the answers' keys from `ConsentAnswer`.
const KEYS: [(&str, &[(&str, &str)]); 4] = [
    (
        "Input",
        &[
            ("Enter", "send the prompt or command"),
            ("Alt+Enter, Ctrl+J", "new line"),
            ("Up, Down", "earlier prompts (on the first or last line)"),
            ("Tab", "complete a /command"),
            ("Shift+Tab", "choose the permission mode"),
            ("? or F1", "this help (? on an empty input)"),
            ("Esc twice", "edit the last prompt (on an empty input)"),
            (
                "Up",
                "take the newest queued prompt back (on an empty input)",
            ),
            (
                "Ctrl+D",
                "quit (on an empty input; during a turn it asks first)",
            ),
        ],
    ),
    (
        "Chat",
        &[
            ("PageUp, PageDown", "scroll"),
            ("mouse wheel", "scroll"),
            (
                "Home, End",
                "top, bottom (on an empty input; Ctrl+Home/End always)",
            ),
            (
                "Ctrl+O",
                "expand or collapse the last tool result on screen",
            ),
            ("Ctrl+L", "redraw the screen"),
            (
                "F2",
                "give the mouse to the terminal (its own selection) or take it back",
            ),
            (
                "Shift+drag",
                "select text (the mouse wheel scrolls the chat)",
            ),
        ],
    ),
    (
        "Turn",
        &[
            ("Esc, Ctrl+C", "interrupt the running turn"),
            ("Ctrl+C twice", "quit when idle"),
        ],
    ),
    (
        "Questions",
        &[
            ("Enter", "the focused answer (focus starts on reject)"),
            ("Left, Right", "move the focus"),
            ("Up, Down, PageUp, PageDown", "scroll the question"),
            ("Ctrl+C", "interrupt the turn"),
            (
                "typing",
                "goes to the input until the border says keys armed",
            ),
        ],
    ),
];

fn key_line(key: &str, what: &'static str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("  {key:<28}"), theme::key()),
        Span::raw(what),
    ])
}

/// Every line of the overlay.
pub fn lines() -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (group, keys) in KEYS {
        out.push(Line::styled(group, theme::bold()));
        if group == "Questions" {
            for answer in ConsentAnswer::ALL {
                if answer == ConsentAnswer::Reject {
                    out.push(key_line("Esc", "reject"));
                    out.push(key_line(
                        "n, Tab",
                        "reject with a note to the model (type it, Enter sends)",
                    ));
                } else {
                    out.push(key_line(&answer.key().to_string(), answer.label()));
                }
            }
        }
        for (key, what) in keys {
            out.push(key_line(key, what));
        }
        if group == "Input" {
            for binding in EDIT_KEYS {
                out.push(key_line(binding.keys, binding.help));
            }
        }
        out.push(Line::default());
    }
    out.push(Line::styled("Commands", theme::bold()));
    for spec in COMMANDS {
        out.push(Line::from(vec![
            Span::styled(format!("  {:<28}", spec.name), theme::key()),
            Span::raw(spec.help),
        ]));
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
