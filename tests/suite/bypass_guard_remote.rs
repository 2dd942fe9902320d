//! The bypass guard against a real remote: the built binary in bypass,
//! `-p` (where nobody can answer), against a loopback model service whose
//! bash calls push to a bare repository over `file://`. Every push that
//! rewrites or deletes what the remote holds (force in git's spellings and
//! abbreviations, `+ref`, `:ref`, `--delete`, `--mirror`, a push reached
//! through `git -c alias`) is the guard's question, which `-p` turns into
//! its denial (`AMG_DENY_CATASTROPHIC`), and the remote's refs are
//! unchanged; a plain fast-forward push runs and lands. The sandbox
//! is off, so what stops the pushes is the guard and nothing else.

use std::path::Path;

use super::checkpoints::{NO_SANDBOX, git};
use super::sandbox::{Setup, bash, stderr};
use crate::support::llm::text;
use crate::support::stream::{decisions, outputs, statuses};

/// The remote's refs, one `SHA ref` a line.
fn remote_refs(remote: &Path, home: &Path) -> String {
    git(
        remote,
        home,
        &["--git-dir", remote.to_str().unwrap(), "show-ref"],
    )
}

/// A project whose `main` and `release` are on a bare remote, with `main`
/// then rewritten locally (so only a forced push could land it).
async fn world() -> (Setup, std::path::PathBuf) {
    let b = Setup::new(Vec::new(), NO_SANDBOX).await;
    let project = b.project();
    let home = b.home();
    let remote = b.root.path().join("remote.git");
    git(
        &project,
        &home,
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    git(&project, &home, &["checkout", "-q", "-B", "main"]);
    git(&project, &home, &["branch", "release"]);
    let url = format!("file://{}", remote.display());
    git(&project, &home, &["remote", "add", "origin", &url]);
    git(
        &project,
        &home,
        &["push", "-q", "origin", "main", "release"],
    );
    git(
        &project,
        &home,
        &["commit", "-q", "--amend", "-m", "rewritten"],
    );
    (b, remote)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_that_rewrite_or_delete_the_remote_are_asked_and_change_nothing_there() {
    let (b, remote) = world().await;
    let before = remote_refs(&remote, &b.home());
    assert!(before.contains("refs/heads/release"), "{before}");
    let pushes = [
        "git push --force-w origin main",
        "git push --forc origin main",
        "git push -f origin main",
        "git push origin +main",
        "git push origin :release",
        "git push --delete origin release",
        "git push --mirr origin",
        "git push --force-with-lease origin main",
        "git -c alias.p='push --force' p origin main",
    ];
    // A turn takes at most 8 requests: the pushes go in turns of four.
    let mut b = b;
    for some in pushes.chunks(4) {
        let mut replies: Vec<_> = some.iter().map(|c| bash(c)).collect();
        replies.push(text("done"));
        b = b.with_replies(replies, NO_SANDBOX).await;
        let (events, out) = b.bypass("push it").await;
        // The guard's question, which -p (where nobody answers) turns into
        // its denial, with the guard's code.
        assert_eq!(
            decisions(&events)
                .into_iter()
                .map(|(tool, decision, code)| format!("{tool} {decision} {code}"))
                .collect::<Vec<_>>(),
            vec!["bash deny AMG_DENY_CATASTROPHIC"; some.len()],
            "{some:?}: {}",
            stderr(&out)
        );
        assert_eq!(statuses(&events), vec!["denied"; some.len()], "{some:?}");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(
            remote_refs(&remote, &b.home()),
            before,
            "{some:?} changed the remote"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_fast_forward_push_runs_in_bypass_and_lands() {
    let (b, remote) = world().await;
    let project = b.project();
    let home = b.home();
    // Back to the remote's main, then one commit on top of it.
    git(&project, &home, &["reset", "-q", "--hard", "origin/main"]);
    std::fs::write(project.join("notes.md"), "more notes\n").unwrap();
    git(&project, &home, &["commit", "-qam", "more"]);
    let head = git(&project, &home, &["rev-parse", "HEAD"]);
    let b = b
        .with_replies(
            vec![bash("git push origin main && echo pushed"), text("done")],
            NO_SANDBOX,
        )
        .await;
    let (events, out) = b.bypass("push it").await;
    assert_eq!(statuses(&events), vec!["completed"], "{}", stderr(&out));
    assert!(
        outputs(&events)[0].contains("pushed"),
        "{:?}",
        outputs(&events)
    );
    let refs = remote_refs(&remote, &b.home());
    assert!(
        refs.contains(&format!("{} refs/heads/main", head.trim())),
        "{refs}"
    );
}
