//! Sessions belong to a project, end to end: the built binary on the full
//! screen in a pseudo-terminal, with a home holding sessions of this
//! project and of another. `/sessions` lists this project's (never one
//! without a prompt), `/sessions --all` every project's with its
//! directory; `/resume` takes the start of an id; resuming another
//! project's session asks whether to switch there or stay; a session that
//! gets no prompt leaves no file; leaving prints `mino --resume ID`. Also
//! the store's side: reserved ids, prefixes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use mino::model::Item;
use mino::session::{LogEntry, SessionError, SessionId, SessionStore};
use tempfile::TempDir;

use crate::support::full_screen::{env, quit, status_bar};
use crate::support::llm::text;
use crate::support::pty::Screen;
use crate::support::world::World;

/// A saved session of `project` with `prompt` (none: it never got one).
fn saved(home: &Path, project: &Path, prompt: Option<&str>) -> SessionId {
    let store = SessionStore::new(home.join("sessions"));
    let mut log = store.create(project, "test-model").unwrap();
    if let Some(prompt) = prompt {
        log.append(&LogEntry::Item(Item::User {
            text: prompt.into(),
        }))
        .unwrap();
        log.append(&LogEntry::Item(Item::Assistant {
            text: format!("answer to {prompt}"),
            tool_calls: Vec::new(),
        }))
        .unwrap();
    }
    log.id().clone()
}

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap()
}

fn session_files(home: &Path) -> usize {
    std::fs::read_dir(home.join("sessions"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_this_projects_and_another_projects_session_asks_before_resuming() {
    let world = World::with("openai-chat", vec![text("hello back")], "").await;
    let here = canonical(world.project.path());
    let other_dir = TempDir::new().unwrap();
    let other = canonical(other_dir.path());
    let home = world.home.path();
    let mine = saved(home, &here, Some("fix the parser here"));
    let empty = saved(home, &here, None);
    let theirs = saved(home, &other, Some("tune the other build"));
    assert_eq!(session_files(home), 3);

    let mut screen = world.full_screen_in(&here, &[], &[]);
    screen.submit("/sessions");
    let listed = screen.wait_for(&format!("{mine}"));
    assert!(listed.contains("fix the parser here"), "{listed}");
    assert!(!listed.contains("tune the other build"), "{listed}");
    assert!(!listed.contains(theirs.as_str()), "{listed}");
    assert!(
        !listed.contains(empty.as_str()),
        "the prompt-less session is hidden\n{listed}"
    );

    screen.submit("/sessions --all");
    let all = screen.wait_for("tune the other build");
    assert!(
        all.contains(&other.display().to_string()),
        "the directory column\n{all}"
    );

    // The start of the id, as the status bar shows it.
    screen.submit(&format!("/resume {}", theirs.short()));
    screen.wait_for_all(&[
        &format!("Session {} was started in", theirs.short()),
        "switch",
        "stay",
    ]);
    // Stay: continue it here.
    screen.send(b"\x1b[B");
    screen.send(b"\r");
    let resumed = screen.wait_for_all(&[
        &format!("Session: {theirs}"),
        "it continues here",
        "answer to tune the other build",
    ]);
    assert!(resumed.contains(&here.display().to_string()), "{resumed}");
    screen.submit("/quit");
    let (code, bytes) = screen.wait_exit();
    assert_eq!(code, 0);
    let out = String::from_utf8_lossy(&bytes);
    assert!(
        out.contains(&format!("mino --resume {theirs}")),
        "the exit line names the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_to_another_projects_session_starts_again_there() {
    let world = World::with("openai-chat", vec![], "").await;
    let here = canonical(world.project.path());
    let other_dir = TempDir::new().unwrap();
    let other = canonical(other_dir.path());
    let theirs = saved(world.home.path(), &other, Some("tune the other build"));

    let mut screen = world.full_screen_in(&here, &[], &[]);
    screen.submit(&format!("/resume {}", &theirs.as_str()[..6]));
    screen.wait_for("was started in");
    screen.send(b"\r");
    let name = other.file_name().unwrap().to_string_lossy().to_string();
    let switched = screen.wait_for_all(&[
        &format!("Session: {theirs}"),
        "answer to tune the other build",
        &format!("mino · {name}"),
    ]);
    assert!(!switched.contains("it continues here"), "{switched}");
    screen.submit("/quit");
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_a_prompt_leaves_no_file_and_no_exit_line() {
    let world = World::with("openai-chat", vec![], "").await;
    let here = canonical(world.project.path());
    let mut screen = world.full_screen_in(&here, &[], &[]);
    screen.submit("/quit");
    let (code, bytes) = screen.wait_exit();
    assert_eq!(code, 0);
    assert_eq!(session_files(world.home.path()), 0);
    assert!(!String::from_utf8_lossy(&bytes).contains("mino --resume"));
}

#[test]
fn ids_are_reserved_before_their_file_and_a_unique_prefix_names_one() {
    let temp = TempDir::new().unwrap();
    let store = SessionStore::new(temp.path().join("sessions"));
    let id = store.reserve().unwrap();
    assert!(!store.path_of(&id).exists(), "nothing written yet");
    let log = store.create_as(&id, Path::new("/p"), "m").unwrap();
    assert_eq!(log.id(), &id);
    drop(log);
    assert!(matches!(
        store.create_as(&id, Path::new("/p"), "m"),
        Err(SessionError::Create { .. })
    ));
    assert_eq!(store.resolve(id.as_str()).unwrap(), id);
    assert_eq!(store.resolve(&id.as_str()[..8]).unwrap(), id);
    assert_eq!(store.resolve(&id.as_str()[..4]).unwrap(), id);
    assert!(matches!(
        store.resolve(&id.as_str()[..3]),
        Err(SessionError::InvalidId(_))
    ));
    assert!(matches!(
        store.resolve("../x"),
        Err(SessionError::InvalidId(_))
    ));
    let other = if id.as_str().starts_with('0') {
        "1111"
    } else {
        "0000"
    };
    assert!(matches!(
        store.resolve(other),
        Err(SessionError::NoMatch { .. })
    ));
    // Two ids that share a start: ambiguous until it is long enough.
    let a = SessionId::parse("abcd0000000000000000000000000000").unwrap();
    let b = SessionId::parse("abcd1111111111111111111111111111").unwrap();
    store.create_as(&a, Path::new("/p"), "m").unwrap();
    store.create_as(&b, Path::new("/p"), "m").unwrap();
    let err = store.resolve("abcd").unwrap_err();
    assert!(matches!(err, SessionError::Ambiguous { .. }), "{err}");
    assert!(err.to_string().contains(a.as_str()), "{err}");
    assert_eq!(store.resolve("abcd1").unwrap(), b);
}

/// The percentage in the status bar's `N% of WINDOW`, if it shows one.
fn context_percent(screen: &str) -> Option<u64> {
    let at = screen.find("% of ")?;
    let digits: String = screen[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_long_session_shows_its_context_use_before_any_request() {
    // No reply is scripted: a request would fail, and none is expected.
    let world = World::with("openai-chat", vec![], "").await;
    let here = canonical(world.project.path());
    let store = SessionStore::new(world.home.path().join("sessions"));
    let mut log = store.create(&here, "test-model").unwrap();
    for n in 0..5_000 {
        log.append(&LogEntry::Item(Item::User {
            text: format!("question {n}: why does the parser stop at this line?"),
        }))
        .unwrap();
        log.append(&LogEntry::Item(Item::Assistant {
            text: format!("answer {n}: the record ends with a comma, so it waits for more."),
            tool_calls: Vec::new(),
        }))
        .unwrap();
    }
    let id = log.id().clone();
    drop(log);

    // The history scrolls the banner away: no waiting for it here.
    let home = world.home.path().to_str().unwrap();
    let mut screen = Screen::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--cd", here.to_str().unwrap(), "--resume", id.as_str()],
        &here,
        &env(&[("MINO_HOME", home)]),
    );
    // 10,000 records of about 60 characters: well over 1% of 128k tokens.
    let shown = screen.wait_until("a non-zero context use in the status bar", |text| {
        text.contains("answer 4999") && context_percent(&status_bar(text)).is_some_and(|p| p > 0)
    });
    assert!(status_bar(&shown).contains("of 128k"), "{shown}");
    assert!(
        world.llm.bodies().is_empty(),
        "the estimate needs no request"
    );
    quit(&mut screen);
}
