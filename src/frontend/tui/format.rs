//! Small text formats the TUI shows: elapsed time, context use, byte
//! counts, a call's one-line summary. Pure functions of their inputs.

use std::time::Duration;

use serde_json::Value;

use crate::controls::visible;

/// `m:ss`, or `h:mm:ss` past an hour.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// `128k`, `1M`, `8192`.
pub fn tokens(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// `2% of 128k`.
pub fn context_use(input_tokens: u64, window: u64) -> String {
    let percent = (input_tokens * 100).checked_div(window).unwrap_or(0);
    format!("{percent}% of {}", tokens(window))
}

/// `12.3k tokens`, `$0.04` after it where the cost is known; `None`
/// before any token was counted.
pub fn spent(tokens_used: u64, cost_usd: Option<f64>) -> Option<String> {
    if tokens_used == 0 {
        return None;
    }
    let count = if tokens_used >= 1_000_000 {
        format!("{:.1}M", tokens_used as f64 / 1_000_000.0)
    } else if tokens_used >= 1000 {
        format!("{:.1}k", tokens_used as f64 / 1000.0)
    } else {
        tokens_used.to_string()
    };
    let noun = if tokens_used == 1 { "token" } else { "tokens" };
    Some(match cost_usd {
        Some(cost) if cost < 0.01 => format!("{count} {noun} · ${cost:.4}"),
        Some(cost) => format!("{count} {noun} · ${cost:.2}"),
        None => format!("{count} {noun}"),
    })
}

/// `412 B`, `3 KiB`, `2 MiB`.
pub fn bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// At most `max` characters of the first line of `text`, control
/// characters visible, `…` when cut.
pub fn one_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    let more = text.lines().nth(1).is_some();
    let mut out: String = visible(first).chars().take(max).collect();
    if more || visible(first).chars().count() > max {
        out.push('…');
    }
    out
}

/// A call's main argument: its command, path, URL or name; else the
/// arguments themselves, shortened.
pub fn call_summary(arguments: &str) -> String {
    const MAX: usize = 160;
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(arguments) {
        for key in ["command", "path", "url", "name", "pattern"] {
            if let Some(Value::String(s)) = map.get(key) {
                return one_line(s, MAX);
            }
        }
        if let Some(Value::String(action)) = map.get("action") {
            return action_summary(action, &map);
        }
    }
    one_line(arguments, MAX)
}

/// An action's call (the plan tool's): `set 3 steps`, `update step 2`,
/// never the step texts, which the plan's panel shows.
fn action_summary(action: &str, map: &serde_json::Map<String, Value>) -> String {
    let mut out = one_line(action, 20);
    if let Some(Value::Array(steps)) = map.get("steps") {
        out.push_str(&format!(" {} steps", steps.len()));
    }
    if let Some(Value::Number(step)) = map.get("step") {
        out.push_str(&format!(" step {step}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(elapsed(Duration::from_secs(4)), "0:04");
        assert_eq!(elapsed(Duration::from_secs(3725)), "1:02:05");
        assert_eq!(context_use(2560, 128_000), "2% of 128k");
        assert_eq!(context_use(0, 0), "0% of 0");
        assert_eq!(bytes(412), "412 B");
        assert_eq!(call_summary(r#"{"path":"notes.md"}"#), "notes.md");
        assert_eq!(call_summary(r#"{"command":"ls\nrm"}"#), "ls…");
        assert_eq!(one_line("a\u{1b}b", 10), "a␛b");
        assert_eq!(
            call_summary(r#"{"action":"set","steps":["a \u001b[2J","b"]}"#),
            "set 2 steps"
        );
        assert_eq!(
            call_summary(r#"{"action":"update","step":2,"status":"done"}"#),
            "update step 2"
        );
    }
}
