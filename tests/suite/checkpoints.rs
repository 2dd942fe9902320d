//! Checkpoints end to end: the built binary in bypass against a loopback
//! model service, a turn that edits `notes.md`, deletes `src` and `.git`
//! through bash and writes `new.txt`; the session file's checkpoint
//! records, the line that names what bash changed (in the chat and in the
//! model's result), and `mino rewind` putting the files and the
//! conversation back, with real git checking the repository afterwards.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::sandbox::{Setup, bash, stderr};
use crate::support::llm::{Reply, text, tool};
use crate::support::stream::{of_type, outputs};

/// The turn of the issue: an edit, a recursive delete of `src` and of
/// what makes `.git` a repository (`rm -rf .git` as a whole asks in
/// bypass, and nobody can answer `-p`), a new file.
pub(super) fn the_turn() -> Vec<Reply> {
    vec![
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "notes", "new_string": "edited notes"}),
        ),
        bash(
            "rm -rf src .git/objects .git/refs .git/HEAD .git/index && printf 'one\\ntwo\\n' > new.txt && echo gone",
        ),
        text("done"),
    ]
}

pub(super) const NO_SANDBOX: &str = "[sandbox]\nenabled = false\n";

pub(super) fn git(project: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir` (`.git` included) with its bytes, sorted.
pub(super) fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A project with `src/` and a commit holding it, ready for the turn.
pub(super) async fn prepared(replies: Vec<Reply>) -> Setup {
    let b = Setup::new(Vec::new(), NO_SANDBOX).await;
    let project = b.project();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(project.join("src/b.rs"), "fn b() {}\nfn c() {}\n").unwrap();
    git(&project, &b.home(), &["add", "src"]);
    git(&project, &b.home(), &["commit", "-qm", "second"]);
    git(&project, &b.home(), &["gc", "-q"]);
    b.with_replies(replies, NO_SANDBOX).await
}

fn session_id(events: &[Value]) -> String {
    of_type(events, "session")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

pub(super) fn session_lines(b: &Setup, id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(b.mino_home().join("sessions").join(format!("{id}.jsonl")))
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn rewind(b: &Setup, args: &[&str]) -> (Value, std::process::Output) {
    let mut all = vec!["rewind"];
    all.extend_from_slice(args);
    let out = b.command(&all).output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (json, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_call_that_changed_files_is_named_in_the_chat_and_to_the_model() {
    let b = prepared(the_turn()).await;
    let (events, out) = b.bypass("do it").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    let named = results[1].lines().last().unwrap_or("").to_string();
    assert!(named.starts_with("Changed by this command: "), "{named}");
    assert!(named.contains("new.txt +2 -0"), "{named}");
    assert!(named.contains("deleted src/a.rs"), "{named}");
    assert!(named.contains("deleted .git/HEAD"), "{named}");
    // The edit is not bash's.
    assert!(!named.contains("notes.md"), "{named}");
    // The record line of the chat (stderr with stream-json).
    let shown = stderr(&out);
    assert!(shown.contains("Changed by bash: "), "{shown}");
    assert!(shown.contains("deleted src/b.rs"), "{shown}");
    // The model's next request saw the line.
    assert!(b.bodies().contains("Changed by this command: "));
    // The session names a checkpoint before the prompt and around each call.
    let id = session_id(&events);
    let ats: Vec<String> = session_lines(&b, &id)
        .iter()
        .filter(|l| l["type"] == "checkpoint")
        .map(|l| l["at"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ats, ["turn", "before", "after", "before", "after"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_to_the_prompt_restores_src_and_git_byte_for_byte_and_lists_the_turn() {
    let b = prepared(the_turn()).await;
    let project = b.project();
    let before = tree(&project);
    let (events, out) = b.bypass("do it").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!project.join("src").exists());
    assert!(project.join("new.txt").exists());
    let id = session_id(&events);

    let (listed, out) = rewind(&b, &["--session", &id, "--list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let prompts = listed["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 1, "{listed}");
    assert_eq!(prompts[0]["n"], 1);
    assert_eq!(prompts[0]["prompt"], "do it");
    let files = prompts[0]["files"].as_array().unwrap();
    let find = |path: &str| files.iter().find(|f| f["path"] == path).cloned();
    assert_eq!(
        find("notes.md").unwrap(),
        json!({"path": "notes.md", "change": "changed", "added": 1, "removed": 1})
    );
    assert_eq!(find("new.txt").unwrap()["change"], "added");
    assert_eq!(find("src/a.rs").unwrap()["change"], "deleted");

    let (done, out) = rewind(&b, &["--session", &id, "--to", "1", "--code"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(done["kept"], json!([]), "{done}");
    assert_eq!(done["failed"], json!([]), "{done}");
    assert!(
        done["deleted"]
            .as_array()
            .unwrap()
            .contains(&json!("new.txt"))
    );
    assert_eq!(tree(&project), before, "the project is not as it was");
    let log = git(&project, &b.home(), &["log", "--oneline"]);
    assert_eq!(log.lines().count(), 2, "{log}");
    git(&project, &b.home(), &["fsck", "--strict"]);
    // The untracked .env (protected: never copied, left alone) aside.
    assert_eq!(
        git(&project, &b.home(), &["status", "--porcelain"]),
        "?? .env\n"
    );
    // Code only: the conversation is whole, and the rewind is recorded.
    let lines = session_lines(&b, &id);
    let last = lines.last().unwrap();
    assert_eq!(
        *last,
        json!({"type": "rewind", "to": 1, "code": true, "conversation": false})
    );
    // Another rewind to the same prompt has nothing left to do.
    let (again, _) = rewind(&b, &["--session", &id, "--to", "1", "--code"]);
    assert_eq!(again["restored"], json!([]), "{again}");
    assert_eq!(again["deleted"], json!([]), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_outside_mino_after_the_turn_is_kept_and_listed_unless_forced() {
    let b = prepared(the_turn()).await;
    let project = b.project();
    let (events, out) = b.bypass("do it").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id(&events);
    std::fs::write(project.join("notes.md"), "the person's own words\n").unwrap();
    let (done, out) = rewind(&b, &["--session", &id, "--to", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(done["kept"], json!(["notes.md"]), "{done}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.md")).unwrap(),
        "the person's own words\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
    let (forced, out) = rewind(&b, &["--session", &id, "--to", "1", "--code", "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(forced["restored"], json!(["notes.md"]), "{forced}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.md")).unwrap(),
        "notes\n"
    );
    // A prompt the session does not have names what is accepted.
    let (_, out) = rewind(&b, &["--session", &id, "--to", "7"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("accepted: 1 to 1"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversation_only_leaves_the_files_and_a_resumed_session_forgets_the_turn() {
    let mut replies = the_turn();
    replies.push(text("second answer"));
    let b = prepared(replies).await;
    let project = b.project();
    let (events, out) = b.bypass("do it").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id(&events);
    let after_turn = tree(&project);
    let (done, out) = rewind(&b, &["--session", &id, "--to", "1", "--conversation"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(done["code"], false);
    assert_eq!(tree(&project), after_turn);
    // A new process resumes the session: its history no longer holds the
    // rewound prompt.
    let requests_before = b.llm.bodies().len();
    let mut command = b.command(&[
        "-p",
        "again",
        "--output-format",
        "stream-json",
        "--yolo",
        "--resume",
        &id,
    ]);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let bodies = b.llm.bodies();
    let resumed = &bodies[requests_before];
    assert!(resumed.contains("again"), "{resumed}");
    assert!(!resumed.contains("do it"), "{resumed}");
    assert!(!resumed.contains("Changed by this command"), "{resumed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_after_resume_in_a_new_process_goes_back_to_the_second_prompt() {
    let b = prepared(vec![
        bash("echo first >> notes.md"),
        text("one"),
        bash("rm -rf src && echo second > later.txt"),
        text("two"),
    ])
    .await;
    let project = b.project();
    let (events, out) = b.bypass("first").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id(&events);
    let after_first = tree(&project);
    let mut command = b.command(&[
        "-p",
        "second",
        "--output-format",
        "stream-json",
        "--yolo",
        "--resume",
        &id,
    ]);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!project.join("src").exists());
    let (listed, _) = rewind(&b, &["--session", &id, "--list"]);
    let prompts = listed["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 2, "{listed}");
    assert_eq!(prompts[1]["prompt"], "second");
    assert_eq!(prompts[0]["files"][0]["path"], "notes.md");
    let (done, out) = rewind(&b, &["--session", &id[..8], "--to", "2", "--code"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(done["kept"], json!([]), "{done}");
    assert_eq!(tree(&project), after_first);
}

/// The turn word for word, `rm -rf src .git`, in the interactive
/// line mode (the bypass guard asks about `.git` as a whole, and the person
/// says yes); the rewind brings the whole repository back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rm_rf_src_and_git_asked_and_allowed_is_rewound_whole() {
    let b = prepared(vec![
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "notes", "new_string": "edited notes"}),
        ),
        bash("rm -rf src .git"),
        bash("echo new > new.txt"),
        text("done"),
    ])
    .await;
    let project = b.project();
    let before = tree(&project);
    let mut pty = b.line_in_bypass();
    pty.send_line("go");
    pty.expect("Approve this operation? [y/N]");
    pty.send_line("y");
    let shown = pty.expect("done");
    assert!(shown.contains("Changed by bash: "), "{shown}");
    assert!(shown.contains("deleted .git/HEAD"), "{shown}");
    assert!(shown.contains("new.txt +1 -0"), "{shown}");
    pty.send_line("/quit");
    pty.wait();
    assert!(!project.join(".git").exists());
    let sessions: Vec<_> = std::fs::read_dir(b.mino_home().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id = sessions[0]
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let (done, out) = rewind(&b, &["--session", &id, "--to", "1", "--code"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(done["kept"], json!([]), "{done}");
    assert_eq!(tree(&project), before, "the project is not as it was");
    let log = git(&project, &b.home(), &["log", "--oneline"]);
    assert_eq!(log.lines().count(), 2, "{log}");
    git(&project, &b.home(), &["fsck", "--strict"]);
}

/// `mino sandbox check` says whether git objects can be hard-linked into
/// the store: yes beside the project, no (copied) from another filesystem.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_check_says_whether_git_objects_are_hard_linked() {
    use std::os::unix::fs::MetadataExt;
    let b = prepared(Vec::new()).await;
    let check = |home: &Path| -> Value {
        let out = b
            .command(&["sandbox", "check"])
            .env("MINO_HOME", home)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["checkpoints"].clone()
    };
    let same = check(&b.mino_home());
    assert_eq!(same["git_objects_hard_linked"], true, "{same}");
    let shm = Path::new("/dev/shm");
    let project_dev = std::fs::metadata(b.project()).unwrap().dev();
    if shm.is_dir() && std::fs::metadata(shm).unwrap().dev() != project_dev {
        let other = tempfile::tempdir_in(shm).unwrap();
        let apart = check(other.path());
        assert_eq!(apart["git_objects_hard_linked"], false, "{apart}");
        assert!(
            apart["note"]
                .as_str()
                .unwrap()
                .contains("copy them instead"),
            "{apart}"
        );
    }
}

/// Retention: a later run of a user whose settings keep one checkpoint per
/// session prunes the older ones of an earlier session (off the turn's
/// path), `--list` says which prompts were pruned and `--to` one of them
/// says why instead of restoring anything; a project may not set it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_run_prunes_by_the_settings_and_rewind_says_what_was_pruned() {
    let keep_one = format!("{NO_SANDBOX}[checkpoints]\nkeep_per_session = 1\n");
    let b = prepared(Vec::new()).await;
    let b = b
        .with_replies(
            vec![bash("echo more >> notes.md"), text("one"), text("two")],
            &keep_one,
        )
        .await;
    let (events, out) = b.bypass("first").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = session_id(&events);
    let (listed, _) = rewind(&b, &["--session", &id, "--list"]);
    assert_eq!(listed["prompts"][0]["pruned"], false, "{listed}");
    // The first run pruned nothing of its own yet: its pass ran after its
    // first checkpoint. The second run's pass leaves the first session its
    // newest checkpoint only.
    let (_, out) = b.bypass("second").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let mut listed = Value::Null;
    for _ in 0..100 {
        listed = rewind(&b, &["--session", &id, "--list"]).0;
        if listed["prompts"][0]["pruned"] == true {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(listed["prompts"][0]["pruned"], true, "{listed}");
    let notes = std::fs::read_to_string(b.project().join("notes.md")).unwrap();
    let (_, out) = rewind(&b, &["--session", &id, "--to", "1", "--code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("was pruned"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(b.project().join("notes.md")).unwrap(),
        notes
    );
    // The store holds no blob that no kept checkpoint names: the first
    // version of notes.md is gone from it.
    let store = std::fs::read_dir(b.mino_home().join("checkpoints"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(store.join("log")).unwrap();
    assert_eq!(log.lines().filter(|l| l.contains(&id)).count(), 1, "{log}");

    // A project's settings may not say how much of the user's home is kept.
    std::fs::create_dir_all(b.project().join(".mino")).unwrap();
    std::fs::write(
        b.project().join(".mino/config.toml"),
        "[checkpoints]\nkeep_per_session = 1\n",
    )
    .unwrap();
    let (_, out) = b.bypass("third").await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("checkpoints"), "{said}");
    assert!(
        said.contains("only accepted in the user settings"),
        "{said}"
    );
}
