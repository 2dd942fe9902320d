//! No secret in any result: the values mino protects (env files, remote
//! URL credentials, protected blobs in history, the model key) are removed
//! from what a command prints, in every form the redaction knows, before
//! the result is saved or sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use crate::support::llm::{Reply, text};
use crate::support::stream::{completed_status, records};
use crate::support::world::World;
use serde_json::json;

const KEY: &str = "sk-test-redaction-key-0123456789";
const ENV_MARKER: &str = "tok-ENVMARKER-0123456789";
const URL_MARKER: &str = "ghp_URLMARKER9876543210";

fn git(project: &std::path::Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(project)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn bash(command: &str) -> (String, serde_json::Value) {
    ("bash".to_string(), json!({ "command": command }))
}

/// A repository where `.env` was committed once and removed, with a token
/// in its remote URL.
async fn committed(replies: Vec<Reply>) -> World {
    let world = World::with("openai-chat", replies, "").await;
    let root = world.project.path();
    git(root, &["init", "-q"]);
    std::fs::write(root.join(".env"), format!("API_TOKEN={ENV_MARKER}\n")).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(root, &["add", "-f", ".env", "a.txt"]);
    git(root, &["commit", "-qm", "one"]);
    git(root, &["rm", "-q", "--cached", ".env"]);
    std::fs::remove_file(root.join(".env")).unwrap();
    git(root, &["commit", "-qm", "two"]);
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://bot:{URL_MARKER}@example.com/x.git"),
        ],
    );
    world
}

fn print(world: &World, mode: &str) -> (Vec<serde_json::Value>, String) {
    print_with_home(world, mode, None)
}

/// `print`, with `HOME` set to `home` when given.
fn print_with_home(
    world: &World,
    mode: &str,
    home: Option<&std::path::Path>,
) -> (Vec<serde_json::Value>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
    if let Some(home) = home {
        command.env("HOME", home);
    }
    let out = command
        .args([
            "-p",
            "look",
            "--output-format",
            "stream-json",
            "--mode",
            mode,
        ])
        .arg("--cd")
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let events = records(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(completed_status(&events)),
        "{stderr}"
    );
    (events, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_secrets_and_remote_url_tokens_never_reach_the_model() {
    for mode in ["auto", "bypass"] {
        let world = committed(vec![
            Reply::Tools(vec![
                bash("/usr/bin/git log -p"),
                bash("git show -p HEAD"),
                bash("git show HEAD~1:.env"),
                bash("cat .git/config"),
                bash("/usr/bin/grep -r url ."),
            ]),
            text("looked"),
        ])
        .await;
        let (events, stderr) = print(&world, mode);
        let bodies = world.llm.bodies();
        assert_eq!(bodies.len(), 2, "in {mode}: {stderr}");
        for body in &bodies {
            assert!(!body.contains(ENV_MARKER), "in {mode}: {body}");
            assert!(!body.contains(URL_MARKER), "in {mode}: {body}");
        }
        let shown = serde_json::to_string(&events).unwrap();
        assert!(!shown.contains(ENV_MARKER) && !shown.contains(URL_MARKER));
        if mode == "bypass" {
            // The commands ran, and what they printed was redacted.
            assert!(
                bodies[1].contains("[redacted: API_TOKEN]"),
                "in {mode}: {}",
                bodies[1]
            );
            assert!(
                bodies[1].contains("[redacted: a credential in a remote URL]"),
                "{}",
                bodies[1]
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_printed_reversed_in_hex_and_in_base32_is_redacted() {
    let world = World::with(
        "openai-chat",
        vec![Reply::Tools(vec![bash("cat forms.txt")]), text("read")],
        "",
    )
    .await;
    let reversed: String = KEY.chars().rev().collect();
    let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
    let base32 = Command::new("sh")
        .args(["-c", &format!("printf %s '{KEY}' | base32 -w0")])
        .output()
        .unwrap();
    let base32 = String::from_utf8(base32.stdout).unwrap();
    let base32 = base32.trim_end_matches('=');
    assert!(base32.len() > 20);
    std::fs::write(
        world.project.path().join("forms.txt"),
        format!(
            "r {reversed}\nh {hex}\nH {}\nb {base32}\n",
            hex.to_uppercase()
        ),
    )
    .unwrap();
    let (_, stderr) = print(&world, "bypass");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    let last = &bodies[1];
    for form in [
        reversed.as_str(),
        hex.as_str(),
        &hex.to_uppercase(),
        &base32[..base32.len() - 8],
    ] {
        assert!(!last.contains(form), "{form} in {last}");
    }
    assert!(last.contains("[redacted: OPENAI_API_KEY]"), "{last}");
}

/// The first existing `git` on PATH, as the test itself finds it.
fn real_git() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .unwrap()
}

/// The project's values are read off the first frame's path, with git; a
/// git that takes a second and a half to list history (a script first on
/// PATH) still leaves no value in the first tool result: the redaction
/// waits for the values instead of sending what it has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_waits_for_secret_values_that_are_still_being_read() {
    let world = committed(vec![
        Reply::Tools(vec![(
            "read_file".to_string(),
            json!({ "path": "notes.txt" }),
        )]),
        text("read"),
    ])
    .await;
    std::fs::write(
        world.project.path().join("notes.txt"),
        format!("the old token was {ENV_MARKER}\n"),
    )
    .unwrap();
    let slow = tempfile::TempDir::new().unwrap();
    let script = slow.path().join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" rev-list \"*) sleep 1.5 ;; esac\nexec '{}' \"$@\"\n",
            real_git().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(slow.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "look", "--mode", "auto", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", KEY)
        .env("PATH", path)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    assert!(!bodies[1].contains(ENV_MARKER), "{}", bodies[1]);
    assert!(bodies[1].contains("[redacted: API_TOKEN]"), "{}", bodies[1]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(ENV_MARKER));
}

/// A service error that echoes a secret, and a hook whose reason prints
/// one, are redacted before they are shown or sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_and_hook_reasons_are_redacted() {
    use crate::support::world::SECRET;
    // The hook denies with the project's secret in its reason.
    let world = World::with(
        "openai-chat",
        vec![
            Reply::Tools(vec![(
                "read_file".to_string(),
                json!({ "path": "notes.md" }),
            )]),
            text("denied"),
        ],
        &format!(
            "\n[hooks]\npre_tool_call = [\"/bin/sh\", \"-c\", \"echo leaked {SECRET} >&2; exit 1\"]\n"
        ),
    )
    .await;
    let (events, stderr) = print(&world, "auto");
    let shown = serde_json::to_string(&events).unwrap();
    assert!(shown.contains("[redacted: TOKEN]"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    for body in world.llm.bodies() {
        assert!(!body.contains(SECRET), "{body}");
    }
    // The service's error names the secret.
    let llm = crate::support::llm::Llm::raw(vec![crate::support::server::Reply::status(
        400,
        &json!({"error": {"message": format!("unknown parameter {SECRET}")}}).to_string(),
    )])
    .await;
    let world = World::serving("openai-chat", llm, "");
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "hello", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("unknown parameter [redacted: TOKEN]"),
        "{stderr}"
    );
}

/// A one-letter model key is no secret: the service's words keep their
/// letters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_shorter_than_eight_bytes_is_never_redacted() {
    let world = World::with("openai-chat", vec![Reply::Status(400, None)], "").await;
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "hello", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "e")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("scripted failure"), "{stderr}");
    assert!(!stderr.contains("[redacted"), "{stderr}");
}

/// A hostile repository's `.env` full of long repetitive values (the worst
/// case of the matcher's build) does not hold the first result up: the
/// turn completes, the short token beside them is still redacted in every
/// form, and the long value's start is removed where it is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_env_of_long_repetitive_values_neither_hangs_nor_hides_the_token_beside_it() {
    let world = World::with(
        "openai-chat",
        vec![
            Reply::Tools(vec![bash(
                "printf '%s' \"$(cat forms.txt)\"; head -c 40000 big.txt",
            )]),
            text("read"),
        ],
        "",
    )
    .await;
    let root = world.project.path();
    let big = format!("{}end", "k".repeat(60_000));
    let mut env = format!("API_TOKEN={ENV_MARKER}\n");
    for n in 0..4 {
        env.push_str(&format!("BIG_{n}={}{n}\n", big));
    }
    std::fs::write(root.join(".env"), env).unwrap();
    std::fs::write(root.join("big.txt"), &big).unwrap();
    let hex: String = ENV_MARKER.bytes().map(|b| format!("{b:02x}")).collect();
    std::fs::write(root.join("forms.txt"), format!("t {ENV_MARKER} h {hex}\n")).unwrap();
    let (_, stderr) = print(&world, "bypass");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    let last = &bodies[1];
    assert!(!last.contains(ENV_MARKER), "{last}");
    assert!(!last.contains(&hex), "{last}");
    assert!(last.contains("[redacted: API_TOKEN]"), "{last}");
    assert!(
        !last.contains(&"k".repeat(20_000)),
        "the long value's start shows"
    );
}

/// A value of a credential store in the home (`~/.pgpass`, a token in
/// `~/.config/gh/hosts.yml`) copied into a project file is redacted from
/// that file's read like the project's own secrets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_home_credential_copied_into_the_project_is_redacted() {
    const PG: &str = "pg-HOMEMARKER-5521";
    const GH: &str = "gho_HOMEMARKER_8812";
    let world = World::with(
        "openai-chat",
        vec![
            Reply::Tools(vec![
                ("read_file".into(), json!({"path": "config/database.yml"})),
                bash("cat config/database.yml"),
            ]),
            text("read"),
        ],
        "",
    )
    .await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".pgpass"), format!("db:5432:*:app:{PG}\n")).unwrap();
    std::fs::create_dir_all(home.path().join(".config/gh")).unwrap();
    std::fs::write(
        home.path().join(".config/gh/hosts.yml"),
        format!("github.com:\n    oauth_token: {GH}\n"),
    )
    .unwrap();
    let config = world.project.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("database.yml"),
        format!("password: {PG}\ndeploy_token: {GH}\n"),
    )
    .unwrap();
    let (events, stderr) = print_with_home(&world, "bypass", Some(home.path()));
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{stderr}");
    assert!(
        !bodies[1].contains(PG) && !bodies[1].contains(GH),
        "{}",
        bodies[1]
    );
    assert!(
        bodies[1].contains("[redacted: a password in ~/.pgpass]"),
        "{}",
        bodies[1]
    );
    let shown = serde_json::to_string(&events).unwrap();
    assert!(!shown.contains(PG) && !shown.contains(GH), "{shown}");
}
