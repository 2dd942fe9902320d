//! The plan's panel: the session's steps in a box between the chat and the
//! input, one line each with its mark, titled `plan 2/5`. Step text came
//! from the model, so it is drawn with its control characters made visible
//! (an escape sequence in a step cannot drive the terminal). Shown while
//! the session has a plan and Ctrl+T has not hidden it. Reads the state;
//! never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::session::{Plan, StepStatus};

use super::super::app::App;
use super::theme;

/// The panel never takes more than this share of the rows above the input
/// (one part in `SHARE`): the chat keeps the rest.
const SHARE: u16 = 2;

/// `plan 2/5`: steps done of all, for the panel's title and the status bar.
pub fn progress(plan: &Plan) -> String {
    let (done, all) = plan.progress();
    format!("plan {done}/{all}")
}

/// Rows the panel wants out of `room` rows above the input: none when it
/// is not shown.
pub fn rows(app: &App, room: u16) -> u16 {
    if app.plan.is_empty() || app.plan_hidden {
        return 0;
    }
    let wanted = u16::try_from(app.plan.steps.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let most = (room / SHARE).max(3);
    if room < 6 { 0 } else { wanted.min(most) }
}

/// The first step shown when only `fit` lines fit: the one before the
/// first step not done, so the work at hand stays in view.
fn first_shown(plan: &Plan, fit: usize) -> usize {
    let at = plan
        .steps
        .iter()
        .position(|s| s.status != StepStatus::Done)
        .unwrap_or(plan.steps.len());
    at.saturating_sub(1)
        .min(plan.steps.len().saturating_sub(fit))
}

fn step_line(number: usize, text: &str, status: StepStatus) -> Line<'static> {
    let style = match status {
        StepStatus::Done => theme::dim(),
        StepStatus::InProgress => theme::bold(),
        StepStatus::Pending => ratatui::style::Style::default(),
    };
    Line::from(vec![
        Span::styled(format!("{number:>2}. {} ", status.mark()), style),
        Span::styled(crate::controls::visible(text), style),
    ])
}

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    if area.height < 3 {
        return;
    }
    let plan = &app.plan;
    let fit = usize::from(area.height - 2);
    let start = first_shown(plan, fit);
    let shown = plan.steps.iter().enumerate().skip(start).take(fit);
    let lines: Vec<Line> = shown
        .map(|(i, step)| step_line(i + 1, &step.text, step.status))
        .collect();
    let hidden = plan.steps.len() - lines.len();
    let mut title = format!(" {} ", progress(plan));
    if hidden > 0 {
        title.push_str(&format!("· {hidden} more (Ctrl+T hides) "));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::border())
        .title(Span::styled(title, theme::dim()));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
