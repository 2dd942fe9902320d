//! One file's search for `search`: opens the file through the project's
//! confined open (no link followed, no escape, no hard-linked file) and
//! matches it line by line with `grep-searcher`, as ripgrep does, reading at
//! most `MAX_FILE_BYTES`. Owns the line matcher's settings, the binary rule
//! (ripgrep's: the search stops at the first NUL byte) and the result
//! line's shape. Never walks and never decides: it is handed
//! a path the walk chose.

use std::io::Read as _;

use grep_matcher::{LineTerminator, Matcher as _};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};

use super::results::{MAX_OUTPUT_BYTES, shorten};
use crate::controls::one_line;
use crate::tools::Project;
use crate::tools::fs::confine::ConfineError;

/// Only this much of each file is searched.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// How a file's read went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    /// Searched; `large`: only its first `MAX_FILE_BYTES`; `binary_tail`:
    /// it had results, then binary data (a NUL byte) where the search
    /// stopped.
    Searched {
        large: bool,
        binary_tail: bool,
    },
    /// Binary data (a NUL byte) before any result: as ripgrep, the file is
    /// left at the first buffer holding one (the first 64 KiB, usually).
    Binary,
    /// Refused: a symbolic link (swapped in after the listing).
    Link,
    /// Refused: another name may be protected.
    HardLinked,
    Unreadable,
}

/// What one file's search found: its result lines (at most one past the
/// result limits, so that the merge sees a limit reached) and how it went.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) lines: Vec<String>,
    pub(super) read: Read,
}

impl Found {
    fn refused(read: Read) -> Self {
        Self {
            lines: Vec::new(),
            read,
        }
    }
}

/// Compiles `pattern` for the line search: lines end in `\n` or `\r\n`,
/// `^` and `$` match at each line's ends, a line end itself cannot match.
pub(super) fn line_matcher(
    pattern: &str,
    case_insensitive: bool,
) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .build(pattern)
}

/// Searches files one after another with one reused buffer.
pub(super) struct FileSearch<'a> {
    searcher: Searcher,
    project: &'a Project,
    matcher: &'a RegexMatcher,
    max_results: usize,
}

impl<'a> FileSearch<'a> {
    pub(super) fn new(project: &'a Project, matcher: &'a RegexMatcher, max_results: usize) -> Self {
        let searcher = SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .bom_sniffing(false)
            .build();
        Self {
            searcher,
            project,
            matcher,
            max_results,
        }
    }

    /// Searches the regular file at `relative` (project-relative).
    pub(super) fn file(&mut self, relative: &str) -> Found {
        let (file, stat) = match self.project.open_regular(relative) {
            Ok(opened) => opened,
            Err(ConfineError::ThroughLink { .. }) => return Found::refused(Read::Link),
            Err(ConfineError::HardLinked { .. }) => return Found::refused(Read::HardLinked),
            Err(_) => return Found::refused(Read::Unreadable),
        };
        let mut sink = Collect {
            path: one_line(relative),
            matcher: self.matcher,
            max_results: self.max_results,
            lines: Vec::new(),
            bytes: 0,
            binary_at: None,
        };
        let reader = file.take(MAX_FILE_BYTES);
        if self
            .searcher
            .search_reader(self.matcher, reader, &mut sink)
            .is_err()
        {
            return Found::refused(Read::Unreadable);
        }
        let binary = sink.binary_at.is_some();
        if binary && sink.lines.is_empty() {
            return Found::refused(Read::Binary);
        }
        let read = Read::Searched {
            large: u64::try_from(stat.st_size).unwrap_or(0) > MAX_FILE_BYTES,
            binary_tail: binary,
        };
        Found {
            lines: sink.lines,
            read,
        }
    }
}

/// Collects one file's result lines, `path:line: text`.
struct Collect<'a> {
    /// The file's path as shown.
    path: String,
    matcher: &'a RegexMatcher,
    max_results: usize,
    lines: Vec<String>,
    bytes: usize,
    /// Where the first NUL byte was, if one was met.
    binary_at: Option<u64>,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let mut bytes = found.bytes();
        bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        while let Some(rest) = bytes.strip_suffix(b"\r") {
            bytes = rest;
        }
        let at = match self.matcher.find(bytes) {
            Ok(Some(m)) => m.start(),
            _ => 0,
        };
        let line = String::from_utf8_lossy(bytes);
        let number = found.line_number().unwrap_or(0);
        let shown = format!("{}:{number}: {}", self.path, shorten(&line, at));
        self.bytes += shown.len() + 1;
        self.lines.push(shown);
        Ok(self.lines.len() <= self.max_results && self.bytes <= MAX_OUTPUT_BYTES)
    }

    /// Under `BinaryDetection::quit` the search ends here, as ripgrep's
    /// does: the buffer holding the NUL byte is not searched.
    fn binary_data(&mut self, _: &Searcher, offset: u64) -> Result<bool, Self::Error> {
        self.binary_at = Some(offset);
        Ok(false)
    }
}
