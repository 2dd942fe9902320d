//! The decision table of DESIGN section 3, row by row for every mode and kind
//! of call, and the order of section 2 step 4.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mino::policy::{
    CallFacts, CallKind, CanAsk, ConsentAnswer, Decision, DenyCode, GateVerdict, HookVerdict, Mode,
    PathTarget, ProtectedPaths, RunConsent, SessionConsent, Shown, ToolClaims, ToolKey, decide,
    remember,
};

fn inside(relative: &str) -> PathTarget {
    PathTarget::Inside {
        relative: relative.to_string(),
        through_link: None,
        hard_linked: false,
    }
}

fn call(tool: &str, kind: CallKind) -> CallFacts {
    CallFacts::new(ToolKey::new(tool), kind)
}

fn read() -> CallFacts {
    call("read_file", CallKind::ConfinedRead).with_target(inside("notes.md"))
}
fn edit() -> CallFacts {
    call("edit_file", CallKind::FileWrite).with_target(inside("notes.md"))
}
fn bash() -> CallFacts {
    call("bash", CallKind::Shell)
}
fn unsandboxed(run_in_bypass: bool) -> CallFacts {
    call("bash", CallKind::UnsandboxedShell { run_in_bypass })
}
fn fetch() -> CallFacts {
    call("fetch_content", CallKind::Fetch)
}
fn mcp(trust_ask: bool) -> CallFacts {
    call(
        "mcp_files_write",
        CallKind::Mcp {
            server: "files".into(),
            trust_ask,
            claims: Default::default(),
        },
    )
}

/// An MCP call whose server claimed `destructive` and `read_only` about the
/// tool; `trusted` when the user's settings trust its annotations.
fn claimed(trust_ask: bool, destructive: bool, read_only: bool, trusted: bool) -> CallFacts {
    call(
        "mcp_files_write",
        CallKind::Mcp {
            server: "files".into(),
            trust_ask,
            claims: ToolClaims {
                destructive,
                read_only,
                trusted,
            },
        },
    )
}

fn plain(facts: &CallFacts, mode: Mode) -> Decision {
    decide(
        facts,
        mode,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::Yes,
    )
}

/// What one cell of the table says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    Runs,
    Shown,
    Asks,
    Denied,
}

fn cell(decision: &Decision) -> Cell {
    match decision {
        Decision::Allow {
            shown: Shown::Quietly,
        } => Cell::Runs,
        Decision::Allow { .. } => Cell::Shown,
        Decision::Ask => Cell::Asks,
        Decision::Deny { .. } => Cell::Denied,
    }
}

#[test]
fn the_mode_table_row_by_row() {
    use Cell::*;
    let protected =
        call("write_file", CallKind::FileWrite).with_target(inside("config/.env.local"));
    let rows: Vec<(&str, CallFacts, [Cell; 5])> = vec![
        ("confined read", read(), [Runs, Runs, Runs, Runs, Runs]),
        (
            "skill_view",
            call("skill_view", CallKind::ConfinedRead)
                .with_target(inside(".mino/skills/x/SKILL.md")),
            [Runs, Runs, Runs, Runs, Runs],
        ),
        ("edit_file", edit(), [Denied, Asks, Shown, Shown, Shown]),
        (
            "write_file",
            call("write_file", CallKind::FileWrite).with_target(inside("new.txt")),
            [Denied, Asks, Shown, Shown, Shown],
        ),
        ("bash", bash(), [Denied, Asks, Asks, Asks, Shown]),
        (
            "bash_output (a background process's output)",
            call("bash_output", CallKind::ConfinedRead),
            [Runs, Runs, Runs, Runs, Runs],
        ),
        (
            "bash_kill",
            call("bash_kill", CallKind::ShellKill),
            [Denied, Asks, Shown, Shown, Shown],
        ),
        (
            "bash sandbox: false",
            unsandboxed(false),
            [Denied, Asks, Asks, Asks, Asks],
        ),
        (
            "bash sandbox: false, unsandboxed_in_bypass = run",
            unsandboxed(true),
            [Denied, Asks, Asks, Asks, Shown],
        ),
        ("fetch_content", fetch(), [Asks, Asks, Asks, Asks, Shown]),
        (
            "fetch_content to a private address",
            call("fetch_content", CallKind::FetchPrivate),
            [Asks, Asks, Asks, Asks, Asks],
        ),
        (
            "fetch_content with output",
            call("fetch_content", CallKind::FileWrite).with_target(inside("page.html")),
            [Denied, Asks, Shown, Shown, Shown],
        ),
        (
            "write to an execution surface",
            call(
                "write_file",
                CallKind::SurfaceWrite {
                    why: "a git hook".into(),
                },
            )
            .with_target(inside("Makefile")),
            [Denied, Asks, Asks, Asks, Asks],
        ),
        ("mcp tool", mcp(false), [Denied, Asks, Asks, Asks, Shown]),
        (
            "mcp server marked ask",
            mcp(true),
            [Denied, Asks, Asks, Asks, Asks],
        ),
        (
            "mcp tool its server calls destructive",
            claimed(false, true, false, false),
            [Denied, Asks, Asks, Asks, Shown],
        ),
        (
            "mcp tool its server calls read-only, annotations not trusted",
            claimed(false, false, true, false),
            [Denied, Asks, Asks, Asks, Shown],
        ),
        (
            "mcp tool its server calls read-only, annotations trusted",
            claimed(false, false, true, true),
            [Asks, Asks, Shown, Shown, Shown],
        ),
        (
            "mcp tool claimed read-only and destructive, annotations trusted",
            claimed(false, true, true, true),
            [Denied, Asks, Asks, Asks, Shown],
        ),
        (
            "mcp server marked ask, read-only claimed and trusted",
            claimed(true, false, true, true),
            [Denied, Asks, Asks, Asks, Asks],
        ),
        (
            "protected path",
            protected,
            [Denied, Denied, Denied, Denied, Denied],
        ),
    ];
    for (name, facts, expected) in rows {
        for (mode, want) in Mode::ALL.into_iter().zip(expected) {
            assert_eq!(cell(&plain(&facts, mode)), want, "{name} in {mode}");
        }
    }
}

#[test]
fn shown_calls_name_the_mode_that_let_them_through() {
    assert_eq!(
        plain(&edit(), Mode::AcceptEdits),
        Decision::Allow {
            shown: Shown::ByMode(Mode::AcceptEdits)
        }
    );
    assert_eq!(
        plain(&bash(), Mode::Bypass),
        Decision::Allow {
            shown: Shown::ByMode(Mode::Bypass)
        }
    );
}

#[test]
fn protected_path_reason_is_the_seed_text() {
    let facts = call("read_file", CallKind::ConfinedRead).with_target(inside(".env"));
    assert_eq!(
        plain(&facts, Mode::Bypass),
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            reason: "Blocked by policy: .env is a protected path; file tools never read or write it. Do not retry or work around this with another tool.".into()
        }
    );
}

#[test]
fn protected_path_beats_hook_session_allow_and_bypass() {
    let mut facts = call("write_file", CallKind::FileWrite).with_target(inside(".git/config"));
    facts.hook = Some(HookVerdict::Continue);
    let mut session = SessionConsent::default();
    session.allow(ToolKey::new("write_file"));
    for mode in Mode::ALL {
        let decision = decide(
            &facts,
            mode,
            &ProtectedPaths::builtin(),
            &session,
            &RunConsent::default(),
            CanAsk::Yes,
        );
        assert!(
            matches!(
                decision,
                Decision::Deny {
                    code: DenyCode::ProtectedPath,
                    ..
                }
            ),
            "{mode}: {decision:?}"
        );
    }
}

#[test]
fn protected_is_checked_before_links_and_escapes() {
    let facts = call("read_file", CallKind::ConfinedRead).with_target(PathTarget::Inside {
        relative: ".env".into(),
        through_link: Some(".env".into()),
        hard_linked: true,
    });
    assert!(matches!(
        plain(&facts, Mode::Manual),
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            ..
        }
    ));
    // A protected second target is still found before an escaping first one.
    let facts = call("fetch_content", CallKind::FileWrite)
        .with_target(PathTarget::Outside {
            given: "/etc/passwd".into(),
        })
        .with_target(inside(".ssh/config"));
    assert!(matches!(
        plain(&facts, Mode::Bypass),
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            ..
        }
    ));
}

#[test]
fn links_escapes_and_hard_links_are_denied_in_every_mode() {
    let cases = [
        (
            PathTarget::Inside {
                relative: "docs/config".into(),
                through_link: Some("docs".into()),
                hard_linked: false,
            },
            DenyCode::SymbolicLink,
        ),
        (
            PathTarget::Outside {
                given: "../x".into(),
            },
            DenyCode::OutsideProject,
        ),
        (
            PathTarget::Inside {
                relative: "innocent.txt".into(),
                through_link: None,
                hard_linked: true,
            },
            DenyCode::HardLink,
        ),
    ];
    for (target, code) in cases {
        for kind in [CallKind::ConfinedRead, CallKind::FileWrite] {
            let facts = call("read_file", kind.clone()).with_target(target.clone());
            for mode in Mode::ALL {
                match plain(&facts, mode) {
                    Decision::Deny { code: got, reason } => {
                        assert_eq!(got, code);
                        assert!(reason.starts_with("Blocked by policy: "));
                        assert!(
                            reason.ends_with("Do not retry or work around this with another tool.")
                        );
                    }
                    other => panic!("{target:?} in {mode}: {other:?}"),
                }
            }
        }
    }
}

#[test]
fn hook_denial_ends_it_before_the_user_is_asked() {
    let mut facts = bash();
    facts.hook = Some(HookVerdict::Deny {
        reason: "no network".into(),
    });
    for mode in Mode::ALL {
        match plain(&facts, mode) {
            Decision::Deny { code, reason } => {
                assert_eq!(code, DenyCode::Hook);
                assert!(reason.contains("no network"));
            }
            other => panic!("{mode}: {other:?}"),
        }
    }
    facts.hook = Some(HookVerdict::Continue);
    assert_eq!(plain(&facts, Mode::Manual), Decision::Ask);
}

#[test]
fn never_beats_every_mode_and_every_session_allow() {
    let mut session = SessionConsent::default();
    let mut run = RunConsent::default();
    let key = ToolKey::new("bash");
    remember(ConsentAnswer::AllowForSession, &key, &mut session, &mut run);
    remember(ConsentAnswer::NeverThisRun, &key, &mut session, &mut run);
    for mode in Mode::ALL {
        let decision = decide(
            &bash(),
            mode,
            &ProtectedPaths::builtin(),
            &session,
            &run,
            CanAsk::Yes,
        );
        assert!(
            matches!(
                decision,
                Decision::Deny {
                    code: DenyCode::Never,
                    ..
                }
            ),
            "{mode}"
        );
    }
    // "never" for bash says nothing about other tools, or about jan's bash.
    let jan = call("jan/bash", CallKind::Shell);
    assert_eq!(
        decide(
            &jan,
            Mode::Manual,
            &ProtectedPaths::builtin(),
            &session,
            &run,
            CanAsk::Yes
        ),
        Decision::Ask
    );
}

#[test]
fn allow_for_session_turns_an_ask_into_a_shown_allow() {
    let mut session = SessionConsent::default();
    let mut run = RunConsent::default();
    remember(
        ConsentAnswer::AllowForSession,
        &ToolKey::new("bash"),
        &mut session,
        &mut run,
    );
    let decision = decide(
        &bash(),
        Mode::Manual,
        &ProtectedPaths::builtin(),
        &session,
        &run,
        CanAsk::No,
    );
    assert_eq!(
        decision,
        Decision::Allow {
            shown: Shown::ForSession
        }
    );
    // Once and reject remember nothing.
    let mut session = SessionConsent::default();
    for answer in [ConsentAnswer::AllowOnce, ConsentAnswer::Reject] {
        remember(answer, &ToolKey::new("bash"), &mut session, &mut run);
    }
    assert_eq!(
        decide(
            &bash(),
            Mode::Manual,
            &ProtectedPaths::builtin(),
            &session,
            &run,
            CanAsk::Yes
        ),
        Decision::Ask
    );
    // An MCP server marked ask is still asked in bypass, but a session allow
    // for its tool is the user's own answer.
    let mut session = SessionConsent::default();
    session.allow(ToolKey::new("mcp_files_write"));
    assert_eq!(
        decide(
            &mcp(true),
            Mode::Bypass,
            &ProtectedPaths::builtin(),
            &session,
            &run,
            CanAsk::Yes
        ),
        Decision::Allow {
            shown: Shown::ForSession
        }
    );
}

#[test]
fn where_nobody_can_ask_an_ask_is_denied() {
    for facts in [edit(), bash(), fetch(), mcp(false), mcp(true)] {
        let decision = decide(
            &facts,
            Mode::Manual,
            &ProtectedPaths::builtin(),
            &SessionConsent::default(),
            &RunConsent::default(),
            CanAsk::No,
        );
        assert!(
            matches!(
                decision,
                Decision::Deny {
                    code: DenyCode::NobodyToAsk,
                    ..
                }
            ),
            "{facts:?}"
        );
    }
    // Allowed calls are unaffected.
    assert_eq!(
        decide(
            &read(),
            Mode::Manual,
            &ProtectedPaths::builtin(),
            &SessionConsent::default(),
            &RunConsent::default(),
            CanAsk::No
        ),
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
}

#[test]
fn auto_mode_has_the_shell_gate_slot() {
    let mut facts = bash();
    facts.gate = Some(GateVerdict::AllowFinal);
    assert_eq!(
        plain(&facts, Mode::Auto),
        Decision::Allow {
            shown: Shown::ByMode(Mode::Auto)
        }
    );
    // The gate only speaks in auto mode.
    assert_eq!(plain(&facts, Mode::Manual), Decision::Ask);
    assert_eq!(plain(&facts, Mode::AcceptEdits), Decision::Ask);

    facts.gate = Some(GateVerdict::DenyFinal {
        code: "AMG_DENY_DANGEROUS",
        reason: "rm is a dangerous command.".into(),
    });
    assert!(matches!(
        plain(&facts, Mode::Auto),
        Decision::Deny {
            code: DenyCode::Gate("AMG_DENY_DANGEROUS"),
            ..
        }
    ));

    facts.gate = Some(GateVerdict::Unresolved {
        code: "AMG_DENY_AMBIGUOUS",
        reason: "the command is ambiguous.".into(),
    });
    assert_eq!(plain(&facts, Mode::Auto), Decision::Ask);
    let nobody = decide(
        &facts,
        Mode::Auto,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::No,
    );
    assert!(matches!(
        nobody,
        Decision::Deny {
            code: DenyCode::Gate("AMG_DENY_AMBIGUOUS"),
            ..
        }
    ));
}

fn mcp_with(trust_ask: bool, strings: &[&str]) -> CallFacts {
    let mut facts = mcp(trust_ask);
    facts.argument_strings = strings.iter().map(|s| s.to_string()).collect();
    facts
}

#[test]
fn an_mcp_argument_naming_a_protected_file_is_denied_in_every_mode() {
    let mut session = SessionConsent::default();
    session.allow(ToolKey::new("mcp_files_write"));
    for strings in [
        &["/home/u/proj/.env"][..],
        &["notes.md", "/home/u/.ssh/id_ed25519"],
        &["file:///home/u/proj/.git/config"],
    ] {
        for trust_ask in [false, true] {
            let mut facts = mcp_with(trust_ask, strings);
            facts.hook = Some(HookVerdict::Continue);
            for mode in Mode::ALL {
                for can_ask in [CanAsk::Yes, CanAsk::No] {
                    let decision = decide(
                        &facts,
                        mode,
                        &ProtectedPaths::builtin(),
                        &session,
                        &RunConsent::default(),
                        can_ask,
                    );
                    match &decision {
                        Decision::Deny { code, reason } => {
                            assert_eq!(*code, DenyCode::ProtectedArgument);
                            assert_eq!(code.as_str(), "MINO_DENY_PROTECTED_ARGUMENT");
                            assert!(reason.ends_with(mino::policy::DO_NOT_RETRY), "{reason}");
                        }
                        other => panic!("{strings:?} in {mode}: {other:?}"),
                    }
                }
            }
        }
    }
    // Plain strings leave the row of the table as it is.
    let facts = mcp_with(false, &["/home/u/proj/notes.md", "hello"]);
    assert_eq!(cell(&plain(&facts, Mode::Manual)), Cell::Asks);
    assert_eq!(cell(&plain(&facts, Mode::Bypass)), Cell::Shown);
}

#[test]
fn mcp_rows_where_nobody_can_ask_and_with_session_memory() {
    let nobody = |facts: &CallFacts, mode: Mode, session: &SessionConsent| {
        decide(
            facts,
            mode,
            &ProtectedPaths::builtin(),
            session,
            &RunConsent::default(),
            CanAsk::No,
        )
    };
    let empty = SessionConsent::default();
    for mode in [Mode::Manual, Mode::AcceptEdits, Mode::Auto] {
        assert!(matches!(
            nobody(&mcp(false), mode, &empty),
            Decision::Deny {
                code: DenyCode::NobodyToAsk,
                ..
            }
        ));
    }
    assert_eq!(
        cell(&nobody(&mcp(false), Mode::Bypass, &empty)),
        Cell::Shown
    );
    // A server marked ask is refused in bypass too where nobody can answer.
    assert!(matches!(
        nobody(&mcp(true), Mode::Bypass, &empty),
        Decision::Deny {
            code: DenyCode::NobodyToAsk,
            ..
        }
    ));
    // "Allow for session" is remembered per tool name.
    let mut session = SessionConsent::default();
    session.allow(ToolKey::new("mcp_files_write"));
    assert_eq!(
        nobody(&mcp(true), Mode::Manual, &session),
        Decision::Allow {
            shown: Shown::ForSession
        }
    );
    let other = call(
        "mcp_files_read",
        CallKind::Mcp {
            server: "files".into(),
            trust_ask: false,
            claims: Default::default(),
        },
    );
    assert_eq!(cell(&plain(&other, Mode::Manual)), Cell::Asks);
}

/// A server marked `trust = "ask"`, every mode against every memory and
/// both front ends. Settled from DESIGN section 2 step 4 (the session's
/// "allow for session" turns any `Ask` of step 5 into a shown allow, step 6)
/// and section 10 ("the mode decides whether a call asks; the answers decide
/// what a question remembers"): the marking makes every mode ask, bypass
/// included (seed 003, "Rejected alternatives"), and the user's own answer
/// to that question, given for that one tool name in that one session, is
/// honoured; "never" holds in every mode. Another tool of the same server,
/// and the same tool in another session, ask again.
#[test]
fn a_server_marked_ask_row_by_row_with_session_memory() {
    #[derive(Debug, Clone, Copy)]
    enum Memory {
        Nothing,
        AllowedForSession,
        OtherToolAllowed,
        Never,
    }
    let modes = [Mode::Manual, Mode::AcceptEdits, Mode::Auto, Mode::Bypass];
    let rows = [
        (Memory::Nothing, CanAsk::Yes, Cell::Asks),
        (Memory::Nothing, CanAsk::No, Cell::Denied),
        (Memory::AllowedForSession, CanAsk::Yes, Cell::Shown),
        (Memory::AllowedForSession, CanAsk::No, Cell::Shown),
        (Memory::OtherToolAllowed, CanAsk::Yes, Cell::Asks),
        (Memory::OtherToolAllowed, CanAsk::No, Cell::Denied),
        (Memory::Never, CanAsk::Yes, Cell::Denied),
        (Memory::Never, CanAsk::No, Cell::Denied),
    ];
    for mode in modes {
        for (memory, can_ask, expected) in rows {
            let mut session = SessionConsent::default();
            let mut run = RunConsent::default();
            match memory {
                Memory::Nothing => {}
                Memory::AllowedForSession => remember(
                    ConsentAnswer::AllowForSession,
                    &ToolKey::new("mcp_files_write"),
                    &mut session,
                    &mut run,
                ),
                Memory::OtherToolAllowed => remember(
                    ConsentAnswer::AllowForSession,
                    &ToolKey::new("mcp_files_read"),
                    &mut session,
                    &mut run,
                ),
                Memory::Never => remember(
                    ConsentAnswer::NeverThisRun,
                    &ToolKey::new("mcp_files_write"),
                    &mut session,
                    &mut run,
                ),
            }
            let decision = decide(
                &mcp(true),
                mode,
                &ProtectedPaths::builtin(),
                &session,
                &run,
                can_ask,
            );
            assert_eq!(
                cell(&decision),
                expected,
                "{mode:?} {memory:?} {can_ask:?}: {decision:?}"
            );
            match (memory, &decision) {
                (Memory::AllowedForSession, d) => assert_eq!(
                    d,
                    &Decision::Allow {
                        shown: Shown::ForSession
                    }
                ),
                (Memory::Never, Decision::Deny { code, .. }) => {
                    assert_eq!(*code, DenyCode::Never)
                }
                (_, Decision::Deny { code, .. }) => assert_eq!(*code, DenyCode::NobodyToAsk),
                _ => {}
            }
        }
        // A fresh session (after /new) asks again.
        assert_eq!(cell(&plain(&mcp(true), mode)), Cell::Asks);
    }
}

#[test]
fn leaving_the_sandbox_asks_despite_a_session_allow_and_is_denied_where_nobody_can_ask() {
    let mut session = SessionConsent::default();
    remember(
        ConsentAnswer::AllowForSession,
        &ToolKey::new("bash"),
        &mut session,
        &mut RunConsent::default(),
    );
    let protected = ProtectedPaths::builtin();
    let run = RunConsent::default();
    // Plan mode refuses both outright (its own test below).
    for mode in Mode::ALL.into_iter().filter(|m| *m != Mode::Plan) {
        assert_eq!(
            decide(
                &unsandboxed(false),
                mode,
                &protected,
                &session,
                &run,
                CanAsk::Yes
            ),
            Decision::Ask,
            "{mode}"
        );
        assert_eq!(
            decide(&bash(), mode, &protected, &session, &run, CanAsk::Yes),
            if mode == Mode::Bypass {
                Decision::Allow {
                    shown: Shown::ByMode(Mode::Bypass),
                }
            } else {
                Decision::Allow {
                    shown: Shown::ForSession,
                }
            },
            "{mode}"
        );
        let Decision::Deny { code, .. } = decide(
            &unsandboxed(false),
            mode,
            &protected,
            &session,
            &run,
            CanAsk::No,
        ) else {
            panic!("sandbox: false ran where nobody can ask in {mode}");
        };
        assert_eq!(code, DenyCode::NobodyToAsk);
    }
    assert_eq!(
        decide(
            &unsandboxed(true),
            Mode::Bypass,
            &protected,
            &session,
            &run,
            CanAsk::No
        ),
        Decision::Allow {
            shown: Shown::ByMode(Mode::Bypass)
        }
    );
    let mut never = RunConsent::default();
    remember(
        ConsentAnswer::NeverThisRun,
        &ToolKey::new("bash"),
        &mut SessionConsent::default(),
        &mut never,
    );
    assert!(matches!(
        decide(
            &unsandboxed(true),
            Mode::Bypass,
            &protected,
            &session,
            &never,
            CanAsk::Yes
        ),
        Decision::Deny {
            code: DenyCode::Never,
            ..
        }
    ));
}

#[test]
fn plan_mode_refuses_writes_bash_and_mcp_with_its_reason_whatever_the_session_allowed() {
    let reason = "Plan mode: only reads run now; present a plan instead. Do not retry or work around this with another tool.";
    assert_eq!(mino::policy::PLAN_MODE_REASON, reason);
    let mut session = SessionConsent::default();
    let mut run = RunConsent::default();
    for tool in ["edit_file", "write_file", "bash", "mcp_files_write"] {
        remember(
            ConsentAnswer::AllowForSession,
            &ToolKey::new(tool),
            &mut session,
            &mut run,
        );
    }
    let mut guarded = bash();
    guarded.guard = Some("git push --force rewrites remote history".into());
    let mut gated = bash();
    gated.gate = Some(GateVerdict::AllowFinal);
    for facts in [
        edit(),
        bash(),
        guarded,
        gated,
        unsandboxed(true),
        mcp(false),
        mcp(true),
    ] {
        for can_ask in [CanAsk::Yes, CanAsk::No] {
            let decision = decide(
                &facts,
                Mode::Plan,
                &ProtectedPaths::builtin(),
                &session,
                &run,
                can_ask,
            );
            assert_eq!(
                decision,
                Decision::Deny {
                    code: DenyCode::PlanMode,
                    reason: reason.into()
                },
                "{}",
                facts.tool
            );
        }
    }
    assert_eq!(DenyCode::PlanMode.as_str(), "MINO_DENY_PLAN_MODE");
    // A protected path keeps its own reason, before plan mode's.
    let protected = call("write_file", CallKind::FileWrite).with_target(inside(".env"));
    assert!(matches!(
        plain(&protected, Mode::Plan),
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            ..
        }
    ));
    // A fetch without output asks as in manual, and is refused as in manual
    // where nobody can answer.
    assert_eq!(plain(&fetch(), Mode::Plan), Decision::Ask);
    let nobody = decide(
        &fetch(),
        Mode::Plan,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::No,
    );
    assert!(matches!(
        nobody,
        Decision::Deny {
            code: DenyCode::NobodyToAsk,
            ..
        }
    ));
}
