//! The status bar: the mode badge (one colour per mode, bypass loud), the
//! short session id, the model, context use, the tokens and cost spent, the
//! MCP servers' state, the retries of a request, and the
//! turn's state with its elapsed time (a running call's own, while one
//! runs). Reads the state; never changes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::policy::{Grant, GrantScope};

use super::super::app::{Activity, App};
use super::super::format;
use super::super::keymap;
use super::theme;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// The spinner moves one step this often: its step is the time spent, so
/// any frame shows the right one, whatever made it.
pub const SPIN_STEP: std::time::Duration = std::time::Duration::from_millis(100);

/// The spinner's step after `spent`.
fn spin_frame(spent: std::time::Duration) -> &'static str {
    let step = spent.as_millis() / SPIN_STEP.as_millis();
    SPINNER[usize::try_from(step % SPINNER.len() as u128).unwrap_or_default()]
}

/// The turn's state in words: idle, thinking, streaming, running NAME,
/// waiting for you.
pub fn turn_state(app: &App) -> String {
    let waiting = !app.consents.is_empty() || app.mode_question.is_some();
    let Some(turn) = &app.turn else {
        return if waiting { "waiting for you" } else { "idle" }.into();
    };
    // A running call counts its own time; the rest, the turn's.
    let mut since = turn.started;
    let what = if waiting {
        "waiting for you".to_string()
    } else {
        match &turn.activity {
            Activity::Thinking => "thinking".into(),
            Activity::Streaming => "streaming".into(),
            Activity::Running { what, since: at } => {
                since = *at;
                format!("running {what}")
            }
            Activity::Retrying { at, reason } => {
                // The wait left, in whole seconds rounded up: `in 0 s` only
                // once it is over.
                let left = at.saturating_duration_since(app.now);
                let secs = left.as_millis().div_ceil(1000);
                return format!("retrying in {secs} s ({reason})");
            }
        }
    };
    let spin = if waiting {
        ""
    } else {
        spin_frame(app.now.saturating_duration_since(since))
    };
    let elapsed = format::elapsed(app.now.saturating_duration_since(since));
    if spin.is_empty() {
        format!("{what} {elapsed}")
    } else {
        format!("{spin} {what} {elapsed}")
    }
}

/// What the keys do now, in the state the person is in: the hints of the
/// keymap's bindings that hold.
pub fn key_hint(app: &App) -> String {
    let hints = keymap::hints(app);
    if hints.is_empty() {
        String::new()
    } else {
        format!("{} ", hints.join(" · "))
    }
}

/// `+bash` when tools are allowed for the session without asking (`+3`
/// for more than two), `+bash "ls -l"` when only that command line is,
/// `never: fetch_content` when only refusals are held.
pub fn grants_marker(grants: &[Grant]) -> Option<String> {
    let allowed: Vec<String> = grants
        .iter()
        .filter(|g| g.scope == GrantScope::Session)
        .map(|g| match &g.command {
            None => g.tool.to_string(),
            Some(command) => format!("{} {:?}", g.tool, format::one_line(command, 16)),
        })
        .collect();
    let refused = grants.len() - allowed.len();
    let mut tools: Vec<&str> = allowed.iter().map(String::as_str).collect();
    tools.dedup();
    let allowed_text = match tools.as_slice() {
        [] => None,
        [one] => Some(format!("+{one}")),
        [a, b] => Some(format!("+{a} +{b}")),
        more => Some(format!("+{} allowed", more.len())),
    };
    match (allowed_text, refused) {
        (None, 0) => None,
        (Some(text), 0) => Some(text),
        (None, n) => Some(format!("{n} never")),
        (Some(text), n) => Some(format!("{text} · {n} never")),
    }
}

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let status = &app.status;
    let state = if app.quit_armed {
        Span::styled(
            format!("Press {} again to quit", app.quit_key),
            theme::warning(),
        )
    } else {
        Span::raw(turn_state(app))
    };
    // (text, priority): the lowest priority goes first when space is short.
    let mut parts: Vec<(Span<'static>, u8)> = vec![
        (
            Span::raw(status.session_id.chars().take(8).collect::<String>()),
            3,
        ),
        (Span::raw(status.model.clone()), 1),
        (
            Span::raw(format::context_use(
                status.input_tokens,
                status.context_window,
            )),
            2,
        ),
        (state, u8::MAX),
    ];
    if let Some(spent) = format::spent(status.tokens_used, status.cost_usd) {
        // After the context use; before the turn's state.
        parts.insert(3, (Span::raw(spent), 2));
    }
    if let Some(mcp) = &status.mcp {
        parts.insert(3, (Span::raw(mcp.clone()), 0));
    }
    if !app.plan.is_empty() {
        // Before the turn's state, which always stays.
        let at = parts.len() - 1;
        parts.insert(at, (Span::raw(super::plan::progress(&app.plan)), 2));
    }
    if let Some(marker) = grants_marker(&status.grants) {
        // Said as long as it holds, next to the badge it qualifies.
        parts.insert(0, (Span::styled(marker, theme::warning()), 5));
    }
    if let Some(sandbox) = status.sandbox {
        // Said as long as it holds; it goes last when space is short.
        parts.insert(0, (Span::styled(sandbox, theme::warning()), 4));
    }
    let badge = Span::styled(
        format!(" {} ", status.mode.name().to_uppercase()),
        theme::mode_badge(status.mode),
    );
    let hint = key_hint(app);
    let width = usize::from(area.width);
    let used = |parts: &[(Span, u8)]| -> usize {
        badge.width() + parts.iter().map(|(s, _)| s.width() + 3).sum::<usize>()
    };
    // The hint says what the keys do: the model and the context go first.
    let hint_room = hint.chars().count() + 2;
    while used(&parts) + hint_room > width {
        let lowest = parts
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| *p < u8::MAX)
            .min_by_key(|(_, (_, p))| *p)
            .map(|(i, _)| i);
        match lowest {
            Some(i) => {
                parts.remove(i);
            }
            None => break,
        }
    }
    let mut spans = vec![badge];
    for (span, _) in &parts {
        spans.push(Span::styled(" │ ", theme::dim()));
        spans.push(span.clone());
    }
    let line = Line::from(spans);
    let used = line.width();
    frame
        .buffer_mut()
        .set_line(area.x, area.y, &line, area.width);
    let hint_width = hint.chars().count();
    if used + hint_width + 2 <= width {
        let x = area.right() - hint_width as u16;
        frame.buffer_mut().set_line(
            x,
            area.y,
            &Line::styled(hint.as_str(), theme::dim()),
            hint_width as u16,
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{SPIN_STEP, spin_frame};

    #[test]
    fn the_spinner_steps_with_the_time_spent_whatever_drew_the_frame() {
        assert_eq!(spin_frame(Duration::ZERO), "⠋");
        assert_eq!(spin_frame(SPIN_STEP - Duration::from_millis(1)), "⠋");
        assert_eq!(spin_frame(SPIN_STEP), "⠙");
        assert_eq!(spin_frame(SPIN_STEP * 3 + SPIN_STEP / 2), "⠸");
        // Ten steps go round.
        assert_eq!(spin_frame(SPIN_STEP * 10), "⠋");
    }
}
