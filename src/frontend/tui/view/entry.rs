//! How one chat entry looks: its lines at a width, wrapped, with the left
//! margin or bar that marks its kind. Record lines get a bar in the colour
//! of the mode that let the call through and never read as a question. Tool
//! output is collapsed before it is wrapped, so a huge result costs only
//! what is shown. An answer's code blocks start at the left edge, as they
//! are, so what is selected on screen is the code; an answer being streamed
//! is laid out from its first unfinished block on. Pure: text in, lines out.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::model::ResultStatus;
use crate::policy::Shown;

use super::super::format::one_line;
use super::super::markdown;
use super::super::transcript::{AskedBlock, EntryKind, ToolEntry, ToolState};
use super::super::wrap::{cut_rows, wrap};
use super::diff::{diff_lines, file_diffs};
use super::theme;

/// Result lines shown while collapsed.
pub const COLLAPSED_LINES: usize = 4;

/// Lines of a running call's output shown while collapsed: its last ones.
pub const LIVE_LINES: usize = 8;

/// An expanded result shows at most this many lines.
pub const EXPANDED_LINES: usize = 5000;

/// The lines of `kind` at `width` columns.
pub fn lines(kind: &EntryKind, width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    match kind {
        EntryKind::Title(project) => out.push(Line::from(vec![
            Span::raw(" "),
            Span::styled("mino", theme::bold()),
            Span::styled(format!(" · {}", one_line(project, 80)), theme::dim()),
        ])),
        EntryKind::Banner(text) => {
            out.push(Line::default());
            out.extend(margin(markdown::plain(text), width, Style::new()));
        }
        EntryKind::User(text) => {
            out.push(Line::default());
            let body = styled(markdown::plain(text), theme::bold());
            out.extend(gutter(
                &body,
                width,
                Span::styled(" > ", theme::user()),
                Span::raw("   "),
            ));
        }
        EntryKind::Assistant { text, .. } => {
            out.push(Line::default());
            let marked = markdown::render_marked(text);
            answer_rows(marked.lines, &marked.code, width, &mut out);
        }
        EntryKind::Tool(tool) => tool_lines(tool, width, &mut out),
        EntryKind::Record { lines, shown } => record_lines(lines, shown, width, &mut out),
        EntryKind::Answer { text, allowed } => {
            let style = if *allowed {
                theme::ok()
            } else {
                theme::warning()
            };
            out.extend(margin(markdown::plain(text), width, style));
        }
        EntryKind::Notice(text) => out.extend(margin(markdown::plain(text), width, Style::new())),
        EntryKind::Warning(text) => out.extend(margin(
            markdown::plain(&format!("warning: {text}")),
            width,
            theme::warning(),
        )),
        EntryKind::Error(text) => {
            out.extend(margin(markdown::plain(text), width, theme::error()));
        }
        EntryKind::Asked(block) => asked_lines(block, width, &mut out),
        EntryKind::Diff { line, diffs } => {
            out.extend(margin(markdown::plain(line), width, theme::warning()));
            file_diffs(diffs, width, &mut out);
        }
    }
    out
}

/// How much of an answer being streamed is laid out for good: its text up
/// to `bytes` (whole blocks, ended by a blank line) made the entry's first
/// `rows` rows, which later text cannot change; `blank` when a blank row
/// goes before whatever follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    pub bytes: usize,
    pub rows: usize,
    pub blank: bool,
}

/// Lays out the streamed answer `text` at `width` into `rows`, which hold
/// its rows as laid out before, `from` settled: those settled rows stay and
/// only the text after them is laid out again (all of it, with the leading
/// blank row, when `from` is `None` or the text after holds a link reference
/// definition, which can change earlier text). Afterwards `rows` is exactly
/// what `lines` gives for the whole answer. Returns how far the rows are
/// settled now and how many bytes of text were laid out.
pub fn streamed(
    rows: &mut Vec<Line<'static>>,
    text: &str,
    width: u16,
    from: Option<Settled>,
) -> (Settled, usize) {
    let from = from.filter(|from| {
        text.get(from.bytes..)
            .is_some_and(|tail| !tail.lines().any(may_define_reference))
    });
    let from = match from {
        Some(from) => {
            rows.truncate(from.rows);
            from
        }
        None => {
            rows.clear();
            rows.push(Line::default());
            Settled {
                bytes: 0,
                rows: 1,
                blank: false,
            }
        }
    };
    let tail = &text[from.bytes..];
    let markdown::Marked {
        mut lines,
        mut code,
        starts,
    } = markdown::render_marked(tail);
    // The blank line between the settled blocks and the rest.
    let shift = usize::from(from.blank && !lines.is_empty());
    if shift == 1 {
        lines.insert(0, Line::default());
        code.insert(0, false);
    }
    let mut settled = from;
    let cut = starts
        .iter()
        .rev()
        .find_map(|start| settled_cut(tail, start.offset).map(|bytes| (bytes, *start)));
    if let Some((bytes, start)) = cut {
        let rest = lines.split_off(start.lines + shift);
        let rest_code = code.split_off(start.lines + shift);
        answer_rows(lines, &code, width, rows);
        settled = Settled {
            bytes: from.bytes + bytes,
            rows: rows.len(),
            blank: start.blank,
        };
        lines = rest;
        code = rest_code;
    }
    answer_rows(lines, &code, width, rows);
    (settled, tail.len())
}

/// An answer's rows: its lines wrapped one column in, except code (`code`
/// marks its lines), which starts at the left edge and is cut into rows as
/// it is, so that text selected in the terminal is the code itself, with
/// its indentation and nothing added.
fn answer_rows(lines: Vec<Line<'static>>, code: &[bool], width: u16, out: &mut Vec<Line<'static>>) {
    let mut prose = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        if code.get(i).copied().unwrap_or(false) {
            out.extend(margin(std::mem::take(&mut prose), width, Style::new()));
            out.extend(cut_rows(&line, width));
        } else {
            prose.push(line);
        }
    }
    out.extend(margin(prose, width, Style::new()));
}

/// Where the text before the block starting at `offset` is finished for
/// good: the start of its line, when that line follows a blank line (so
/// nothing later can join or re-read the block before) and no link
/// reference definition (`[x]: url`, which can change earlier text) is in
/// the text before.
fn settled_cut(text: &str, offset: usize) -> Option<usize> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    if line_start == 0 || !before[line_start..].trim_matches([' ', '\t']).is_empty() {
        return None;
    }
    let previous = &before[..line_start - 1];
    let previous_line = &previous[previous.rfind('\n').map_or(0, |i| i + 1)..];
    if !previous_line.trim().is_empty() || previous.lines().any(may_define_reference) {
        return None;
    }
    Some(line_start)
}

/// A line that may hold a link reference definition, in or out of quotes
/// and list items (`[x]: url`, `> - [x]: url`): it opens a bracket and has
/// `]:` after it.
fn may_define_reference(line: &str) -> bool {
    line.trim_start_matches(|c: char| {
        c.is_whitespace() || "->*+.)".contains(c) || c.is_ascii_digit()
    })
    .starts_with('[')
        && line.contains("]:")
}

/// An asked agent's turn, nested: a labelled head, its calls and answers,
/// its answer, each line behind a bar.
fn asked_lines(block: &AskedBlock, width: u16, out: &mut Vec<Line<'static>>) {
    out.push(Line::default());
    let head = format!(
        "asked {}: {}",
        one_line(&block.agent, 40),
        one_line(&block.question, 200)
    );
    out.extend(gutter(
        &styled(markdown::plain(&head), theme::bold()),
        width,
        Span::styled(" ┌ ", theme::dim()),
        Span::styled(" │ ", theme::dim()),
    ));
    let bar = || Span::styled(" │ ", theme::dim());
    if !block.lines.is_empty() {
        let text = block.lines.join("\n");
        out.extend(gutter(
            &styled(markdown::plain(&text), theme::dim()),
            width,
            bar(),
            bar(),
        ));
    }
    if !block.answer.is_empty() {
        out.extend(gutter(
            &markdown::render(&block.answer),
            width,
            bar(),
            bar(),
        ));
    }
    let foot = match &block.stop {
        Some(stop) => format!("{} ended ({stop})", one_line(&block.agent, 40)),
        None => format!("{} is working…", one_line(&block.agent, 40)),
    };
    out.extend(gutter(
        &styled(markdown::plain(&foot), theme::dim()),
        width,
        Span::styled(" └ ", theme::dim()),
        Span::styled("   ", theme::dim()),
    ));
}

fn styled(lines: Vec<Line<'static>>, style: Style) -> Vec<Line<'static>> {
    lines.into_iter().map(|l| l.patch_style(style)).collect()
}

/// Wraps `lines` one column in from the left edge.
fn margin(lines: Vec<Line<'static>>, width: u16, style: Style) -> Vec<Line<'static>> {
    gutter(&styled(lines, style), width, Span::raw(" "), Span::raw(" "))
}

/// Wraps `lines` beside a gutter: `first` before the first row, `rest`
/// before every other.
fn gutter(
    lines: &[Line<'static>],
    width: u16,
    first: Span<'static>,
    rest: Span<'static>,
) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(first.width() as u16).max(1);
    wrap(lines, inner)
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let lead = if i == 0 { first.clone() } else { rest.clone() };
            let style = line.style;
            let mut spans = vec![lead];
            spans.extend(line.spans);
            Line::from(spans).style(style)
        })
        .collect()
}

/// What a result holds, counted as the file counts it: a read file's
/// numbered lines (its heading line is not one of the file's), else the
/// output's lines.
fn count_of(tool: &ToolEntry) -> String {
    use crate::frontend::text::plural;
    if tool.tool == "read_file" {
        let numbered = tool
            .output
            .split('\n')
            .filter(|line| {
                let (number, _) = line.split_once('\t').unwrap_or(("", ""));
                let number = number.trim_start();
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
            })
            .count();
        if numbered > 0 {
            return plural(numbered, "line");
        }
    }
    plural(tool.output_lines, "line")
}

fn tool_lines(tool: &ToolEntry, width: u16, out: &mut Vec<Line<'static>>) {
    let (icon, icon_style) = match tool.state {
        ToolState::Running => ("…", theme::dim()),
        ToolState::Done(ResultStatus::Completed) => ("✓", theme::ok()),
        ToolState::Done(ResultStatus::Denied | ResultStatus::Rejected) => ("✗", theme::error()),
        ToolState::Done(ResultStatus::Error) => ("!", theme::error()),
        ToolState::Done(ResultStatus::Interrupted) => ("■", theme::warning()),
        ToolState::Done(ResultStatus::NotRun) => ("○", theme::dim()),
    };
    let mut head = vec![
        Span::styled(one_line(&tool.tool, 60), theme::bold()),
        Span::raw(" "),
        Span::raw(tool.summary.clone()),
    ];
    let rejected = tool.state == ToolState::Done(ResultStatus::Rejected);
    let status_word = match tool.state {
        ToolState::Running => None,
        // The person's own words for it; the model's text is for the model.
        _ if rejected && tool.rejection.is_some() => tool.rejection.clone(),
        // A count only where lines are folded away; a short result shows whole.
        ToolState::Done(ResultStatus::Completed) if tool.output_lines <= COLLAPSED_LINES => None,
        ToolState::Done(ResultStatus::Completed) => Some(format!("({})", count_of(tool))),
        ToolState::Done(status) => Some(format!("({})", status.as_str().replace('_', " "))),
    };
    if let Some(word) = status_word {
        head.push(Span::styled(format!("  {word}"), theme::dim()));
    }
    out.extend(gutter(
        &[Line::from(head)],
        width,
        Span::styled(format!(" {icon} "), icon_style),
        Span::raw("   "),
    ));
    if let Some(diff) = &tool.diff {
        diff_lines(diff, tool.expanded, width, out);
    }
    if let Some(changed) = &tool.changed_by {
        let mut spans = vec![Span::styled(
            format!("Changed by {}: {changed}", one_line(&tool.tool, 60)),
            theme::warning(),
        )];
        if !tool.changed_diffs.is_empty() && !tool.expanded {
            spans.push(Span::styled("  (Ctrl+O shows the diffs)", theme::dim()));
        }
        out.extend(gutter(
            &[Line::from(spans)],
            width,
            Span::raw("   "),
            Span::raw("   "),
        ));
        if tool.expanded {
            file_diffs(&tool.changed_diffs, width, out);
        }
    }
    if tool.output.is_empty() || (rejected && tool.rejection.is_some()) {
        return;
    }
    let body_style = match tool.state {
        ToolState::Done(ResultStatus::Denied | ResultStatus::Rejected | ResultStatus::Error) => {
            theme::error()
        }
        _ => theme::dim(),
    };
    let inner = width.saturating_sub(3).max(1);
    let running = tool.state == ToolState::Running;
    if running {
        live_lines(tool, inner, body_style, out);
        return;
    }
    let limit = if tool.expanded {
        EXPANDED_LINES
    } else {
        COLLAPSED_LINES
    };
    // Cut before wrapping: a row never holds more than `inner` cells, so
    // `limit` rows never need more than `limit * inner` characters.
    let max_chars = limit * usize::from(inner);
    let shown: Vec<&str> = tool.output.split('\n').take(limit).collect();
    let mut source = String::new();
    let mut long_line = false;
    for (i, line) in shown.iter().enumerate() {
        if i > 0 {
            source.push('\n');
        }
        match line.char_indices().nth(max_chars) {
            Some((cut, _)) => {
                source.push_str(&line[..cut]);
                long_line = true;
            }
            None => source.push_str(line),
        }
    }
    let mut rows = wrap(&styled(markdown::plain(&source), body_style), inner);
    let rows_cut = rows.len() > limit;
    rows.truncate(limit);
    let pad = Span::raw("   ");
    out.extend(rows.into_iter().map(|row| {
        let mut spans = vec![pad.clone()];
        spans.extend(row.spans);
        Line::from(spans)
    }));
    let hidden_lines = tool.output_lines.saturating_sub(shown.len());
    let footer = if !tool.expanded && (hidden_lines > 0 || rows_cut || long_line) {
        Some(if hidden_lines > 0 {
            format!(
                "… {} (Ctrl+O to expand)",
                crate::frontend::text::plural(hidden_lines, "more line")
            )
        } else {
            "… (Ctrl+O to expand)".to_string()
        })
    } else if tool.expanded && tool.cut_bytes > 0 {
        Some(format!("… {} more bytes not shown", tool.cut_bytes))
    } else if tool.expanded && (hidden_lines > 0 || rows_cut || long_line) {
        Some("… (the rest is not shown)".to_string())
    } else if tool.expanded && tool.expandable() {
        Some("(Ctrl+O to collapse)".to_string())
    } else {
        None
    };
    if let Some(footer) = footer {
        out.push(Line::from(vec![pad, Span::styled(footer, theme::dim())]));
    }
}

/// What a running call printed so far: its last lines (all the agent sent
/// when expanded), each as a terminal would leave it (a line redrawn with
/// carriage returns shows its last state), the last rows kept after
/// wrapping.
fn live_lines(tool: &ToolEntry, inner: u16, style: Style, out: &mut Vec<Line<'static>>) {
    let limit = if tool.expanded {
        EXPANDED_LINES
    } else {
        LIVE_LINES
    };
    let max_chars = limit * usize::from(inner);
    let lines: Vec<&str> = tool.output.split('\n').collect();
    let mut source = String::new();
    for (i, line) in lines[lines.len().saturating_sub(limit)..]
        .iter()
        .enumerate()
    {
        if i > 0 {
            source.push('\n');
        }
        let line = line.trim_end_matches('\r');
        let line = line.rsplit('\r').next().unwrap_or(line);
        let from = line.chars().count().saturating_sub(max_chars);
        match line.char_indices().nth(from) {
            Some((cut, _)) => source.push_str(&line[cut..]),
            None => source.push_str(line),
        }
    }
    let mut rows = wrap(&styled(markdown::plain(&source), style), inner);
    rows.drain(..rows.len().saturating_sub(limit));
    out.extend(rows.into_iter().map(|row| {
        let mut spans = vec![Span::raw("   ")];
        spans.extend(row.spans);
        Line::from(spans)
    }));
}

fn record_lines(lines: &[String], shown: &Shown, width: u16, out: &mut Vec<Line<'static>>) {
    let color = match shown {
        Shown::ByMode(mode) => theme::mode_color(*mode),
        Shown::ForSession | Shown::Quietly | Shown::ByRule(_) => {
            theme::warning().fg.unwrap_or_default()
        }
    };
    let bar = Span::styled("▎", Style::new().fg(color));
    for (i, text) in lines.iter().enumerate() {
        let style = if i == 0 {
            theme::warning()
        } else {
            theme::record_text()
        };
        out.extend(gutter(
            &styled(markdown::plain(text), style),
            width,
            bar.clone(),
            bar.clone(),
        ));
    }
}
