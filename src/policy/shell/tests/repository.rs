//! The repository's evidence (config, submodules, hooks) at level 5, and
//! which requests a judge may see.

use super::*;

#[test]
fn level_5_repository() {
    let rules = rules();
    let with = |config: Vec<(&str, &str)>, submodules, index_hook| Evidence {
        repository: Some(RepositoryEvidence::Read {
            config: config
                .into_iter()
                .map(|(scope, key)| ConfigEntry {
                    scope: scope.into(),
                    key: key.into(),
                    value: Some("/tmp/x".into()),
                })
                .collect(),
            submodules,
            index_hook,
        }),
        ..good(GIT)
    };
    let cmd = "/usr/bin/git status";
    let allowed = classify("bash", cmd, &rules, Some(&good(GIT)));
    assert_eq!(allowed.outcome, Outcome::AllowFinal);
    assert!(allowed.git, "an allowed git request runs hardened");
    assert!(!check("bash", "/usr/bin/ls").git);
    for (evidence, why) in [
        (
            with(vec![("local", "core.fsmonitor")], false, false),
            "core.fsmonitor",
        ),
        (
            with(vec![("local", "diff.x.textconv")], false, false),
            "diff.x.textconv",
        ),
        (
            with(vec![("worktree", "filter.lfs.process")], false, false),
            "filter",
        ),
        (
            with(vec![("local", "include.path")], false, false),
            "include.path",
        ),
        (with(Vec::new(), true, false), "submodule"),
        (with(Vec::new(), false, true), "post-index-change"),
        (
            Evidence {
                repository: Some(RepositoryEvidence::Unreadable {
                    why: "not a git repository".into(),
                }),
                ..good(GIT)
            },
            "not a git repository",
        ),
        (
            Evidence {
                repository: None,
                ..good(GIT)
            },
            "no evidence",
        ),
    ] {
        for command in [
            cmd,
            "/usr/bin/git diff",
            "/usr/bin/git log -p",
            "/usr/bin/git show",
        ] {
            let v = classify("bash", command, &rules, Some(&evidence));
            assert_eq!(v.code, Some(REPOSITORY), "{command} {why}");
            assert_eq!(v.outcome, Outcome::UnresolvedIneligible);
            assert!(v.reason.contains(why), "{}", v.reason);
        }
    }
    // The user's own configuration is theirs.
    let theirs = with(
        vec![("global", "diff.external"), ("command", "core.pager")],
        false,
        false,
    );
    assert_eq!(
        classify("bash", cmd, &rules, Some(&theirs)).outcome,
        Outcome::AllowFinal
    );
    // Identity first: a tampered git is never run to take more evidence.
    let mut tampered = good(GIT);
    tampered.file = FileEvidence::Regular {
        mode: 0o777,
        owner: 0,
        user: 1000,
        sha256: None,
    };
    assert!(!tampered.safe_to_run());
    assert_eq!(
        classify("bash", cmd, &rules, Some(&tampered)).code,
        Some(IDENTITY_MISMATCH)
    );
}

#[test]
fn eligible_for_a_judge() {
    let mut rules = rules();
    rules.trusted.retain(|t| t.path != GIT);
    rules.git = Some(GIT.into());
    let command = "/usr/bin/git log --oneline HEAD~3 -- src/a.rs";
    // Without evidence about the repository, no judge: the repository code.
    let v = classify("bash", command, &rules, None);
    assert_eq!(v.code, Some(REPOSITORY));
    let v = classify("bash", command, &rules, Some(&good(GIT)));
    assert!(v.git);
    assert_eq!(v.outcome, Outcome::UnresolvedEligible);
    assert_eq!(v.code, Some(JUDGE_UNAVAILABLE));
    let judge = v.judge.expect("a judge request");
    assert_eq!(judge.operation, "log");
    assert_eq!(judge.option_risk, OptionRisk::None);
    assert_eq!(
        judge.argument_kinds,
        vec![
            ArgumentKind::Option,
            ArgumentKind::Revision,
            ArgumentKind::Separator,
            ArgumentKind::Path
        ]
    );
    // Not closed, not simple, not the configured git: not eligible.
    for command in [
        "/usr/bin/git push",
        "/usr/bin/git log --output=x",
        "/usr/bin/git log && /usr/bin/ls",
        "git log",
        "/usr/local/bin/git log",
    ] {
        let v = classify("bash", command, &rules, Some(&good(GIT)));
        assert_ne!(v.outcome, Outcome::UnresolvedEligible, "{command}");
        assert!(v.judge.is_none());
    }
}
