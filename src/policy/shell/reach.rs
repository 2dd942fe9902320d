//! The bypass guard's reach beyond the dangerous table, where a command
//! may change what no checkpoint restores without saying so in its words:
//! a `git` whose subcommand may be an alias (for `push`), a push under
//! `-c`, `--config-env`, `--exec-path` or `GIT_*` variables, and the parts
//! of a command the guard cannot read completely that may reach `git
//! push`, `rm`, `dd`, `mkfs*`, a recursive `chmod`/`chown` or a device. It
//! only says whether the guard must hear about the command, and why; the
//! gate's outcome and code stay what the precise reading found.

use super::Shell;
use super::crude;
use super::danger::{self, call_starts, git_subcommand, program_name};
use super::opaque::Opaque;
use super::read::Read;

/// git's own commands (`git --list-cmds=main,nohelpers`): an alias can
/// never shadow one, so any other subcommand word may be an alias.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// git commands that run a command line they are given (`submodule
/// foreach`, `rebase --exec`, `bisect run`, `for-each-repo`, ...).
const GIT_RUNNERS: &[&str] = &[
    "submodule",
    "rebase",
    "bisect",
    "for-each-repo",
    "difftool",
    "mergetool",
    "filter-branch",
    "worktree",
];

/// Why the guard must hear about the command beyond the dangerous table.
pub(super) fn reach(shell: Shell, read: &Read) -> Option<String> {
    let dialect = shell.dialect();
    let git_env = read
        .commands
        .iter()
        .flatten()
        .find(|w| {
            let w = w.strip_prefix("$env:").unwrap_or(w);
            w.contains('=') && w.to_ascii_uppercase().starts_with("GIT_")
        })
        .cloned();
    for words in &read.commands {
        for from in call_starts(words, dialect) {
            let call = &words[from..];
            if program_name(&call[0]) == "git"
                && let Some(why) = git(&call[1..], git_env.as_deref())
            {
                return Some(why);
            }
        }
    }
    read.opaque.iter().find_map(opaque)
}

/// A git call that may reach a push the words do not show.
fn git(args: &[String], git_env: Option<&str>) -> Option<String> {
    let (globals, sub) = git_subcommand(args);
    let (sub, rest) = sub?;
    let configured = globals.iter().find(|g| {
        matches!(**g, "-c" | "--config-env")
            || g.starts_with("--config-env=")
            || g.starts_with("--exec-path=")
            || (g.starts_with("-c") && !g.starts_with("--"))
    });
    if sub.is_empty() || sub.contains(['$', '`']) {
        return Some(format!(
            "git's subcommand {sub:?} is expanded by the shell; it may be push"
        ));
    }
    if !GIT_COMMANDS.contains(&sub) {
        return Some(format!(
            "git {sub} is not one of git's commands: it may be an alias, perhaps for push"
        ));
    }
    let pushes = matches!(sub, "push" | "send-pack" | "http-push");
    if pushes && let Some(g) = configured {
        return Some(format!(
            "git {g} ... {sub}: the configuration given may make the push force, delete or mirror"
        ));
    }
    if pushes && let Some(env) = git_env {
        return Some(format!(
            "git {sub} with {env}: git's environment may make the push force, delete or mirror"
        ));
    }
    if GIT_RUNNERS.contains(&sub) && rest.iter().any(|a| a.to_ascii_lowercase().contains("push")) {
        return Some(format!("git {sub} runs a command that may push"));
    }
    None
}

fn opaque(part: &Opaque) -> Option<String> {
    if let Some(program) = &part.unknown_program {
        return Some(format!(
            "the command word {program:?} is not a literal: it may run anything"
        ));
    }
    dangerous_word(&crude::words(&part.text))
        .map(|why| format!("{} cannot be read completely, and {why}", part.why))
}

/// The first word of `words` that may destroy what no checkpoint restores,
/// as the opaque part reads: any of the programs, wherever it stands.
fn dangerous_word(words: &[String]) -> Option<String> {
    let names: Vec<String> = words.iter().map(|w| program_name(w)).collect();
    let mentions_push = words
        .iter()
        .any(|w| w.to_ascii_lowercase().contains("push") || w.contains("send-pack"));
    let recursive = words.iter().any(|w| {
        danger::short_cluster_has(w, 'R')
            || (w.len() >= 3 && w.starts_with("--") && "--recursive".starts_with(w.as_str()))
    });
    for (word, name) in words.iter().zip(&names) {
        let hit = match name.as_str() {
            "rm" | "rmdir" | "dd" | "mke2fs" | "shred" | "wipefs" | "truncate" => true,
            "chmod" | "chown" | "chgrp" => recursive,
            "git" => mentions_push,
            n => n.starts_with("mkfs"),
        };
        if hit {
            return Some(format!("it may reach {word}"));
        }
        if word.strip_prefix("of=").is_some_and(danger::device) || danger::device(word) {
            return Some(format!("it may write to the device {word}"));
        }
    }
    None
}
