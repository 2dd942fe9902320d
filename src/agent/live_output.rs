//! A running call's output, shown while it runs: what the command printed
//! so far, redacted exactly as its result will be (the whole capture at
//! once, so a value split across reads is found whole), with any end that
//! could be the start of a secret held back until what follows settles
//! it, cut to its last lines and sent to front ends at most once a frame.
//! The result replaces it when the call ends. Never decides, never keeps
//! output of its own beyond one frame's text.

use std::convert::Infallible;
use std::time::Duration;

use crate::secrets::Secrets;
use crate::tools::LiveOutput;

use super::driver::Runtime;
use super::events::AgentEvent;

/// At most one update a call per this long: what a terminal shows
/// smoothly, whatever the command prints per second.
pub const LIVE_FRAME: Duration = Duration::from_millis(40);

/// The last lines an update carries.
pub const LIVE_LINES: usize = 40;

/// The most bytes an update carries (its last lines are cut to this).
pub const LIVE_BYTES: usize = 8 * 1024;

/// Sends `live`'s output as `AgentEvent::ToolOutput` for `call_id` while
/// it grows. Never returns: dropped when the call it watches ends.
pub async fn forward(
    rt: &Runtime,
    call_id: &str,
    tool: &str,
    live: Option<LiveOutput>,
) -> Infallible {
    if let Some(mut live) = live {
        let mut last = String::new();
        while live.changed().await {
            let secrets = rt.tool_cx.secrets.get().await;
            let shown = shown_now(&secrets, &live.text(&secrets));
            if !shown.is_empty() && shown != last {
                rt.emit(AgentEvent::ToolOutput {
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    output: shown.clone(),
                });
                last = shown;
            }
            tokio::time::sleep(LIVE_FRAME).await;
        }
    }
    std::future::pending().await
}

/// What of `text` (a running command's output so far) may be shown now:
/// redacted whole, without an end that could still become a secret, its
/// last `LIVE_LINES` lines within `LIVE_BYTES`.
pub fn shown_now(secrets: &Secrets, text: &str) -> String {
    let redacted = secrets.redact(text).text;
    let settled = &redacted[..redacted.len() - secrets.unfinished_len(&redacted)];
    last_lines(settled, LIVE_LINES, LIVE_BYTES).to_string()
}

/// The end of `text` holding at most `lines` lines and `bytes` bytes, cut
/// at a character boundary.
fn last_lines(text: &str, lines: usize, bytes: usize) -> &str {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let from_lines = body
        .rmatch_indices('\n')
        .nth(lines.saturating_sub(1))
        .map_or(0, |(i, _)| i + 1);
    let mut from = from_lines.max(body.len().saturating_sub(bytes));
    while !body.is_char_boundary(from) {
        from += 1;
    }
    &body[from..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "MARKER-SECRET-5b8e";

    fn secrets() -> Secrets {
        let mut s = Secrets::new();
        s.add("TOKEN", SECRET);
        s
    }

    /// The output a command printed in `chunks`, as shown after each one.
    fn shown_after_each(chunks: &[&str]) -> Vec<String> {
        let s = secrets();
        let mut so_far = String::new();
        chunks
            .iter()
            .map(|chunk| {
                so_far.push_str(chunk);
                shown_now(&s, &so_far)
            })
            .collect()
    }

    #[test]
    fn a_secret_split_across_reads_never_shows_a_piece() {
        let (head, tail) = SECRET.split_at(10);
        for split in 1..SECRET.len() {
            let (a, b) = SECRET.split_at(split);
            let shown = shown_after_each(&["line one\n", a, b, "\nafter\n"]);
            assert!(shown.iter().all(|t| !t.contains(SECRET)), "{shown:?}");
            assert_eq!(shown[1], "line one", "{split}: the piece is held back");
            assert!(shown[2].ends_with("[redacted: TOKEN]"), "{:?}", shown[2]);
        }
        // Three pieces, the middle one alone in its read.
        let shown = shown_after_each(&["x ", head, &tail[..3], &tail[3..], " y"]);
        assert_eq!(shown[1], "x ");
        assert_eq!(shown[2], "x ");
        assert_eq!(shown[3], "x [redacted: TOKEN]");
        assert_eq!(shown[4], "x [redacted: TOKEN] y");
    }

    #[test]
    fn an_encoded_secret_in_pieces_is_held_back_too() {
        let hex: String = SECRET.bytes().map(|b| format!("{b:02x}")).collect();
        let (a, b) = hex.split_at(11);
        let shown = shown_after_each(&["hex: ", a, b]);
        assert_eq!(shown[1], "hex: ");
        assert_eq!(shown[2], "hex: [redacted: TOKEN]");
    }

    #[test]
    fn a_window_never_starts_inside_a_secret() {
        // The secret is redacted before the last lines are cut, so the
        // cut can only fall inside the marker.
        let mut text = format!("{SECRET}{}", "z".repeat(LIVE_BYTES - 5));
        text.push('\n');
        let shown = shown_now(&secrets(), &text);
        assert!(
            !shown.contains("5b8e") && !shown.contains("SECRET"),
            "{shown}"
        );
        assert!(shown.len() <= LIVE_BYTES);
    }

    #[test]
    fn only_the_last_lines_within_the_byte_bound_are_shown() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let shown = shown_now(&Secrets::new(), &text);
        assert!(
            shown.starts_with(&format!("line {}\n", 101 - LIVE_LINES)),
            "{shown}"
        );
        assert!(shown.ends_with("line 100"));
        let long = "é".repeat(LIVE_BYTES);
        let shown = shown_now(&Secrets::new(), &long);
        assert!(shown.len() <= LIVE_BYTES && shown.chars().all(|c| c == 'é'));
        assert_eq!(last_lines("a\nb\n", 1, 100), "b");
        assert_eq!(last_lines("", 3, 100), "");
    }
}
