//! list_dir, search and skill_view on real temporary projects: what they
//! show, what they withhold, and what the decision does with their facts.
//! Protected files hold a marker secret that must never appear in any output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use mino::policy::{
    CanAsk, Decision, DenyCode, Mode, ProtectedPaths, RunConsent, SessionConsent, Shown, decide,
};
use mino::tools::list_dir::ListDir;
use mino::tools::search::Search;
use mino::tools::skill_view::{self, SkillInfo, SkillView};
use mino::tools::{Project, Tool, ToolContext, ToolError, ToolOutcome, ToolStatus};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

const MARKER: &str = "MARKER_7f3a9c_SECRET";

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A project with ordinary files, protected files holding the marker, a
/// link `docs -> .git`, a file link, a hard link to `.env`, an ignored
/// directory and a binary file.
fn project() -> (TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "notes.md",
        "# Notes\nhello world\nTODO: fix the title\n",
    );
    write(root, "src/main.rs", "fn main() {\n    // TODO later\n}\n");
    write(root, "src/lib.rs", "pub fn lib() {}\n");
    write(root, "src/tools/walk.rs", "// walk the tree\n");
    write(root, ".env", &format!("API_KEY={MARKER}\nTODO=1\n"));
    write(root, "config/.env.local", &format!("TOKEN={MARKER}\n"));
    write(
        root,
        ".git/config",
        &format!("[remote]\n\ttoken = {MARKER}\n"),
    );
    write(root, ".git/HEAD", "ref: refs/heads/main\n");
    write(root, "keys/id_rsa", &format!("-----BEGIN {MARKER}-----\n"));
    write(root, "keys/readme.md", "keys live here\n");
    write(root, ".gitignore", "target/\n");
    write(root, "target/out.txt", "TODO generated\n");
    fs::write(root.join("data.bin"), b"TODO\0\x01\x02binary").unwrap();
    symlink(".git", root.join("docs")).unwrap();
    symlink("notes.md", root.join("link.md")).unwrap();
    fs::hard_link(root.join(".env"), root.join("leak.txt")).unwrap();
    let cx = ToolContext::new(Project::new(root).unwrap());
    (dir, cx)
}

fn decision(tool: &dyn Tool, args: Value, cx: &ToolContext) -> Decision {
    let call = tool.prepare(&args, cx).unwrap();
    decide(
        call.facts(),
        Mode::Bypass,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::Yes,
    )
}

fn deny_code(tool: &dyn Tool, args: Value, cx: &ToolContext) -> DenyCode {
    match decision(tool, args.clone(), cx) {
        Decision::Deny { code, reason } => {
            assert!(!reason.contains(MARKER));
            code
        }
        other => panic!("{args} should be denied, got {other:?}"),
    }
}

/// Runs a call without consulting the decision (as if it had been skipped).
async fn run_anyway(tool: &dyn Tool, args: Value, cx: &ToolContext) -> ToolOutcome {
    let call = tool.prepare(&args, cx).unwrap();
    call.run(CancellationToken::new()).await
}

/// Prepares, decides, and runs only when allowed: whether it ran, and the
/// text the model would receive either way.
async fn as_model_sees(tool: &dyn Tool, args: Value, cx: &ToolContext) -> (bool, String) {
    let call = match tool.prepare(&args, cx) {
        Ok(call) => call,
        Err(e) => return (false, e.to_string()),
    };
    let decided = decide(
        call.facts(),
        Mode::Bypass,
        &ProtectedPaths::builtin(),
        &SessionConsent::default(),
        &RunConsent::default(),
        CanAsk::Yes,
    );
    match decided {
        Decision::Allow { .. } => (true, call.run(CancellationToken::new()).await.output),
        Decision::Deny { reason, .. } => (false, reason),
        Decision::Ask => panic!("a confined read never asks"),
    }
}

async fn completed(tool: &dyn Tool, args: Value, cx: &ToolContext) -> String {
    let outcome = run_anyway(tool, args.clone(), cx).await;
    assert_eq!(
        outcome.status,
        ToolStatus::Completed,
        "{args}: {}",
        outcome.output
    );
    outcome.output
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

// ---------------------------------------------------------------- list_dir

#[tokio::test]
async fn list_dir_shows_kinds_and_withholds_protected_entries() {
    let (_dir, cx) = project();
    let out = completed(&ListDir, json!({}), &cx).await;
    assert_eq!(
        lines(&out),
        vec![
            ".gitignore (8 bytes)",
            "config/",
            "data.bin (13 bytes)",
            "docs -> (symbolic link, not followed)",
            "keys/",
            "leak.txt (36 bytes)",
            "link.md -> (symbolic link, not followed)",
            "notes.md (40 bytes)",
            "src/",
            "target/",
            "2 protected entries not shown.",
        ]
    );
    assert!(!out.contains(".env") && !out.contains(".git/") && !out.contains("HEAD"));

    let keys = completed(&ListDir, json!({"path": "keys"}), &cx).await;
    assert_eq!(
        lines(&keys),
        vec!["readme.md (15 bytes)", "1 protected entry not shown."]
    );
    let config = completed(&ListDir, json!({"path": "./config/"}), &cx).await;
    assert_eq!(lines(&config), vec!["1 protected entry not shown."]);
    let src = completed(&ListDir, json!({"path": "src"}), &cx).await;
    assert_eq!(
        lines(&src),
        vec!["lib.rs (16 bytes)", "main.rs (32 bytes)", "tools/"]
    );
}

#[tokio::test]
async fn list_dir_of_an_absolute_path_inside_the_project_is_allowed() {
    let (dir, cx) = project();
    let abs = dir.path().canonicalize().unwrap().join("src");
    let args = json!({"path": abs.to_str().unwrap()});
    assert_eq!(
        decision(&ListDir, args.clone(), &cx),
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
    assert!(completed(&ListDir, args, &cx).await.contains("main.rs"));
}

#[tokio::test]
async fn list_dir_of_protected_linked_or_outside_directories_is_denied() {
    let (_dir, cx) = project();
    assert_eq!(
        deny_code(&ListDir, json!({"path": ".git"}), &cx),
        DenyCode::ProtectedPath
    );
    assert_eq!(
        deny_code(&ListDir, json!({"path": ".GIT/refs"}), &cx),
        DenyCode::ProtectedPath
    );
    assert_eq!(
        deny_code(&ListDir, json!({"path": "docs"}), &cx),
        DenyCode::SymbolicLink
    );
    assert_eq!(
        deny_code(&ListDir, json!({"path": "docs/"}), &cx),
        DenyCode::SymbolicLink
    );
    for outside in ["..", "../", "src/../..", "/etc", "/"] {
        assert_eq!(
            deny_code(&ListDir, json!({"path": outside}), &cx),
            DenyCode::OutsideProject,
            "{outside}"
        );
    }
    let (ran, seen) = as_model_sees(&ListDir, json!({"path": ".git"}), &cx).await;
    assert!(!ran);
    assert!(seen.starts_with("Blocked by policy: .git is a protected path"));
}

#[tokio::test]
async fn list_dir_refuses_links_and_protected_paths_even_without_the_decision() {
    let (_dir, cx) = project();
    for path in ["docs", ".git", "..", "/etc"] {
        let outcome = run_anyway(&ListDir, json!({ "path": path }), &cx).await;
        assert_eq!(outcome.status, ToolStatus::Error, "{path}");
        assert!(
            !outcome.output.contains("config"),
            "{path}: {}",
            outcome.output
        );
        assert!(
            !outcome.output.contains("HEAD"),
            "{path}: {}",
            outcome.output
        );
    }
    let missing = run_anyway(&ListDir, json!({"path": "nope"}), &cx).await;
    assert_eq!(missing.status, ToolStatus::Error);
    assert!(missing.output.contains("nope does not exist"));
    let file = run_anyway(&ListDir, json!({"path": "notes.md"}), &cx).await;
    assert_eq!(file.status, ToolStatus::Error);
    assert!(file.output.contains("not a directory"));
}

#[tokio::test]
async fn list_dir_rejects_bad_arguments() {
    let (_dir, cx) = project();
    for args in [json!({"path": 3}), json!({"dir": "."}), json!({"path": ""})] {
        assert!(ListDir.prepare(&args, &cx).is_err(), "{args}");
    }
    let err = ListDir.prepare(&json!({"dir": "."}), &cx).err().unwrap();
    assert!(matches!(
        err,
        ToolError::InvalidArguments {
            tool: "list_dir",
            ..
        }
    ));
}

// ------------------------------------------------------------------ search

#[tokio::test]
async fn search_by_regex_reports_lines_and_what_it_skipped() {
    let (_dir, cx) = project();
    let out = completed(&Search, json!({"pattern": "TODO"}), &cx).await;
    assert_eq!(
        lines(&out),
        vec![
            "notes.md:3: TODO: fix the title",
            "src/main.rs:2:     // TODO later",
            "",
            "2 matching lines in 2 files.",
            "Skipped 4 protected paths; they are never searched.",
            "Did not follow 2 symbolic links.",
            "Skipped 1 binary file.",
            "Refused 1 hard-linked file (another name may be protected).",
        ]
    );
    // target/ is ignored by .gitignore.
    assert!(!out.contains("target"));

    let insensitive = completed(
        &Search,
        json!({"pattern": "todo", "case_insensitive": true, "path": "src"}),
        &cx,
    )
    .await;
    assert!(insensitive.starts_with("src/main.rs:2:     // TODO later\n"));
    let sensitive = completed(&Search, json!({"pattern": "todo", "path": "src"}), &cx).await;
    assert!(sensitive.starts_with("No matches for /todo/ under src."));

    let anchored = completed(&Search, json!({"pattern": "^hello"}), &cx).await;
    assert!(anchored.starts_with("notes.md:2: hello world\n"));
}

#[tokio::test]
async fn search_by_glob_lists_files_by_name_or_path() {
    let (_dir, cx) = project();
    let rs = completed(&Search, json!({"glob": "*.rs"}), &cx).await;
    assert_eq!(
        lines(&rs)[..4],
        ["src/lib.rs", "src/main.rs", "src/tools/walk.rs", ""]
    );
    assert!(rs.contains("3 files matched."));

    let by_path = completed(&Search, json!({"glob": "src/tools/*.rs"}), &cx).await;
    assert!(by_path.starts_with("src/tools/walk.rs\n\n1 file matched."));
    let under = completed(&Search, json!({"glob": "tools/*.rs", "path": "src"}), &cx).await;
    assert!(under.starts_with("src/tools/walk.rs\n"));

    let both = completed(&Search, json!({"glob": "*.rs", "pattern": "fn"}), &cx).await;
    assert_eq!(
        lines(&both)[..3],
        [
            "src/lib.rs:1: pub fn lib() {}",
            "src/main.rs:1: fn main() {",
            ""
        ]
    );
    let none = completed(&Search, json!({"glob": "*.zig"}), &cx).await;
    assert!(none.starts_with("No files match the glob under the project."));
}

#[tokio::test]
async fn search_of_one_file_and_of_limits() {
    let (dir, cx) = project();
    let one = completed(&Search, json!({"pattern": "o", "path": "notes.md"}), &cx).await;
    assert!(one.starts_with("notes.md:1: # Notes\nnotes.md:2: hello world\n"));
    // A file named as the path is searched whatever the glob, as ripgrep
    // searches a file named on its command line; a glob-only search of it
    // still asks whether its name matches.
    let named = completed(
        &Search,
        json!({"pattern": "hello", "glob": ".*", "path": "notes.md"}),
        &cx,
    )
    .await;
    assert!(named.starts_with("notes.md:2: hello world\n"), "{named}");
    let glob_only = completed(&Search, json!({"glob": "*.rs", "path": "notes.md"}), &cx).await;
    assert!(
        glob_only.starts_with("No files match the glob"),
        "{glob_only}"
    );

    let capped = completed(&Search, json!({"pattern": "o", "max_results": 1}), &cx).await;
    assert_eq!(lines(&capped)[0], "notes.md:1: # Notes");
    assert!(capped.contains("Stopped after 1 result (max_results)"));

    let long = format!("{}NEEDLE{}\n", "x".repeat(2000), "y".repeat(2000));
    write(dir.path(), "long.txt", &long);
    let out = completed(
        &Search,
        json!({"pattern": "NEEDLE", "path": "long.txt"}),
        &cx,
    )
    .await;
    let first = lines(&out)[0];
    assert!(first.starts_with("long.txt:1: …"), "{first}");
    assert!(first.contains("NEEDLE") && first.ends_with('…'));
    assert!(first.chars().count() < 300);
}

#[tokio::test]
async fn search_arguments_are_validated() {
    let (_dir, cx) = project();
    for args in [
        json!({}),
        json!({"path": "src"}),
        json!({"pattern": "(unclosed"}),
        json!({"glob": "[z-a"}),
        json!({"pattern": "a", "max_results": 0}),
        json!({"pattern": "a", "unknown": true}),
    ] {
        let err = Search.prepare(&args, &cx).err();
        assert!(
            matches!(
                err,
                Some(ToolError::InvalidArguments { tool: "search", .. })
            ),
            "{args}: {err:?}"
        );
    }
}

#[tokio::test]
async fn search_roots_that_are_protected_linked_or_outside_are_denied() {
    let (_dir, cx) = project();
    let s = |path: &str| json!({"pattern": ".", "path": path});
    assert_eq!(deny_code(&Search, s(".git"), &cx), DenyCode::ProtectedPath);
    assert_eq!(deny_code(&Search, s(".env"), &cx), DenyCode::ProtectedPath);
    assert_eq!(deny_code(&Search, s("docs"), &cx), DenyCode::SymbolicLink);
    assert_eq!(
        deny_code(&Search, s("link.md"), &cx),
        DenyCode::SymbolicLink
    );
    assert_eq!(deny_code(&Search, s("leak.txt"), &cx), DenyCode::HardLink);
    for outside in ["..", "../..", "/etc", "/tmp", "src/../../x"] {
        assert_eq!(
            deny_code(&Search, s(outside), &cx),
            DenyCode::OutsideProject,
            "{outside}"
        );
    }
    // Even when the decision is skipped, the run refuses them.
    for path in [".git", "docs", "docs/config", "..", "/etc", "leak.txt"] {
        let outcome = run_anyway(&Search, s(path), &cx).await;
        assert!(
            outcome.status == ToolStatus::Error || !outcome.output.contains(':'),
            "{path}: {}",
            outcome.output
        );
        assert!(!outcome.output.contains(MARKER), "{path}");
        assert!(!outcome.output.contains("[remote]"), "{path}");
    }
}

#[tokio::test]
async fn the_link_docs_to_git_is_never_followed() {
    let (_dir, cx) = project();
    for args in [
        json!({"pattern": "token"}),
        json!({"pattern": "refs"}),
        json!({"glob": "config"}),
        json!({"glob": "docs/**"}),
        json!({"glob": "HEAD"}),
    ] {
        let out = completed(&Search, args.clone(), &cx).await;
        assert!(!out.contains("docs/"), "{args}: {out}");
        assert!(!out.contains("HEAD"), "{args}: {out}");
        assert!(!out.contains("refs/heads"), "{args}: {out}");
    }
}

#[tokio::test]
async fn protected_files_never_appear_in_any_output() {
    let (_dir, cx) = project();
    let searches = [
        json!({"pattern": "."}),
        json!({"pattern": "7f3a9c"}),
        json!({"pattern": "API_KEY|TOKEN|BEGIN|token", "case_insensitive": true}),
        json!({"glob": "*"}),
        json!({"glob": "**"}),
        json!({"glob": ".env*"}),
        json!({"glob": "id_*", "pattern": "."}),
        json!({"glob": "**/config", "pattern": "."}),
        json!({"pattern": ".", "path": "keys"}),
        json!({"pattern": ".", "path": "config"}),
        json!({"pattern": ".", "path": ".git"}),
        json!({"pattern": ".", "path": "docs"}),
        json!({"pattern": ".", "path": "leak.txt"}),
        json!({"pattern": ".", "path": "keys/id_rsa"}),
        json!({"pattern": ".", "path": "config/.env.local"}),
    ];
    for args in searches {
        let (ran, seen) = as_model_sees(&Search, args.clone(), &cx).await;
        assert!(!seen.contains(MARKER), "{args}: {seen}");
        // A denial may repeat the path the model gave; a result never names
        // a protected file.
        if ran {
            for name in ["id_rsa", ".env", ".git/", "docs/", "HEAD"] {
                assert!(!seen.contains(name), "{args} showed {name}: {seen}");
            }
        }
        let anyway = run_anyway(&Search, args.clone(), &cx).await;
        assert!(!anyway.output.contains(MARKER), "{args}: {}", anyway.output);
    }
    for path in [".", "keys", "config", ".git", "docs", "src", ".git/refs"] {
        let (ran, seen) = as_model_sees(&ListDir, json!({ "path": path }), &cx).await;
        assert!(!seen.contains(MARKER), "{path}: {seen}");
        if ran {
            assert!(
                !seen.contains("id_rsa") && !seen.contains(".env"),
                "{path}: {seen}"
            );
        }
    }
}

#[tokio::test]
async fn a_search_cancelled_before_or_while_it_runs_is_interrupted() {
    let (dir, cx) = project();
    for i in 0..300 {
        write(
            dir.path(),
            &format!("bulk/d{}/f{i}.txt", i % 17),
            "line\nTODO\n",
        );
    }
    let token = CancellationToken::new();
    token.cancel();
    let call = Search.prepare(&json!({"pattern": "TODO"}), &cx).unwrap();
    let outcome = call.run(token).await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert!(outcome.output.contains("cancelled"));

    let token = CancellationToken::new();
    let call = Search.prepare(&json!({"pattern": "TODO"}), &cx).unwrap();
    let running = tokio::spawn(call.run(token.clone()));
    tokio::task::yield_now().await;
    token.cancel();
    let outcome = running.await.unwrap();
    assert_eq!(outcome.status, ToolStatus::Interrupted);

    // Uncancelled, the same search completes and finds all of them.
    let call = Search
        .prepare(
            &json!({"pattern": "TODO", "path": "bulk", "max_results": 1000}),
            &cx,
        )
        .unwrap();
    let outcome = call.run(CancellationToken::new()).await;
    assert_eq!(outcome.status, ToolStatus::Completed);
    assert!(outcome.output.contains("300 matching lines in 300 files."));
}

// -------------------------------------------------------------- skill_view

fn with_skills() -> (TempDir, ToolContext) {
    let (dir, cx) = project();
    let root = dir.path();
    write(
        root,
        ".mino/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Ship a release to production\n---\n# Deploy\n\nRun the steps.\n",
    );
    write(
        root,
        ".mino/skills/notes/SKILL.md",
        "\n# Write release notes\n\nCollect the changes.\n",
    );
    write(
        root,
        ".mino/skills/empty-dir/README.md",
        "not a skill file\n",
    );
    write(
        root,
        ".mino/skills/bad.name/SKILL.md",
        "dotted names are not skills\n",
    );
    write(root, "elsewhere/SKILL.md", "linked skill\n");
    symlink("../../elsewhere", root.join(".mino/skills/linked")).unwrap();
    (dir, cx)
}

#[tokio::test]
async fn skill_view_returns_an_existing_skill() {
    let (_dir, cx) = with_skills();
    let args = json!({"name": "deploy"});
    assert_eq!(
        decision(&SkillView, args.clone(), &cx),
        Decision::Allow {
            shown: Shown::Quietly
        }
    );
    let out = completed(&SkillView, args, &cx).await;
    assert_eq!(
        out,
        "---\nname: deploy\ndescription: Ship a release to production\n---\n# Deploy\n\nRun the steps.\n"
    );
}

#[tokio::test]
async fn skill_view_of_a_missing_skill_lists_the_available_ones() {
    let (_dir, cx) = with_skills();
    for name in ["nope", "empty-dir"] {
        let outcome = run_anyway(&SkillView, json!({ "name": name }), &cx).await;
        assert_eq!(outcome.status, ToolStatus::Error);
        assert_eq!(
            outcome.output,
            format!("No skill named \"{name}\". Available skills: deploy, notes.")
        );
    }
    let (_bare, bare) = project();
    let outcome = run_anyway(&SkillView, json!({"name": "deploy"}), &bare).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(
        outcome.output,
        "No skill named \"deploy\". There are no skills in .mino/skills."
    );
}

#[tokio::test]
async fn skill_view_through_a_linked_skill_directory_is_denied_and_refused() {
    let (_dir, cx) = with_skills();
    let args = json!({"name": "linked"});
    assert_eq!(
        deny_code(&SkillView, args.clone(), &cx),
        DenyCode::SymbolicLink
    );
    let outcome = run_anyway(&SkillView, args, &cx).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert!(!outcome.output.contains("linked skill"));
}

#[tokio::test]
async fn skill_view_rejects_invalid_names() {
    let (_dir, cx) = with_skills();
    for name in [
        "",
        "../deploy",
        "a/b",
        ".git",
        "bad.name",
        "sp ace",
        "/etc",
        "é",
    ] {
        let err = SkillView.prepare(&json!({ "name": name }), &cx).err();
        match err {
            Some(ToolError::InvalidArguments { tool, message }) => {
                assert_eq!(tool, "skill_view");
                assert!(
                    message.contains("A-Z") && message.contains("0-9") && message.contains('_'),
                    "{message}"
                );
            }
            other => panic!("{name:?}: {other:?}"),
        }
    }
    for args in [json!({}), json!({"name": 1}), json!({"name": "x", "y": 1})] {
        assert!(SkillView.prepare(&args, &cx).is_err(), "{args}");
    }
}

#[test]
fn discover_reads_front_matter_or_falls_back_to_the_first_line() {
    let (_dir, cx) = with_skills();
    let skills = skill_view::discover(&cx.project);
    let named: Vec<(&str, &str)> = skills
        .iter()
        .map(|s: &SkillInfo| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("deploy", "Ship a release to production"),
            ("notes", "Write release notes"),
        ]
    );
    for skill in &skills {
        let bytes = fs::read(cx.project.root().join(skill_view::skill_path(&skill.name))).unwrap();
        assert_eq!(skill.bytes, bytes.len(), "{skill:?}");
        assert_eq!(skill.digest.len(), 64, "{skill:?}");
    }
}

#[test]
fn discover_finds_nothing_without_a_skills_directory_or_through_a_link() {
    let (dir, cx) = project();
    assert!(skill_view::discover(&cx.project).is_empty());
    write(dir.path(), "real/skills/x/SKILL.md", "linked\n");
    fs::create_dir_all(dir.path().join(".mino")).unwrap();
    symlink("../real/skills", dir.path().join(".mino/skills")).unwrap();
    assert!(skill_view::discover(&cx.project).is_empty());
}

#[test]
fn discover_with_user_patterns_skips_protected_skills() {
    let (_dir, cx) = with_skills();
    let protected = ProtectedPaths::new(&[".mino/skills/deploy/"]).unwrap();
    let names: Vec<String> = skill_view::discover_with(&cx.project, &protected)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["notes"]);
}
