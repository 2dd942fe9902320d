//! Background processes end to end: the built binary against a loopback
//! model service starts a real HTTP server (`python3 -m http.server`) with
//! `bash` and `background: true`, reaches it from a later bash call's
//! `curl` (the calls share the session's network), reads its log with
//! `bash_output`, stops it with `bash_kill`; and nothing of it is left
//! after `/new` or after mino is killed with SIGKILL (checked in `/proc`).

use std::time::{Duration, Instant};

use serde_json::json;

use super::sandbox::{Setup, stderr};
use crate::support::llm::{Reply, text, tool};
use crate::support::stream::outputs;

/// The server, serving the project on the sandbox's loopback.
fn server(setup: &Setup, port: u16) -> String {
    format!(
        "exec python3 -u -m http.server {port} --bind 127.0.0.1 --directory {}",
        setup.project().display()
    )
}

fn background(command: &str) -> Reply {
    tool("bash", json!({ "command": command, "background": true }))
}

/// A later call that waits for the server to answer (a state, not a time).
fn fetch(port: u16) -> Reply {
    tool(
        "bash",
        json!({ "command": format!(
            "for i in $(seq 200); do curl -sf http://127.0.0.1:{port}/notes.md && break; sleep 0.05; done; echo fetched"
        ) }),
    )
}

/// The processes of this machine running the test's server (its command
/// line names the test's own project).
fn servers(setup: &Setup) -> Vec<i32> {
    let project = setup.project().display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains("http.server")
            && cmdline.contains(&project)
            && !cmdline.contains("bash -c")
        {
            found.push(pid);
        }
    }
    found
}

/// Waits until `ready` holds for the server processes, or fails after a
/// generous bound (a state is waited for, never a duration).
fn wait_servers(setup: &Setup, what: &str, ready: impl Fn(&[i32]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = servers(setup);
        if ready(&now) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still {now:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_server_is_reached_by_a_later_call_read_and_killed() {
    reached_read_and_killed(8765, "").await;
}

/// Under Landlock alone there is no namespace to share: the server is on
/// the host's loopback, and the same holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_landlock_alone_a_background_server_is_reached_read_and_killed() {
    reached_read_and_killed(18768, "[sandbox]\nnamespaces = false\n").await;
}

async fn reached_read_and_killed(port: u16, settings: &str) {
    let setup = Setup::new(Vec::new(), settings).await;
    let start = background(&server(&setup, port));
    let setup = setup
        .with_replies(
            vec![
                start,
                fetch(port),
                tool("bash_output", json!({ "id": 1 })),
                tool("bash_kill", json!({ "id": 1 })),
                text("done"),
            ],
            settings,
        )
        .await;
    let (events, out) = setup.bypass("start the dev server").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        results[0].contains("Started background process 1"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("notes\n") && results[1].contains("fetched"),
        "the later call reached the server: {}",
        results[1]
    );
    assert!(
        results[2].contains("still running") && results[2].contains("GET /notes.md"),
        "bash_output reads the server's log: {}",
        results[2]
    );
    assert!(
        results[3].contains("Stopped background process 1"),
        "{}",
        results[3]
    );
    // Offered only while a background process exists.
    let bodies = setup.llm.bodies();
    let offered = |body: &str| {
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(names.contains(&"bash"), "{names:?}");
        names.contains(&"bash_output") && names.contains(&"bash_kill")
    };
    assert!(!offered(&bodies[0]), "offered before any");
    assert!(offered(&bodies[1]), "offered while one runs");
    assert!(!offered(&bodies[4]), "offered after the kill");
    // A process killed in the sandbox's namespace leaves /proc a moment
    // after the kill returns: wait for that state.
    wait_servers(&setup, "bash_kill stops the server", <[i32]>::is_empty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_of_a_background_server_is_left_after_new_or_a_sigkill() {
    let setup = Setup::new(Vec::new(), "").await;
    let port = 8766;
    let (first, again) = (
        background(&server(&setup, port)),
        background(&server(&setup, port)),
    );
    let setup = setup
        .with_replies(
            vec![first, text("started"), again, text("started again")],
            "",
        )
        .await;
    let mut pty = setup.line_in_bypass();
    pty.send_line("start the server");
    pty.expect("started");
    wait_servers(&setup, "the server starts", |s| !s.is_empty());
    pty.send_line("/new");
    wait_servers(&setup, "/new stops the server", <[i32]>::is_empty);
    pty.send_line("start it again");
    pty.expect("started again");
    wait_servers(&setup, "the server starts again", |s| !s.is_empty());
    let mino = i32::try_from(pty.pid()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(mino).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_servers(&setup, "mino's SIGKILL stops the server", <[i32]>::is_empty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifth_background_process_is_refused_with_the_limit_named() {
    let setup = Setup::new(Vec::new(), "").await;
    let mut replies: Vec<Reply> = (0..5).map(|_| background("sleep 600")).collect();
    replies.push(text("done"));
    let setup = setup.with_replies(replies, "").await;
    let (events, out) = setup.bypass("start five").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 5, "{results:?}");
    for (i, result) in results[..4].iter().enumerate() {
        assert!(
            result.contains(&format!("Started background process {}", i + 1)),
            "{result}"
        );
    }
    assert!(
        results[4].contains("4 background processes are running already")
            && results[4].contains("[limits] background_shells = 4"),
        "{}",
        results[4]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_a_background_process_prints_in_pieces_never_reaches_the_model() {
    use crate::support::world::SECRET;
    let setup = Setup::new(Vec::new(), "").await;
    let (head, tail) = SECRET.split_at(SECRET.len() / 2);
    // The first piece is printed before the start returns, the second
    // after it: neither may be handed out alone.
    let command = format!("printf 'value: {head}'; sleep 3; printf '{tail}\\n'; sleep 600");
    let setup = setup
        .with_replies(
            vec![
                background(&command),
                tool("bash", json!({ "command": "sleep 4; echo waited" })),
                tool("bash_output", json!({ "id": 1 })),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = setup.bypass("print it").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    // What the process printed (the command itself, written by the model,
    // holds the pieces as text).
    let printed = |result: &str, after: &str| result.split_once(after).unwrap().1.to_string();
    let first = printed(&results[0], "First output:");
    let later = printed(&results[2], "New output:");
    assert!(first.contains("value: "), "{first}");
    assert!(later.contains("[redacted"), "{later}");
    for output in [first, later] {
        assert!(!output.contains(head) && !output.contains(tail), "{output}");
    }
}

/// `GET /notes.md` on the host's loopback; `None` when nothing answers.
fn get_from_host(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream
        .write_all(b"GET /notes.md HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    (!answer.is_empty()).then_some(answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_port_reaches_the_server_from_the_host_until_mino_is_killed() {
    let port = 18767;
    let settings = format!("[sandbox]\npublish = [{port}]\n");
    let setup = Setup::new(Vec::new(), &settings).await;
    let start = background(&server(&setup, port));
    let setup = setup
        .with_replies(vec![start, text("serving")], &settings)
        .await;
    let mut pty = setup.line_in_bypass();
    pty.send_line("start the server");
    pty.expect("serving");
    assert!(pty.all().contains("Forwarded to the host"), "{}", pty.all());
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        if let Some(answer) = get_from_host(port).filter(|a| a.contains("200")) {
            break answer;
        }
        assert!(
            Instant::now() < deadline,
            "the published port never answered"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(answer.ends_with("notes\n"), "{answer}");
    let mino = i32::try_from(pty.pid()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(mino).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_servers(&setup, "mino's SIGKILL stops the server", <[i32]>::is_empty);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "the port stayed open");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shells_on_the_full_screen_lists_shows_and_stops_one() {
    use crate::support::world::World;
    let world = World::with(
        "openai-chat",
        vec![
            background("echo shell-line-one; echo shell-line-two; exec sleep 600"),
            text("it runs"),
        ],
        "",
    )
    .await;
    let mut screen = world.full_screen_in(world.project.path(), &["--yolo"], &[]);
    screen.submit("start it");
    screen.wait_for("it runs");
    screen.submit("/shells");
    let listed = screen.wait_for_all(&["Background processes of this session", "shell-line-two"]);
    assert!(listed.contains("running"), "{listed}");
    screen.submit("/shells 1");
    screen.wait_for_all(&["Output of background process 1", "shell-line-one"]);
    screen.submit("/shells kill 1");
    screen.wait_for("Stopped background process 1");
    screen.submit("/shells");
    screen.wait_for("No background processes in this session");
    crate::support::full_screen::quit(&mut screen);
}

/// A call in the shared network still leaves through the proxy: a host
/// loopback service named in `allow_private` is reached through the
/// keeper's bridge (and loopback then goes through the proxy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_the_shared_network_still_leaves_through_the_proxy() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nhost-index");
        }
    });
    let settings = format!("[sandbox]\nallow_private = [\"127.0.0.1:{port}\"]\n");
    let setup = Setup::new(
        vec![
            background("echo holding; exec sleep 600"),
            tool(
                "bash",
                json!({ "command": format!("curl -s http://127.0.0.1:{port}/; echo; echo fetched") }),
            ),
            text("done"),
        ],
        &settings,
    )
    .await;
    let (events, out) = setup.bypass("fetch through the proxy").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(
        results[0].contains("Started background process 1"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("host-index"), "{}", results[1]);
}

/// A background process that plants an execution surface and outlives
/// the turn: when mino ends (here `-p` after its one turn) the process is
/// stopped with the sandbox's check after it, so what it planted is set
/// aside, not left for the next agent to read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_surface_a_background_process_planted_is_set_aside_when_mino_ends() {
    let b = Setup::new(
        vec![
            background("mkdir -p bg && echo obey-bg > bg/AGENTS.md && echo planted && sleep 600"),
            tool(
                "bash",
                json!({ "command": "for i in $(seq 200); do test -f bg/AGENTS.md && break; sleep 0.05; done; cat bg/AGENTS.md" }),
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("plant in the background").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(results[1].contains("obey-bg"), "{results:?}");
    let project = b.project();
    assert!(
        project.join("bg/AGENTS.md").symlink_metadata().is_err(),
        "a background process's AGENTS.md stayed after mino ended"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("bg/AGENTS.md.refused-by-mino")).unwrap(),
        "obey-bg\n"
    );
}
