//! A model service that tries to exhaust the machine, against the built
//! binary in `-p` mode: an answer of 200 MB, 10,000 tool calls in one
//! response, and a stream that trickles a byte at a time. The answer and
//! the trickle end the request with an error naming the bound; the calls
//! past the bound on calls are each refused and the turn goes on. The peak
//! memory (`VmHWM` in `/proc`) stays small. The service is a raw loopback
//! server of this file, so that it can generate what it sends instead of
//! holding it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;

/// Writes one response body to a connection; stops at the first error (the
/// client went away).
type Body = fn(&mut TcpStream) -> std::io::Result<()>;

/// Serves every request on a loopback port with `body`; returns the base URL.
fn serve(body: Body) -> String {
    serve_then(body, body).0
}

/// Serves the first request with `first` and every later one with `then`,
/// keeping every request's body; returns the base URL and the bodies.
fn serve_then(first: Body, then: Body) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            // One request at a time: a turn sends the next only after the
            // last one's answer.
            let Ok(request) = read_request(&mut stream) else {
                continue;
            };
            let body = {
                let mut bodies = kept.lock().unwrap();
                bodies.push(request);
                if bodies.len() == 1 { first } else { then }
            };
            std::thread::spawn(move || {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_ok() {
                    let _ = body(&mut stream);
                }
            });
        }
    });
    (format!("http://127.0.0.1:{port}/v1"), bodies)
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn frame(delta: serde_json::Value) -> String {
    let chunk = json!({"choices": [{"index": 0, "delta": delta}]});
    format!("data: {chunk}\n\n")
}

/// 200 MB of answer text, in pieces of 64 KiB.
fn huge_answer(stream: &mut TcpStream) -> std::io::Result<()> {
    let piece = frame(json!({"content": "all work and no play ".repeat(3120)}));
    for _ in 0..(200_000_000 / piece.len()) {
        stream.write_all(piece.as_bytes())?;
    }
    stream.write_all(b"data: [DONE]\n\n")
}

/// 10,000 tool calls in one response, each reading a file of its own.
fn ten_thousand_calls(stream: &mut TcpStream) -> std::io::Result<()> {
    for i in 0..10_000 {
        let arguments = json!({ "path": format!("notes/{i}.md") }).to_string();
        let call = json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
            "function": {"name": "read_file", "arguments": arguments}}]});
        stream.write_all(frame(call).as_bytes())?;
    }
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    stream.write_all(format!("data: {finish}\n\ndata: [DONE]\n\n").as_bytes())
}

/// A short answer.
fn done(stream: &mut TcpStream) -> std::io::Result<()> {
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    stream.write_all(frame(json!({"content": "Done."})).as_bytes())?;
    stream.write_all(format!("data: {finish}\n\ndata: [DONE]\n\n").as_bytes())
}

/// One word, then a comment byte every 20 ms, for ever.
fn trickle(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(frame(json!({"content": "Hello"})).as_bytes())?;
    loop {
        stream.write_all(b":")?;
        std::thread::sleep(Duration::from_millis(20));
        stream.write_all(b"\n")?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a `-p` run left: its stderr, its peak memory in KiB, the bytes of
/// its home's session files.
struct Run {
    stderr: String,
    stdout: String,
    success: bool,
    peak_kib: u64,
    session_bytes: u64,
    /// The session files' records, each at most 200 characters.
    records: Vec<String>,
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `mino -p` against `base_url` with `extra` in its settings (after
/// `[model]`'s own keys), in a home and project of its own.
fn run_p(base_url: &str, extra: &str) -> Run {
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    std::fs::write(project.path().join("notes.md"), "# notes\n").unwrap();
    configure(home.path(), base_url, extra);
    run_in(home.path(), project.path(), &["-p", "write"])
}

fn configure(home: &Path, base_url: &str, extra: &str) {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"m\"\nmax_retries = 0\n{extra}"
        ),
    )
    .unwrap();
}

/// Runs mino with `args` in `project` and `home`, polling its peak memory
/// until it exits. A run that does not end is killed after a generous
/// guard and the test fails (it would otherwise hang).
fn run_in(home: &Path, project: &Path, args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(args)
        .arg("--cd")
        .arg(project)
        .env("MINO_HOME", home)
        .env("OPENAI_API_KEY", "test")
        .env("AGENT_YOLO", "")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = read_all(child.stdout.take().unwrap());
    let stderr = read_all(child.stderr.take().unwrap());
    let guard = Instant::now() + Duration::from_secs(120);
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(kib) = vm_hwm_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        if Instant::now() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mino -p did not end: {}", stderr.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let files = session_files(home);
    Run {
        stderr: stderr.join().unwrap(),
        stdout: stdout.join().unwrap(),
        success: status.success(),
        peak_kib,
        session_bytes: files.iter().map(|text| text.len() as u64).sum(),
        records: files
            .iter()
            .flat_map(|text| {
                text.lines()
                    .map(|line| {
                        let tail: String = line.chars().rev().take(200).collect();
                        tail.chars().rev().collect()
                    })
                    .collect::<Vec<String>>()
            })
            .collect(),
    }
}

/// What `pipe` gives until it ends, read on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// The texts of the home's session files.
fn session_files(home: &Path) -> Vec<String> {
    std::fs::read_dir(home.join("sessions"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_answer_of_200_mb_ends_at_the_text_bound_with_little_memory() {
    let run = run_p(&serve(huge_answer), "");
    assert!(
        run.stderr
            .contains("the response went past 8388608 bytes of answer text")
            && run.stderr.contains("max_response_text_bytes"),
        "{}",
        run.stderr
    );
    // The binary itself and twice the bound, with room; before the bound
    // this run took more than a gigabyte.
    eprintln!("peak memory with 200 MB: {} KiB", run.peak_kib);
    assert!(
        run.peak_kib > 0 && run.peak_kib < 96 * 1024,
        "{} KiB",
        run.peak_kib
    );
    assert!(
        run.session_bytes < 2 * 8 * 1024 * 1024,
        "{}",
        run.session_bytes
    );
    // What was said up to the bound is saved, cut off, with why.
    assert!(
        run.records
            .iter()
            .any(|r| r.contains("[cut off: ")
                && r.contains("went past 8388608 bytes of answer text")),
        "{:?}",
        run.records
    );
    // All of it up to the piece that went past the bound.
    assert!(run.session_bytes > 7 * 1024 * 1024, "{}", run.session_bytes);
}

/// Each tool result of a request body, by call id: its status word and
/// whether its text is the refusal past the bound on calls.
fn results_of(body: &str) -> std::collections::HashMap<String, (bool, String)> {
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    let mut results = std::collections::HashMap::new();
    for message in body["messages"].as_array().unwrap() {
        if message["role"] != "tool" {
            continue;
        }
        let id = message["tool_call_id"].as_str().unwrap().to_string();
        let content = message["content"].as_str().unwrap().to_string();
        let refused = content.contains("one response may ask for at most 64 tool calls");
        assert!(
            results.insert(id.clone(), (refused, content)).is_none(),
            "{id} twice"
        );
    }
    results
}

fn bodies_of(served: &Mutex<Vec<String>>) -> Vec<String> {
    served.lock().unwrap().clone()
}

/// The call ids of a request body's assistant messages.
fn calls_of(body: &str) -> Vec<String> {
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["tool_calls"].as_array())
        .flatten()
        .map(|call| call["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ten_thousand_calls_in_one_response_run_the_first_64_and_refuse_each_other_one() {
    let (base_url, served) = serve_then(ten_thousand_calls, done);
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    std::fs::create_dir(project.path().join("notes")).unwrap();
    for i in 0..64 {
        let text = format!("note {i}\n");
        std::fs::write(project.path().join(format!("notes/{i}.md")), text).unwrap();
    }
    // Room for every call of the turn, and a window the refusals fit in
    // without compaction.
    configure(
        home.path(),
        &base_url,
        "context_window = 10000000\n[limits]\nturn_tool_calls = 100\n",
    );
    let args = ["-p", "write", "--output-format", "stream-json"];
    let run = run_in(home.path(), project.path(), &args);
    assert!(run.success, "{}", run.stderr);
    // The refusals are one record; the calls kept have theirs.
    let records: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of_type = |kind: &str| records.iter().filter(|r| r["type"] == kind).count();
    let refused: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r["type"] == "notice" && r["kind"] == "calls_refused")
        .collect();
    assert_eq!(refused.len(), 1, "{}", run.stdout);
    let message = refused[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("9936 tool calls of one response were refused without running")
            && message.contains("at most 64 (`[model] max_tool_calls`)"),
        "{message}"
    );
    assert_eq!((of_type("tool_call"), of_type("tool_result")), (64, 64));
    assert!(
        !run.stderr.contains("went past"),
        "the request ended with an error: {}",
        run.stderr
    );
    eprintln!("peak memory with 10,000 calls: {} KiB", run.peak_kib);
    assert!(
        run.peak_kib > 0 && run.peak_kib < 96 * 1024,
        "{} KiB",
        run.peak_kib
    );
    // The next request pairs every call id with one result: the first 64
    // ran (each read its note), the 9,936 others are refused.
    let bodies = bodies_of(&served);
    assert_eq!(bodies.len(), 2, "the turn went on with one more request");
    let calls = calls_of(&bodies[1]);
    assert_eq!(calls.len(), 10_000);
    let results = results_of(&bodies[1]);
    assert_eq!(results.len(), 10_000);
    for (i, id) in calls.iter().enumerate() {
        let (refused, content) = results.get(id).unwrap_or_else(|| panic!("{id} unpaired"));
        assert_eq!(*refused, i >= 64, "{id}: {content}");
        if i < 64 {
            assert!(content.contains(&format!("note {i}")), "{id}: {content}");
        }
    }
    // The session holds them; resumed, it needs nothing recovered and
    // sends the same pairs.
    let session = session_files(home.path()).concat();
    assert_eq!(
        session
            .lines()
            .filter(|line| line.contains("\"not_run\"") && line.contains("at most 64 tool calls"))
            .count(),
        9_936
    );
    let again = run_in(home.path(), project.path(), &["-c", "-p", "again"]);
    assert!(again.success, "{}", again.stderr);
    assert!(!again.stderr.contains("Recovered"), "{}", again.stderr);
    let resumed = bodies_of(&served)[2].clone();
    assert_eq!(calls_of(&resumed), calls);
    assert_eq!(results_of(&resumed), results);
}

#[test]
fn a_flood_of_calls_past_the_hard_cap_ends_the_request_naming_it() {
    // 1 KiB for the calls past the bound: a dozen of them.
    let run = run_p(
        &serve(ten_thousand_calls),
        "max_tool_argument_bytes = 1024\n",
    );
    assert!(
        run.stderr
            .contains("the response went past 1024 bytes of tool calls past `max_tool_calls`")
            && run.stderr.contains("max_tool_argument_bytes"),
        "{}",
        run.stderr
    );
    assert!(run.session_bytes < 64 * 1024, "{}", run.session_bytes);
}

#[test]
fn a_trickle_after_the_first_byte_is_a_stall_naming_its_settings() {
    // 2 bytes every 40 ms: 50 bytes a second, under 64.
    let run = run_p(
        &serve(trickle),
        "request_timeout_secs = 1\nstall_min_bytes = 64\n",
    );
    assert!(
        run.stderr
            .contains("fewer than 64 bytes in 1 s; the stream stalled")
            && run.stderr.contains("stall_min_bytes"),
        "{}",
        run.stderr
    );
    // The trickle's text so far is kept, marked as cut off by the stall.
    assert!(
        run.records
            .iter()
            .any(|r| r.contains("[cut off:") && r.contains("the stream stalled")),
        "{:?}",
        run.records
    );
}
