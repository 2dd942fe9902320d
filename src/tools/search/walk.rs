//! The confined walk behind `search`: visits the tree under the searched
//! directory depth first, in name order, honouring `.gitignore`, and collects
//! result lines up to the limits, then the summary and closing notes. Owns the
//! walk's limits and its result text. Never follows a symbolic link, never
//! descends into or reads a protected path (those are only counted), lists and
//! reads only through `Project`, and never parses arguments: it is handed the
//! compiled `Matcher`.

use std::path::Path;
use std::rc::Rc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tokio_util::sync::CancellationToken;

use super::Matcher;
use crate::controls::one_line;
use crate::policy::ProtectedPaths;
use crate::tools::Project;
use crate::tools::fs::confine::{ConfineError, DirEntry, EntryKind};
use crate::tools::fs::paths::{join, shown_relative};
use crate::tools::wording::{looks_binary, noun};

/// Only this much of each file is searched.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The result text stops growing here.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Result lines longer than this (in characters) are shortened around the match.
pub const MAX_LINE_CHARS: usize = 240;
/// The walk stops after this many directory entries.
pub const MAX_VISITED: usize = 200_000;

/// `.gitignore` files larger than this are not read.
const MAX_GITIGNORE_BYTES: u64 = 256 * 1024;
/// Characters of context kept before the match in a shortened line.
const LEAD_CHARS: usize = 60;

/// The closing notes, in the order of the counts `Walk::finish` gives them:
/// `{n}` is the count, `{s}` the plural ending.
const NOTES: [&str; 9] = [
    "Stopped after {n} result{s} (max_results); narrow the search to see the rest.",
    "Output truncated at {n} KiB; narrow the search to see the rest.",
    "Stopped after {n} entries; search a smaller directory.",
    "Skipped {n} protected path{s}; they are never searched.",
    "Did not follow {n} symbolic link{s}.",
    "Skipped {n} binary file{s}.",
    "Searched only the first MiB of {n} larger file{s}.",
    "Refused {n} hard-linked file{s} (another name may be protected).",
    "Could not read {n} path{s}.",
];

/// Whether the walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    /// Results, output or visit limit reached: the rest is not searched.
    Full,
    Cancelled,
}

/// What the walk met besides results.
#[derive(Debug, Default)]
struct Tally {
    results: usize,
    files_with_results: usize,
    visited: usize,
    protected: usize,
    links: usize,
    binary: usize,
    large: usize,
    hard_linked: usize,
    unreadable: usize,
    output_full: bool,
    results_full: bool,
    visits_full: bool,
}

/// One search's walk: what it looks at, and what it has found so far.
pub(super) struct Walk<'a> {
    project: &'a Project,
    protected: &'a ProtectedPaths,
    matcher: &'a Matcher,
    cancel: &'a CancellationToken,
    /// The searched directory, project-relative.
    root: String,
    out: String,
    tally: Tally,
}

/// The `.gitignore` files that apply to one directory, innermost last.
type Ignores = Rc<Vec<Gitignore>>;

impl<'a> Walk<'a> {
    /// A walk of `root` (project-relative) that has found nothing yet.
    pub(super) fn new(
        project: &'a Project,
        protected: &'a ProtectedPaths,
        matcher: &'a Matcher,
        cancel: &'a CancellationToken,
        root: String,
    ) -> Self {
        Self {
            project,
            protected,
            matcher,
            cancel,
            root,
            out: String::new(),
            tally: Tally::default(),
        }
    }

    /// Walks the tree under `self.root` (whose entries are `root_entries`),
    /// depth first, in name order, listing every directory through
    /// `Project::list`.
    pub(super) fn tree(&mut self, root_entries: Vec<DirEntry>) -> Flow {
        let mut first = Some(root_entries);
        let mut stack: Vec<(String, Ignores)> = vec![(self.root.clone(), self.ancestor_ignores())];
        while let Some((dir, parent_ignores)) = stack.pop() {
            if self.cancel.is_cancelled() {
                return Flow::Cancelled;
            }
            let listed = match first.take() {
                Some(entries) => Ok(entries),
                None => self.project.list(&dir),
            };
            let entries = match listed {
                Ok(entries) => entries,
                Err(ConfineError::ThroughLink { .. }) => {
                    self.tally.links += 1;
                    continue;
                }
                Err(_) => {
                    self.tally.unreadable += 1;
                    continue;
                }
            };
            let has_gitignore = entries
                .iter()
                .any(|e| e.name == ".gitignore" && e.kind == EntryKind::File);
            let ignores = match has_gitignore.then(|| self.gitignore(&dir)).flatten() {
                Some(own) => {
                    let mut all = (*parent_ignores).clone();
                    all.push(own);
                    Rc::new(all)
                }
                None => parent_ignores,
            };
            let mut subdirs = Vec::new();
            for entry in &entries {
                if self.tally.visited >= MAX_VISITED {
                    self.tally.visits_full = true;
                    return Flow::Full;
                }
                self.tally.visited += 1;
                let child = join(&dir, &entry.name);
                if self.protected.is_protected(&child) {
                    self.tally.protected += 1;
                    continue;
                }
                let is_dir = entry.kind == EntryKind::Directory;
                if ignored(&ignores, &self.project.root().join(&child), is_dir) {
                    continue;
                }
                match entry.kind {
                    EntryKind::Directory => subdirs.push(child),
                    EntryKind::Link => self.tally.links += 1,
                    EntryKind::File => match self.file(&child) {
                        Flow::Continue => {}
                        other => return other,
                    },
                    EntryKind::Other => {}
                }
            }
            for sub in subdirs.into_iter().rev() {
                stack.push((sub, Rc::clone(&ignores)));
            }
        }
        Flow::Continue
    }

    /// The `.gitignore` files of the directories above the searched one.
    fn ancestor_ignores(&self) -> Ignores {
        let mut all = Vec::new();
        let parts: Vec<&str> = self.root.split('/').filter(|p| !p.is_empty()).collect();
        for depth in 0..parts.len() {
            if let Some(gi) = self.gitignore(&parts[..depth].join("/")) {
                all.push(gi);
            }
        }
        Rc::new(all)
    }

    /// The `.gitignore` of `dir`, read through the confined open, if there is
    /// one that can be read.
    fn gitignore(&self, dir: &str) -> Option<Gitignore> {
        let path = join(dir, ".gitignore");
        if self.protected.is_protected(&path) {
            return None;
        }
        let contents = self.project.read(&path, MAX_GITIGNORE_BYTES).ok()?;
        if contents.truncated {
            return None;
        }
        let base = self.project.root().join(dir);
        let mut builder = GitignoreBuilder::new(&base);
        let from = Some(base.join(".gitignore"));
        for line in String::from_utf8_lossy(&contents.bytes).lines() {
            // A line that is not a valid glob is skipped, as git does.
            let _ = builder.add_line(from.clone(), line);
        }
        builder.build().ok()
    }

    /// Searches one regular file at `relative`.
    pub(super) fn file(&mut self, relative: &str) -> Flow {
        if self.cancel.is_cancelled() {
            return Flow::Cancelled;
        }
        if self.protected.is_protected(relative) {
            self.tally.protected += 1;
            return Flow::Continue;
        }
        let under = relative
            .strip_prefix(self.root.as_str())
            .map_or(relative, |rest| rest.trim_start_matches('/'));
        if !self.matcher.selects(relative, under) {
            return Flow::Continue;
        }
        let Some(regex) = &self.matcher.regex else {
            return self.push(one_line(relative));
        };
        let contents = match self.project.read(relative, MAX_FILE_BYTES) {
            Ok(contents) => contents,
            Err(ConfineError::ThroughLink { .. }) => {
                self.tally.links += 1;
                return Flow::Continue;
            }
            Err(ConfineError::HardLinked { .. }) => {
                self.tally.hard_linked += 1;
                return Flow::Continue;
            }
            Err(_) => {
                self.tally.unreadable += 1;
                return Flow::Continue;
            }
        };
        if looks_binary(&contents.bytes) {
            self.tally.binary += 1;
            return Flow::Continue;
        }
        if contents.truncated {
            self.tally.large += 1;
        }
        let text = String::from_utf8_lossy(&contents.bytes);
        if !regex.is_match(&text) {
            return Flow::Continue;
        }
        let path = one_line(relative);
        let before = self.tally.results;
        for (index, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            let Some(found) = regex.find(line) else {
                continue;
            };
            let flow = self.push(format!(
                "{path}:{}: {}",
                index + 1,
                shorten(line, found.start())
            ));
            if flow != Flow::Continue {
                self.count_file(before);
                return flow;
            }
        }
        self.count_file(before);
        Flow::Continue
    }

    /// Counts the file just searched when it added results beyond `before`.
    fn count_file(&mut self, before: usize) {
        if self.tally.results > before {
            self.tally.files_with_results += 1;
        }
    }

    /// Adds one result line, unless a limit is reached.
    fn push(&mut self, line: String) -> Flow {
        if self.tally.results >= self.matcher.max_results {
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

    /// The result lines found so far (file paths, for a walk without a
    /// regular expression).
    pub(super) fn results(&self) -> impl Iterator<Item = &str> {
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
        let summary = match (&self.matcher.regex, t.results) {
            (Some(regex), 0) => format!("No matches for /{}/ under {place}.", regex.as_str()),
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
            full(t.results_full, self.matcher.max_results),
            full(t.output_full, MAX_OUTPUT_BYTES / 1024),
            full(t.visits_full, MAX_VISITED),
            t.protected,
            t.links,
            t.binary,
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

/// Whether the innermost `.gitignore` with an opinion ignores `path`.
fn ignored(ignores: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for gi in ignores.iter().rev() {
        let found = gi.matched(path, is_dir);
        if found.is_ignore() {
            return true;
        }
        if found.is_whitelist() {
            return false;
        }
    }
    false
}

/// `line`, or a window of it around the byte offset `at` when it is longer
/// than `MAX_LINE_CHARS`.
fn shorten(line: &str, at: usize) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let at = (0..=at)
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
