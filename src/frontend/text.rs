//! Plain-text renderings shared by the front ends: the banner, the record
//! line an unasked call prints before it runs (every front end uses this
//! one wording, so it never drifts), a question's fields, results. Control characters in model or tool text
//! are shown as visible escapes, never sent to the terminal raw.

use crate::config::DEFAULT_CONTEXT_WINDOW;
use crate::controls::visible;
use crate::model::{Item, ResultStatus};
use crate::policy::{Mode, Shown};
pub(crate) use crate::tools::wording::plural;
use crate::tools::{Field, FieldKind};

/// The banner lines of DESIGN section 6, after the model's.
pub fn banner(
    id: &str,
    mode: Mode,
    model: &str,
    context_window: u64,
    source: Option<&str>,
    profile: crate::config::ProfileChoice,
) -> String {
    let origin = if let Some(source) = source {
        source.to_string()
    } else if crate::config::windows::known_window(model) == Some(context_window) {
        format!("known for {model}")
    } else if context_window == DEFAULT_CONTEXT_WINDOW {
        "default".to_string()
    } else {
        "from settings".to_string()
    };
    let profile = profile
        .banner_line()
        .map(|line| format!("{line}\n"))
        .unwrap_or_default();
    format!(
        "Model: {}.\nContext window: {context_window} tokens ({origin}).\n{profile}Session: {id}\nPermission mode: {mode}. Use /mode to change it.",
        visible(model)
    )
}

/// A record line's header: `[Tool: NAME, allowed without confirmation in
/// MODE mode]`, `[Tool: NAME, allowed for this session]` or `[Tool: NAME,
/// allowed by rule 3 (cargo test)]`; `None` for a quiet read.
pub fn record_header(tool: &str, shown: &Shown) -> Option<String> {
    match shown {
        Shown::Quietly => None,
        Shown::ByMode(mode) => Some(format!(
            "[Tool: {tool}, allowed without confirmation in {mode} mode]"
        )),
        Shown::ForSession => Some(format!("[Tool: {tool}, allowed for this session]")),
        Shown::ByRule(rule) => Some(format!("[Tool: {tool}, allowed by {rule}]")),
    }
}

/// A record: the header and one line per text field; warnings and diffs
/// belong to the dialog only.
pub fn record_lines(tool: &str, shown: &Shown, fields: &[Field]) -> Vec<String> {
    let Some(head) = record_header(tool, shown) else {
        return Vec::new();
    };
    let mut out = vec![head];
    out.extend(
        fields
            .iter()
            .filter(|f| matches!(f.kind, FieldKind::Text | FieldKind::Block))
            .map(field_line),
    );
    out
}

/// `Label: "value"`, the way a confirmation and a record show one field.
pub fn field_line(field: &Field) -> String {
    format!("{}: {:?}", field.label, field.value)
}

/// `2026-10-26 14:03` (UTC) from seconds since the epoch: the one date
/// format both front ends show. A time past the year 9999 (only a damaged
/// session file holds one) is shown as its seconds.
pub fn date(secs: u64) -> String {
    const YEAR_10000: u64 = 253_402_300_800;
    let time = (secs < YEAR_10000)
        .then(|| std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs)))
        .flatten();
    let Some(time) = time else {
        return format!("{secs} s after 1970");
    };
    // `2026-10-26T14:03:00Z`
    let rfc3339 = humantime::format_rfc3339_seconds(time).to_string();
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(minute)) => format!("{day} {minute}"),
        _ => rfc3339,
    }
}

/// `/permissions`: every remembered answer, numbered for
/// `/permissions N`.
pub fn permissions(grants: &[crate::policy::Grant]) -> String {
    if grants.is_empty() {
        return "Nothing is allowed for this session and nothing is refused for this run: every call is decided by the mode.".into();
    }
    let mut out = String::from(
        "Remembered answers (/permissions N revokes one; /permissions save N keeps it as a rule in your settings):",
    );
    for (i, grant) in grants.iter().enumerate() {
        out.push_str(&format!("\n  {}. {}", i + 1, visible(&grant.describe())));
    }
    out
}

/// `/sessions`: one line a session (its directory too with `--all`).
pub fn sessions(list: &[crate::session::SessionSummary], all: bool) -> String {
    if list.is_empty() {
        return if all {
            "No saved sessions.".into()
        } else {
            "No saved sessions in this project (/sessions --all lists every project's).".into()
        };
    }
    let lines: Vec<String> = list
        .iter()
        .map(|s| {
            let dir = if all {
                format!("{}  ", visible(&s.project.display().to_string()))
            } else {
                String::new()
            };
            format!(
                "{}  {}  {:>8} bytes  {dir}{}",
                s.id,
                date(s.started),
                s.bytes,
                visible(s.first_prompt.as_deref().unwrap_or(""))
            )
        })
        .collect();
    lines.join("\n")
}

/// A session of another project was not resumed here.
pub fn other_project(id: &str, project: &std::path::Path, here: &std::path::Path) -> String {
    format!(
        "Session {id} was started in {}, not in this project ({}); nothing was resumed. To continue it there: mino --cd {} --resume {id}",
        visible(&project.display().to_string()),
        visible(&here.display().to_string()),
        visible(&project.display().to_string()),
    )
}

/// `/mcp`: each server with its state, destination and tools.
pub fn mcp_servers(servers: &[crate::mcp::ServerView]) -> String {
    if servers.is_empty() {
        return "No MCP servers are configured.".into();
    }
    let mut out = String::from("MCP servers:");
    for server in servers {
        let trust = if server.trust_ask {
            ", always asks"
        } else {
            ""
        };
        let revision = server
            .revision
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(|r| format!(" (MCP {})", visible(r)))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n{}: {}{revision}{trust}\n  Destination: {}",
            server.name,
            visible(&server.state.to_string()),
            visible(&server.destination)
        ));
        if !server.tools.is_empty() {
            out.push_str(&format!("\n  Tools: {}", server.tools.join(", ")));
        }
    }
    out
}

/// The status bar's MCP part: `MCP 3/5` with what is starting or down, or
/// nothing when no server is configured.
pub fn mcp_status(status: &crate::mcp::McpStatus) -> Option<String> {
    let total = status.starting + status.running + status.down;
    if total == 0 {
        return None;
    }
    let mut text = format!("MCP {}/{total}", status.running);
    if status.starting > 0 {
        text.push_str(&format!(", {} starting", status.starting));
    }
    if status.down > 0 {
        text.push_str(&format!(", {} down", status.down));
    }
    Some(text)
}

/// A question's fields, one a line, the way the seed prints them.
pub fn question(tool: &str, fields: &[Field]) -> String {
    let mut out = format!("[Tool: {tool}]\n");
    for field in fields {
        match field.kind {
            FieldKind::Text | FieldKind::Block => {
                out.push_str(&field_line(field));
                out.push('\n');
            }
            FieldKind::Diff => {
                out.push_str(&visible(&field.value));
                if !field.value.ends_with('\n') {
                    out.push('\n');
                }
            }
            FieldKind::Warning => {
                out.push_str(&field.value);
                out.push('\n');
            }
        }
    }
    out
}

/// `[Tool result: STATUS]` and the first lines of the output; with `tool`,
/// `[Tool result: TOOL, STATUS]`.
pub fn result(status: ResultStatus, tool: Option<&str>, output: &str, max_lines: usize) -> String {
    let mut out = match tool {
        Some(tool) => format!("[Tool result: {}, {}]\n", visible(tool), status.as_str()),
        None => format!("[Tool result: {}]\n", status.as_str()),
    };
    let lines: Vec<&str> = output.lines().collect();
    for line in lines.iter().take(max_lines) {
        out.push_str(&visible(line));
        out.push('\n');
    }
    if lines.len() > max_lines {
        out.push_str(&format!(
            "... ({})\n",
            plural(lines.len() - max_lines, "more line")
        ));
    }
    out
}

/// Items to show again, each with how many it stands for: a run of
/// results with the same status and text (the refusals of one response's
/// calls past `[model] max_tool_calls`, thousands at once) shows once.
pub fn runs(items: &[Item]) -> Vec<(&Item, usize)> {
    let mut out: Vec<(&Item, usize)> = Vec::new();
    for item in items {
        if let Some((last, count)) = out.last_mut()
            && same_result(last, item)
        {
            *count += 1;
            continue;
        }
        out.push((item, 1));
    }
    out
}

fn same_result(a: &Item, b: &Item) -> bool {
    match (a, b) {
        (
            Item::ToolResult { status, output, .. },
            Item::ToolResult {
                status: other_status,
                output: other_output,
                ..
            },
        ) => status == other_status && output == other_output,
        _ => false,
    }
}

/// What a result shown once for `count` calls says first.
pub fn run_note(count: usize) -> Option<String> {
    (count > 1).then(|| format!("{count} calls, each with this result"))
}

/// A resumed session's history, briefly: the last `max_items` items, one
/// or a few lines each.
pub fn history(items: &[Item], max_items: usize) -> String {
    let skip = items.len().saturating_sub(max_items);
    let mut out = String::new();
    if skip > 0 {
        out.push_str(&format!("({skip} earlier items not shown)\n"));
    }
    for (item, count) in runs(&items[skip..]) {
        match item {
            Item::User { text } => out.push_str(&format!("You> {}\n", visible(text))),
            Item::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    out.push_str(&format!("Assistant> {}\n", visible(text)));
                }
                for call in tool_calls {
                    out.push_str(&format!(
                        "[Tool: {}] {}\n",
                        call.name,
                        visible(&call.arguments)
                    ));
                }
            }
            Item::ToolResult { status, output, .. } => {
                if let Some(note) = run_note(count) {
                    out.push_str(&format!("[{note}]\n"));
                }
                out.push_str(&result(*status, None, output, 2))
            }
            Item::Summary { text } => out.push_str(&format!(
                "[Summary of earlier conversation, lossy]\n{}\n",
                visible(text)
            )),
            Item::Reminder { text } => {
                out.push_str(&format!("[mino reminded the model] {}\n", visible(text)))
            }
        }
    }
    out
}

/// `/diff`'s heading: `Changed since this session's first prompt: a.rs +3 -1`.
pub fn session_diff_line(changes: &[crate::checkpoint::changes::FileDelta]) -> String {
    visible(&format!(
        "Changed since this session's first prompt: {}",
        crate::checkpoint::changes::line(changes)
    ))
}

/// `/diff` as plain text: its heading, then each file's diff (or the note
/// that stands for it), control characters visible.
pub fn session_diff(
    changes: &[crate::checkpoint::changes::FileDelta],
    diffs: &[crate::checkpoint::diffs::FileDiff],
) -> String {
    let mut out = session_diff_line(changes);
    out.push('\n');
    for file in diffs {
        match &file.note {
            Some(note) => out.push_str(&visible(&format!("{} ({note})\n", file.path))),
            None => {
                for line in file.diff.lines() {
                    out.push_str(&visible(line));
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// What `/model` says of one model: its window where the built-in table
/// knows it, whether it is priced, whether only the service lists it.
pub fn model_detail(entry: &crate::agent::ModelEntry) -> String {
    let mut parts = Vec::new();
    if let Some(window) = entry.window {
        parts.push(format!("{window}-token window"));
    }
    if entry.priced {
        parts.push("priced".to_string());
    }
    parts.push(
        if entry.from_service {
            "from the service"
        } else {
            "from the settings"
        }
        .to_string(),
    );
    parts.join(", ")
}

/// `/model`'s list as plain text, the model in use marked `*`.
pub fn models(current: &str, entries: &[crate::agent::ModelEntry]) -> String {
    let mut out = String::from("Models (* in use):\n");
    for entry in entries {
        let mark = if entry.name == current { '*' } else { ' ' };
        out.push_str(&visible(&format!(
            "{mark} {}  ({})\n",
            entry.name,
            model_detail(entry)
        )));
    }
    out.push_str("Use /model NAME to switch (a preset's name alone: its model).");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_to_the_minute() {
        assert_eq!(date(0), "1970-01-01 00:00");
        assert_eq!(date(1_798_243_380), "2026-12-26 00:03");
        assert_eq!(date(253_402_300_799), "9999-12-31 23:59");
        assert_eq!(date(u64::MAX), format!("{} s after 1970", u64::MAX));
    }

    #[test]
    fn banner_is_the_seed_text() {
        assert_eq!(
            banner(
                "aaaa",
                Mode::Manual,
                "test-model",
                128_000,
                None,
                Default::default()
            ),
            "Model: test-model.\nContext window: 128000 tokens (default).\nSession: aaaa\nPermission mode: manual. Use /mode to change it."
        );
    }

    #[test]
    fn the_banner_says_where_the_window_came_from() {
        let first = |model, window| {
            banner("a", Mode::Manual, model, window, None, Default::default())
                .lines()
                .nth(1)
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(
            first("gpt-5-mini", 400_000),
            "Context window: 400000 tokens (known for gpt-5-mini)."
        );
        assert_eq!(
            first("gpt-5-mini", 32_000),
            "Context window: 32000 tokens (from settings)."
        );
    }

    #[test]
    fn record_matches_the_seed() {
        let fields = vec![
            Field::named(crate::tools::FieldRole::Path, "notes.md"),
            Field::named(crate::tools::FieldRole::StartingLine, "1"),
            Field::diff("-a\n+b"),
            Field::warning("Runs with your account permissions; this is not a sandbox."),
        ];
        assert_eq!(
            record_lines("edit_file", &Shown::ByMode(Mode::AcceptEdits), &fields),
            vec![
                "[Tool: edit_file, allowed without confirmation in accept-edits mode]",
                "Path: \"notes.md\"",
                "Starting line: \"1\"",
            ]
        );
        assert_eq!(
            record_header("bash", &Shown::ForSession).as_deref(),
            Some("[Tool: bash, allowed for this session]")
        );
        assert_eq!(
            record_header("bash", &Shown::ByRule("rule 3 (cargo test)".into())).as_deref(),
            Some("[Tool: bash, allowed by rule 3 (cargo test)]")
        );
        assert!(record_lines("read_file", &Shown::Quietly, &fields).is_empty());
    }

    #[test]
    fn control_characters_are_made_visible() {
        let items = [Item::User {
            text: "a\u{1b}[2Jb".into(),
        }];
        assert_eq!(history(&items, 5), "You> a␛[2Jb\n");
    }

    #[test]
    fn a_run_of_the_same_result_shows_once_with_its_count() {
        let result = |id: &str, output: &str| Item::ToolResult {
            call_id: id.into(),
            status: ResultStatus::NotRun,
            output: output.into(),
        };
        let mut items = vec![result("a", "ran")];
        items.extend((0..9_936).map(|i| result(&format!("r{i}"), "Refused.")));
        items.push(result("b", "ran"));
        let shown = history(&items, 10_000);
        assert_eq!(shown.matches("Refused.").count(), 1, "{shown}");
        assert!(
            shown.contains("[9936 calls, each with this result]"),
            "{shown}"
        );
        assert_eq!(shown.matches("ran").count(), 2, "{shown}");
    }
}
