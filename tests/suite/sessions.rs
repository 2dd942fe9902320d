//! The session store against real files in temporary directories: round
//! trips, permissions, durability as seen from another handle, torn and
//! corrupt lines, listing, history replay, recovery and a real write failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mino::model::{Item, ResultStatus, ToolCall};
use mino::session::{
    INTERRUPTED_OUTPUT, LogEntry, SessionError, SessionId, SessionStore, history, recover,
};

fn user(text: &str) -> Item {
    Item::User { text: text.into() }
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

fn assistant(text: &str, calls: Vec<ToolCall>) -> Item {
    Item::Assistant {
        text: text.into(),
        tool_calls: calls,
    }
}

fn result(call_id: &str, output: &str) -> Item {
    Item::ToolResult {
        call_id: call_id.into(),
        status: ResultStatus::Completed,
        output: output.into(),
    }
}

fn store_in(dir: &Path) -> SessionStore {
    SessionStore::new(dir.join("home").join("sessions"))
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut file = fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn create_append_open_round_trip() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store
        .create(Path::new("/home/u/notes-demo"), "gpt-5-mini")
        .unwrap();
    let id = log.id().clone();
    assert_eq!(log.path(), store.path_of(&id));
    let records = vec![
        LogEntry::Item(user("Summarize notes.md")),
        LogEntry::Item(assistant("", vec![call("c1", "read_file")])),
        LogEntry::Item(result("c1", "18 lines")),
        LogEntry::Item(assistant("Done.", vec![])),
        LogEntry::Item(Item::Summary { text: "s".into() }),
    ];
    for record in &records {
        log.append(record).unwrap();
    }
    log.append_item(&user("and again")).unwrap();
    drop(log);

    let (_log, loaded) = store.open(&id).unwrap();
    assert_eq!(loaded.warning, None);
    assert_eq!(loaded.header.id, id);
    assert_eq!(loaded.header.project, PathBuf::from("/home/u/notes-demo"));
    assert_eq!(loaded.header.model, "gpt-5-mini");
    let mut expected = records.clone();
    expected.push(LogEntry::Item(user("and again")));
    assert_eq!(loaded.entries, expected);
    assert_eq!(loaded.history().len(), 6);

    let text = fs::read_to_string(store.path_of(&id)).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(r#"{{"type":"session","id":"{id}","started":"#)),
        "{first}"
    );
    assert!(
        first.ends_with(r#","project":"/home/u/notes-demo","model":"gpt-5-mini"}"#),
        "{first}"
    );
    assert!(
        !text.contains("\"mode\"") && !text.contains("manual"),
        "a mode is never written: {text}"
    );
}

#[test]
fn file_is_0600_and_new_directory_0700() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let log = store.create(temp.path(), "m").unwrap();
    let file_mode = fs::metadata(log.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(file_mode, 0o600);
    let dir_mode = fs::metadata(store.dir()).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700);
}

#[test]
fn every_append_is_in_the_file_when_it_returns() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let header_only = fs::read_to_string(log.path()).unwrap();
    assert_eq!(header_only.lines().count(), 1);
    assert!(header_only.ends_with('\n'));
    for n in 0..5 {
        let item = user(&format!("prompt {n}\nwith a second line"));
        log.append_item(&item).unwrap();
        // Another handle, while the log is still open.
        let text = fs::read_to_string(log.path()).unwrap();
        assert!(text.ends_with('\n'));
        assert_eq!(text.lines().count(), n + 2);
        let last: Item = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last, item);
    }
}

#[test]
fn a_torn_last_line_is_dropped_with_a_warning_and_the_next_append_is_clean() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let id = log.id().clone();
    log.append_item(&user("one")).unwrap();
    log.append_item(&assistant("two", vec![])).unwrap();
    drop(log);
    let path = store.path_of(&id);
    append_raw(&path, br#"{"type":"user","te"#);
    let before = fs::read(&path).unwrap();

    let (mut log, loaded) = store.open(&id).unwrap();
    let warning = loaded.warning.clone().unwrap();
    assert!(warning.contains(&path.display().to_string()), "{warning}");
    assert!(warning.contains("line 4"), "{warning}");
    assert_eq!(
        loaded.entries,
        vec![
            LogEntry::Item(user("one")),
            LogEntry::Item(assistant("two", vec![]))
        ]
    );
    assert_eq!(fs::read(&path).unwrap(), before, "opening changes nothing");

    log.append_item(&user("three")).unwrap();
    log.append_item(&user("four")).unwrap();
    drop(log);
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(std::str::from_utf8(&before).unwrap()),
        "append-only"
    );
    assert!(text.contains(
        "{\"type\":\"user\",\"te\n{\"type\":\"torn\"}\n{\"type\":\"user\",\"text\":\"three\"}\n"
    ));
    let (_log, loaded) = store.open(&id).unwrap();
    assert_eq!(loaded.warning, None);
    assert_eq!(
        loaded.history(),
        vec![
            user("one"),
            assistant("two", vec![]),
            user("three"),
            user("four")
        ]
    );
}

#[test]
fn an_invalid_last_line_is_dropped_and_acknowledged_on_the_next_append() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let id = log.id().clone();
    log.append_item(&user("one")).unwrap();
    drop(log);
    let path = store.path_of(&id);
    append_raw(&path, b"{not json}\n");

    let (mut log, loaded) = store.open(&id).unwrap();
    let warning = loaded.warning.unwrap();
    assert!(
        warning.contains(&format!("{} line 3", path.display())),
        "{warning}"
    );
    assert_eq!(loaded.entries, vec![LogEntry::Item(user("one"))]);
    log.append_item(&user("two")).unwrap();
    drop(log);

    let (_log, loaded) = store.open(&id).unwrap();
    assert_eq!(loaded.warning, None);
    assert_eq!(loaded.history(), vec![user("one"), user("two")]);
}

#[test]
fn a_corrupt_middle_line_is_an_error_naming_file_and_line() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let id = log.id().clone();
    log.append_item(&user("one")).unwrap();
    drop(log);
    let path = store.path_of(&id);
    append_raw(
        &path,
        b"{\"type\":\"user\",\"te\n{\"type\":\"user\",\"text\":\"three\"}\n",
    );
    let before = fs::read(&path).unwrap();

    let err = store.open(&id).unwrap_err();
    assert!(
        matches!(err, SessionError::Corrupt { line: 3, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("{} line 3", path.display())),
        "{text}"
    );
    assert!(text.contains("left as it is"), "{text}");
    assert_eq!(fs::read(&path).unwrap(), before, "nothing is rewritten");

    // A mode is never a record: one in the middle is corruption too.
    let mut log = store.create(temp.path(), "m").unwrap();
    let other = log.id().clone();
    log.append_item(&user("one")).unwrap();
    drop(log);
    append_raw(
        &store.path_of(&other),
        b"{\"type\":\"mode\",\"mode\":\"bypass\"}\n{\"type\":\"clear\"}\n",
    );
    let err = store.open(&other).unwrap_err().to_string();
    assert!(
        err.contains("line 3") && err.contains("unknown record type \"mode\""),
        "{err}"
    );
}

#[test]
fn open_refuses_missing_foreign_and_locked_sessions() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let missing = SessionId::generate().unwrap();
    let err = store.open(&missing).unwrap_err().to_string();
    assert!(
        err.contains(&store.path_of(&missing).display().to_string()),
        "{err}"
    );

    let log = store.create(temp.path(), "m").unwrap();
    let err = store.open(log.id()).unwrap_err();
    assert!(matches!(err, SessionError::InUse { .. }), "{err:?}");
    assert!(err.to_string().contains(&log.path().display().to_string()));
    let id = log.id().clone();
    drop(log);
    assert!(store.open(&id).is_ok());

    // A file whose header names another session is not that session.
    let copy = SessionId::generate().unwrap();
    fs::copy(store.path_of(&id), store.path_of(&copy)).unwrap();
    let err = store.open(&copy).unwrap_err().to_string();
    assert!(
        err.contains("is not a session file") && err.contains(id.as_str()),
        "{err}"
    );

    // Neither is an empty file.
    let empty = SessionId::generate().unwrap();
    fs::write(store.path_of(&empty), b"").unwrap();
    let err = store.open(&empty).unwrap_err().to_string();
    assert!(err.contains("is not a session file: it is empty"), "{err}");
}

fn header_line(id: &SessionId, started: u64) -> String {
    format!(
        r#"{{"type":"session","id":"{id}","started":{started},"project":"/p/{started}","model":"m{started}"}}"#
    )
}

#[test]
fn list_is_newest_first_and_skips_what_is_not_a_session() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    assert_eq!(
        store.list().unwrap(),
        vec![],
        "no directory yet: no sessions"
    );
    fs::create_dir_all(store.dir()).unwrap();

    let long = "Please   summarize\n the notes in notes.md and then list every open question, one per line";
    let mut ids = Vec::new();
    for (started, prompt) in [(100, Some("first")), (300, Some(long)), (200, None)] {
        let id = SessionId::generate().unwrap();
        let mut text = header_line(&id, started) + "\n";
        text.push_str("{\"type\":\"clear\"}\n");
        if let Some(prompt) = prompt {
            text.push_str(&serde_json::to_string(&user(prompt)).unwrap());
            text.push('\n');
            text.push_str(&serde_json::to_string(&user("second prompt")).unwrap());
            text.push('\n');
        }
        fs::write(store.path_of(&id), &text).unwrap();
        ids.push((id, started, text.len() as u64));
    }
    // Not sessions: other names, a bad id, no header, a torn header, a
    // header naming another id, a directory.
    fs::write(store.dir().join("notes.txt"), "x").unwrap();
    fs::write(
        store.dir().join("NOT-AN-ID.jsonl"),
        header_line(&ids[0].0, 5) + "\n",
    )
    .unwrap();
    let no_header = SessionId::generate().unwrap();
    fs::write(
        store.path_of(&no_header),
        "{\"type\":\"user\",\"text\":\"x\"}\n",
    )
    .unwrap();
    let torn = SessionId::generate().unwrap();
    fs::write(store.path_of(&torn), "{\"type\":\"session\",\"id\":").unwrap();
    let foreign = SessionId::generate().unwrap();
    fs::write(store.path_of(&foreign), header_line(&ids[0].0, 7) + "\n").unwrap();
    fs::create_dir(store.path_of(&SessionId::generate().unwrap())).unwrap();

    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 3, "{listed:#?}");
    assert_eq!(
        listed.iter().map(|s| s.started).collect::<Vec<_>>(),
        vec![300, 200, 100]
    );
    let newest = &listed[0];
    assert_eq!(newest.id, ids[1].0);
    assert_eq!(newest.bytes, ids[1].2);
    assert_eq!(newest.project, PathBuf::from("/p/300"));
    assert_eq!(newest.model, "m300");
    let preview = newest.first_prompt.clone().unwrap();
    assert!(
        preview.starts_with("Please summarize the notes in notes.md"),
        "{preview}"
    );
    assert!(
        preview.ends_with('…') && preview.chars().count() <= 60,
        "{preview}"
    );
    assert_eq!(listed[1].first_prompt, None);
    assert_eq!(listed[2].first_prompt.as_deref(), Some("first"));
    assert_eq!(listed[2].id, ids[0].0);
}

#[test]
fn history_applies_clear_and_compact() {
    let records = vec![
        LogEntry::Item(user("a")),
        LogEntry::Item(assistant("b", vec![])),
        LogEntry::Clear,
        LogEntry::Item(user("c")),
        LogEntry::Item(assistant("", vec![call("c1", "bash")])),
        LogEntry::Item(result("c1", "ok")),
        LogEntry::Item(assistant("d", vec![])),
        LogEntry::Compact {
            summary: "the user asked c".into(),
            kept: 3,
        },
        LogEntry::Item(user("e")),
    ];
    assert_eq!(
        history(&records),
        vec![
            Item::Summary {
                text: "the user asked c".into()
            },
            assistant("", vec![call("c1", "bash")]),
            result("c1", "ok"),
            assistant("d", vec![]),
            user("e"),
        ]
    );
    // Keeping more than there is keeps everything after the summary.
    let all = history(&[
        LogEntry::Item(user("x")),
        LogEntry::Compact {
            summary: "s".into(),
            kept: 10,
        },
    ]);
    assert_eq!(all, vec![Item::Summary { text: "s".into() }, user("x")]);
    assert_eq!(
        history(&[LogEntry::Item(user("x")), LogEntry::Clear]),
        vec![]
    );
}

fn interrupted(call_id: &str) -> Item {
    Item::ToolResult {
        call_id: call_id.into(),
        status: ResultStatus::Interrupted,
        output: INTERRUPTED_OUTPUT.into(),
    }
}

#[test]
fn recover_acknowledges_only_calls_without_results() {
    // A call without a result.
    let history = vec![user("go"), assistant("", vec![call("c1", "bash")])];
    assert_eq!(recover(&history), vec![interrupted("c1")]);
    let text = INTERRUPTED_OUTPUT.to_lowercase();
    assert!(
        text.contains("interrupted")
            && text.contains("outcome is unknown")
            && text.contains("not run again")
    );

    // A call with a result: replayed as it is, nothing added.
    let history = vec![
        user("go"),
        assistant("", vec![call("c1", "bash")]),
        result("c1", "ok"),
    ];
    assert_eq!(recover(&history), vec![]);

    // Two calls, one answered.
    let mut history = vec![
        user("go"),
        assistant("", vec![call("c1", "read_file"), call("c2", "bash")]),
        result("c1", "ok"),
    ];
    let added = recover(&history);
    assert_eq!(added, vec![interrupted("c2")]);
    history.extend(added);
    assert_eq!(recover(&history), vec![], "recovering twice adds nothing");

    // An earlier assistant of the same turn, and a turn kept after a compact.
    let history = vec![
        user("go"),
        assistant("", vec![call("a", "read_file")]),
        result("a", "ok"),
        assistant("", vec![call("b", "bash"), call("c", "bash")]),
        result("c", "ok"),
    ];
    assert_eq!(recover(&history), vec![interrupted("b")]);
    let history = vec![
        Item::Summary { text: "s".into() },
        assistant("", vec![call("k", "bash")]),
    ];
    assert_eq!(recover(&history), vec![interrupted("k")]);
    assert_eq!(recover(&[]), vec![]);
}

#[test]
fn recovery_round_trips_through_the_file() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let id = log.id().clone();
    log.append_item(&user("go")).unwrap();
    log.append_item(&assistant("", vec![call("c1", "bash"), call("c2", "bash")]))
        .unwrap();
    log.append_item(&result("c1", "ran")).unwrap();
    drop(log); // mino stopped while c2 ran

    let (mut log, loaded) = store.open(&id).unwrap();
    let added = recover(&loaded.history());
    assert_eq!(added, vec![interrupted("c2")]);
    for item in &added {
        log.append_item(item).unwrap();
    }
    drop(log);
    let (_log, loaded) = store.open(&id).unwrap();
    assert_eq!(recover(&loaded.history()), vec![]);
    assert_eq!(loaded.history().last(), Some(&interrupted("c2")));
}

#[test]
fn an_invalid_id_is_refused() {
    for bad in [
        "",
        "latest",
        "3F9C0A1E5B7D4C2A9E8F1B0C6D5A4E3F",
        "../sessions/3f9c0a1e5b7d4c2a9e8f",
    ] {
        let err = SessionId::parse(bad).unwrap_err();
        let text = SessionError::from(err).to_string();
        assert!(text.contains("invalid session id"), "{text}");
        assert!(
            text.contains("32 lowercase hexadecimal characters"),
            "{text}"
        );
    }
    assert!(SessionId::parse("3f9c0a1e5b7d4c2a9e8f1b0c6d5a4e3f").is_ok());
}

/// Environment variable that turns `append_failure_child` into the child of
/// `a_failed_append_names_the_file`; without it that test does nothing.
const CHILD_ENV: &str = "MINO_SESSIONS_TEST_CHILD";

/// Runs in a child process whose file-size limit is a few KiB and which
/// ignores SIGXFSZ, so a large append fails for real with EFBIG.
#[test]
fn append_failure_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, id) = spec.split_once('\n').unwrap();
    let store = SessionStore::new(PathBuf::from(dir));
    let (mut log, _) = store.open(&SessionId::parse(id).unwrap()).unwrap();
    let err = log.append_item(&user(&"x".repeat(64 * 1024))).unwrap_err();
    println!("CHILD-ERROR: {err}");
    assert!(matches!(err, SessionError::Write { .. }), "{err:?}");
    // The file is at its limit now: the next append fails too, and says so.
    let again = log.append_item(&user("small")).unwrap_err();
    assert!(again.to_string().contains("could not save to"), "{again}");
}

#[test]
fn a_failed_append_names_the_file() {
    let temp = tempfile::tempdir().unwrap();
    let store = store_in(temp.path());
    let mut log = store.create(temp.path(), "m").unwrap();
    let id = log.id().clone();
    log.append_item(&user("kept")).unwrap();
    drop(log);
    let path = store.path_of(&id);

    let exe = std::env::current_exe().unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 8 && exec "$0" --exact "$1" --nocapture --test-threads=1"#)
        .arg(&exe)
        .arg(crate::support::test_name(
            module_path!(),
            "append_failure_child",
        ))
        .env(CHILD_ENV, format!("{}\n{id}", store.dir().display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = format!(
        "CHILD-ERROR: could not save to {}: File too large",
        path.display()
    );
    assert!(stdout.contains(&expected), "{stdout}");

    // What the failed append left (part of a line) is dropped with a
    // warning; the saved history is intact and later appends are clean.
    let (mut log, loaded) = store.open(&id).unwrap();
    assert!(loaded.warning.is_some());
    assert_eq!(loaded.history(), vec![user("kept")]);
    log.append_item(&user("after")).unwrap();
    drop(log);
    let (_log, loaded) = store.open(&id).unwrap();
    assert_eq!(loaded.warning, None);
    assert_eq!(loaded.history(), vec![user("kept"), user("after")]);
}
