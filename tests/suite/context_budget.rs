//! The context budget against a loopback model whose window is real: it
//! counts each request's tokens by its own rule (more than mino's estimate)
//! and refuses a request larger than its window as llama.cpp does. A tool
//! output that would overflow a 4k window is cut to fit, head and tail kept,
//! the whole output in the session log; a service that still refuses gets
//! one compaction and one retry, then an error naming `context_window`.

use serde_json::{Value, json};

use std::process::Output;

use super::real_models::{bodies, of_type, session_of};
use crate::support::llm::{text, tool};
use crate::support::prompt_tokens;
use crate::support::world::World;

const WINDOW: u64 = 4096;

/// `mino -p PROMPT --output-format stream-json` in `world`: its records,
/// its stderr and how it ended. The key is long, so redacting it cannot
/// touch the words of a service's error.
async fn print(world: &World, prompt: &str) -> (Vec<Value>, String, Output) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", prompt, "--output-format", "stream-json", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "sk-loopback-4c1e8f0a")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        events,
        String::from_utf8_lossy(&out.stderr).to_string(),
        out,
    )
}

/// Number-heavy test output, about 12.6 KB: the shape that broke a 4k
/// window (about 1.6 characters a token).
fn noisy_output() -> String {
    let mut out = String::from("FIRST-LINE collected 300 items\n");
    for i in 0..300 {
        out.push_str(&format!(
            "tests/t{i:03}.py::case_{} PASSED [{:>3}%] 0.{:02}s\n",
            i * 7,
            i / 3,
            i % 97
        ));
    }
    out.push_str(
        "FAILED tests/t299.py::case_2093 - assert 41 == 42\nLAST-LINE 1 failed, 299 passed\n",
    );
    out
}

fn session_log(world: &World, session: &str) -> String {
    std::fs::read_to_string(
        world
            .home
            .path()
            .join("sessions")
            .join(format!("{session}.jsonl")),
    )
    .unwrap()
}

#[tokio::test]
async fn a_tool_output_that_would_overflow_a_4k_window_is_cut_to_fit_and_the_next_request_stays_under_it()
 {
    let world = World::windowed(
        "openai-chat",
        vec![
            tool("read_file", json!({"path": "results.txt"})),
            text("One test fails: t299."),
        ],
        &format!("context_window = {WINDOW}\n"),
        Some(WINDOW),
    )
    .await;
    let output = noisy_output();
    assert!(output.len() > 12_000, "{}", output.len());
    std::fs::write(world.project.path().join("results.txt"), &output).unwrap();
    let (events, stderr, out) = print(&world, "which test fails?").await;
    assert!(out.status.success(), "{stderr}");

    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 2, "{stderr}");
    for body in &bodies {
        let size = prompt_tokens(body);
        let cap = body["max_tokens"].as_u64().unwrap();
        assert!(
            size + cap <= WINDOW,
            "a request of {size} tokens with {cap} for the answer against a window of {WINDOW}"
        );
    }
    // Uncut, the second request would not have fit.
    assert!(prompt_tokens(&Value::String(output.clone())) > WINDOW);

    let sent = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sent[..200].contains("FIRST-LINE"),
        "the head is kept: {sent}"
    );
    assert!(
        sent.contains("LAST-LINE 1 failed"),
        "the tail is kept: {sent}"
    );
    assert!(sent.contains("cut from the middle"), "{sent}");
    assert!(sent.len() < output.len() / 2, "{}", sent.len());

    let notices = of_type(&events, "notice");
    assert!(notices.iter().any(|n| n["kind"] == "budget"), "{notices:?}");
    assert_eq!(of_type(&events, "turn_end")[0]["stop"], "completed");
    let log = session_log(&world, &session_of(&events));
    let full = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "full_output")
        .expect("the whole output is in the session log");
    let full = full["output"].as_str().unwrap();
    assert!(
        full.contains("t150.py::case_1050")
            && full.contains("LAST-LINE")
            && !sent.contains("t150.py::case_1050"),
        "the whole output, middle included"
    );
}

#[tokio::test]
async fn a_service_that_refuses_the_request_as_too_large_gets_one_compaction_and_one_retry() {
    // mino thinks the window is four times what the server has: the cut
    // leaves too much, the server refuses, the window its answer states
    // teaches mino, compaction shortens the result, and the retry fits.
    let world = World::windowed(
        "openai-chat",
        vec![
            tool("read_file", json!({"path": "results.txt"})),
            text("refused"),
            text("One test fails: t299."),
        ],
        "context_window = 16384\nmax_output_tokens = 512\n",
        Some(WINDOW),
    )
    .await;
    let output = noisy_output().repeat(2);
    std::fs::write(world.project.path().join("results.txt"), &output).unwrap();
    let (events, stderr, out) = print(&world, "which test fails?").await;
    assert!(
        out.status.success(),
        "{stderr}\n{:?}\n{:?}",
        of_type(&events, "error"),
        of_type(&events, "notice")
    );
    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 3, "{stderr}");
    assert!(prompt_tokens(&bodies[1]) > WINDOW, "the second was refused");
    assert!(prompt_tokens(&bodies[2]) <= WINDOW, "the retry fits");
    assert_eq!(
        of_type(&events, "assistant").last().unwrap()["text"],
        "One test fails: t299."
    );
    assert_eq!(of_type(&events, "turn_end")[0]["stop"], "completed");
    let log = session_log(&world, &session_of(&events));
    assert!(
        log.contains(r#""type":"shrink""#),
        "compaction shortened the result"
    );
    assert!(
        of_type(&events, "notice")
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("holds 4096 tokens")),
        "the stated window is said"
    );
}

#[tokio::test]
async fn a_request_that_never_fits_stops_with_an_error_naming_context_window() {
    let world = World::windowed(
        "openai-chat",
        vec![text("never"), text("never")],
        "context_window = 16384\n",
        Some(200),
    )
    .await;
    let (events, _stderr, _out) = print(&world, "hello").await;
    assert_eq!(world.llm.bodies().len(), 2, "one retry, no more");
    let end = &of_type(&events, "turn_end")[0];
    assert_eq!(end["stop"], "model_error");
    let error = of_type(&events, "error")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(error.contains("context_window"), "{error}");
    assert!(
        error.contains("exceeds the available context size"),
        "{error}"
    );
}
