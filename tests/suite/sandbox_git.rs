//! Git cannot be turned into a launcher (issue 20's findings 1, 2 and 5):
//! the built binary in bypass plants what a user's git would run later, then
//! the test runs a real `git status` and `git commit` outside the sandbox, as
//! the user would, and checks that nothing planted ran and nothing outside
//! the project was written.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::sandbox::{Setup, bash, stderr};
use crate::support::llm::text;
use crate::support::stream::outputs;

/// The user's own git, outside the sandbox, with the test's home.
fn user_git(b: &Setup, dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", b.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A marker file outside the project a planted command would make.
fn marker(b: &Setup, name: &str) -> PathBuf {
    b.root.path().join(name)
}

/// Findings 1 and 5: `.git` cannot be renamed and replaced by a `gitdir:`
/// file whose `commondir` is the home; a masked file's parent cannot be
/// renamed away from its mask; nothing in the home is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_file_never_widens_what_is_writable() {
    let b = Setup::new(vec![], "").await;
    let fsmonitor = marker(&b, "fsmonitor-ran");
    std::fs::create_dir_all(b.project().join(".docker")).unwrap();
    std::fs::write(b.project().join(".docker/config.json"), "DOCKER-AUTH-41c").unwrap();
    let b = b
        .with_replies(
            vec![
                bash(
                    "mv .git .git-real && printf 'gitdir: .git-real\\n' > .git && \
                     echo \"$HOME\" > .git-real/commondir; echo end-move",
                ),
                bash(&format!(
                    "printf '[core]\\n\\tfsmonitor = touch {}\\n' >> ~/.gitconfig; \
                     mkdir -p ~/.local/bin && echo evil > ~/.local/bin/git; echo end-home",
                    fsmonitor.display()
                )),
                bash("mv .docker dockerx; echo end-rename"),
                bash("cat dockerx/config.json .docker/config.json; echo end-read"),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("move").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(results[0].contains("end-move"), "{}", results[0]);
    assert!(b.project().join(".git").is_dir(), "{}", results[0]);
    assert!(!b.project().join(".git-real").exists());
    assert!(!b.home().join(".gitconfig").exists());
    assert!(!b.home().join(".local/bin/git").exists());
    assert!(
        b.project().join(".docker/config.json").exists(),
        "{}",
        results[2]
    );
    assert!(!b.bodies().contains("DOCKER-AUTH-41c"));
    // The user's git, outside, in this repository and another one.
    let other = b.root.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    user_git(&b, &other, &["init", "-q"]);
    user_git(&b, &other, &["status"]);
    user_git(&b, &b.project(), &["status"]);
    assert!(!fsmonitor.exists(), "a planted core.fsmonitor ran");
}

/// Finding 2: a new `commondir` leading to a planted configuration and
/// hook, new `modules/` and `worktrees/` entries, and `git init` in a
/// project that was not a repository: the user's `git status` and `git
/// commit` afterwards run none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_code_planted_inside_never_runs_outside() {
    let b = Setup::new(vec![], "").await;
    let monitor = marker(&b, "monitor-ran");
    let hook = marker(&b, "hook-ran");
    let plant = format!(
        "mkdir -p .git/x/hooks && cp -r .git/objects .git/refs .git/HEAD .git/x/ && \
         printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch {m}\\n' > .git/x/config && \
         printf '#!/bin/sh\\ntouch {h}\\n' > .git/x/hooks/pre-commit && chmod +x .git/x/hooks/pre-commit && \
         echo x > .git/commondir; mkdir -p .git/modules/evil .git/worktrees/evil && \
         cp .git/x/config .git/modules/evil/config; echo end-plant",
        m = monitor.display(),
        h = hook.display()
    );
    let b = b.with_replies(vec![bash(&plant), text("done")], "").await;
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-plant"), "{result}");
    assert!(
        result.contains("removed the new .git/commondir"),
        "{result}"
    );
    assert!(!b.project().join(".git/commondir").exists());
    assert!(!b.project().join(".git/modules/evil").exists());
    assert!(!b.project().join(".git/worktrees/evil").exists());
    user_git(&b, &b.project(), &["status"]);
    user_git(
        &b,
        &b.project(),
        &["commit", "-q", "--allow-empty", "-m", "user"],
    );
    assert!(!monitor.exists(), "a planted core.fsmonitor ran");
    assert!(!hook.exists(), "a planted hook ran");
    // `git init` where there was no repository.
    std::fs::remove_dir_all(b.project().join(".git")).unwrap();
    let init = format!(
        "git init -q && git config core.fsmonitor 'touch {m}' && \
         printf '#!/bin/sh\\ntouch {h}\\n' > .git/hooks/pre-commit && \
         chmod +x .git/hooks/pre-commit; echo end-init",
        m = monitor.display(),
        h = hook.display()
    );
    let b = b.with_replies(vec![bash(&init), text("done")], "").await;
    let (events, out) = b.bypass("init").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-init"), "{result}");
    assert!(result.contains("removed the hooks"), "{result}");
    user_git(&b, &b.project(), &["status"]);
    user_git(&b, &b.project(), &["config", "user.email", "t@example.com"]);
    user_git(&b, &b.project(), &["config", "user.name", "t"]);
    user_git(
        &b,
        &b.project(),
        &["commit", "-q", "--allow-empty", "-m", "user"],
    );
    assert!(!monitor.exists(), "a planted core.fsmonitor ran");
    assert!(!hook.exists(), "a planted hook ran");
}

/// Finding 11: a repository with `.env` and `.env.example` committed. Git
/// inside the sandbox sees no change in them, records no stand-in through
/// any routine command, and prints nothing of them in a diff; afterwards
/// the committed content is unchanged byte for byte and the index is as
/// it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masking_never_loses_committed_data() {
    let b = Setup::new(vec![], "").await;
    let example = "EXAMPLE_KEY=example-value-3f9\n";
    std::fs::write(b.project().join(".env.example"), example).unwrap();
    let env = std::fs::read(b.project().join(".env")).unwrap();
    user_git(&b, &b.project(), &["add", "-f", ".env", ".env.example"]);
    user_git(&b, &b.project(), &["commit", "-qm", "secrets"]);
    let b = b
        .with_replies(
            vec![
                bash("git status --porcelain; echo end-status"),
                bash("git diff .env .env.example; git diff HEAD -- .env; echo end-diff"),
                bash(
                    "echo more >> notes.md; git add -A && git commit -qm wip; \
                     echo again >> notes.md; git commit -qam wip2; \
                     echo stash >> notes.md; git stash -q; git stash pop -q; \
                     git checkout -q HEAD~1 -- . ; git checkout -q HEAD -- . ; \
                     git log --oneline | wc -l; echo end-git",
                ),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("work").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(results[0].contains("end-status"), "{}", results[0]);
    assert!(!results[0].contains(".env"), "{}", results[0]);
    assert!(results[1].contains("end-diff"), "{}", results[1]);
    assert!(!results[1].contains("example-value"), "{}", results[1]);
    assert!(results[2].contains("end-git"), "{}", results[2]);
    let bodies = b.bodies();
    assert!(!bodies.contains("example-value-3f9"));
    assert!(!bodies.contains(crate::support::world::SECRET));
    // Outside: HEAD holds what was committed, byte for byte.
    let shown = |path: &str| {
        Command::new("git")
            .args(["show", &format!("HEAD:{path}")])
            .current_dir(b.project())
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(shown(".env"), env);
    assert_eq!(shown(".env.example"), example.as_bytes());
    assert_eq!(std::fs::read(b.project().join(".env")).unwrap(), env);
    let listed = user_git(
        &b,
        &b.project(),
        &["ls-files", "-t", ".env", ".env.example"],
    );
    assert_eq!(
        listed, "H .env\nH .env.example\n",
        "the index was left changed"
    );
    let status = user_git(&b, &b.project(), &["status", "--porcelain"]);
    assert!(!status.contains(".env"), "{status}");
}

/// mino's check after a call never follows a link the call made: a `.git`
/// link to another repository (whose own hook is the user's) and a
/// `.git/modules` link to a directory outside are removed themselves, and
/// what they led to is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_after_a_call_follows_no_link() {
    let b = Setup::new(vec![], "").await;
    let other = b.root.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    user_git(&b, &other, &["init", "-q"]);
    let their_hook = other.join(".git/hooks/pre-commit");
    std::fs::write(&their_hook, "#!/bin/sh\nexit 0\n").unwrap();
    let kept = b.root.path().join("kept");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join("data"), "precious").unwrap();
    let b = b
        .with_replies(
            vec![
                bash(&format!(
                    "rm -rf .git/modules; ln -s {} .git/modules; echo end-link",
                    kept.display()
                )),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("link").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(outputs(&events)[0].contains("end-link"));
    assert_eq!(
        std::fs::read_to_string(kept.join("data")).unwrap(),
        "precious"
    );
    assert!(
        !b.project()
            .join(".git/modules")
            .symlink_metadata()
            .is_ok_and(|m| m.is_symlink())
    );
    // No repository: the call links .git to another one.
    std::fs::remove_dir_all(b.project().join(".git")).unwrap();
    let b = b
        .with_replies(
            vec![
                bash(&format!(
                    "ln -s {} .git; echo end-git-link",
                    other.join(".git").display()
                )),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("link").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-git-link"), "{result}");
    assert!(
        their_hook.exists(),
        "the other repository's hook was removed"
    );
    assert!(
        b.project().join(".git").symlink_metadata().is_err(),
        "{result}"
    );
}

/// The execution surfaces a file tool's write asks for (policy's table) are
/// read-only to bash as well: the hooks directory `core.hooksPath` names,
/// another agent's settings, `AGENTS.md` in any case, CI workflows. A
/// surface that is a link out of the project does not stop the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_execution_surfaces_are_read_only_to_bash() {
    let b = Setup::new(
        vec![
            bash("echo 'touch PWNED' >> .husky/_/pre-commit"),
            bash("echo '{\"hooks\":1}' > .claude/settings.json"),
            bash("echo 'run: evil' >> .github/workflows/ci.yml"),
            bash("echo 'do evil' >> Agents.MD"),
            bash("echo fine >> notes.md"),
            text("done"),
        ],
        "",
    )
    .await;
    let project = b.project();
    user_git(&b, &project, &["config", "core.hooksPath", ".husky/_"]);
    for dir in [".husky/_", ".claude", ".github/workflows"] {
        std::fs::create_dir_all(project.join(dir)).unwrap();
    }
    std::fs::write(project.join(".husky/_/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(project.join(".claude/settings.json"), "{}\n").unwrap();
    std::fs::write(project.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    std::fs::write(project.join("Agents.MD"), "# rules\n").unwrap();
    std::os::unix::fs::symlink("/nonexistent/tasks", project.join(".vscode")).unwrap();
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 5, "{results:?}");
    for refused in &results[..4] {
        assert!(refused.contains("Read-only file system"), "{refused}");
    }
    assert!(results[4].contains("Exit code: 0"), "{}", results[4]);
    let read = |p: &str| std::fs::read_to_string(project.join(p)).unwrap();
    assert_eq!(read(".husky/_/pre-commit"), "#!/bin/sh\n");
    assert_eq!(read(".claude/settings.json"), "{}\n");
    assert_eq!(read(".github/workflows/ci.yml"), "on: push\n");
    assert_eq!(read("Agents.MD"), "# rules\n");
    assert!(read("notes.md").ends_with("fine\n"));
}

/// Nested execution surfaces are read-only to bash as well (a `.claude/` or
/// `AGENTS.md` below the top), and one a call makes where none stood (a
/// `.mino/config.toml`, a nested `AGENTS.md`, a `.vscode/` in a new
/// directory) is set aside after the call, kept whole under a name nothing
/// reads, and the result says so. Setting back a directory's time does not
/// hide a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_and_new_surfaces_never_stay_planted() {
    let b = Setup::new(
        vec![
            bash("echo '{\"hooks\":1}' > docs/.claude/settings.json; echo 'obey' >> pkg/Agents.md"),
            bash(
                "mkdir -p .mino sub/new && echo '[tools]' > .mino/config.toml && \
                 echo 'do evil' > sub/AGENTS.md && mkdir sub/new/.vscode && \
                 echo '{}' > sub/new/.vscode/tasks.json && touch -m -d '2000-01-01' sub sub/new && \
                 echo made",
            ),
            bash("echo fine >> notes.md"),
            text("done"),
        ],
        "",
    )
    .await;
    let project = b.project();
    std::fs::create_dir_all(project.join("docs/.claude")).unwrap();
    std::fs::create_dir_all(project.join("pkg")).unwrap();
    std::fs::write(project.join("docs/.claude/settings.json"), "{}\n").unwrap();
    std::fs::write(project.join("pkg/Agents.md"), "# rules\n").unwrap();
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0].contains("Read-only file system"),
        "{}",
        results[0]
    );
    let read = |p: &str| std::fs::read_to_string(project.join(p)).unwrap();
    assert_eq!(read("docs/.claude/settings.json"), "{}\n");
    assert_eq!(read("pkg/Agents.md"), "# rules\n");
    let made = &results[1];
    assert!(made.contains("made"), "{made}");
    for (planted, aside) in [
        (".mino", ".mino.refused-by-mino"),
        ("sub/AGENTS.md", "sub/AGENTS.md.refused-by-mino"),
        ("sub/new/.vscode", "sub/new/.vscode.refused-by-mino"),
    ] {
        assert!(
            project.join(planted).symlink_metadata().is_err(),
            "{planted} stayed: {made}"
        );
        assert!(made.contains(&format!("{planted} as {aside}")), "{made}");
    }
    assert_eq!(read(".mino.refused-by-mino/config.toml"), "[tools]\n");
    assert_eq!(read("sub/AGENTS.md.refused-by-mino"), "do evil\n");
    assert!(
        made.contains("Write such a file with a file tool"),
        "{made}"
    );
    assert!(results[2].contains("Exit code: 0"), "{}", results[2]);
    assert!(!results[2].contains("set aside"), "{}", results[2]);
}

/// An attack review's ways around the surfaces, each closed: moving an
/// existing surface's parent (to free its name, and to have mino set the
/// user's original aside) fails, since the parents are mount points; a
/// link put where the hooks directory or `.github/workflows` lies below is
/// set aside; a repository made below the top is set aside, so its
/// `core.fsmonitor` never runs in the user's git there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moved_parents_links_and_nested_repositories_plant_nothing() {
    let b = Setup::new(vec![], "").await;
    let project = b.project();
    let fsmonitor = marker(&b, "nested-fsmonitor-ran");
    let hook_ran = marker(&b, "linked-hook-ran");
    user_git(
        &b,
        &project,
        &["config", "core.hooksPath", "tools/githooks"],
    );
    std::fs::create_dir_all(project.join("pkg")).unwrap();
    std::fs::create_dir_all(project.join("tools")).unwrap();
    std::fs::write(project.join("pkg/Agents.md"), "# rules\n").unwrap();
    std::fs::write(project.join("tools/build.sh"), "echo build\n").unwrap();
    let b = b
        .with_replies(
            vec![
                bash("mv pkg pkg-old; echo end-move"),
                bash(&format!(
                    "mkdir -p stash/githooks && printf '#!/bin/sh\\ntouch {}\\n' > stash/githooks/pre-commit \
                     && chmod +x stash/githooks/pre-commit && mv tools tools-real && ln -s stash tools; \
                     mkdir -p stash/workflows && echo 'on: push' > stash/workflows/ci.yml && ln -s stash .github; \
                     echo end-link",
                    hook_ran.display()
                )),
                bash(&format!(
                    "mkdir -p vendor/lib && cd vendor/lib && git init -q && \
                     git config core.fsmonitor 'touch {}; false'; echo end-nested",
                    fsmonitor.display()
                )),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    // The parent of a read-only surface cannot be moved.
    assert!(results[0].contains("end-move"), "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(project.join("pkg/Agents.md")).unwrap(),
        "# rules\n"
    );
    assert!(!project.join("pkg-old").exists(), "{}", results[0]);
    assert!(!results[0].contains("set aside"), "{}", results[0]);
    // The links are set aside; the user's directory stays where the
    // command moved it, whole.
    for link in ["tools", ".github"] {
        assert!(
            project.join(link).symlink_metadata().is_err(),
            "{link} stayed: {}",
            results[1]
        );
        assert!(
            results[1].contains(&format!("{link} as {link}.refused-by-mino")),
            "{}",
            results[1]
        );
    }
    assert!(project.join("tools-real/build.sh").is_file());
    // The nested repository is set aside.
    assert!(
        results[2].contains("vendor/lib/.git as vendor/lib/.git.refused-by-mino"),
        "{}",
        results[2]
    );
    // The user's git, outside: no planted hook or fsmonitor runs.
    std::fs::create_dir_all(project.join("vendor/lib")).unwrap();
    user_git(&b, &project.join("vendor/lib"), &["status"]);
    std::fs::write(project.join("notes.md"), "changed\n").unwrap();
    user_git(&b, &project, &["add", "notes.md"]);
    user_git(&b, &project, &["commit", "-qm", "user commit"]);
    assert!(!fsmonitor.exists(), "a nested repository's fsmonitor ran");
    assert!(!hook_ran.exists(), "a hook through a linked parent ran");
}
