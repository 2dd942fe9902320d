//! The shell gate in a hostile repository, end to end through `-p` in auto
//! mode against a loopback model service, with `/usr/bin/git` trusted by
//! its digest: a repository whose own configuration names a program
//! (`core.fsmonitor`, `diff.external`, a textconv or clean filter, through
//! an include or a `.git` file pointing elsewhere), that has a submodule
//! with configuration of its own or a `post-index-change` hook, gets its
//! git requests denied with `AMG_DENY_REPOSITORY`, and the program never
//! runs; in an inert repository the request runs, with the single
//! program-running keys of the user's own configuration turned off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::llm::{text, tool};
use crate::support::world::World;
use serde_json::json;
use tempfile::TempDir;

use super::shell_gate::{bash_decisions, digest, print};

const GIT: &str = "/usr/bin/git";

fn settings() -> String {
    format!(
        "[shell_gate]\ntrusted_executables = [{{ path = \"{GIT}\", sha256 = \"{}\" }}]\n",
        digest(GIT)
    )
}

/// Git for building a fixture: a fixed identity, no user or system
/// configuration.
fn git(dir: &Path, args: &[&str]) {
    let empty = TempDir::new().unwrap();
    let out = Command::new(GIT)
        .args(["-c", "user.name=t", "-c", "user.email=t@e.example"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", empty.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with everything committed, one file changed since (the
/// world's own `.git` stand-in and its link go first).
pub(super) fn repository(dir: &Path) {
    std::fs::remove_dir_all(dir.join(".git")).unwrap();
    std::fs::remove_file(dir.join("docs")).unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "one"]);
    std::fs::write(dir.join("notes.md"), "# notes, changed\n").unwrap();
}

/// A program that leaves a marker behind and otherwise acts like `cat`.
/// It lives in the project, which bash's sandbox shares with the test
/// (its `/tmp` is private), so a sprung trap is seen from outside.
struct Trap {
    dir: PathBuf,
}

impl Trap {
    fn new(project: &Path) -> Self {
        let dir = project.join("trap");
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("trap.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ntouch '{}'\ncat \"$@\" 2>/dev/null\nexit 0\n",
                dir.join("marker").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn script(&self) -> String {
        self.dir.join("trap.sh").display().to_string()
    }

    fn sprung(&self) -> bool {
        self.dir.join("marker").exists()
    }
}

/// Runs `commands` in auto mode in a project `plant` made hostile; the
/// bash decisions, whether the trap was sprung, and stderr.
async fn hostile(
    commands: &[&str],
    home: &Path,
    plant: impl FnOnce(&Path, &Trap),
) -> (Vec<(String, String)>, bool, String) {
    hostile_at(commands, Some(home), |p, trap, _| plant(p, trap)).await
}

/// `hostile`, with the user's home in the project (`home` `None`), where
/// the sandbox lets bash read it; `plant` is given the home too.
async fn hostile_at(
    commands: &[&str],
    home: Option<&Path>,
    plant: impl FnOnce(&Path, &Trap, &Path),
) -> (Vec<(String, String)>, bool, String) {
    let mut replies: Vec<_> = commands
        .iter()
        .map(|c| tool("bash", json!({ "command": c })))
        .collect();
    replies.push(text("done"));
    let world = World::with("openai-chat", replies, &settings()).await;
    repository(world.project.path());
    let trap = Trap::new(world.project.path());
    let home = match home {
        Some(home) => home.to_path_buf(),
        None => {
            let home = world.project.path().join("home");
            std::fs::create_dir(&home).unwrap();
            home
        }
    };
    plant(world.project.path(), &trap, &home);
    let (events, stderr) = print(&world, &home, "auto").await;
    (bash_decisions(&events), trap.sprung(), stderr)
}

/// What a case plants in the project, given the trap.
type Plant = Box<dyn FnOnce(&Path, &Trap)>;

fn denied(n: usize) -> Vec<(String, String)> {
    vec![("deny".to_string(), "AMG_DENY_REPOSITORY".to_string()); n]
}

#[tokio::test]
async fn a_repository_that_names_a_program_keeps_git_from_running() {
    let home = TempDir::new().unwrap();
    let cases: Vec<(&str, Vec<&str>, Plant)> = vec![
        (
            "core.fsmonitor",
            vec!["/usr/bin/git status", "/usr/bin/git diff"],
            Box::new(|p, trap| git(p, &["config", "core.fsmonitor", &trap.script()])),
        ),
        (
            "diff.external",
            vec!["/usr/bin/git diff"],
            Box::new(|p, trap| git(p, &["config", "diff.external", &trap.script()])),
        ),
        (
            "a textconv driver",
            vec![
                "/usr/bin/git diff",
                "/usr/bin/git show",
                "/usr/bin/git log -p",
            ],
            Box::new(|p, trap| {
                std::fs::write(p.join(".gitattributes"), "* diff=x\n").unwrap();
                git(p, &["config", "diff.x.textconv", &trap.script()]);
            }),
        ),
        (
            "a clean filter on a stale index",
            vec!["/usr/bin/git status", "/usr/bin/git diff"],
            Box::new(|p, trap| {
                std::fs::write(p.join(".gitattributes"), "* filter=x\n").unwrap();
                git(p, &["config", "filter.x.clean", &trap.script()]);
            }),
        ),
        (
            "an include",
            vec!["/usr/bin/git status"],
            Box::new(|p, trap| {
                std::fs::write(
                    p.join("settings.cfg"),
                    format!("[core]\n\tfsmonitor = {}\n", trap.script()),
                )
                .unwrap();
                git(p, &["config", "include.path", "../settings.cfg"]);
            }),
        ),
        (
            "a post-index-change hook",
            vec!["/usr/bin/git status", "/usr/bin/git diff"],
            Box::new(|p, trap| {
                let hook = p.join(".git/hooks/post-index-change");
                std::fs::copy(trap.script(), hook).unwrap();
                // A stale index, so status and diff write it.
                std::fs::write(p.join("notes.md"), "# notes, changed\n").unwrap();
            }),
        ),
    ];
    for (what, commands, plant) in cases {
        let (decisions, sprung, stderr) = hostile(&commands, home.path(), plant).await;
        assert_eq!(decisions, denied(commands.len()), "{what}: {stderr}");
        assert!(!sprung, "{what}: the repository's program ran: {stderr}");
    }
}

#[tokio::test]
async fn a_git_file_pointing_elsewhere_and_a_submodule_are_read_as_git_reads_them() {
    let home = TempDir::new().unwrap();
    // `.git` is a file naming a repository outside the project.
    let elsewhere = TempDir::new().unwrap();
    let gitdir: PathBuf = elsewhere.path().join("g");
    let (decisions, sprung, stderr) = hostile(&["/usr/bin/git status"], home.path(), |p, trap| {
        std::fs::remove_dir_all(p.join(".git")).unwrap();
        git(
            p,
            &["init", "-q", "--separate-git-dir", gitdir.to_str().unwrap()],
        );
        git(p, &["add", "-A"]);
        git(p, &["commit", "-qm", "one"]);
        git(p, &["config", "core.fsmonitor", &trap.script()]);
        std::fs::write(p.join("notes.md"), "# changed again\n").unwrap();
    })
    .await;
    assert_eq!(decisions, denied(1), "{stderr}");
    assert!(!sprung, "{stderr}");
    // A submodule whose own configuration names a program.
    let (decisions, sprung, stderr) = hostile(&["/usr/bin/git status"], home.path(), |p, trap| {
        let sub = p.join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("s.txt"), "s\n").unwrap();
        git(&sub, &["init", "-q"]);
        git(&sub, &["add", "-A"]);
        git(&sub, &["commit", "-qm", "s"]);
        git(p, &["add", "sub"]);
        git(p, &["commit", "-qm", "sub"]);
        std::fs::write(sub.join(".gitattributes"), "* filter=x\n").unwrap();
        git(&sub, &["config", "filter.x.clean", &trap.script()]);
        std::fs::write(sub.join("s.txt"), "s\n").unwrap();
    })
    .await;
    assert_eq!(decisions, denied(1), "{stderr}");
    assert!(!sprung, "{stderr}");
}

#[tokio::test]
async fn an_inert_repository_runs_git_hardened_against_the_users_own_programs() {
    // The user's own configuration names an fsmonitor and a pager: theirs,
    // so the repository is still inert, but an allowed request runs with
    // them turned off.
    let commands = [
        "/usr/bin/git status",
        "/usr/bin/git diff",
        "/usr/bin/git log -p",
    ];
    let (decisions, sprung, stderr) = hostile_at(&commands, None, |_, trap, home| {
        let config = format!(
            "[core]\n\tfsmonitor = {0}\n\tpager = {0}\n[pager]\n\tstatus = {0}\n",
            trap.script()
        );
        std::fs::write(home.join(".gitconfig"), config).unwrap();
    })
    .await;
    assert_eq!(
        decisions,
        vec![("allow".to_string(), String::new()); 3],
        "{stderr}"
    );
    assert!(stderr.contains("Shell gate: \"allow-final: "), "{stderr}");
    assert!(!sprung, "{stderr}");
}
