//! The confined walk behind `search`: visits the tree under the searched
//! directory depth first, in name order, honouring `.gitignore`, and hands
//! each file the glob selects, and each thing it counts, to its caller in
//! that order. Owns the visit limit and the `.gitignore` rules. Never follows
//! a symbolic link, never descends into or names a protected path (those are
//! only counted), lists and reads only through `Project`, never reads a
//! searched file, and never parses arguments: it is handed the compiled
//! `Matcher`.

use std::path::Path;
use std::rc::Rc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tokio_util::sync::CancellationToken;

use super::Matcher;
use super::results::{Flow, Met};
use crate::policy::ProtectedPaths;
use crate::tools::Project;
use crate::tools::fs::confine::{ConfineError, DirEntry, EntryKind};
use crate::tools::fs::paths::join;

/// The walk stops after this many directory entries.
pub const MAX_VISITED: usize = 200_000;

/// `.gitignore` files larger than this are not read.
const MAX_GITIGNORE_BYTES: u64 = 256 * 1024;

/// What the walk hands its caller, in walk order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    /// A regular file the glob selects, project-relative.
    File(String),
    /// Something counted, not searched.
    Met(Met),
}

/// One search's walk.
pub(super) struct Walk<'a> {
    project: &'a Project,
    protected: &'a ProtectedPaths,
    matcher: &'a Matcher,
    cancel: &'a CancellationToken,
    /// The searched directory, project-relative.
    root: &'a str,
    visited: usize,
}

/// The `.gitignore` files that apply to one directory, innermost last.
type Ignores = Rc<Vec<Gitignore>>;

impl<'a> Walk<'a> {
    /// A walk of `root` (project-relative).
    pub(super) fn new(
        project: &'a Project,
        protected: &'a ProtectedPaths,
        matcher: &'a Matcher,
        cancel: &'a CancellationToken,
        root: &'a str,
    ) -> Self {
        Self {
            project,
            protected,
            matcher,
            cancel,
            root,
            visited: 0,
        }
    }

    /// Walks the tree under `self.root` (whose entries are `root_entries`),
    /// depth first, in name order, listing every directory through
    /// `Project::list_kinds`; stops when `step` says so.
    pub(super) fn tree(
        &mut self,
        root_entries: Vec<DirEntry>,
        step: &mut dyn FnMut(Step) -> Flow,
    ) -> Flow {
        let mut first = Some(root_entries);
        let mut stack: Vec<(String, Ignores)> =
            vec![(self.root.to_string(), self.ancestor_ignores())];
        while let Some((dir, parent_ignores)) = stack.pop() {
            if self.cancel.is_cancelled() {
                return Flow::Cancelled;
            }
            let listed = match first.take() {
                Some(entries) => Ok(entries),
                None => self.project.list_kinds(&dir),
            };
            let entries = match listed {
                Ok(entries) => entries,
                Err(e) => {
                    let met = match e {
                        ConfineError::ThroughLink { .. } => Met::Link,
                        _ => Met::Unreadable,
                    };
                    match step(Step::Met(met)) {
                        Flow::Continue => continue,
                        other => return other,
                    }
                }
            };
            let ignores = self.with_own_gitignore(&dir, &entries, parent_ignores);
            let mut subdirs = Vec::new();
            for entry in &entries {
                let flow = self.entry(&dir, entry, &ignores, &mut subdirs, step);
                if flow != Flow::Continue {
                    return flow;
                }
            }
            for sub in subdirs.into_iter().rev() {
                stack.push((sub, Rc::clone(&ignores)));
            }
        }
        Flow::Continue
    }

    /// Visits one entry of `dir`: a directory is kept for later in
    /// `subdirs`, a file is handed on, the rest is counted.
    fn entry(
        &mut self,
        dir: &str,
        entry: &DirEntry,
        ignores: &[Gitignore],
        subdirs: &mut Vec<String>,
        step: &mut dyn FnMut(Step) -> Flow,
    ) -> Flow {
        if self.visited >= MAX_VISITED {
            return step(Step::Met(Met::VisitLimit));
        }
        self.visited += 1;
        let child = join(dir, &entry.name);
        if self.protected.is_protected(&child) {
            return step(Step::Met(Met::Protected));
        }
        let is_dir = entry.kind == EntryKind::Directory;
        if ignored(ignores, &self.project.root().join(&child), is_dir) {
            return Flow::Continue;
        }
        match entry.kind {
            EntryKind::Directory => {
                subdirs.push(child);
                Flow::Continue
            }
            EntryKind::Link => step(Step::Met(Met::Link)),
            EntryKind::File => self.file(&child, step),
            EntryKind::Other => Flow::Continue,
        }
    }

    /// The rules that apply in `dir`: its parent's, and its own
    /// `.gitignore` when `entries` hold one that can be read.
    fn with_own_gitignore(&self, dir: &str, entries: &[DirEntry], parent: Ignores) -> Ignores {
        let has_gitignore = entries
            .iter()
            .any(|e| e.name == ".gitignore" && e.kind == EntryKind::File);
        match has_gitignore.then(|| self.gitignore(dir)).flatten() {
            Some(own) => {
                let mut all = (*parent).clone();
                all.push(own);
                Rc::new(all)
            }
            None => parent,
        }
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

    /// Hands on the regular file at `relative` when it is not protected and
    /// the glob selects it. A file the call names as its `path` is searched
    /// for a pattern whatever the glob, as ripgrep searches a file named on
    /// its command line.
    pub(super) fn file(&mut self, relative: &str, step: &mut dyn FnMut(Step) -> Flow) -> Flow {
        if self.cancel.is_cancelled() {
            return Flow::Cancelled;
        }
        if self.protected.is_protected(relative) {
            return step(Step::Met(Met::Protected));
        }
        let under = relative
            .strip_prefix(self.root)
            .map_or(relative, |rest| rest.trim_start_matches('/'));
        let named = relative == self.root && self.matcher.pattern.is_some();
        if !named && !self.matcher.selects(relative, under) {
            return Flow::Continue;
        }
        step(Step::File(relative.to_string()))
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
