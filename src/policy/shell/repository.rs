//! What a git request's repository may hold for the gate to let it run,
//! and the environment an allowed git request runs with. Git reads the
//! repository's own configuration, attributes, index and hooks: a hostile
//! repository can name a program there (`core.fsmonitor`, `diff.external`,
//! a textconv, clean or process filter, `gpg.program`, a pager, an include,
//! a submodule with configuration of its own, a `post-index-change` hook)
//! and a read-only `git status` runs it. So the repository's own
//! configuration (local, worktree, and every file those include) may set
//! only keys known to be inert, its index may hold no submodule and its
//! hooks no `post-index-change`; and the request runs with overrides that
//! turn the single program-running keys off. Pure: the caller asks the
//! trusted git itself what it reads here and hands that in as facts.

/// One configuration entry as `git config --list --show-scope` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// `system`, `global`, `local`, `worktree`, `command`.
    pub scope: String,
    /// The key as git lists it (section and name lowercase).
    pub key: String,
    pub value: Option<String>,
}

/// What the caller found about the repository a git request runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepositoryEvidence {
    Read {
        config: Vec<ConfigEntry>,
        /// The index records a submodule (a gitlink): git status and diff
        /// run git inside it, with that repository's configuration.
        submodules: bool,
        /// The hooks directory holds `post-index-change`, which a status
        /// or diff that refreshes the index runs.
        index_hook: bool,
    },
    /// Git could not say (not a repository, a timeout, too much output).
    Unreadable { why: String },
}

/// The scopes the user controls: their own files and mino's environment.
const USER_SCOPES: &[&str] = &["system", "global", "command"];

/// Keys a repository's own configuration may set: none of them makes
/// git run a program, read a file outside the repository, or reach the
/// network in status, diff, log or show. `*` stands for one subsection.
const INERT_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.quotepath",
    "core.abbrev",
    "core.checkstat",
    "core.trustctime",
    "core.untrackedcache",
    "core.splitindex",
    "core.commitgraph",
    "core.multipackindex",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.protecthfs",
    "core.protectntfs",
    "core.preloadindex",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.prune",
    "branch.*.remote",
    "branch.*.pushremote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.description",
    "user.name",
    "user.email",
    "init.defaultbranch",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "submodule.*.url",
    "submodule.*.active",
    "lfs.repositoryformatversion",
    "color.ui",
    "diff.renames",
    "diff.algorithm",
    "status.showuntrackedfiles",
    "log.date",
    "log.decorate",
    "merge.conflictstyle",
    "rerere.enabled",
    "commit.gpgsign",
    "tag.gpgsign",
    "gc.auto",
];

fn inert(entry: &ConfigEntry) -> bool {
    let key = entry.key.to_ascii_lowercase();
    if key == "core.fsmonitor" {
        return entry
            .value
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case("false"));
    }
    INERT_KEYS.iter().any(|pattern| matches_key(pattern, &key))
}

/// `remote.*.url` matches `remote.origin.url` and `remote.a.b.url`.
fn matches_key(pattern: &str, key: &str) -> bool {
    match pattern.split_once(".*.") {
        Some((section, name)) => key
            .strip_prefix(section)
            .and_then(|k| k.strip_prefix('.'))
            .and_then(|k| k.strip_suffix(name))
            .and_then(|k| k.strip_suffix('.'))
            .is_some_and(|sub| !sub.is_empty()),
        None => key == pattern,
    }
}

/// Why the repository keeps a git request from being allowed, if it does.
pub fn refusal(evidence: Option<&RepositoryEvidence>) -> Option<String> {
    let Some(evidence) = evidence else {
        return Some("no evidence was taken about the repository".into());
    };
    let (config, submodules, index_hook) = match evidence {
        RepositoryEvidence::Unreadable { why } => {
            return Some(format!("git could not say what it reads here: {why}"));
        }
        RepositoryEvidence::Read {
            config,
            submodules,
            index_hook,
        } => (config, *submodules, *index_hook),
    };
    let foreign: Vec<&str> = config
        .iter()
        .filter(|e| !USER_SCOPES.contains(&e.scope.as_str()) && !inert(e))
        .map(|e| e.key.as_str())
        .collect();
    if let Some(first) = foreign.first() {
        return Some(format!(
            "the repository's own configuration sets {first}{}, which is not known to be inert (it may make git run a program)",
            match foreign.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        ));
    }
    if submodules {
        return Some(
            "the repository has a submodule, whose own configuration git would read".into(),
        );
    }
    if index_hook {
        return Some(
            "the repository's hooks include post-index-change, which git status and diff run"
                .into(),
        );
    }
    None
}

/// Configuration an allowed git request runs with (as `GIT_CONFIG_COUNT`
/// entries, which outrank every file): the single keys that make status,
/// diff, log or show run a program, turned off.
pub const GIT_CONFIG_OVERRIDES: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
    ("protocol.allow", "never"),
];

/// Environment an allowed git request runs with: no index write, no
/// pager, no lazy fetch, no prompt.
pub const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_PAGER", "cat"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(scope: &str, key: &str, value: &str) -> ConfigEntry {
        ConfigEntry {
            scope: scope.into(),
            key: key.into(),
            value: Some(value.into()),
        }
    }

    fn read(config: Vec<ConfigEntry>) -> RepositoryEvidence {
        RepositoryEvidence::Read {
            config,
            submodules: false,
            index_hook: false,
        }
    }

    #[test]
    fn a_cloned_repository_is_inert() {
        let config = vec![
            entry("global", "diff.x.textconv", "mine"),
            entry("command", "core.pager", "cat"),
            entry("local", "core.repositoryformatversion", "0"),
            entry("local", "core.bare", "false"),
            entry("local", "remote.origin.url", "https://e.example/r.git"),
            entry(
                "local",
                "remote.origin.fetch",
                "+refs/heads/*:refs/remotes/origin/*",
            ),
            entry("local", "branch.main.remote", "origin"),
            entry("local", "branch.feature/x.merge", "refs/heads/feature/x"),
            entry("local", "core.fsmonitor", "false"),
        ];
        assert_eq!(refusal(Some(&read(config))), None);
    }

    #[test]
    fn program_running_and_unknown_keys_refuse() {
        for (scope, key) in [
            ("local", "core.fsmonitor"),
            ("local", "diff.external"),
            ("local", "diff.x.textconv"),
            ("local", "diff.x.command"),
            ("local", "filter.x.clean"),
            ("local", "filter.x.process"),
            ("local", "core.pager"),
            ("local", "pager.status"),
            ("local", "gpg.program"),
            ("local", "log.showsignature"),
            ("local", "include.path"),
            ("local", "includeif.gitdir:/x/.path"),
            ("local", "core.worktree"),
            ("local", "core.sshcommand"),
            ("local", "extensions.partialclone"),
            ("local", "remote.origin.promisor"),
            ("local", "remote..url"),
            ("worktree", "core.fsmonitor"),
            ("includes", "core.pager"),
            ("local", "some.future.key"),
        ] {
            let config = vec![entry(scope, key, "/tmp/x")];
            assert!(refusal(Some(&read(config))).is_some(), "{scope} {key}");
        }
    }

    #[test]
    fn submodules_hooks_and_no_evidence_refuse() {
        let with = |submodules, index_hook| RepositoryEvidence::Read {
            config: Vec::new(),
            submodules,
            index_hook,
        };
        assert!(refusal(Some(&with(true, false))).is_some());
        assert!(refusal(Some(&with(false, true))).is_some());
        assert!(refusal(Some(&with(false, false))).is_none());
        assert!(refusal(None).is_some());
        let unreadable = RepositoryEvidence::Unreadable { why: "x".into() };
        assert!(refusal(Some(&unreadable)).is_some());
    }
}
