//! Drawing: the chat pane, the plan's panel, the input box and the status bar, with whatever
//! overlay is open on top. Views are functions of `&App`; the only thing
//! they write is the layout cache (sizes, through `Cell`s) that `update`
//! reads for paging. They never change the state they draw.

pub mod chat;
pub mod dialog;
pub mod diff;
pub mod entry;
pub mod help;
pub mod input;
pub mod paint;
pub mod picker;
pub mod plan;
pub mod question;
pub mod rewind;
pub mod status;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::app::App;

/// A terminal this small (either way) shows only "terminal too small".
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 5;

/// The frame's regions.
#[derive(Debug, Clone, Copy)]
pub struct Regions {
    pub chat: Rect,
    /// The plan's panel, between the chat and the queued prompts (no rows
    /// when it is not shown).
    pub plan: Rect,
    /// The queued prompts, between the chat and the input.
    pub queued: Rect,
    pub input: Rect,
    pub status: Rect,
}

/// Splits `area` into chat, input and status bar.
pub fn regions(app: &App, area: Rect) -> Regions {
    let status = Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1);
    let max_text_rows = (area.height / 3).clamp(1, 8);
    let text_rows = input::rows(app, area.width.saturating_sub(3), max_text_rows);
    let input_height = (text_rows + 2).min(area.height.saturating_sub(2));
    let input = Rect::new(
        area.x,
        status.y.saturating_sub(input_height),
        area.width,
        input_height,
    );
    let room = input.y.saturating_sub(area.y);
    let queued_height = input::queued_rows(app).min(room / 2);
    let queued = Rect::new(
        area.x,
        input.y.saturating_sub(queued_height),
        area.width,
        queued_height,
    );
    let plan_height = plan::rows(app, queued.y.saturating_sub(area.y));
    let plan = Rect::new(
        area.x,
        queued.y.saturating_sub(plan_height),
        area.width,
        plan_height,
    );
    let chat = Rect::new(area.x, area.y, area.width, plan.y.saturating_sub(area.y));
    Regions {
        chat,
        plan,
        queued,
        input,
        status,
    }
}

/// Draws the whole screen.
pub fn draw(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width <= MIN_WIDTH || area.height <= MIN_HEIGHT {
        frame.render_widget(Line::raw("terminal too small"), area);
        return;
    }
    let regions = regions(app, area);
    chat::draw(app, frame, regions.chat);
    plan::draw(app, frame, regions.plan);
    input::draw_queued(app, frame, regions.queued);
    input::draw(app, frame, regions.input);
    status::draw(app, frame, regions.status);
    // Above the status bar: where overlays may go.
    let above = Rect::new(
        area.x,
        area.y,
        area.width,
        regions.status.y.saturating_sub(area.y),
    );
    if let Some(open) = app.consents.front() {
        dialog::draw_consent(
            app,
            open,
            app.consents.waiting(),
            frame,
            regions.chat,
            above,
        );
    } else if let Some(open) = app.questions.front() {
        question::draw(
            app,
            open,
            app.questions.waiting(),
            frame,
            regions.chat,
            above,
        );
    } else if let Some(question) = &app.mode_question {
        dialog::draw_mode_question(app, question, frame, regions.chat, above);
    } else if let Some(dialog) = &app.rewind {
        rewind::draw(dialog, frame, regions.chat, above);
    } else if let Some(picker) = &app.picker {
        picker::draw(picker, frame, above);
    } else if let Some(scroll) = app.help {
        help::draw(app, scroll, frame, above);
    } else {
        input::draw_completions(app, frame, regions.chat, regions.input);
    }
}
