//! Colours and styles, in one place: one colour per mode (bypass loud), and
//! the looks of the chat's kinds of lines. Pure data; it never draws.

use ratatui::style::{Color, Modifier, Style};

use crate::policy::Mode;

/// The mode badge: calm for manual, loud for bypass.
pub fn mode_badge(mode: Mode) -> Style {
    match mode {
        Mode::Plan => Style::new().fg(Color::Black).bg(Color::Green),
        Mode::Manual => Style::new().fg(Color::Black).bg(Color::Cyan),
        Mode::AcceptEdits => Style::new().fg(Color::Black).bg(Color::Yellow),
        Mode::Auto => Style::new().fg(Color::Black).bg(Color::Magenta),
        Mode::Bypass => Style::new()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD),
    }
}

/// The mode's colour on its own (record bars, dialog borders).
pub fn mode_color(mode: Mode) -> Color {
    match mode {
        Mode::Plan => Color::Green,
        Mode::Manual => Color::Cyan,
        Mode::AcceptEdits => Color::Yellow,
        Mode::Auto => Color::Magenta,
        Mode::Bypass => Color::Red,
    }
}

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn user() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

pub fn record_text() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::DIM)
}

pub fn ok() -> Style {
    Style::new().fg(Color::Green)
}

pub fn error() -> Style {
    Style::new().fg(Color::Red)
}

pub fn warning() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn focused() -> Style {
    Style::new()
        .add_modifier(Modifier::REVERSED)
        .add_modifier(Modifier::BOLD)
}

pub fn key() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

pub fn diff_added() -> Style {
    Style::new().fg(Color::Green)
}

pub fn diff_removed() -> Style {
    Style::new().fg(Color::Red)
}

/// The ground of an added line, and of its words that changed (256-colour
/// indexes: a dark and a brighter green).
pub const ADDED_GROUND: Color = Color::Indexed(22);
pub const ADDED_WORDS: Color = Color::Indexed(28);
/// The ground of a removed line, and of its words that changed.
pub const REMOVED_GROUND: Color = Color::Indexed(52);
pub const REMOVED_WORDS: Color = Color::Indexed(88);

pub fn diff_hunk() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn border() -> Style {
    Style::new().fg(Color::DarkGray)
}
