//! Saved rules in the decision: what each matcher covers, and where a rule
//! can and cannot change the mode's answer.

use std::sync::Arc;

use super::*;
use crate::policy::{
    CanAsk, Decision, DenyCode, Mode, ProtectedPaths, RunConsent, SessionConsent, Shown, ToolKey,
    decide,
};

fn command_rule(number: usize, words: &[&str], decision: RuleDecision) -> Rule {
    let words = words.iter().map(|w| w.to_string()).collect();
    Rule::new(number, "bash", Matcher::Command(words), decision, None).unwrap()
}

fn bash(command: &str) -> CallFacts {
    let mut facts = CallFacts::new(ToolKey::new("bash"), CallKind::Shell);
    facts.command = Some(command.to_string());
    facts
}

fn run(rules: Vec<Rule>, facts: &CallFacts, mode: Mode) -> Decision {
    decide(
        facts,
        mode,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::with_rules(Arc::new(SavedRules::new(rules))),
        CanAsk::Yes,
    )
}

fn by_rule(label: &str) -> Decision {
    Decision::Allow {
        shown: Shown::ByRule(label.to_string()),
    }
}

#[test]
fn an_allow_rule_allows_its_command_and_nothing_that_hides_behind_it() {
    let rules = || vec![command_rule(1, &["cargo", "test"], RuleDecision::Allow)];
    assert_eq!(
        run(rules(), &bash("cargo test -p x"), Mode::Manual),
        by_rule("rule 1 (cargo test)")
    );
    for command in [
        "cargo test; rm -rf x",
        "cargo test && curl x | sh",
        "cargo test $(id)",
        "cargo testx",
        "/tmp/cargo test",
        "cargo test > /dev/null",
        "cargo test &",
        "X=1 cargo test",
        "cargo",
    ] {
        assert_eq!(
            run(rules(), &bash(command), Mode::Manual),
            Decision::Ask,
            "{command}"
        );
    }
}

#[test]
fn a_list_is_allowed_when_each_command_is() {
    let rules = || {
        vec![
            command_rule(1, &["cargo", "fmt"], RuleDecision::Allow),
            command_rule(2, &["cargo", "test"], RuleDecision::Allow),
        ]
    };
    let both = bash("cargo fmt && cargo test");
    assert_eq!(
        run(rules(), &both, Mode::Manual),
        by_rule("rules 1, 2 (cargo fmt; cargo test)")
    );
    let mixed = bash("cargo fmt && cargo test && cargo publish");
    assert_eq!(run(rules(), &mixed, Mode::Manual), Decision::Ask);
    let one = vec![command_rule(2, &["cargo", "test"], RuleDecision::Allow)];
    assert_eq!(run(one, &both, Mode::Manual), Decision::Ask);
}

#[test]
fn a_deny_rule_holds_in_bypass_and_wherever_its_words_start_a_command() {
    let rules = || vec![command_rule(4, &["git", "push"], RuleDecision::Deny)];
    for command in [
        "git push",
        "echo $(git push --force)",
        "ls && env git push",
        "git push 'x",
    ] {
        let decision = run(rules(), &bash(command), Mode::Bypass);
        assert!(
            matches!(&decision, Decision::Deny { code: DenyCode::Rule, reason } if reason.contains("rule 4 (git push)")),
            "{command}: {decision:?}"
        );
    }
    assert!(matches!(
        run(rules(), &bash("git status"), Mode::Bypass),
        Decision::Allow { .. }
    ));
}

#[test]
fn deny_comes_before_ask_before_allow() {
    let rules = vec![
        command_rule(1, &["cargo"], RuleDecision::Allow),
        command_rule(2, &["cargo", "publish"], RuleDecision::Ask),
        command_rule(3, &["cargo", "publish", "--no-verify"], RuleDecision::Deny),
    ];
    let ruling = SavedRules::new(rules.clone());
    assert_eq!(ruling.ruling(&bash("cargo build")).unwrap().number, 1);
    assert_eq!(ruling.ruling(&bash("cargo publish")).unwrap().number, 2);
    assert_eq!(
        ruling
            .ruling(&bash("cargo publish --no-verify"))
            .unwrap()
            .number,
        3
    );
    // An ask rule asks even in bypass.
    assert_eq!(
        run(rules, &bash("cargo publish"), Mode::Bypass),
        Decision::Ask
    );
}

#[test]
fn an_allow_rule_never_answers_what_asks_in_every_mode_nor_in_plan_mode() {
    let rules = || vec![command_rule(1, &["cargo", "test"], RuleDecision::Allow)];
    let mut unsandboxed = bash("cargo test");
    unsandboxed.kind = CallKind::UnsandboxedShell {
        run_in_bypass: false,
    };
    assert_eq!(run(rules(), &unsandboxed, Mode::Manual), Decision::Ask);
    let mut guarded = bash("cargo test");
    guarded.guard = Some("catastrophic".into());
    assert_eq!(run(rules(), &guarded, Mode::Bypass), Decision::Ask);
    assert!(matches!(
        run(rules(), &bash("cargo test"), Mode::Plan),
        Decision::Deny {
            code: DenyCode::PlanMode,
            ..
        }
    ));
    let mcp = Rule::new(1, "mcp_*", Matcher::Any, RuleDecision::Allow, None).unwrap();
    let asked = CallFacts::new(
        ToolKey::new("mcp_github_push"),
        CallKind::Mcp {
            server: "github".into(),
            trust_ask: true,
            claims: Default::default(),
        },
    );
    assert_eq!(
        run(vec![mcp.clone()], &asked, Mode::AcceptEdits),
        Decision::Ask
    );
    // A tool its server calls destructive asks whatever a rule allows, in
    // every mode but bypass; a plain one is allowed by the rule.
    let claimed = |destructive: bool| {
        CallFacts::new(
            ToolKey::new("mcp_github_push"),
            CallKind::Mcp {
                server: "github".into(),
                trust_ask: false,
                claims: crate::policy::ToolClaims {
                    destructive,
                    read_only: false,
                    trusted: true,
                },
            },
        )
    };
    for mode in [Mode::Manual, Mode::AcceptEdits, Mode::Auto] {
        assert_eq!(
            run(vec![mcp.clone()], &claimed(true), mode),
            Decision::Ask,
            "{mode}"
        );
        assert!(matches!(
            run(vec![mcp.clone()], &claimed(false), mode),
            Decision::Allow {
                shown: Shown::ByRule(_)
            }
        ));
    }
    assert!(matches!(
        run(vec![mcp], &claimed(true), Mode::Bypass),
        Decision::Allow {
            shown: Shown::ByMode(Mode::Bypass)
        }
    ));
}

fn write(relative: &str) -> CallFacts {
    CallFacts::new(ToolKey::new("write_file"), CallKind::FileWrite).with_target(
        PathTarget::Inside {
            relative: relative.into(),
            through_link: None,
            hard_linked: false,
        },
    )
}

#[test]
fn path_rules_match_globs_of_the_project_relative_path() {
    let allow = || {
        let m = Matcher::paths(vec!["docs/**".into()]).unwrap();
        vec![Rule::new(1, "*_file", m, RuleDecision::Allow, None).unwrap()]
    };
    assert!(matches!(
        run(allow(), &write("docs/a/b.md"), Mode::Manual),
        Decision::Allow { .. }
    ));
    assert_eq!(
        run(allow(), &write("src/docs/a.md"), Mode::Manual),
        Decision::Ask
    );
    // Allowing is exact about case; denying is not.
    assert_eq!(
        run(allow(), &write("Docs/a.md"), Mode::Manual),
        Decision::Ask
    );
    let m = Matcher::paths(vec!["secrets/*".into()]).unwrap();
    let deny = vec![Rule::new(1, "*", m, RuleDecision::Deny, None).unwrap()];
    assert!(matches!(
        run(deny, &write("SECRETS/x"), Mode::Bypass),
        Decision::Deny { .. }
    ));
    // A protected path is refused before any rule.
    let m = Matcher::paths(vec!["**".into()]).unwrap();
    let all = vec![Rule::new(1, "write_file", m, RuleDecision::Allow, None).unwrap()];
    assert!(matches!(
        run(all, &write(".env"), Mode::Manual),
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            ..
        }
    ));
}

fn fetch(scheme: &str, host: &str, path: &str) -> CallFacts {
    let mut facts = CallFacts::new(ToolKey::new("fetch_content"), CallKind::Fetch);
    facts.url = Some(Box::new(UrlParts {
        scheme: scheme.into(),
        host: host.into(),
        port: None,
        path: path.into(),
    }));
    facts
}

#[test]
fn url_rules_match_scheme_host_and_path_segments() {
    let rule = || {
        let url = UrlParts {
            scheme: "https".into(),
            host: "docs.rs".into(),
            port: None,
            path: "/serde".into(),
        };
        vec![
            Rule::new(
                1,
                "fetch_content",
                Matcher::Url(url),
                RuleDecision::Allow,
                None,
            )
            .unwrap(),
        ]
    };
    for (scheme, host, path, allowed) in [
        ("https", "docs.rs", "/serde", true),
        ("https", "docs.rs", "/serde/latest", true),
        ("https", "docs.rs", "/serde_json", false),
        ("https", "docs.rs", "/serde%2F..%2Fx", false),
        ("http", "docs.rs", "/serde", false),
        ("https", "docs.rs.evil.example", "/serde", false),
        ("https", "evil.example", "/serde", false),
    ] {
        let decision = run(rule(), &fetch(scheme, host, path), Mode::Manual);
        assert_eq!(
            matches!(decision, Decision::Allow { .. }),
            allowed,
            "{scheme}://{host}{path}"
        );
    }
    let mut private = fetch("https", "docs.rs", "/serde");
    private.kind = CallKind::FetchPrivate;
    assert_eq!(run(rule(), &private, Mode::Manual), Decision::Ask);
    let saving = fetch("https", "docs.rs", "/serde").with_target(PathTarget::Inside {
        relative: "out.html".into(),
        through_link: None,
        hard_linked: false,
    });
    assert_eq!(run(rule(), &saving, Mode::Manual), Decision::Ask);
}

#[test]
fn examples_are_read_as_the_matcher_reads_calls() {
    let rule = command_rule(1, &["cargo", "test"], RuleDecision::Allow);
    assert!(rule.covers_example(&Example::Command("cargo test -p x".into())));
    assert!(!rule.covers_example(&Example::Command("cargo test; rm x".into())));
    let deny = command_rule(2, &["rm"], RuleDecision::Deny);
    assert!(deny.covers_example(&Example::Command("ls; rm x".into())));
}
