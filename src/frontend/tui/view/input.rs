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
            Layer::Consent => answer_hint(app),
            Layer::ModeQuestion if app.settings_question() => {
                "Answer the question above: y appends; any other key saves nothing.".to_string()
            }
            Layer::ModeQuestion => {
                "Answer the question above: y switches; any other key does not.".to_string()
            }
            _ => app.input.lines().first().cloned().unwrap_or_default(),
        };
        frame.render_widget(Line::styled(hint, theme::dim()), inside);
    }
}

/// Queued prompts shown at most; more are counted.
const QUEUED_SHOWN: usize = 3;

/// Rows the queued prompts take above the input.
pub fn queued_rows(app: &App) -> u16 {
    if app.plan_offer {
        return 1;
    }
    match app.queued.len() {
        0 => 0,
        n if n <= QUEUED_SHOWN => n as u16,
        _ => QUEUED_SHOWN as u16 + 1,
    }
}

/// The prompts waiting for the turn to end, oldest first, one line each;
/// the newest says how to take it back.
pub fn draw_queued(app: &App, frame: &mut Frame, area: Rect) {
    if app.plan_offer && area.height > 0 {
        let offer = Line::from(vec![
            Span::raw(" "),
            Span::styled(super::super::plan_offer::OFFER, theme::bold()),
        ]);
        frame
            .buffer_mut()
            .set_line(area.x, area.y, &offer, area.width);
        return;
    }
    let count = app.queued.len();
    let mut lines: Vec<Line> = Vec::new();
    for (i, prompt) in app.queued.iter().enumerate().take(QUEUED_SHOWN) {
        let first = prompt.text.lines().next().unwrap_or_default();
        let more = if prompt.text.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        let mut spans = vec![
            Span::styled(" ↳ queued: ", theme::dim()),
            Span::raw(format!("{}{more}", crate::controls::visible(first))),
        ];
        if i + 1 == count {
            spans.push(Span::styled("  (↑ takes it back to edit)", theme::dim()));
        }
        lines.push(Line::from(spans));
    }
    if count > QUEUED_SHOWN {
        lines.push(Line::styled(
            format!(
                " ↳ and {} more (↑ takes the newest back to edit)",
                count - QUEUED_SHOWN
            ),
            theme::dim(),
        ));
    }
    for (i, line) in lines.iter().take(usize::from(area.height)).enumerate() {
        frame
            .buffer_mut()
            .set_line(area.x, area.y + i as u16, line, area.width);
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

/// `Answer the question above: y, a, n or v.`, with the letters of the
/// answers the open question offers.
fn answer_hint(app: &App) -> String {
    let letters: Vec<String> = app
        .consents
        .front()
        .map_or(&crate::policy::ConsentAnswer::ALL[..], |open| {
            open.request.offer.answers
        })
        .iter()
        .map(|answer| answer.key().to_string())
        .collect();
    let list = match letters.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("Answer the question above: {list}.")
}
