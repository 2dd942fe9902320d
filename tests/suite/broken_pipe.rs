//! `mino -p … | head -1`: once the reader of stdout is gone, the turn ends
//! at once and quietly with status 141 (as ripgrep does): the tool that was
//! running is stopped and nothing more is requested.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::llm::Llm;
use crate::support::server::{Reply as Raw, data};
use crate::support::world::World;

fn chat(chunks: &[Value]) -> Raw {
    let mut frames: Vec<String> = chunks.iter().map(data).collect();
    frames.push("data: [DONE]\n\n".to_string());
    Raw::sse(frames)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_goes_away_ends_the_turn_after_one_request() {
    // Two lines of answer, then a call that takes seconds, then a second
    // request would follow.
    let first = chat(&[
        json!({"choices":[{"index":0,"delta":{"content":"line one\nline two\n"}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"sleep 5\"}"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
    ]);
    let second = chat(&[
        json!({"choices":[{"index":0,"delta":{"content":"never asked for"}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
    ]);
    let llm = Llm::raw(vec![first, second]).await;
    let world = World::serving("openai-chat", llm, "");
    let mut mino = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "two lines", "--mode", "bypass", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "sk-test-broken-pipe")
        .env_remove("AGENT_YOLO")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let head = Command::new("head")
        .arg("-1")
        .stdin(Stdio::from(mino.stdout.take().unwrap()))
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&head.stdout), "line one\n");
    let out = mino.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert_eq!(world.llm.bodies().len(), 1, "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
