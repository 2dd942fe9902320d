//! Git cannot become a launcher (issue 20, deliver 4): which parts of the
//! project's repository a command may not write (the places git reads code
//! or configuration from), which `.git` is trusted at all (a real directory,
//! or a linked worktree verified against its repository), and the check
//! after a call that undoes what would make the user's own git run code it
//! planted (a new `commondir`; hooks and configuration of a repository the
//! call created). Never reads a file's content beyond git's own small
//! pointer files and a new repository's `config`.

use std::path::{Path, PathBuf};

use super::PROJECT_PLANTING;
use crate::policy::Surfaces;

/// The project's paths that are read-only inside the sandbox: mino's own
/// settings and every place git takes code or configuration from. The one
/// list of the project's read-only set (the execution surfaces of other
/// tools can be added here).
pub fn project_read_only(project: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = PROJECT_PLANTING.iter().map(|n| project.join(n)).collect();
    let dot_git = project.join(".git");
    paths.push(dot_git.join("info"));
    paths.push(dot_git.join("commondir"));
    paths.push(dot_git.join("config.worktree"));
    for worktree in entries(&dot_git.join("worktrees")) {
        let dir = dot_git.join("worktrees").join(worktree);
        paths.push(dir.join("config.worktree"));
        paths.push(dir.join("commondir"));
        paths.push(dir.join("gitdir"));
    }
    // A linked worktree's `.git` file names its repository: it stays.
    if dot_git.symlink_metadata().is_ok_and(|m| m.is_file()) {
        paths.push(dot_git.clone());
    }
    for module in submodule_git_dirs(&dot_git.join("modules")) {
        paths.push(module.join("hooks"));
        paths.push(module.join("config"));
    }
    paths
}

/// The project's execution surfaces that exist at its top (in any case), the
/// rooted ones (`.github/workflows`) and the hooks directory
/// `core.hooksPath` names: read-only inside, as a file tool's write there
/// asks in every mode.
pub fn surfaces(project: &Path, surfaces: &Surfaces) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = entries(project)
        .into_iter()
        .filter(|name| name.to_str().is_some_and(|n| surfaces.surface(n).is_some()))
        .map(|name| project.join(name))
        .collect();
    paths.extend(
        Surfaces::names()
            .filter(|n| n.contains('/'))
            .map(|n| project.join(n)),
    );
    if let Some(hooks) = surfaces.hooks_dir() {
        paths.push(project.join(hooks));
    }
    // A surface that is a link is made read-only where it leads, and only
    // when that is inside the project: a link out of it (or a dangling one)
    // never stops a command from starting.
    paths
        .into_iter()
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|real| real.starts_with(project))
        .collect()
}

/// The directories git writes to outside the project, for a verified linked
/// worktree only, and their code-bearing parts (read-only).
pub fn linked_worktree(project: &Path) -> Option<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (git_dir, common) = verified_worktree(project)?;
    let read_only = vec![
        common.join("hooks"),
        common.join("config"),
        common.join("info"),
        common.join("commondir"),
        common.join("modules"),
        git_dir.join("config.worktree"),
        git_dir.join("commondir"),
        git_dir.join("gitdir"),
    ];
    Some((vec![git_dir, common], read_only))
}

/// A `gitdir:` file is trusted only when it names `REPO/.git/worktrees/NAME`
/// of a real repository (a directory with `HEAD` and `objects/`) whose
/// `commondir` leads back to that repository and whose `gitdir` names this
/// project's `.git`: what `git worktree add` makes, and nothing a command
/// can make up (`gitdir: $HOME`, a `commondir` pointing anywhere).
fn verified_worktree(project: &Path) -> Option<(PathBuf, PathBuf)> {
    let dot_git = project.join(".git");
    if !dot_git.symlink_metadata().ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let dir = text.lines().find_map(|l| l.strip_prefix("gitdir: "))?;
    let git_dir = std::fs::canonicalize(project.join(dir.trim())).ok()?;
    let worktrees = git_dir.parent()?;
    let common = worktrees.parent()?.to_path_buf();
    if worktrees.file_name()? != "worktrees" || git_dir.starts_with(project) {
        return None;
    }
    let named = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
    let named = std::fs::canonicalize(git_dir.join(named.trim())).ok()?;
    let back = std::fs::read_to_string(git_dir.join("gitdir")).ok()?;
    let back = std::fs::canonicalize(back.trim()).ok()?;
    let real_repo = common.join("HEAD").is_file() && common.join("objects").is_dir();
    let project_git = std::fs::canonicalize(&dot_git).ok()?;
    (named == common && back == project_git && real_repo).then_some((git_dir, common))
}

/// Makes a repository's missing `hooks` and `info` directories, empty (as
/// git itself would), so that they can be read-only and nothing can be
/// planted in them. A directory mino cannot make, the command cannot make
/// either.
pub fn make_placeholders(project: &Path) {
    let dot_git = project.join(".git");
    if !dot_git.symlink_metadata().is_ok_and(|m| m.is_dir()) || !dot_git.join("HEAD").is_file() {
        return;
    }
    for name in ["hooks", "info"] {
        let dir = dot_git.join(name);
        if dir.symlink_metadata().is_err() {
            let _ = std::fs::create_dir(&dir);
        }
    }
}

/// The project's repository before a call, to compare with after it.
#[derive(Debug, Clone)]
pub struct Before {
    project: PathBuf,
    had_git: bool,
    had_commondir: bool,
    modules: Vec<std::ffi::OsString>,
    worktrees: Vec<std::ffi::OsString>,
    /// Masked files git tracks that mino marked skip-worktree for the call.
    hidden: Vec<String>,
}

/// Keys of a git configuration that run a program or take one from the
/// repository: a new repository's `config` naming one is not left behind.
const CODE_KEYS: [&str; 14] = [
    "fsmonitor",
    "hookspath",
    "sshcommand",
    "pager",
    "editor",
    "askpass",
    "gitproxy",
    "[alias",
    "[filter",
    "textconv",
    "[credential",
    "program",
    "[include",
    "command",
];

impl Before {
    /// The repository as it is, and the masked files it tracks marked
    /// skip-worktree in its index for the call: git inside then neither
    /// sees their stand-ins as changes nor records them (`add -A`,
    /// `commit -a`, `stash`), nor prints them in `diff`.
    pub fn capture(project: &Path, masked: &[PathBuf]) -> Self {
        let dot_git = project.join(".git");
        let hidden = if real_dir(&dot_git) {
            hide(project, masked)
        } else {
            Vec::new()
        };
        Self {
            hidden,
            project: project.to_path_buf(),
            had_git: dot_git.symlink_metadata().is_ok(),
            had_commondir: dot_git.join("commondir").symlink_metadata().is_ok(),
            modules: entries(&dot_git.join("modules")),
            worktrees: entries(&dot_git.join("worktrees")),
        }
    }

    /// Undoes what the call left that the user's git would run, and says
    /// what was undone.
    pub fn restore(&self) -> Option<String> {
        let dot_git = self.project.join(".git");
        if !self.hidden.is_empty() {
            let mut args = vec!["update-index", "--no-skip-worktree", "--"];
            args.extend(self.hidden.iter().map(String::as_str));
            let _ = mino_git(&self.project, &args);
        }
        let mut undone = Vec::new();
        // Nothing is followed through a link: a link the call made (in
        // place of `.git`, its `hooks` or `modules`) is removed itself, and
        // what it leads to is never touched.
        if !self.had_git
            && dot_git.symlink_metadata().is_ok_and(|m| !m.is_dir())
            && std::fs::remove_file(&dot_git).is_ok()
        {
            undone.push("removed the .git link or file it made (it led to another repository)");
        }
        if !real_dir(&dot_git) {
            return said(&undone);
        }
        let commondir = dot_git.join("commondir");
        if !self.had_commondir && commondir.symlink_metadata().is_ok() && remove_any(&commondir) {
            undone.push("removed the new .git/commondir");
        }
        if self.had_git {
            for (name, before) in [("modules", &self.modules), ("worktrees", &self.worktrees)] {
                let dir = dot_git.join(name);
                if dir.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
                    if remove_any(&dir) {
                        undone.push("removed a link made in place of a .git directory");
                    }
                    continue;
                }
                for entry in entries(&dir) {
                    if !before.contains(&entry) && remove_any(&dir.join(&entry)) {
                        undone.push(if name == "modules" {
                            "removed a new .git/modules entry"
                        } else {
                            "removed a new .git/worktrees entry"
                        });
                    }
                }
            }
        } else {
            if remove_live_hooks(&dot_git.join("hooks")) {
                undone.push("removed the hooks of the new repository");
            }
            let config = dot_git.join("config");
            let text = if real_file(&config) {
                std::fs::read_to_string(&config)
                    .unwrap_or_default()
                    .to_lowercase()
            } else {
                String::new()
            };
            if config.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
                if remove_any(&config) {
                    undone.push("removed the new repository's config link");
                }
            } else if CODE_KEYS.iter().any(|k| text.contains(k))
                && std::fs::rename(&config, dot_git.join("config.refused-by-mino")).is_ok()
            {
                undone.push(
                    "set aside the new repository's config (it named a program to run) as \
                     .git/config.refused-by-mino",
                );
            }
        }
        said(&undone)
    }
}

/// The note for what was undone, if anything.
fn said(undone: &[&str]) -> Option<String> {
    if undone.is_empty() {
        return None;
    }
    Some(format!(
        "[Sandbox: git must not run code this command planted: mino {}.]",
        undone.join(", ")
    ))
}

fn real_dir(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.is_dir())
}

fn real_file(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.is_file())
}

/// git as mino runs it on the user's repository: none of the repository's
/// own programs (fsmonitor, hooks) run. Its output when it succeeded.
fn mino_git(project: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(project)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Marks the tracked ones of `masked` skip-worktree, those not already
/// marked; returns them (project-relative).
fn hide(project: &Path, masked: &[PathBuf]) -> Vec<String> {
    let real = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let relative: Vec<String> = masked
        .iter()
        .filter_map(|p| p.strip_prefix(&real).ok())
        .filter_map(|p| p.to_str().map(str::to_string))
        .collect();
    if relative.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["ls-files", "-t", "-z", "--"];
    args.extend(relative.iter().map(String::as_str));
    let Some(listed) = mino_git(project, &args) else {
        return Vec::new();
    };
    // `-t`: "H path" for a tracked file, "S path" when already skip-worktree.
    let tracked: Vec<String> = listed
        .split(|b| *b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .filter_map(|entry| entry.strip_prefix("H "))
        .map(str::to_string)
        .collect();
    if tracked.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["update-index", "--skip-worktree", "--"];
    args.extend(tracked.iter().map(String::as_str));
    match mino_git(project, &args) {
        Some(_) => tracked,
        None => Vec::new(),
    }
}

/// Removes every hook but git's inert `*.sample` files; whether any was.
fn remove_live_hooks(hooks: &Path) -> bool {
    if !real_dir(hooks) {
        return hooks.symlink_metadata().is_ok() && remove_any(hooks);
    }
    let Ok(entries) = std::fs::read_dir(hooks) else {
        return false;
    };
    let mut removed = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(".sample") {
            continue;
        }
        removed |= remove_any(&entry.path());
    }
    removed
}

/// Removes a file, link or directory tree (never following a link).
fn remove_any(path: &Path) -> bool {
    match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path).is_ok(),
        Ok(_) => std::fs::remove_file(path).is_ok(),
        Err(_) => false,
    }
}

/// The names in a directory, none when it cannot be read.
fn entries(dir: &Path) -> Vec<std::ffi::OsString> {
    if !real_dir(dir) {
        return Vec::new();
    }
    std::fs::read_dir(dir)
        .map(|it| it.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

/// The git directories of submodules (`.git/modules/NAME`, nested ones
/// under `NAME/modules/`), to a bounded depth.
fn submodule_git_dirs(modules: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(modules.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            if path.join("HEAD").is_file() {
                found.push(path.clone());
                if depth < 4 {
                    stack.push((path.join("modules"), depth + 1));
                }
            } else if depth < 4 {
                // A submodule named with a slash: modules/a/b.
                stack.push((path, depth + 1));
            }
        }
    }
    found
}
