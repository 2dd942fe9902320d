//! What a language server points at, as the model receives it: each place
//! as a project-relative path with its line number and the line's text,
//! read confined. A place in a protected file, through a symbolic link (or
//! a hard-linked file) or outside the project is left out and counted, and
//! the count is said. Never decides and never follows a link.

use std::collections::HashMap;
use std::sync::Arc;

use lsp_types::{Diagnostic, Location, Position, Uri};

use super::position::line_of;
use crate::lsp::uri::uri_to_path;
use crate::policy::{PathTarget, ProtectedPaths};
use crate::tools::Project;
use crate::tools::wording::plural;

/// The most bytes of one file read to show its lines.
const READ_LIMIT: u64 = 1024 * 1024;

/// The most places listed in one result.
pub const PLACES_LISTED: usize = 100;

/// Why a place was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LeftOut {
    Protected,
    Link,
    Outside,
}

impl LeftOut {
    fn words(self) -> &'static str {
        match self {
            LeftOut::Protected => "in a protected file",
            LeftOut::Link => "through a link or in a hard-linked file",
            LeftOut::Outside => "outside the project",
        }
    }
}

/// The project-relative path of `uri`, or why it is left out.
pub fn place(project: &Project, protected: &ProtectedPaths, uri: &Uri) -> Result<String, LeftOut> {
    let path = uri_to_path(uri).ok_or(LeftOut::Outside)?;
    let given = path.to_string_lossy();
    match project.locate(&given) {
        Ok(PathTarget::Inside {
            through_link: None,
            hard_linked: false,
            relative,
        }) => {
            if protected.protection(&relative).is_some() {
                Err(LeftOut::Protected)
            } else {
                Ok(relative)
            }
        }
        Ok(PathTarget::Inside { .. }) => Err(LeftOut::Link),
        Ok(PathTarget::Outside { .. }) | Err(_) => Err(LeftOut::Outside),
    }
}

/// One thing a server pointed at, before it is placed in the project.
pub enum Raw {
    /// A place, shown as `PREFIXpath:LINE: text`.
    At {
        uri: Uri,
        position: Position,
        prefix: String,
    },
    /// A diagnostic, shown as `path:LINE: severity: message`.
    Diagnostic {
        uri: Uri,
        diagnostic: Box<Diagnostic>,
    },
}

impl Raw {
    pub fn location(location: Location) -> Self {
        Raw::At {
            uri: location.uri,
            position: location.range.start,
            prefix: String::new(),
        }
    }
}

/// `raw` placed and listed under `heading` (or `none` when nothing is
/// left), with what was left out said; the files are read on the blocking
/// pool.
pub async fn render(
    project: &Arc<Project>,
    protected: &Arc<ProtectedPaths>,
    raw: Vec<Raw>,
    heading: String,
    none: String,
) -> Result<String, String> {
    let (project, protected) = (Arc::clone(project), Arc::clone(protected));
    tokio::task::spawn_blocking(move || {
        let mut places = Places::new(&project, &protected);
        for item in raw {
            match item {
                Raw::At {
                    uri,
                    position,
                    prefix,
                } => {
                    if let Some(relative) = places.relative(&uri) {
                        places.add_at(&relative, position, &prefix);
                    }
                }
                Raw::Diagnostic { uri, diagnostic } => {
                    if let Some(relative) = places.relative(&uri) {
                        places
                            .add_line(super::diagnostics::diagnostic_line(&relative, &diagnostic));
                    }
                }
            }
        }
        places.finish(&heading, &none)
    })
    .await
    .map_err(|e| format!("listing the language server's answer stopped: {e}"))
}

/// Places gathered for one result, with the files' text read once.
struct Places<'a> {
    project: &'a Project,
    protected: &'a ProtectedPaths,
    texts: HashMap<String, Option<String>>,
    lines: Vec<String>,
    left_out: HashMap<LeftOut, usize>,
    more: usize,
}

impl<'a> Places<'a> {
    pub fn new(project: &'a Project, protected: &'a ProtectedPaths) -> Self {
        Self {
            project,
            protected,
            texts: HashMap::new(),
            lines: Vec::new(),
            left_out: HashMap::new(),
            more: 0,
        }
    }

    /// Where `uri` is in the project, or `None` (counted as left out).
    pub fn relative(&mut self, uri: &Uri) -> Option<String> {
        match place(self.project, self.protected, uri) {
            Ok(relative) => Some(relative),
            Err(why) => {
                *self.left_out.entry(why).or_default() += 1;
                None
            }
        }
    }

    /// The text of line `line` (zero-based) of the project file `relative`.
    pub fn line_text(&mut self, relative: &str, line: u32) -> String {
        let project = self.project;
        let text = self.texts.entry(relative.to_string()).or_insert_with(|| {
            project
                .read(relative, READ_LIMIT)
                .ok()
                .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
        });
        text.as_deref()
            .and_then(|t| line_of(t, line as usize))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }

    /// Adds `path:LINE: text` for a place, `prefix` before it.
    pub fn add_at(&mut self, relative: &str, position: Position, prefix: &str) {
        if self.lines.len() >= PLACES_LISTED {
            self.more += 1;
            return;
        }
        let text = self.line_text(relative, position.line);
        self.lines
            .push(format!("{prefix}{relative}:{}: {text}", position.line + 1));
    }

    /// Adds a line of its own (a symbol's description).
    pub fn add_line(&mut self, line: String) {
        if self.lines.len() >= PLACES_LISTED {
            self.more += 1;
        } else {
            self.lines.push(line);
        }
    }

    /// The result's text: `heading`, the places, and what was left out.
    pub fn finish(self, heading: &str, none: &str) -> String {
        let mut out = String::new();
        if self.lines.is_empty() {
            out.push_str(none);
        } else {
            out.push_str(heading);
            for line in &self.lines {
                out.push('\n');
                out.push_str(line);
            }
        }
        if self.more > 0 {
            out.push_str(&format!("\n({} more not listed)", self.more));
        }
        let mut left: Vec<(LeftOut, usize)> = self.left_out.into_iter().collect();
        left.sort();
        for (why, count) in left {
            out.push_str(&format!(
                "\n{} {} left out.",
                plural(count, "result"),
                why.words()
            ));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::lsp::uri::path_to_uri;

    #[test]
    fn places_in_protected_files_links_and_outside_are_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "one\ntwo\n").unwrap();
        std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/b.py"), "b\n").unwrap();
        std::os::unix::fs::symlink("real", root.join("linked")).unwrap();
        std::fs::hard_link(root.join("a.py"), root.join("twin.py")).unwrap();
        let project = Project::new(&root).unwrap();
        let protected = ProtectedPaths::builtin();
        let uri = |p: &std::path::Path| path_to_uri(p).unwrap();
        assert_eq!(
            place(&project, &protected, &uri(&root.join("real/b.py"))),
            Ok("real/b.py".to_string())
        );
        assert_eq!(
            place(&project, &protected, &uri(&root.join(".env"))),
            Err(LeftOut::Protected)
        );
        assert_eq!(
            place(&project, &protected, &uri(&root.join(".ENV"))),
            Err(LeftOut::Protected)
        );
        assert_eq!(
            place(&project, &protected, &uri(&root.join("linked/b.py"))),
            Err(LeftOut::Link)
        );
        assert_eq!(
            place(&project, &protected, &uri(&root.join("twin.py"))),
            Err(LeftOut::Link)
        );
        assert_eq!(
            place(
                &project,
                &protected,
                &uri(std::path::Path::new("/etc/passwd"))
            ),
            Err(LeftOut::Outside)
        );
        assert_eq!(
            place(&project, &protected, &uri(&root.join("../x.py"))),
            Err(LeftOut::Outside)
        );
        let other: Uri = "untitled:Untitled-1".parse().unwrap();
        assert_eq!(place(&project, &protected, &other), Err(LeftOut::Outside));

        let mut places = Places::new(&project, &protected);
        for path in [root.join("real/b.py"), root.join(".env"), root.join(".env")] {
            if let Some(relative) = places.relative(&uri(&path)) {
                places.add_at(&relative, Position::new(0, 0), "");
            }
        }
        if let Some(relative) = places.relative(&uri(&root.join("linked/b.py"))) {
            places.add_at(&relative, Position::new(0, 0), "");
        }
        assert_eq!(
            places.finish("Found:", "none"),
            "Found:\nreal/b.py:1: b\n2 results in a protected file left out.\n1 result through a link or in a hard-linked file left out."
        );
    }
}
