//! The chat's entries, a cache of each entry's wrapped lines for the width
//! it was last laid out at, and where the view stands (following the bottom,
//! or anchored at a line). Only entries that reach the screen are laid out;
//! an entry that changes drops its own cache and no other, except the
//! answer being streamed, which keeps the rows of its finished blocks and
//! lays out only the rest again. It never draws.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ops::Range;

use ratatui::text::Line;

use crate::model::ResultStatus;
use crate::policy::Shown;

use super::view::entry;

/// A tool result keeps at most this much text for display.
pub const OUTPUT_CAP: usize = 256 * 1024;

/// One thing the chat shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// The first line: `mino · PROJECT`.
    Title(String),
    /// The three banner lines.
    Banner(String),
    User(String),
    Assistant {
        text: String,
        streaming: bool,
    },
    Tool(ToolEntry),
    /// A call that runs without a question: the record's lines.
    Record {
        lines: Vec<String>,
        shown: Shown,
    },
    /// What an answer to a question means (`Allowed bash for this session.`).
    Answer {
        text: String,
        allowed: bool,
    },
    Notice(String),
    Warning(String),
    Error(String),
    /// An asked agent's turn (`/ask-NAME`), drawn as a nested block.
    Asked(AskedBlock),
    /// `/diff`: its heading and each changed file's diff, shown whole.
    Diff {
        line: String,
        diffs: Vec<crate::checkpoint::diffs::FileDiff>,
    },
}

/// An asked agent's turn: the question, its calls with their record lines
/// and answers, and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedBlock {
    pub agent: String,
    pub question: String,
    /// Its calls, their records, results and the answers given for them.
    pub lines: Vec<String>,
    pub answer: String,
    /// How its turn ended, once it has.
    pub stop: Option<String>,
}

/// A tool call and, once it ends, its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    pub tool: String,
    /// The call's main argument (command, path, URL), one line.
    pub summary: String,
    pub state: ToolState,
    /// The result, cut to `OUTPUT_CAP`.
    pub output: String,
    /// Bytes of the result that were not kept.
    pub cut_bytes: usize,
    pub output_lines: usize,
    pub expanded: bool,
    /// The change an applied write or edit made, as a unified diff.
    pub diff: Option<String>,
    /// What a bash call changed: `src/a.rs +3 -1, deleted src/b.rs`.
    pub changed_by: Option<String>,
    /// The diffs of what it changed, shown when expanded (Ctrl+O).
    pub changed_diffs: Vec<crate::checkpoint::diffs::FileDiff>,
    /// What the person's rejection said (`Rejected this bash call.`):
    /// a rejected call takes this one line, without the model's text.
    pub rejection: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Running,
    Done(ResultStatus),
}

impl ToolEntry {
    pub fn new(tool: &str, summary: String) -> Self {
        Self {
            tool: tool.to_string(),
            summary,
            state: ToolState::Running,
            output: String::new(),
            cut_bytes: 0,
            output_lines: 0,
            expanded: false,
            diff: None,
            changed_by: None,
            changed_diffs: Vec::new(),
            rejection: None,
        }
    }

    /// True when collapsing hides anything (roughly: more lines than shown,
    /// or lines long enough to be cut).
    pub fn expandable(&self) -> bool {
        self.output_lines > super::view::entry::COLLAPSED_LINES
            || self.output.len() > 400
            || !self.changed_diffs.is_empty()
            || self.diff.as_deref().is_some_and(|diff| {
                super::view::diff::diff_body(diff).count() > super::view::diff::DIFF_COLLAPSED_LINES
            })
    }

    /// Shows what the running call printed so far (its last lines, already
    /// redacted and bounded by the agent); the result replaces it. Output
    /// that comes after the result is ignored.
    pub fn show_live(&mut self, output: &str) {
        if self.state != ToolState::Running {
            return;
        }
        self.output = output.trim_end_matches('\n').to_string();
        self.cut_bytes = 0;
        self.output_lines = if self.output.is_empty() {
            0
        } else {
            self.output.split('\n').count()
        };
    }

    /// Records the result, keeping at most `OUTPUT_CAP` bytes of it.
    pub fn finish(&mut self, status: ResultStatus, output: &str) {
        let mut end = output.len().min(OUTPUT_CAP);
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        self.output = output[..end].trim_end_matches('\n').to_string();
        self.cut_bytes = output.len() - end;
        self.output_lines = if self.output.is_empty() {
            0
        } else {
            self.output.split('\n').count()
        };
        self.state = ToolState::Done(status);
    }
}

/// An entry and its wrapped lines at the width last asked for.
#[derive(Debug)]
struct Entry {
    kind: EntryKind,
    cache: RefCell<Option<Layout>>,
}

/// An entry's rows at a width. An answer being streamed keeps the rows of
/// its finished blocks when text is added (`fresh` turns false): only the
/// rows after `settled` are laid out again.
#[derive(Debug)]
struct Layout {
    width: u16,
    lines: Vec<Line<'static>>,
    fresh: bool,
    settled: Option<entry::Settled>,
}

/// Where the chat view stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    /// The last line is at the bottom; new output scrolls into view.
    Follow,
    /// This line of this entry is at the top.
    Anchored { entry: usize, line: usize },
}

/// The entries of the chat pane.
#[derive(Debug)]
pub struct Transcript {
    entries: Vec<Entry>,
    scroll: Scroll,
    new_below: bool,
    tools: HashMap<String, usize>,
    /// Bytes of streamed answers laid out so far (what a streamed answer
    /// costs to draw grows with this).
    streamed_bytes: Cell<usize>,
}

impl Default for Transcript {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            scroll: Scroll::Follow,
            new_below: false,
            tools: HashMap::new(),
            streamed_bytes: Cell::new(0),
        }
    }
}

impl Transcript {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn kind(&self, index: usize) -> Option<&EntryKind> {
        self.entries.get(index).map(|e| &e.kind)
    }

    pub fn scroll(&self) -> Scroll {
        self.scroll
    }

    /// True when output arrived while the view was scrolled up.
    pub fn new_below(&self) -> bool {
        self.new_below
    }

    fn grew(&mut self) {
        if self.scroll != Scroll::Follow {
            self.new_below = true;
        }
    }

    /// Starts over for another session: only the title line stays.
    pub fn restart(&mut self) {
        self.entries
            .retain(|entry| matches!(entry.kind, EntryKind::Title(_)));
        self.scroll = Scroll::Follow;
        self.new_below = false;
        self.tools.clear();
    }

    pub fn push(&mut self, kind: EntryKind) {
        self.entries.push(Entry {
            kind,
            cache: RefCell::new(None),
        });
        self.grew();
    }

    /// Changes one entry; only its cache is dropped.
    pub fn edit(&mut self, index: usize, change: impl FnOnce(&mut EntryKind)) {
        if let Some(entry) = self.entries.get_mut(index) {
            change(&mut entry.kind);
            *entry.cache.get_mut() = None;
        }
        if index + 1 >= self.entries.len() {
            self.grew();
        }
    }

    /// The asked agent's block still open, if any.
    pub fn open_asked(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| matches!(&e.kind, EntryKind::Asked(b) if b.stop.is_none()))
    }

    /// Adds streamed text to the answer being streamed, or starts one.
    pub fn append_assistant(&mut self, delta: &str) {
        let last = self.entries.len().checked_sub(1);
        let streaming = last.filter(|&i| {
            matches!(
                self.entries[i].kind,
                EntryKind::Assistant {
                    streaming: true,
                    ..
                }
            )
        });
        match streaming {
            Some(i) => {
                let entry = &mut self.entries[i];
                if let EntryKind::Assistant { text, .. } = &mut entry.kind {
                    text.push_str(delta);
                }
                // The finished blocks' rows stay; the rest is laid out again.
                if let Some(layout) = entry.cache.get_mut() {
                    layout.fresh = false;
                }
                self.grew();
            }
            None => self.push(EntryKind::Assistant {
                text: delta.to_string(),
                streaming: true,
            }),
        }
    }

    /// Ends the streamed answer; returns its text.
    pub fn finish_assistant(&mut self) -> Option<String> {
        let i = self.entries.iter().rposition(|e| {
            matches!(
                e.kind,
                EntryKind::Assistant {
                    streaming: true,
                    ..
                }
            )
        })?;
        let mut answer = None;
        self.edit(i, |kind| {
            if let EntryKind::Assistant { text, streaming } = kind {
                *streaming = false;
                answer = Some(text.clone());
            }
        });
        answer
    }

    /// The entry of call `call_id`, made (running) when it does not exist.
    pub fn tool_entry(&mut self, call_id: &str, make: impl FnOnce() -> ToolEntry) -> usize {
        if let Some(&i) = self.tools.get(call_id) {
            return i;
        }
        self.push(EntryKind::Tool(make()));
        let i = self.entries.len() - 1;
        self.tools.insert(call_id.to_string(), i);
        i
    }

    /// Flips the last expandable tool entry in `among` (else the last of
    /// all) between collapsed and expanded.
    pub fn toggle_expand(&mut self, among: Range<usize>) -> bool {
        let is_tool =
            |e: &Entry| matches!(&e.kind, EntryKind::Tool(t) if t.expanded || t.expandable());
        let end = among.end.min(self.entries.len());
        let start = among.start.min(end);
        let found = self.entries[start..end]
            .iter()
            .rposition(is_tool)
            .map(|i| i + start);
        let Some(i) = found else { return false };
        self.edit(i, |kind| {
            if let EntryKind::Tool(tool) = kind {
                tool.expanded = !tool.expanded;
            }
        });
        true
    }

    /// Runs `f` on entry `index`'s lines at `width`, laying it out if its
    /// cache is for another width.
    pub fn with_lines<R>(
        &self,
        index: usize,
        width: u16,
        f: impl FnOnce(&[Line<'static>]) -> R,
    ) -> Option<R> {
        let entry = self.entries.get(index)?;
        let mut cache = entry.cache.borrow_mut();
        let layout = match cache.take() {
            Some(layout) if layout.width == width && layout.fresh => layout,
            old => self.lay_out(&entry.kind, width, old),
        };
        let result = f(&layout.lines);
        *cache = Some(layout);
        Some(result)
    }

    /// `kind`'s rows at `width`. An answer being streamed keeps the settled
    /// rows of `old` (at the same width) and lays out only the text after.
    fn lay_out(&self, kind: &EntryKind, width: u16, old: Option<Layout>) -> Layout {
        let EntryKind::Assistant {
            text,
            streaming: true,
        } = kind
        else {
            return Layout {
                width,
                lines: entry::lines(kind, width),
                fresh: true,
                settled: None,
            };
        };
        let (mut lines, from) = match old {
            Some(old) if old.width == width => (old.lines, old.settled),
            _ => (Vec::new(), None),
        };
        let (settled, laid_out) = entry::streamed(&mut lines, text, width, from);
        self.streamed_bytes
            .set(self.streamed_bytes.get() + laid_out);
        Layout {
            width,
            lines,
            fresh: true,
            settled: Some(settled),
        }
    }

    /// Bytes of streamed answers laid out so far.
    pub fn streamed_bytes(&self) -> usize {
        self.streamed_bytes.get()
    }

    pub fn height(&self, index: usize, width: u16) -> usize {
        self.with_lines(index, width, <[Line]>::len).unwrap_or(0)
    }

    /// The top line when the last line is at the bottom of `height` rows.
    fn bottom_top(&self, width: u16, height: usize) -> (usize, usize) {
        let mut need = height;
        for i in (0..self.entries.len()).rev() {
            let h = self.height(i, width);
            if h >= need {
                return (i, h - need);
            }
            need -= h;
        }
        (0, 0)
    }

    /// The top line of the view.
    fn top(&self, width: u16, height: usize) -> (usize, usize) {
        match self.scroll {
            Scroll::Follow => self.bottom_top(width, height),
            Scroll::Anchored { entry, line } => {
                let entry = entry.min(self.entries.len().saturating_sub(1));
                let line = line.min(self.height(entry, width).saturating_sub(1));
                (entry, line)
            }
        }
    }

    /// What `height` rows at `width` show: entry and line range, top down.
    pub fn visible(&self, width: u16, height: usize) -> Vec<(usize, Range<usize>)> {
        let (mut entry, mut line) = self.top(width, height);
        let mut rows = Vec::new();
        let mut left = height;
        while left > 0 && entry < self.entries.len() {
            let h = self.height(entry, width);
            if line < h {
                let take = (h - line).min(left);
                rows.push((entry, line..line + take));
                left -= take;
            }
            entry += 1;
            line = 0;
        }
        rows
    }

    /// Scrolls `n` lines towards the top.
    pub fn scroll_up(&mut self, n: usize, width: u16, height: usize) {
        let (mut entry, mut line) = self.top(width, height);
        let mut left = n;
        loop {
            if line >= left {
                line -= left;
                break;
            }
            left -= line;
            // Find the previous entry with any lines.
            let mut moved = false;
            while entry > 0 {
                entry -= 1;
                let h = self.height(entry, width);
                if h > 0 {
                    line = h;
                    moved = true;
                    break;
                }
            }
            if !moved {
                line = 0;
                break;
            }
        }
        if self.scroll == Scroll::Follow && (entry, line) == self.bottom_top(width, height) {
            return;
        }
        self.scroll = Scroll::Anchored { entry, line };
    }

    /// Scrolls `n` lines towards the bottom; reaching it follows again.
    pub fn scroll_down(&mut self, n: usize, width: u16, height: usize) {
        let Scroll::Anchored { entry, line } = self.scroll else {
            return;
        };
        let (mut entry, mut line) = (entry, line);
        let mut left = n;
        while entry < self.entries.len() {
            let h = self.height(entry, width);
            if line + left < h {
                line += left;
                break;
            }
            left -= h.saturating_sub(line);
            entry += 1;
            line = 0;
        }
        self.scroll = Scroll::Anchored { entry, line };
        if self.rows_below_top(width, height) <= height {
            self.to_bottom();
        }
    }

    /// Rows from the top of the view to the end, counted up to `limit + 1`.
    fn rows_below_top(&self, width: u16, limit: usize) -> usize {
        let Scroll::Anchored { entry, line } = self.scroll else {
            return 0;
        };
        let mut rows = 0;
        for i in entry..self.entries.len() {
            let h = self.height(i, width);
            rows += if i == entry {
                h.saturating_sub(line)
            } else {
                h
            };
            if rows > limit {
                break;
            }
        }
        rows
    }

    pub fn to_top(&mut self, width: u16, height: usize) {
        if self.bottom_top(width, height) != (0, 0) {
            self.scroll = Scroll::Anchored { entry: 0, line: 0 };
        }
    }

    pub fn to_bottom(&mut self) {
        self.scroll = Scroll::Follow;
        self.new_below = false;
    }
}
