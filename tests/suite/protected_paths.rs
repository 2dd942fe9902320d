//! Protected paths on a real project: the facts `Project::locate` (and the
//! file tools' `prepare`) establish, fed to `policy::decide` in bypass mode,
//! deny every built-in pattern, links, escapes and hard links; a link
//! swapped in after the check is refused when the file is opened; and no
//! protected file's contents reach any result. Owns no production code and
//! never touches anything outside its temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::fs;
use std::os::unix::fs::symlink;

use mino::policy::{
    CallFacts, CallKind, CanAsk, Decision, DenyCode, Mode, PathTarget, ProtectedPaths, RunConsent,
    SessionConsent, Shown, ToolKey, decide,
};
use mino::tools::edit_file::EditFile;
use mino::tools::read_file::ReadFile;
use mino::tools::write_file::WriteFile;
use mino::tools::{ConfineError, Project, Tool, ToolContext, ToolStatus};
use serde_json::json;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

const SECRET: &str = "SECRET-MARKER-d41d8cd98f00";

/// One example per built-in pattern, with the pattern it exercises.
const BUILTIN_EXAMPLES: [(&str, &str); 15] = [
    (".env", ".env"),
    (".env.*", ".env.production"),
    ("*.pem", "certs/server.pem"),
    ("*.key", "tls.key"),
    ("*.p12", "keystore/cert.p12"),
    ("id_rsa*", "id_rsa"),
    ("id_ecdsa*", "keys/id_ecdsa.pub"),
    ("id_ed25519*", "id_ed25519_sk"),
    (".netrc", ".netrc"),
    (".npmrc", "web/.npmrc"),
    (".pypirc", ".pypirc"),
    (".git/", ".git/config"),
    (".ssh/", ".ssh/authorized_keys"),
    (".aws/", ".aws/credentials"),
    (".gnupg/", ".gnupg/pubring.kbx"),
];

struct Fixture {
    dir: TempDir,
    project: Project,
    cx: ToolContext,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::new(dir.path()).unwrap();
        let cx = ToolContext::new(project.clone());
        Self { dir, project, cx }
    }

    fn put(&self, relative: &str, contents: &str) {
        let path = self.dir.path().join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, contents).unwrap();
    }

    fn secret(&self, relative: &str) {
        self.put(relative, &format!("{SECRET} {relative}\n"));
    }

    fn get(&self, relative: &str) -> String {
        fs::read_to_string(self.dir.path().join(relative)).unwrap()
    }
}

fn decide_facts(facts: &CallFacts) -> Decision {
    decide(
        facts,
        Mode::Bypass,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::Yes,
    )
}

/// `locate` then `decide`, as a read and as a write.
fn decide_path(fx: &Fixture, given: &str) -> [Decision; 2] {
    let target = fx.project.locate(given).unwrap();
    let read = CallFacts::new(ToolKey::new("read_file"), CallKind::ConfinedRead)
        .with_target(target.clone());
    let write = CallFacts::new(ToolKey::new("write_file"), CallKind::FileWrite).with_target(target);
    [decide_facts(&read), decide_facts(&write)]
}

/// The same decision reached through each file tool's own `prepare`.
fn decide_tools(fx: &Fixture, given: &str) -> Vec<Decision> {
    let calls = [
        ReadFile.prepare(&json!({"path": given}), &fx.cx),
        WriteFile.prepare(&json!({"path": given, "content": "overwritten\n"}), &fx.cx),
        EditFile.prepare(
            &json!({"path": given, "old_string": SECRET, "new_string": "gone"}),
            &fx.cx,
        ),
    ];
    calls
        .into_iter()
        .map(|call| decide_facts(call.unwrap().facts()))
        .collect()
}

#[track_caller]
fn assert_denied(decisions: &[Decision], code: DenyCode, given: &str) {
    for decision in decisions {
        match decision {
            Decision::Deny { code: got, reason } => {
                assert_eq!(*got, code, "{given}: {reason}");
                assert!(reason.starts_with("Blocked by policy: "), "{reason}");
                assert!(
                    reason.ends_with("Do not retry or work around this with another tool."),
                    "{reason}"
                );
                assert!(
                    !reason.contains(SECRET),
                    "{given}: the reason leaks contents"
                );
            }
            other => panic!("{given} should be denied with {code:?}, got {other:?}"),
        }
    }
}

#[test]
fn every_builtin_pattern_is_denied_in_bypass() {
    let fx = Fixture::new();
    for (_, path) in BUILTIN_EXAMPLES {
        fx.secret(path);
    }
    for (pattern, path) in BUILTIN_EXAMPLES {
        let decisions = decide_path(&fx, path);
        assert_denied(&decisions, DenyCode::ProtectedPath, pattern);
        assert_denied(&decide_tools(&fx, path), DenyCode::ProtectedPath, pattern);
        if let Decision::Deny { reason, .. } = &decisions[0] {
            assert_eq!(
                reason,
                &format!(
                    "Blocked by policy: {path} is a protected path; file tools never read or write it. \
                     Do not retry or work around this with another tool."
                )
            );
        }
    }
    // Deciding never touched them.
    for (_, path) in BUILTIN_EXAMPLES {
        assert_eq!(fx.get(path), format!("{SECRET} {path}\n"));
    }
}

#[test]
fn seed_reason_for_env_is_exact() {
    let fx = Fixture::new();
    fx.secret(".env");
    let [read, _] = decide_path(&fx, ".env");
    assert_eq!(
        read,
        Decision::Deny {
            code: DenyCode::ProtectedPath,
            reason:
                "Blocked by policy: .env is a protected path; file tools never read or write it. \
                     Do not retry or work around this with another tool."
                    .into(),
        }
    );
}

#[test]
fn case_variants_and_nested_names_are_denied() {
    let fx = Fixture::new();
    let paths = [
        ".ENV",
        ".Git/config",
        "ID_RSA.pub",
        "config/.env.local",
        ".git/hooks/pre-commit",
        "Keys/Server.PEM",
        "vendor/lib/.SSH/id_x",
    ];
    for path in paths {
        fx.secret(path);
    }
    for path in paths {
        assert_denied(&decide_path(&fx, path), DenyCode::ProtectedPath, path);
        assert_denied(&decide_tools(&fx, path), DenyCode::ProtectedPath, path);
        // Spelled another way, it is the same target.
        let dotted = format!("./{path}");
        assert_denied(&decide_path(&fx, &dotted), DenyCode::ProtectedPath, &dotted);
        let absolute = fx.project.root().join(path).display().to_string();
        assert_denied(
            &decide_path(&fx, &absolute),
            DenyCode::ProtectedPath,
            &absolute,
        );
    }
    // A protected file that does not exist yet is still protected.
    assert_denied(
        &decide_path(&fx, ".env.new"),
        DenyCode::ProtectedPath,
        ".env.new",
    );
    assert_denied(
        &decide_path(&fx, "sub/dir/.git"),
        DenyCode::ProtectedPath,
        "sub/dir/.git",
    );
}

#[test]
fn ordinary_paths_are_allowed() {
    let fx = Fixture::new();
    fx.put("docs/env.md", "about environments\n");
    fx.put("notes.md", "# notes\n");
    fx.put(".gitignore", "target\n");
    for path in ["docs/env.md", "notes.md", ".gitignore", "docs/new.md"] {
        let [read, write] = decide_path(&fx, path);
        assert_eq!(
            read,
            Decision::Allow {
                shown: Shown::Quietly
            },
            "{path}"
        );
        assert_eq!(
            write,
            Decision::Allow {
                shown: Shown::ByMode(Mode::Bypass)
            },
            "{path}"
        );
    }
    let absolute = fx.project.root().join("notes.md").display().to_string();
    let [read, _] = decide_path(&fx, &absolute);
    assert_eq!(
        read,
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
    assert_eq!(
        fx.project.locate(&absolute).unwrap(),
        PathTarget::Inside {
            relative: "notes.md".into(),
            through_link: None,
            hard_linked: false,
        }
    );
}

#[test]
fn a_git_file_of_a_worktree_is_denied() {
    let fx = Fixture::new();
    fx.put(
        ".git",
        &format!("gitdir: /elsewhere/.git/worktrees/x {SECRET}\n"),
    );
    fx.put("nested/.git", "gitdir: ../.git/modules/nested\n");
    assert_denied(&decide_path(&fx, ".git"), DenyCode::ProtectedPath, ".git");
    assert_denied(&decide_tools(&fx, ".git"), DenyCode::ProtectedPath, ".git");
    assert_denied(
        &decide_path(&fx, "nested/.git"),
        DenyCode::ProtectedPath,
        "nested/.git",
    );
    assert_denied(&decide_path(&fx, ".GIT"), DenyCode::ProtectedPath, ".GIT");
}

#[test]
fn links_in_any_component_are_denied() {
    let fx = Fixture::new();
    fx.secret(".git/config");
    symlink(".git", fx.dir.path().join("docs")).unwrap();
    assert_denied(
        &decide_path(&fx, "docs/config"),
        DenyCode::SymbolicLink,
        "docs/config",
    );
    assert_denied(
        &decide_tools(&fx, "docs/config"),
        DenyCode::SymbolicLink,
        "docs/config",
    );
    let [read, _] = decide_path(&fx, "docs/config");
    let Decision::Deny { reason, .. } = read else {
        panic!("denied above")
    };
    assert!(
        reason.contains("passes through the symbolic link docs"),
        "{reason}"
    );

    // A link in a middle component.
    fx.put("a/real/b.txt", "fine\n");
    symlink("real", fx.dir.path().join("a/link")).unwrap();
    let target = fx.project.locate("a/link/b.txt").unwrap();
    assert_eq!(
        target,
        PathTarget::Inside {
            relative: "a/link/b.txt".into(),
            through_link: Some("a/link".into()),
            hard_linked: false,
        }
    );
    assert_denied(
        &decide_path(&fx, "a/link/b.txt"),
        DenyCode::SymbolicLink,
        "a/link/b.txt",
    );
    assert_eq!(
        decide_path(&fx, "a/real/b.txt")[0],
        Decision::Allow {
            shown: Shown::Quietly
        }
    );

    // A link as the final component, even to an ordinary file.
    symlink("a/real/b.txt", fx.dir.path().join("b-link.txt")).unwrap();
    assert_denied(
        &decide_path(&fx, "b-link.txt"),
        DenyCode::SymbolicLink,
        "b-link.txt",
    );
}

#[test]
fn escapes_are_denied_as_outside_the_project() {
    let fx = Fixture::new();
    fx.put("sub/x.txt", "x\n");
    for path in ["../x", "sub/../../x", "/etc/passwd", "/"] {
        assert_denied(&decide_path(&fx, path), DenyCode::OutsideProject, path);
        assert_denied(&decide_tools(&fx, path), DenyCode::OutsideProject, path);
    }
    // `..` that stays inside is fine.
    assert_eq!(
        decide_path(&fx, "sub/../sub/x.txt")[0],
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
}

#[tokio::test]
async fn a_hard_link_to_env_is_denied_and_refused_at_open() {
    let fx = Fixture::new();
    fx.secret(".env");
    fs::hard_link(
        fx.dir.path().join(".env"),
        fx.dir.path().join("innocent.txt"),
    )
    .unwrap();
    assert_denied(
        &decide_path(&fx, "innocent.txt"),
        DenyCode::HardLink,
        "innocent.txt",
    );
    assert_denied(
        &decide_tools(&fx, "innocent.txt"),
        DenyCode::HardLink,
        "innocent.txt",
    );
    // Even if something ran it anyway, the open refuses it.
    assert_eq!(
        fx.project.read("innocent.txt", 1024),
        Err(ConfineError::HardLinked {
            path: "innocent.txt".into()
        })
    );
    let call = ReadFile
        .prepare(&json!({"path": "innocent.txt"}), &fx.cx)
        .unwrap();
    let out = call.run(CancellationToken::new()).await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(!out.output.contains(SECRET));
    assert_eq!(fx.get(".env"), format!("{SECRET} .env\n"));
}

#[tokio::test]
async fn a_link_swapped_in_after_the_check_is_refused_at_open() {
    let fx = Fixture::new();
    fx.secret(".git/config");
    fx.put("docs/config", "harmless\n");

    // The check sees a real directory and allows the read.
    let call = ReadFile
        .prepare(&json!({"path": "docs/config"}), &fx.cx)
        .unwrap();
    assert_eq!(
        decide_facts(call.facts()),
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
    let mut write = WriteFile
        .prepare(&json!({"path": "docs/config", "content": "evil\n"}), &fx.cx)
        .unwrap();
    write.inspect().unwrap();
    let mut edit = EditFile
        .prepare(
            &json!({"path": "docs/config", "old_string": "harmless", "new_string": "evil"}),
            &fx.cx,
        )
        .unwrap();
    edit.inspect().unwrap();

    // Then docs becomes a link to .git.
    fs::rename(fx.dir.path().join("docs"), fx.dir.path().join("docs.old")).unwrap();
    symlink(".git", fx.dir.path().join("docs")).unwrap();

    assert_eq!(
        fx.project.read("docs/config", 1024),
        Err(ConfineError::ThroughLink {
            path: "docs/config".into()
        })
    );
    for call in [call, write, edit] {
        let out = call.run(CancellationToken::new()).await;
        assert_eq!(out.status, ToolStatus::Error, "{}", out.output);
        assert!(out.output.contains("symbolic link"), "{}", out.output);
        assert!(!out.output.contains(SECRET), "{}", out.output);
    }
    assert_eq!(fx.get(".git/config"), format!("{SECRET} .git/config\n"));
    assert_eq!(fx.get("docs.old/config"), "harmless\n");
}

#[tokio::test]
async fn no_result_carries_protected_contents() {
    let fx = Fixture::new();
    for (_, path) in BUILTIN_EXAMPLES {
        fx.secret(path);
    }
    symlink(".git", fx.dir.path().join("docs")).unwrap();
    // Whatever the decision, the result the model would receive is the
    // denial's reason; were a denied call run anyway, the open refuses
    // links, and nothing read from a protected name is ever in a reason.
    for (_, path) in BUILTIN_EXAMPLES.iter().chain(&[("", "docs/config")]) {
        for decision in decide_tools(&fx, path) {
            let Decision::Deny { reason, .. } = decision else {
                panic!("{path} should be denied")
            };
            assert!(!reason.contains(SECRET));
        }
    }
    let out = ReadFile
        .prepare(&json!({"path": "docs/config"}), &fx.cx)
        .unwrap()
        .run(CancellationToken::new())
        .await;
    assert_eq!(out.status, ToolStatus::Error);
    assert!(!out.output.contains(SECRET));
}

#[test]
fn a_project_directory_swapped_for_a_link_is_not_followed() {
    let base = TempDir::new().unwrap();
    let project_dir = base.path().join("proj");
    let outside = base.path().join("outside");
    fs::create_dir(&project_dir).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(project_dir.join("notes.md"), "inside\n").unwrap();
    fs::write(outside.join("private.txt"), "OUTSIDE-SECRET\n").unwrap();
    let project = Project::new(&project_dir).unwrap();
    // After the start, the project directory is renamed and a link put in
    // its place, pointing outside.
    fs::rename(&project_dir, base.path().join("proj.real")).unwrap();
    symlink(&outside, &project_dir).unwrap();
    let read = project.read("private.txt", 1024);
    assert!(
        matches!(read, Err(ConfineError::NotFound { .. })),
        "{read:?}"
    );
    assert_eq!(project.read("notes.md", 1024).unwrap().bytes, b"inside\n");
    assert!(
        project
            .list(".")
            .unwrap()
            .iter()
            .all(|e| e.name != "private.txt")
    );
}
