//! The result text of `search`: the result lines in walk order up to the
//! limits, then a summary and the closing notes. Owns the result limits,
//! the notes' wording and the shortening of long lines. Touches no file:
//! it is handed what the walk met and what each file's search found, in
//! walk order.

use super::grep::{Found, Read};
use crate::tools::fs::paths::shown_relative;
use crate::tools::wording::noun;

/// The result text stops growing here.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Result lines longer than this (in characters) are shortened around the match.
pub const MAX_LINE_CHARS: usize = 240;

/// Characters of context kept before the match in a shortened line.
const LEAD_CHARS: usize = 60;

/// The closing notes, in the order of the counts `Results::finish` gives
/// them: `{n}` is the count, `{s}` the plural ending.
const NOTES: [&str; 10] = [
    "Stopped after {n} result{s} (max_results); narrow the search to see the rest.",
    "Output truncated at {n} KiB; narrow the search to see the rest.",
    "Stopped after {n} entries; search a smaller directory.",
    "Skipped {n} protected path{s}; they are never searched.",
    "Did not follow {n} symbolic link{s}.",
    "Skipped {n} binary file{s}.",
    "Stopped searching {n} file{s} at binary data (a NUL byte) after results.",
    "Searched only the first MiB of {n} larger file{s}.",
    "Refused {n} hard-linked file{s} (another name may be protected).",
    "Could not read {n} path{s}.",
];

/// Whether the search goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    /// Results, output or visit limit reached: the rest is not searched.
    Full,
    Cancelled,
}

/// What the walk met besides files to search, counted where it met it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Met {
    Protected,
    Link,
    Unreadable,
    /// The visit limit: the walk stopped here.
    VisitLimit,
}

/// What the search met besides results.
#[derive(Debug, Default)]
struct Tally {
    results: usize,
    files_with_results: usize,
    protected: usize,
    links: usize,
    binary: usize,
    binary_tail: usize,
    large: usize,
    hard_linked: usize,
    unreadable: usize,
    output_full: bool,
    results_full: bool,
    visits_full: bool,
}

/// The results of one search so far.
pub(super) struct Results {
    /// The searched directory, project-relative.
    root: String,
    /// The pattern, for the summary; `None` for a glob-only search.
    pattern: Option<String>,
    max_results: usize,
    out: String,
    tally: Tally,
}

impl Results {
    pub(super) fn new(root: String, pattern: Option<String>, max_results: usize) -> Self {
        Self {
            root,
            pattern,
            max_results,
            out: String::new(),
            tally: Tally::default(),
        }
    }

    /// Counts one thing the walk met.
    pub(super) fn met(&mut self, met: Met) -> Flow {
        match met {
            Met::Protected => self.tally.protected += 1,
            Met::Link => self.tally.links += 1,
            Met::Unreadable => self.tally.unreadable += 1,
            Met::VisitLimit => {
                self.tally.visits_full = true;
                return Flow::Full;
            }
        }
        Flow::Continue
    }

    /// Adds what the search of one file found.
    pub(super) fn file(&mut self, found: Found) -> Flow {
        match found.read {
            Read::Binary => {
                self.tally.binary += 1;
                return Flow::Continue;
            }
            Read::Link => self.tally.links += 1,
            Read::HardLinked => self.tally.hard_linked += 1,
            Read::Unreadable => self.tally.unreadable += 1,
            Read::Searched { large, binary_tail } => {
                self.tally.large += usize::from(large);
                self.tally.binary_tail += usize::from(binary_tail);
            }
        }
        let before = self.tally.results;
        let mut flow = Flow::Continue;
        for line in found.lines {
            flow = self.push(line);
            if flow != Flow::Continue {
                break;
            }
        }
        if self.tally.results > before {
            self.tally.files_with_results += 1;
        }
        flow
    }

    /// Adds one result line, unless a limit is reached.
    pub(super) fn push(&mut self, line: String) -> Flow {
        if self.tally.results >= self.max_results {
            self.tally.results_full = true;
            return Flow::Full;
        }
        if self.out.len() + line.len() + 1 > MAX_OUTPUT_BYTES {
            self.tally.output_full = true;
            return Flow::Full;
        }
        self.out.push_str(&line);
        self.out.push('\n');
        self.tally.results += 1;
        Flow::Continue
    }

    /// The result lines found so far (file paths, for a glob-only search).
    pub(super) fn lines(&self) -> impl Iterator<Item = &str> {
        self.out.lines()
    }

    /// The result text: the result lines, then a summary and the notes.
    pub(super) fn finish(self) -> String {
        let t = &self.tally;
        // "under ." would end the sentence in "..".
        let place = match shown_relative(&self.root) {
            "." => "the project".to_string(),
            other => other.to_string(),
        };
        let mut out = self.out;
        let summary = match (&self.pattern, t.results) {
            (Some(pattern), 0) => format!("No matches for /{pattern}/ under {place}."),
            (None, 0) => format!("No files match the glob under {place}."),
            (Some(_), n) => format!(
                "{n} matching {} in {} {}.",
                noun(n, "line", "lines"),
                t.files_with_results,
                noun(t.files_with_results, "file", "files")
            ),
            (None, n) => format!("{n} {} matched.", noun(n, "file", "files")),
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&summary);
        out.push('\n');
        let full = |hit: bool, n: usize| if hit { n } else { 0 };
        let counts = [
            full(t.results_full, self.max_results),
            full(t.output_full, MAX_OUTPUT_BYTES / 1024),
            full(t.visits_full, super::walk::MAX_VISITED),
            t.protected,
            t.links,
            t.binary,
            t.binary_tail,
            t.large,
            t.hard_linked,
            t.unreadable,
        ];
        for (count, text) in counts.into_iter().zip(NOTES) {
            if count > 0 {
                let s = if count == 1 { "" } else { "s" };
                out.push_str(&text.replace("{n}", &count.to_string()).replace("{s}", s));
                out.push('\n');
            }
        }
        out
    }
}

/// `line`, or a window of it around the byte offset `at` when it is longer
/// than `MAX_LINE_CHARS`.
pub(super) fn shorten(line: &str, at: usize) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let at = (0..=at.min(line.len()))
        .rev()
        .find(|i| line.is_char_boundary(*i))
        .unwrap_or(0);
    let start = line[..at].chars().count().saturating_sub(LEAD_CHARS);
    let window: String = line.chars().skip(start).take(MAX_LINE_CHARS).collect();
    let more = line.chars().count() > start + MAX_LINE_CHARS;
    format!(
        "{}{window}{}",
        if start > 0 { "…" } else { "" },
        if more { "…" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_stay_and_long_lines_are_cut_around_the_match() {
        assert_eq!(shorten("short", 0), "short");
        let line = format!("{}NEEDLE{}", "a".repeat(500), "b".repeat(500));
        let cut = shorten(&line, 500);
        assert!(cut.starts_with('…') && cut.ends_with('…'));
        assert!(cut.contains("NEEDLE"));
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS + 2);
        let head = shorten(&"é".repeat(300), 3);
        assert_eq!(head.chars().count(), MAX_LINE_CHARS + 1);
    }
}
