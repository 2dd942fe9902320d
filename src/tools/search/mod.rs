//! `search`: finds files by glob and lines by regex under one project
//! directory, a confined read. Owns the argument check (compiled into a
//! `Matcher`) and the facts (the directory searched as a `PathTarget`); the
//! walk is `walk`'s, one file's search `grep`'s, the threads and the merge
//! `run`'s, the result text `results`'. Never decides, never follows a
//! symbolic link, never descends into or reads a protected path (those are
//! only counted), and opens files only through the confined open
//! (`Project::open_regular`), so a link swapped in during the walk is
//! refused.

use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::RegexMatcher;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod files;
mod grep;
mod results;
mod run;
mod walk;

pub use files::ProjectFiles;
pub use grep::MAX_FILE_BYTES;
pub use results::{MAX_LINE_CHARS, MAX_OUTPUT_BYTES};
pub use walk::MAX_VISITED;

use results::Flow;

use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths};
use crate::tools::FieldRole;
use crate::tools::blocking::run_blocking;
use crate::tools::fs::confine::ConfineError;
use crate::tools::fs::paths::{locate_with_facts, recheck_target, shown_path};
use crate::tools::{
    BoxFuture, Field, PreparedCall, Project, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec,
    parse_args,
};

/// The tool's name, as the model calls it.
pub const NAME: &str = "search";

/// Results returned when the call does not say.
pub const DEFAULT_MAX_RESULTS: usize = 200;
/// The most results one call may ask for.
pub const MAX_RESULTS_LIMIT: usize = 2000;
/// The longest `pattern` or `glob` accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1000;

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
            name: NAME.into(),
            description: "Search the project: `pattern` is a regular expression (Rust regex \
                syntax) matched line by line against file contents, `glob` selects files by \
                name (`*.rs`) or, when it contains `/`, by path (`src/**/*.rs`). Give at least \
                one. Results are `path:line: text` lines, or paths when only `glob` is given. \
                Honours .gitignore, skips binary files, never follows symbolic links, and never \
                searches protected paths (.env, .git, keys, ...)."
                .into(),
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
        let (target, facts) = locate_with_facts(
            &cx.project,
            &cx.protected,
            &args.path,
            NAME,
            CallKind::ConfinedRead,
        )?;
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
pub(super) struct Matcher {
    pub(super) pattern: Option<Pattern>,
    glob: Option<Glob>,
    pub(super) max_results: usize,
}

/// The regular expression: as given, and compiled for the line search.
pub(super) struct Pattern {
    pub(super) text: String,
    pub(super) lines: RegexMatcher,
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
        let pattern = match pattern {
            None => None,
            Some(p) => Some(Pattern {
                text: p.to_string(),
                lines: grep::line_matcher(p, args.case_insensitive).map_err(|e| {
                    invalid(format!(
                        "`pattern` is not a valid regular expression (it is matched line by \
                         line, so it cannot match a line end): {e}"
                    ))
                })?,
            }),
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
            pattern,
            glob,
            max_results,
        })
    }

    /// Whether the file at `relative` (project-relative; `under` is the
    /// part below the searched directory) is selected by the glob.
    pub(super) fn selects(&self, relative: &str, under: &str) -> bool {
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
        let mut fields = vec![Field::named(FieldRole::Path, shown_path(&self.target))];
        if let Some(pattern) = &self.matcher.pattern {
            fields.push(Field::text("Pattern", pattern.text.clone()));
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
            Ok(relative) => relative,
            Err(refused) => return refused,
        };
        let listed = match self.project.list_kinds(root) {
            Ok(entries) => Some(entries),
            Err(ConfineError::NotADirectory { .. }) => None,
            Err(e) => return ToolOutcome::error(e.to_string()),
        };
        let scope = run::Scope {
            project: &self.project,
            protected: &self.protected,
            matcher: &self.matcher,
            cancel,
            root,
        };
        let (finished, results) = run::search(&scope, listed);
        if finished == Flow::Cancelled {
            return ToolOutcome::interrupted("The search was cancelled.");
        }
        ToolOutcome::completed(results.finish())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::policy::ToolKey;

    fn args(value: Value) -> Args {
        serde_json::from_value(value).unwrap()
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

    fn found(root: &Path, args: Value) -> String {
        let out = prepared(root, args).search(&CancellationToken::new());
        assert_eq!(out.status, crate::tools::ToolStatus::Completed);
        out.output
    }

    #[test]
    fn binary_data_ends_a_files_search_and_without_results_skips_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.bin"), b"needle one\n\0\nneedle two\n").unwrap();
        // Past the searcher's first 64 KiB buffer: the results before stay.
        let filler = format!("{}\n", "x".repeat(99)).repeat(2000);
        let late = format!("needle before\n{filler}\0\nneedle after\n");
        std::fs::write(dir.path().join("b.dat"), late).unwrap();
        // Within it: as ripgrep, the file is binary.
        let within = format!("needle before\n{}\0\nneedle after\n", &filler[..20_000]);
        std::fs::write(dir.path().join("c.dat"), within).unwrap();
        let out = found(dir.path(), json!({"pattern": "needle"}));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            vec![
                "b.dat:1: needle before",
                "",
                "1 matching line in 1 file.",
                "Skipped 2 binary files.",
                "Stopped searching 1 file at binary data (a NUL byte) after results.",
            ]
        );
    }

    #[test]
    fn crlf_lines_long_lines_and_case_are_matched_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("dos.txt"), "first end\r\nsecond END\r\n").unwrap();
        // One line longer than the searcher's 64 KiB buffer.
        let long = format!(
            "{}NEEDLE{}\nNEEDLE short\n",
            "a".repeat(100_000),
            "b".repeat(100)
        );
        std::fs::write(root.join("long.txt"), long).unwrap();
        let anchored = found(root, json!({"pattern": "end$", "case_insensitive": true}));
        assert!(
            anchored.starts_with("dos.txt:1: first end\ndos.txt:2: second END\n\n"),
            "{anchored}"
        );
        let exact = found(root, json!({"pattern": "END$"}));
        assert!(exact.starts_with("dos.txt:2: second END\n\n"), "{exact}");
        let out = found(root, json!({"pattern": "NEEDLE", "path": "long.txt"}));
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("long.txt:1: …") && lines[0].contains("NEEDLE"));
        assert_eq!(lines[1], "long.txt:2: NEEDLE short");
    }

    #[test]
    fn a_line_end_in_the_pattern_is_refused_by_name() {
        let err = Matcher::new(&args(json!({"pattern": "a\\nb"}))).err();
        let Some(ToolError::InvalidArguments { message, .. }) = err else {
            panic!("{err:?}");
        };
        assert!(message.contains("`pattern`") && message.contains("line by line"));
    }

    #[test]
    fn only_the_first_mib_of_a_larger_file_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let filler = "filler line\n".repeat(usize::try_from(MAX_FILE_BYTES).unwrap() / 12 + 10);
        let text = format!("needle head\n{filler}needle tail\n");
        std::fs::write(dir.path().join("big.txt"), text).unwrap();
        let out = found(dir.path(), json!({"pattern": "needle"}));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            vec![
                "big.txt:1: needle head",
                "",
                "1 matching line in 1 file.",
                "Searched only the first MiB of 1 larger file.",
            ]
        );
    }

    #[test]
    fn results_come_in_walk_order_up_to_the_limit_whatever_the_threads_do() {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..12 {
            std::fs::create_dir_all(dir.path().join(format!("d{d:02}"))).unwrap();
            for f in 0..40 {
                let text = format!("x\nhit {d} {f}\n").repeat(1 + (d * f) % 7);
                std::fs::write(dir.path().join(format!("d{d:02}/f{f:02}.txt")), text).unwrap();
            }
            std::fs::write(dir.path().join(format!("d{d:02}/.env")), "hit\n").unwrap();
        }
        let all = found(dir.path(), json!({"pattern": "hit", "max_results": 2000}));
        let expected: Vec<&str> = all.lines().take_while(|l| !l.is_empty()).collect();
        let mut sorted = expected.clone();
        sorted.sort_by_key(|l| {
            let (path, rest) = l.split_once(':').unwrap();
            (
                path.to_string(),
                rest.split(':').next().unwrap().parse::<u32>().unwrap(),
            )
        });
        assert_eq!(expected, sorted);
        for _ in 0..5 {
            let capped = found(dir.path(), json!({"pattern": "hit", "max_results": 100}));
            let lines: Vec<&str> = capped.lines().collect();
            assert_eq!(lines[..100], expected[..100]);
            assert_eq!(
                lines[101..],
                [
                    "100 matching lines in 57 files.",
                    "Stopped after 100 results (max_results); narrow the search to see the rest.",
                    "Skipped 2 protected paths; they are never searched."
                ]
            );
        }
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
