//! `search`: finds files by glob and lines by regex under one project
//! directory, a confined read. Owns the argument check, the facts (the
//! directory searched as a `PathTarget`), the walk and the result text.
//! Never decides, never follows a symbolic link, never descends into or
//! reads a protected path (those are only counted), and reads files only
//! through `Project::read`, so a link swapped in during the walk is refused.

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::run_blocking;
use super::confine::{ConfineError, DirEntry, EntryKind};
use super::paths::{join, locate_with_facts, recheck_target, shown_path, shown_relative};
use super::text::{escape_controls, looks_binary, noun};
use super::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};

/// The tool's name, as the model calls it.
pub const NAME: &str = "search";

/// Results returned when the call does not say.
pub const DEFAULT_MAX_RESULTS: usize = 200;
/// The most results one call may ask for.
pub const MAX_RESULTS_LIMIT: usize = 2000;
/// Only this much of each file is searched.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The result text stops growing here.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Result lines longer than this (in characters) are shortened around the match.
pub const MAX_LINE_CHARS: usize = 240;
/// The walk stops after this many directory entries.
pub const MAX_VISITED: usize = 200_000;
/// The longest `pattern` or `glob` accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1000;

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

/// Glob and regex search inside the project.
#[derive(Debug, Clone, Copy, Default)]
pub struct Search;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: Option<String>,
    glob: Option<String>,
    #[serde(default = "default_path")]
    path: String,
    max_results: Option<usize>,
    #[serde(default)]
    case_insensitive: bool,
}

fn default_path() -> String {
    ".".to_string()
}

impl Tool for Search {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME,
            description: "Search the project: `pattern` is a regular expression (Rust regex \
                syntax) matched line by line against file contents, `glob` selects files by \
                name (`*.rs`) or, when it contains `/`, by path (`src/**/*.rs`). Give at least \
                one. Results are `path:line: text` lines, or paths when only `glob` is given. \
                Honours .gitignore, skips binary files, never follows symbolic links, and never \
                searches protected paths (.env, .git, keys, ...).",
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression matched against each line of each file."},
                    "glob": {"type": "string", "description": "Only files whose name (or, with a `/`, whose path) matches this glob."},
                    "path": {"type": "string", "description": "Directory (or file) to search under, relative to the project root. Default \".\"."},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS_LIMIT, "description": "Most results returned. Default 200."},
                    "case_insensitive": {"type": "boolean", "description": "Match pattern and glob ignoring case. Default false."}
                },
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args(NAME, args)?;
        let matcher = Matcher::new(&args)?;
        let (target, facts) =
            locate_with_facts(&cx.project, &args.path, NAME, CallKind::ConfinedRead)?;
        Ok(Box::new(PreparedSearch {
            facts,
            target,
            matcher,
            project: Arc::clone(&cx.project),
            protected: Arc::clone(&cx.protected),
        }))
    }
}

fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: NAME,
        message: message.into(),
    }
}

/// What a file must match: the compiled arguments.
struct Matcher {
    regex: Option<Regex>,
    glob: Option<Glob>,
    max_results: usize,
}

struct Glob {
    matcher: GlobMatcher,
    /// The glob contains `/`: it is matched against paths, not names.
    by_path: bool,
    text: String,
}

impl Matcher {
    fn new(args: &Args) -> Result<Self, ToolError> {
        let pattern = args.pattern.as_deref().filter(|p| !p.is_empty());
        let glob = args.glob.as_deref().filter(|g| !g.is_empty());
        if pattern.is_none() && glob.is_none() {
            return Err(invalid(
                "give `pattern` (a regular expression), `glob` (a file-name glob), or both",
            ));
        }
        let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        if !(1..=MAX_RESULTS_LIMIT).contains(&max_results) {
            return Err(invalid(format!(
                "`max_results` must be between 1 and {MAX_RESULTS_LIMIT}"
            )));
        }
        for (key, value) in [("pattern", pattern), ("glob", glob)] {
            if value.is_some_and(|v| v.len() > MAX_PATTERN_BYTES) {
                return Err(invalid(format!(
                    "`{key}` is longer than {MAX_PATTERN_BYTES} bytes"
                )));
            }
        }
        let regex = match pattern {
            None => None,
            Some(p) => Some(
                RegexBuilder::new(p)
                    .case_insensitive(args.case_insensitive)
                    .multi_line(true)
                    .crlf(true)
                    .build()
                    .map_err(|e| {
                        invalid(format!("`pattern` is not a valid regular expression: {e}"))
                    })?,
            ),
        };
        let glob = match glob {
            None => None,
            Some(g) => {
                let trimmed = g.trim_start_matches("./");
                let compiled = GlobBuilder::new(trimmed)
                    .case_insensitive(args.case_insensitive)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| invalid(format!("`glob` is not a valid glob: {}", e.kind())))?;
                Some(Glob {
                    matcher: compiled.compile_matcher(),
                    by_path: trimmed.contains('/'),
                    text: g.to_string(),
                })
            }
        };
        Ok(Self {
            regex,
            glob,
            max_results,
        })
    }

    /// Whether the file at `relative` (project-relative; `under` is the
    /// part below the searched directory) is selected by the glob.
    fn selects(&self, relative: &str, under: &str) -> bool {
        let Some(glob) = &self.glob else {
            return true;
        };
        if glob.by_path {
            glob.matcher.is_match(relative) || glob.matcher.is_match(under)
        } else {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            glob.matcher.is_match(name)
        }
    }
}

/// A prepared `search` call.
pub struct PreparedSearch {
    facts: CallFacts,
    target: PathTarget,
    matcher: Matcher,
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
}

impl PreparedCall for PreparedSearch {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = vec![Field::text("Path", shown_path(&self.target))];
        if let Some(regex) = &self.matcher.regex {
            fields.push(Field::text("Pattern", regex.as_str()));
        }
        if let Some(glob) = &self.matcher.glob {
            fields.push(Field::text("Glob", glob.text.clone()));
        }
        fields
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        let token = cancel.clone();
        run_blocking(cancel, NAME, "The search was cancelled.", move || {
            self.search(&token)
        })
    }
}

impl PreparedSearch {
    fn search(&self, cancel: &CancellationToken) -> ToolOutcome {
        let root = match recheck_target(&self.target, &self.protected) {
            Ok(relative) => relative.to_string(),
            Err(refused) => return refused,
        };
        let mut walk = Walk {
            project: &self.project,
            protected: &self.protected,
            matcher: &self.matcher,
            cancel,
            root: root.clone(),
            out: String::new(),
            tally: Tally::default(),
        };
        let finished = match self.project.list(&root) {
            Ok(entries) => walk.tree(entries),
            Err(ConfineError::NotADirectory { .. }) => walk.file(&root),
            Err(e) => return ToolOutcome::error(e.to_string()),
        };
        if finished == Flow::Cancelled {
            return ToolOutcome::interrupted("The search was cancelled.");
        }
        ToolOutcome::completed(walk.finish())
    }
}

/// Whether the walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
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

struct Walk<'a> {
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

impl Walk<'_> {
    /// Walks the tree under `self.root` (whose entries are `root_entries`),
    /// depth first, in name order, listing every directory through
    /// `Project::list`.
    fn tree(&mut self, root_entries: Vec<DirEntry>) -> Flow {
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
    fn file(&mut self, relative: &str) -> Flow {
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
            return self.push(escape_controls(relative));
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
        let path = escape_controls(relative);
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

    /// The result text: the result lines, then a summary and the notes.
    fn finish(self) -> String {
        let t = &self.tally;
        let place = shown_relative(&self.root);
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::policy::ToolKey;

    fn args(value: Value) -> Args {
        serde_json::from_value(value).unwrap()
    }

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

    #[test]
    fn globs_match_names_or_paths() {
        let by_name =
            Matcher::new(&args(json!({"glob": "*.RS", "case_insensitive": true}))).unwrap();
        assert!(by_name.selects("src/tools/a.rs", "tools/a.rs"));
        assert!(!by_name.selects("src/a.md", "a.md"));
        let by_path = Matcher::new(&args(json!({"glob": "tools/**/*.rs"}))).unwrap();
        assert!(by_path.selects("src/tools/x/a.rs", "tools/x/a.rs"));
        assert!(!by_path.selects("src/a.rs", "a.rs"));
    }

    #[test]
    fn arguments_are_checked() {
        for bad in [
            json!({}),
            json!({"pattern": ""}),
            json!({"pattern": "("}),
            json!({"glob": "a[", "pattern": "x"}),
            json!({"pattern": "x", "max_results": 0}),
            json!({"pattern": "x", "max_results": MAX_RESULTS_LIMIT + 1}),
            json!({"pattern": "x".repeat(MAX_PATTERN_BYTES + 1)}),
        ] {
            let err = Matcher::new(&args(bad.clone())).err();
            assert!(
                matches!(err, Some(ToolError::InvalidArguments { tool: NAME, .. })),
                "{bad}"
            );
        }
    }

    fn prepared(root: &Path, args: Value) -> PreparedSearch {
        let project = Project::new(root).unwrap();
        let target = project.locate(".").unwrap();
        PreparedSearch {
            facts: CallFacts::new(ToolKey::new(NAME), CallKind::ConfinedRead),
            target,
            matcher: Matcher::new(&serde_json::from_value(args).unwrap()).unwrap(),
            project: Arc::new(project),
            protected: Arc::new(ProtectedPaths::builtin()),
        }
    }

    #[test]
    fn the_blocking_walk_stops_when_the_token_fires() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
        let search = prepared(dir.path(), json!({"pattern": "needle"}));
        let live = search.search(&CancellationToken::new());
        assert_eq!(live.status, crate::tools::ToolStatus::Completed);
        assert!(live.output.starts_with("a.txt:1: needle\n"));
        let token = CancellationToken::new();
        token.cancel();
        let stopped = search.search(&token);
        assert_eq!(stopped.status, crate::tools::ToolStatus::Interrupted);
        assert!(!stopped.output.contains("needle"));
    }

    #[test]
    fn nested_gitignore_whitelists_and_ignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!keep.log\ndeep/\n").unwrap();
        for f in [
            "a.log",
            "sub/keep.log",
            "sub/drop.log",
            "sub/deep/x.txt",
            "b.txt",
        ] {
            std::fs::write(root.join(f), "hit\n").unwrap();
        }
        let out = prepared(root, json!({"pattern": "hit"})).search(&CancellationToken::new());
        assert_eq!(
            out.output.lines().take(3).collect::<Vec<_>>(),
            vec!["b.txt:1: hit", "sub/keep.log:1: hit", ""]
        );
    }
}
