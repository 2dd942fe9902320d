//! The judge accepts one answer only: a single choice, finished with
//! `stop`, in the event stream it asked for, holding exactly the canonical
//! JSON. An answer split across two choices, one cut off at the length
//! limit, an event stream sent as `application/json`, text after reasoning,
//! or a redirect to another port fails closed (the call is denied with the
//! judge's code) and the other port is never sent anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::llm::{Llm, text};
use crate::support::server::{Reply as Raw, data};
use crate::support::world::World;

const ALLOW: &str = r#"{"decision":"allow"}"#;

fn chat(chunks: &[Value]) -> Raw {
    let mut frames: Vec<String> = chunks.iter().map(data).collect();
    frames.push("data: [DONE]\n\n".to_string());
    Raw::sse(frames)
}

fn content(index: u64, text: &str) -> Value {
    json!({"choices":[{"index":index,"delta":{"content":text}}]})
}

fn finish(index: u64, reason: &str) -> Value {
    json!({"choices":[{"index":index,"delta":{},"finish_reason":reason}]})
}

/// The model's first answer: one eligible git request.
fn git_status() -> Raw {
    chat(&[
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"/usr/bin/git status --short\"}"}}]}}]}),
        finish(0, "tool_calls"),
    ])
}

fn done() -> Raw {
    chat(&[content(0, "done"), finish(0, "stop")])
}

fn judge_settings() -> &'static str {
    "[shell_gate]\ngit = \"/usr/bin/git\"\n[shell_gate.judge]\nenabled = true\ntimeout_secs = 5\n"
}

/// The bash decisions of a `-p` run in auto mode where the judge answers
/// `answer`.
async fn decided(answer: Raw) -> (Vec<(String, String)>, World) {
    let llm = Llm::raw(vec![git_status(), answer, done()]).await;
    let world = World::serving("openai-chat", llm, judge_settings());
    super::shell_gate_git::repository(world.project.path());
    let home = TempDir::new().unwrap();
    let (events, _) = super::shell_gate::print(&world, home.path(), "auto").await;
    (super::shell_gate::bash_decisions(&events), world)
}

fn invalid() -> Vec<(String, String)> {
    vec![("deny".into(), "AMG_DENY_JUDGE_INVALID_RESPONSE".into())]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_canonical_answer_in_one_choice_finished_with_stop_allows() {
    let (decisions, _) = decided(chat(&[content(0, ALLOW), finish(0, "stop")])).await;
    assert_eq!(decisions, vec![("allow".into(), "".into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lenient_answers_fail_closed() {
    let cases = [
        (
            "split across two choices",
            chat(&[
                content(0, r#"{"decision":"#),
                finish(0, "length"),
                content(1, r#""allow"}"#),
                finish(1, "stop"),
            ]),
        ),
        (
            "two choices in one chunk",
            chat(&[
                json!({"choices":[{"index":0,"delta":{"content":ALLOW}},{"index":1,"delta":{"content":ALLOW}}]}),
                finish(0, "stop"),
            ]),
        ),
        (
            "cut off at the length limit",
            chat(&[content(0, ALLOW), finish(0, "length")]),
        ),
        (
            "text after reasoning",
            chat(&[
                json!({"choices":[{"index":0,"delta":{"reasoning_content":"it reads only"}}]}),
                content(0, ALLOW),
                finish(0, "stop"),
            ]),
        ),
        (
            "an event stream sent as application/json",
            Raw::status(
                200,
                &format!(
                    "{}{}data: [DONE]\n\n",
                    data(&content(0, ALLOW)),
                    data(&finish(0, "stop"))
                ),
            ),
        ),
    ];
    for (what, answer) in cases {
        let (decisions, world) = decided(answer).await;
        assert_eq!(decisions, invalid(), "{what}");
        assert_eq!(world.llm.bodies().len(), 3, "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_redirects_fails_closed_and_the_other_port_is_never_hit() {
    let other = Llm::start("openai-chat", vec![text(ALLOW)]).await;
    let location = format!("{}/chat/completions", other.base_url());
    let (decisions, world) = decided(Raw::Redirect(location)).await;
    assert_eq!(
        decisions,
        vec![("deny".into(), "AMG_DENY_JUDGE_ERROR".into())]
    );
    assert_eq!(world.llm.bodies().len(), 3);
    assert!(other.bodies().is_empty(), "the redirect was followed");
}
