//! A model service that tries to exhaust the machine, against the built
//! binary in `-p` mode: an answer of 200 MB, 10,000 tool calls in one
//! response, and a stream that trickles a byte at a time. Each ends the
//! request with an error naming the bound, and the peak memory (`VmHWM` in
//! `/proc`) stays small. The service is a raw loopback server of this file,
//! so that it can generate what it sends instead of holding it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;

/// Writes one response body to a connection; stops at the first error (the
/// client went away).
type Body = fn(&mut TcpStream) -> std::io::Result<()>;

/// Serves every request on a loopback port with `body`; returns the base URL.
fn serve(body: Body) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                if read_request(&mut stream).is_ok() {
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                    if stream.write_all(head.as_bytes()).is_ok() {
                        let _ = body(&mut stream);
                    }
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}/v1")
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<()> {
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
    reader.read_exact(&mut body)
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

/// 10,000 tool calls in one response.
fn ten_thousand_calls(stream: &mut TcpStream) -> std::io::Result<()> {
    for i in 0..10_000 {
        let call = json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\":\"notes.md\"}"}}]});
        stream.write_all(frame(call).as_bytes())?;
    }
    let finish = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
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

/// Runs `mino -p` against `base_url` with `extra` in `[model]`, polling its
/// peak memory until it exits. A run that does not end is killed after a
/// generous guard and the test fails (it would otherwise hang).
fn run_p(base_url: &str, extra: &str) -> Run {
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    std::fs::write(project.path().join("notes.md"), "# notes\n").unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"m\"\nmax_retries = 0\n{extra}"
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "write", "--cd"])
        .arg(project.path())
        .env("MINO_HOME", home.path())
        .env("OPENAI_API_KEY", "test")
        .env("AGENT_YOLO", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let guard = Instant::now() + Duration::from_secs(120);
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = vm_hwm_kib(child.id()) {
            peak_kib = peak_kib.max(kib);
        }
        if Instant::now() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mino -p did not end: {}", stderr.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let session_bytes = std::fs::read_dir(home.path().join("sessions"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|entry| entry.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0);
    let records = std::fs::read_dir(home.path().join("sessions"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
                .flat_map(|text| {
                    text.lines()
                        .map(|line| {
                            let tail: String = line.chars().rev().take(200).collect();
                            tail.chars().rev().collect()
                        })
                        .collect::<Vec<String>>()
                })
                .collect()
        })
        .unwrap_or_default();
    Run {
        stderr: stderr.join().unwrap(),
        peak_kib,
        session_bytes,
        records,
    }
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

#[test]
fn ten_thousand_calls_in_one_response_end_at_the_call_bound() {
    let run = run_p(&serve(ten_thousand_calls), "");
    assert!(
        run.stderr.contains("the response went past 64 tool calls")
            && run.stderr.contains("max_tool_calls"),
        "{}",
        run.stderr
    );
    assert!(
        run.peak_kib > 0 && run.peak_kib < 96 * 1024,
        "{} KiB",
        run.peak_kib
    );
    // No call of that response ran or was saved with a result.
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
