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
fn the_turn() -> Vec<Reply> {
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

const NO_SANDBOX: &str = "[sandbox]\nenabled = false\n";

fn git(project: &Path, home: &Path, args: &[&str]) -> String {
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
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
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
async fn prepared(replies: Vec<Reply>) -> Setup {
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

fn session_lines(b: &Setup, id: &str) -> Vec<Value> {
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
