//! What small local models served by llama.cpp do to a session, against the
//! built binary and a loopback service that answers as llama.cpp does:
//! calls written as text and the reminder, compaction in a small window
//! (the person's prompt kept verbatim, a summary that does not shrink
//! refused), answers that reach the output limit while the service says
//! `completed`, and an absolute path meant as a project path. The session
//! records are checked, not only what was printed.

use std::path::Path;

use crate::support::llm::{Reply, text, tool};
use crate::support::stream::{decisions, outputs, statuses};
use crate::support::world::World;
use serde_json::{Value, json};

use super::real_models::{bodies, of_type, print, session_of};

/// The records of session `id` in `home`, one JSON value a line.
fn session_records(home: &Path, id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(home.join("sessions").join(format!("{id}.jsonl"))).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A compaction request: its system prompt asks for a summary.
fn is_summary_request(body: &Value) -> bool {
    body.to_string().contains("You summarise the earlier part")
}

const WRITTEN: &str =
    "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.md\"}}\n```";

/// The reminder is mino's line, not the person's prompt: compaction in the
/// turn after it keeps the prompt verbatim (and never summarises it), and
/// the session log stores the reminder as a `reminder` record.
#[tokio::test]
async fn compaction_after_a_reminder_keeps_the_person_s_prompt_verbatim() {
    let prompt = "Show me what is in notes.md";
    // The service counts 100 input tokens a request, so mino scales its
    // estimates down: only a long answer fills the window again.
    let long_call = format!("{}\n{WRITTEN}", "Thinking it over. ".repeat(1500));
    let world = World::with(
        "openai-chat",
        vec![
            text(&"OLD-DETAIL ".repeat(60)),
            text("S1: the user said first."),
            text(&long_call),
            text("The note lists one decision for every call."),
        ],
        "context_window = 400\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "first", &[]).await;
    assert!(out.status.success(), "{stderr}");
    let session = session_of(&events);
    let (events, stderr, out) = print(&world, prompt, &["--resume", &session]).await;
    assert!(out.status.success(), "{stderr}");
    let end = of_type(&events, "turn_end");
    assert_eq!(end[0]["stop"], "completed", "{events:?}");
    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 4, "{bodies:#?}");
    for body in bodies.iter().filter(|b| is_summary_request(b)) {
        assert!(
            !body.to_string().contains(prompt),
            "the prompt was summarised: {body}"
        );
    }
    let last = &bodies[3];
    let users: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert!(
        users.iter().any(|m| m["content"] == prompt),
        "the prompt went verbatim: {last}"
    );
    let records = session_records(world.home.path(), &session);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    let reminder = kinds.iter().position(|k| *k == "reminder");
    let compacted = kinds.iter().rposition(|k| *k == "compact");
    assert!(
        matches!((compacted, reminder), (Some(c), Some(r)) if c < r),
        "the reminder is saved as mino's, and the prompt before it is never compacted: {kinds:?}"
    );
    let said = serde_json::to_string(&of_type(&events, "notice")).unwrap();
    assert!(
        said.matches("compacting").count() >= 2,
        "the window was full again after the reminder: {said}"
    );
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "user" && r["text"] == prompt),
        "{records:?}"
    );
}

/// A summary as large as what it replaces is refused: the older items are
/// cut with a marker instead, said so, and recorded.
#[tokio::test]
async fn a_summary_that_does_not_shrink_its_input_by_half_is_refused_and_the_items_cut() {
    let world = World::with(
        "openai-chat",
        vec![
            text(&"OLD-DETAIL ".repeat(60)),
            text(&"SUMMARY-BIG ".repeat(60)),
            text("ok"),
        ],
        "context_window = 400\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "first", &[]).await;
    assert!(out.status.success(), "{stderr}");
    let session = session_of(&events);
    let (events, stderr, out) = print(&world, "second", &["--resume", &session]).await;
    assert!(out.status.success(), "{stderr}");
    let said = serde_json::to_string(&of_type(&events, "notice")).unwrap();
    assert!(
        said.contains("Cut 2 earlier items instead of summarising them"),
        "{said}"
    );
    let bodies = bodies(&world);
    assert_eq!(bodies.len(), 3);
    let next = bodies[2].to_string();
    assert!(!next.contains("SUMMARY-BIG"), "{next}");
    assert!(!next.contains("OLD-DETAIL"), "{next}");
    assert!(
        next.contains("were cut to fit the context window"),
        "{next}"
    );
    assert!(next.contains("second"), "{next}");
    let records = session_records(world.home.path(), &session);
    let compact = records.iter().find(|r| r["type"] == "compact").unwrap();
    assert!(
        compact["summary"]
            .as_str()
            .unwrap()
            .contains("were cut to fit the context window"),
        "{compact}"
    );
}

/// llama.cpp's `/v1/responses` says `completed` for an answer that hit the
/// output limit; output tokens equal to the request's cap mean cut off on
/// every wire: the notice and the stop reason.
#[tokio::test]
async fn output_tokens_at_the_cap_mean_cut_off_on_every_wire() {
    for provider in ["openai-responses", "openai-chat", "anthropic"] {
        // The loopback service reports 10 output tokens for every answer.
        let world = World::with(
            provider,
            vec![text("The answer is")],
            "max_output_tokens = 10\n",
        )
        .await;
        let (events, _stderr, out) = print(&world, "explain", &[]).await;
        assert!(!out.status.success(), "{provider}");
        let end = of_type(&events, "turn_end");
        assert_eq!(end[0]["stop"], "length", "{provider}: {events:?}");
        let usage = of_type(&events, "usage");
        assert_eq!(usage[0]["finish_reason"], "length", "{provider}: {usage:?}");
        let notices = serde_json::to_string(&of_type(&events, "notice")).unwrap();
        assert!(notices.contains("cut off"), "{provider}: {notices}");
        // Below the cap the same answer is complete.
        let world = World::with(
            provider,
            vec![text("The answer is")],
            "max_output_tokens = 11\n",
        )
        .await;
        let (events, _stderr, out) = print(&world, "explain", &[]).await;
        assert!(out.status.success(), "{provider}");
        assert_eq!(of_type(&events, "turn_end")[0]["stop"], "completed");
    }
}

/// A summary whose output tokens reach the compaction cap is cut off too,
/// even where the wire says `completed`: it never replaces history.
#[tokio::test]
async fn a_summary_at_the_compaction_cap_is_not_accepted_on_the_responses_wire() {
    let world = World::with(
        "openai-responses",
        vec![
            text(&"OLD-DETAIL ".repeat(60)),
            text("SUMMARY-AT-CAP"),
            text("ok"),
        ],
        "context_window = 400\n[model.compaction]\nmax_output_tokens = 10\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "first", &[]).await;
    assert!(out.status.success(), "{stderr}");
    let session = session_of(&events);
    let (events, _stderr, _out) = print(&world, "second", &["--resume", &session]).await;
    let said = serde_json::to_string(&events).unwrap();
    assert!(said.contains("cut off at the output limit"), "{said}");
    let bodies = bodies(&world);
    assert!(!bodies[2].to_string().contains("SUMMARY-AT-CAP"));
    let records = session_records(world.home.path(), &session);
    assert!(
        !records.iter().any(|r| r["type"] == "compact"),
        "{records:?}"
    );
}

/// The same call written as text after the reminder ends the turn with its
/// own stop reason, says so, and the JSON is not the answer.
#[tokio::test]
async fn a_text_call_repeated_after_the_reminder_ends_the_turn_and_is_not_the_answer() {
    let world = World::with(
        "openai-responses",
        vec![text(WRITTEN), text(WRITTEN), text("never requested")],
        "",
    )
    .await;
    let out =
        super::real_models::run(&world, &["-p", "read the notes", "--output-format", "json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["stop"], "text_call_repeated", "{result}");
    assert_eq!(result["text"], "", "the JSON is not the answer: {result}");
    let said = result["events"].to_string();
    assert!(
        said.contains("again wrote its call to read_file as text"),
        "{said}"
    );
    assert_eq!(world.llm.bodies().len(), 2, "no third request");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("\"arguments\""), "{stderr}");
}

/// `/notes.md` for `notes.md`: not found, naming the project path, and not
/// a policy denial; the retry runs. Everything else outside is denied as
/// before, and no hint says anything a listing would not: a protected file,
/// a path through a link, `..`, an existing outside file, a name in
/// neither place.
#[tokio::test]
async fn an_absolute_path_meant_as_a_project_path_is_not_found_with_the_path_to_use() {
    let calls: Vec<(String, Value)> = [
        "/notes.md",
        "notes.md",
        "/.env",
        "/docs/config",
        "/.git/config",
        "/etc/passwd",
        "/../notes.md",
        "/missing-7f3a.md",
    ]
    .iter()
    .map(|path| ("read_file".to_string(), json!({ "path": path })))
    .collect();
    let world = World::with("openai-chat", vec![Reply::Tools(calls), text("done")], "").await;
    let (events, stderr, out) = print(&world, "read the notes", &["--mode", "bypass"]).await;
    assert!(out.status.success(), "{stderr}");
    let statuses = statuses(&events);
    let outputs = outputs(&events);
    assert_eq!(statuses[0], "error", "{outputs:?}");
    assert!(
        outputs[0].contains("/notes.md does not exist") && outputs[0].contains("use \"notes.md\""),
        "{}",
        outputs[0]
    );
    assert!(!outputs[0].contains("Blocked by policy"), "{}", outputs[0]);
    assert_eq!(statuses[1], "completed");
    assert!(outputs[1].contains("one decision for every call"));
    for (n, output) in outputs.iter().enumerate().skip(2) {
        assert_eq!(statuses[n], "denied", "{n}: {output}");
        assert!(!output.contains("exists in the project"), "{n}: {output}");
        assert!(!output.contains("MARKER-SECRET"), "{n}: {output}");
    }
    let denied: Vec<String> = decisions(&events)
        .into_iter()
        .filter(|(_, decision, _)| decision == "deny")
        .map(|(_, _, code)| code)
        .collect();
    assert_eq!(denied.len(), 6, "{denied:?}");
    assert!(
        denied
            .iter()
            .all(|code| code == "MINO_DENY_OUTSIDE_PROJECT"),
        "{denied:?}"
    );
    // The model's next request carries the hint, not a denial.
    let bodies = bodies(&world);
    let results = bodies[1].to_string();
    assert!(results.contains("use \\\"notes.md\\\""), "{results}");
}

/// A protected file named with a `/` is denied as outside, never hinted;
/// the retry by its project path is decided like any read of it.
#[tokio::test]
async fn a_slashed_protected_path_leaks_nothing_and_its_retry_is_decided_normally() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("read_file", json!({"path": "/.env"})),
            tool("read_file", json!({"path": ".env"})),
            text("blocked"),
        ],
        "",
    )
    .await;
    let (events, stderr, out) = print(&world, "show .env", &["--mode", "bypass"]).await;
    assert!(
        out.status.success() || out.status.code() == Some(2),
        "{stderr}"
    );
    let codes: Vec<String> = decisions(&events).into_iter().map(|(_, _, c)| c).collect();
    assert_eq!(
        codes,
        ["MINO_DENY_OUTSIDE_PROJECT", "MINO_DENY_PROTECTED_PATH"],
        "{events:?}"
    );
    let said = String::from_utf8_lossy(&out.stdout).to_string()
        + &String::from_utf8_lossy(&out.stderr)
        + &serde_json::to_string(&bodies(&world)).unwrap();
    assert!(!said.contains("MARKER-SECRET"), "{said}");
}
