//! The modal dialogs over the chat: the permission question (a title naming
//! the tool, every field, the diff coloured and scrollable, the warning, the
//! four answers with their fixed letters, whether its keys are armed, and
//! how many more wait) and the mode question (`Switch to this mode? [y/N]`).
//! They only show; the keys that answer are in the keymap.

use crate::frontend::tui::app::YesNo;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear};

use crate::controls::visible;
use crate::frontend::text::field_line;
use crate::policy::{Mode, Offer};
use crate::tools::{Field, FieldKind, FieldRole};

use super::super::app::{App, ModeQuestion};
use super::super::consent::OpenConsent;
use super::super::format::one_line;
use super::super::wrap::wrap;
use super::theme;
use crate::policy::ConsentAnswer;

/// Widest a dialog gets.
const MAX_WIDTH: u16 = 110;

/// The title: the tool and what it wants.
pub fn title(tool: &str, fields: &[Field]) -> String {
    let field = |role: FieldRole| Field::find(fields, role).map(|v| one_line(v, 60));
    let new_file = fields
        .iter()
        .any(|f| f.kind == FieldKind::Diff && f.value.contains("--- /dev/null"));
    if let Some(destination) = field(FieldRole::Host) {
        return format!("bash wants to reach {destination}");
    }
    let (path, url, server) = (
        field(FieldRole::Path),
        field(FieldRole::Url),
        field(FieldRole::Server),
    );
    match (tool, path, url, server) {
        ("bash", ..) => "bash wants to run a command".into(),
        ("plan", ..) => "plan wants to change the plan".into(),
        ("edit_file", Some(path), ..) => format!("edit_file wants to edit {path}"),
        ("lsp", Some(path), ..) => format!("lsp wants to rename in {path}"),
        ("write_file", Some(path), ..) if new_file => format!("write_file wants to create {path}"),
        ("write_file", Some(path), ..) => format!("write_file wants to write {path}"),
        (_, _, Some(url), _) => format!("{tool} wants to fetch {url}"),
        (_, _, _, Some(server)) => format!("{tool} wants to call {server}"),
        _ => format!("{tool} wants to run"),
    }
}

/// The body: the diff coloured, text fields as `Label: "value"`, blocks as
/// their own lines under their label, the warning last.
fn body(fields: &[Field]) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let has_diff = fields.iter().any(|f| f.kind == FieldKind::Diff);
    for field in fields.iter().filter(|f| f.kind == FieldKind::Diff) {
        let lines: Vec<&str> = field.value.trim_end_matches('\n').split('\n').collect();
        let sign_style = |line: &str| super::diff::sign_style(line, Style::new());
        for pieces in super::diff::painted(&field.value, &lines, sign_style) {
            out.push(Line::from(super::diff::cut_pieces(&pieces, usize::MAX)));
        }
        out.push(Line::default());
    }
    // The diff says what Remove and Insert would: with one, they are left
    // out (the record line keeps them).
    let text = fields.iter().filter(|f| {
        f.kind == FieldKind::Text && !(has_diff && f.role == crate::tools::FieldRole::SaidByDiff)
    });
    for field in text {
        let text = field_line(field);
        let (label, value) = text.split_at(field.label.len().min(text.len()));
        out.push(Line::from(vec![
            Span::styled(label.to_string(), theme::bold()),
            Span::raw(value.to_string()),
        ]));
    }
    for field in fields.iter().filter(|f| f.kind == FieldKind::Block) {
        out.push(Line::styled(format!("{}:", field.label), theme::bold()));
        for line in visible(&field.value).split('\n') {
            out.push(Line::raw(format!("  {}", line.replace('\t', "    "))));
        }
    }
    for field in fields.iter().filter(|f| f.kind == FieldKind::Warning) {
        out.push(Line::default());
        out.push(Line::styled(visible(&field.value), theme::warning()));
    }
    out
}

/// What an answer's button says, for `tool` (never is short: its key's
/// help says the rest).
fn button(offer: &Offer, answer: ConsentAnswer, tool: &str) -> String {
    match answer {
        ConsentAnswer::NeverThisRun => "never".into(),
        other => offer.label(other, tool),
    }
}

/// The offered answers laid out in rows no wider than `width`.
fn choices(offer: &Offer, tool: &str, focus: ConsentAnswer, width: u16) -> Vec<Line<'static>> {
    let mut rows: Vec<Line<'static>> = vec![Line::default(), Line::default()];
    let mut used = 0usize;
    for &choice in offer.answers {
        let label = button(offer, choice, tool);
        let focused = choice == focus;
        let (open, close) = if focused { ("[", "]") } else { (" ", " ") };
        let base = if focused {
            theme::focused()
        } else {
            Style::new()
        };
        let spans = vec![
            Span::styled(open, base),
            Span::styled(choice.key().to_string(), theme::key().patch(base)),
            Span::styled(format!(" {label}"), base),
            Span::styled(close, base),
            Span::raw("  "),
        ];
        let w: usize = spans.iter().map(Span::width).sum();
        if used > 0 && used + w > usize::from(width) {
            rows.push(Line::default());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.spans.extend(spans);
        }
        used += w;
    }
    rows
}

/// How wide a dialog is in `above`, at most `max`.
pub fn dialog_width(above: Rect, max: u16) -> u16 {
    let margin = if above.width > 60 { 4 } else { 0 };
    above.width.saturating_sub(margin).clamp(1, max)
}

/// Where a dialog of `width` by `height` goes: over the bottom of the chat
/// when it fits there, else over everything above the status bar.
pub fn place(chat: Rect, above: Rect, width: u16, height: u16) -> Rect {
    let x = above.x + (above.width.saturating_sub(width)) / 2;
    let (bottom, room) = if height <= chat.height {
        (chat.bottom(), chat.height)
    } else {
        (above.bottom(), above.height)
    };
    let height = height.min(room);
    Rect::new(x, bottom.saturating_sub(height), width, height)
}

pub fn draw_consent(
    app: &App,
    open: &OpenConsent,
    waiting: usize,
    frame: &mut Frame,
    chat: Rect,
    above: Rect,
) {
    let tool = open.request.tool.as_str();
    let width = dialog_width(above, MAX_WIDTH);
    let inner = width.saturating_sub(4).max(1);
    let body = wrap(&body(&open.request.fields), inner);
    let choice_rows = match (open.confirming, &open.note) {
        (Some(answer), _) => vec![
            Line::default(),
            Line::styled(open.confirm_question(answer), theme::warning()),
        ],
        (None, Some(note)) => note_rows(note, inner),
        (None, None) => choices(&open.request.offer, tool, open.focus, inner),
    };
    let wanted = body.len() + choice_rows.len() + 2;
    let area = place(
        chat,
        above,
        width,
        u16::try_from(wanted).unwrap_or(u16::MAX),
    );
    let body_rows = area.height.saturating_sub(2 + choice_rows.len() as u16);
    let total = u16::try_from(body.len()).unwrap_or(u16::MAX);
    app.layout.dialog_rows.set((body_rows, total));
    let scroll = open.scroll.min(total.saturating_sub(body_rows));
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme::warning())
        .title(Line::styled(
            format!(" {} ", one_line(&title(tool, &open.request.fields), 80)),
            theme::bold(),
        ));
    block = block.title_bottom(arming_note(app));
    if waiting > 0 {
        let s = if waiting == 1 { "" } else { "s" };
        block = block.title_bottom(
            Line::styled(
                format!(" {waiting} more request{s} waiting "),
                theme::bold(),
            )
            .right_aligned(),
        );
    }
    if let Some(title) = scroll_title(scroll, body_rows, total) {
        block = block.title_bottom(title);
    }
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    let buf = frame.buffer_mut();
    let x = inside.x + 1;
    let shown = body
        .iter()
        .skip(usize::from(scroll))
        .take(usize::from(body_rows));
    for (y, line) in (inside.y..).zip(shown) {
        buf.set_line(x, y, line, inner);
    }
    let first = inside.bottom().saturating_sub(choice_rows.len() as u16);
    for (y, line) in (first..).zip(&choice_rows) {
        if y >= inside.y {
            buf.set_line(x, y, line, inner);
        }
    }
}

/// The rejection's note as it is typed, its last characters when long.
fn note_rows(note: &str, width: u16) -> Vec<Line<'static>> {
    let room = usize::from(width).saturating_sub(3).max(1);
    let shown = visible(note);
    let count = shown.chars().count();
    let tail: String = shown.chars().skip(count.saturating_sub(room)).collect();
    vec![
        Line::default(),
        Line::styled(
            "Reject, with a note to the model (Enter sends; Esc rejects without one):",
            theme::bold(),
        ),
        Line::from(vec![
            Span::styled("> ", theme::key()),
            Span::raw(tail),
            Span::styled("▏", theme::key()),
        ]),
    ]
}

/// What the border says about the keys: not armed yet while the person
/// may still be typing, then armed.
pub fn arming_note(app: &App) -> Line<'static> {
    if app.question_armed() {
        Line::styled(" keys armed ", theme::key())
    } else {
        Line::styled(" keys arm when you stop typing ", theme::dim())
    }
}

/// ` ↑↓ scroll 3-20 of 34 ` when `total` rows do not fit in `rows`.
fn scroll_title(scroll: u16, rows: u16, total: u16) -> Option<Line<'static>> {
    (total > rows).then(|| {
        Line::styled(
            format!(
                " ↑↓ scroll {}-{} of {} ",
                scroll + 1,
                (scroll + rows).min(total),
                total
            ),
            theme::dim(),
        )
    })
}

pub fn draw_mode_question(
    app: &App,
    question: &ModeQuestion,
    frame: &mut Frame,
    chat: Rect,
    above: Rect,
) {
    let width = dialog_width(above, 90);
    let inner = width.saturating_sub(4).max(1);
    let (body, ask, title, keys, border) = match &question.ask {
        YesNo::Mode { from, to, warning } => {
            let color = theme::mode_color(*to);
            let border = if *to == Mode::Bypass {
                Style::new().fg(color).add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(color)
            };
            (
                vec![Line::raw(warning.clone())],
                "Switch to this mode? [y/N]".to_string(),
                format!(" /mode {to}: from {from} to {to} "),
                format!(" y switches · any other key keeps {from} "),
                border,
            )
        }
        YesNo::Rule { toml, ask, .. } => (
            toml.lines().map(|l| Line::raw(l.to_string())).collect(),
            ask.clone(),
            " your settings: appended only on y ".to_string(),
            " y appends · any other key saves nothing ".to_string(),
            theme::warning(),
        ),
    };
    let asked = wrap(
        &[Line::styled(
            ask,
            theme::bold().add_modifier(Modifier::BOLD),
        )],
        inner,
    );
    let body = wrap(&body, inner);
    // A mode's warning comes before its question; settings text to append
    // comes after it, so a long text never hides the question, and it
    // scrolls under it when it is taller than the screen.
    let (fixed, scrolled) = match question.ask {
        YesNo::Mode { .. } => {
            let mut fixed = body;
            fixed.push(Line::default());
            fixed.extend(asked);
            (fixed, Vec::new())
        }
        YesNo::Rule { .. } => {
            let mut fixed = asked;
            fixed.push(Line::default());
            (fixed, body)
        }
    };
    let wanted = fixed.len() + scrolled.len() + 2;
    let area = place(
        chat,
        above,
        width,
        u16::try_from(wanted).unwrap_or(u16::MAX),
    );
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(Line::styled(title, theme::bold()))
        .title_bottom(arming_note(app))
        .title_bottom(Line::styled(keys, theme::dim()).right_aligned());
    let fixed_rows = u16::try_from(fixed.len()).unwrap_or(u16::MAX);
    let rows = area.height.saturating_sub(2).saturating_sub(fixed_rows);
    let total = u16::try_from(scrolled.len()).unwrap_or(u16::MAX);
    app.layout.dialog_rows.set((rows, total));
    let scroll = question.scroll.min(total.saturating_sub(rows));
    if let Some(title) = scroll_title(scroll, rows, total) {
        block = block.title_bottom(title);
    }
    frame.render_widget(Clear, area);
    let inside = block.inner(area);
    frame.render_widget(block, area);
    let buf = frame.buffer_mut();
    let shown = fixed
        .iter()
        .chain(scrolled.iter().skip(usize::from(scroll)))
        .take(usize::from(inside.height));
    for (y, line) in (inside.y..).zip(shown) {
        buf.set_line(inside.x + 1, y, line, inner);
    }
}
