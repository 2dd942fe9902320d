//! The `plan` tool end to end: its row of the mode table through `mino
//! policy check`, the built binary against a loopback model that calls
//! `plan set` then `update` (stream-json `plan` records, the session file,
//! secrets and control characters in step text), `[tools] plan = false`,
//! a resumed session showing its plan (stream-json and the full screen's
//! panel, Ctrl+T), and the ACP `plan` update the official SDK client
//! receives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::{Value, json};

use crate::support::full_screen::{quit, status_bar};
use crate::support::llm::{text, tool};
use crate::support::run::mino;
use crate::support::stream::{decisions, of_type, outputs, records};
use crate::support::world::{SECRET, World};

fn check(world: &World, mode: &str, action: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["policy", "check", "--mode", mode, "--tool", "plan"])
        .args(["--action", action])
        .arg("--cd")
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env_remove("AGENT_YOLO")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_changes_have_their_own_row_in_every_mode_and_show_is_a_read() {
    let world = World::with("openai-chat", vec![], "").await;
    // (mode, decision, unasked) for a change; show is a quiet read in all.
    let rows = [
        ("plan", "allow", false),
        ("manual", "ask", false),
        ("accept-edits", "allow", true),
        ("auto", "allow", true),
        ("bypass", "allow", true),
    ];
    for (mode, decision, unasked) in rows {
        for action in ["set", "add", "update", "remove"] {
            let v = check(&world, mode, action);
            assert_eq!(v["decision"], decision, "{mode} {action}: {v}");
            assert_eq!(v["unasked"], unasked, "{mode} {action}: {v}");
            assert_eq!(v["code"], Value::Null, "{mode} {action}: {v}");
        }
        let show = check(&world, mode, "show");
        assert_eq!(
            (show["decision"].as_str(), show["unasked"].as_bool()),
            (Some("allow"), Some(false)),
            "{mode} show: {show}"
        );
    }
    let wrong = check(&world, "manual", "wipe");
    assert_eq!(wrong["decision"], "error", "{wrong}");
    assert!(
        wrong["reason"]
            .as_str()
            .unwrap()
            .contains("accepted: show, set, add, update, remove"),
        "{wrong}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_false_removes_the_tool_from_the_request_and_from_policy_check() {
    let world = World::with("openai-chat", vec![text("ok")], "\n[tools]\nplan = false\n").await;
    let out = mino(&world, &["-p", "hi"], None).await;
    assert!(out.status.success(), "{out:?}");
    let body: Value = serde_json::from_str(&world.llm.bodies()[0]).unwrap();
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"plan"), "{names:?}");
    assert!(names.contains(&"read_file"), "{names:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["policy", "check", "--mode", "bypass", "--tool", "plan"])
        .args(["--action", "set", "--cd"])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"plan\" does not exist"), "{stderr}");
}

/// A model that sets a three-step plan (a secret, an escape sequence and a
/// line break in its texts) and marks the first step done.
fn planning_model() -> Vec<crate::support::llm::Reply> {
    vec![
        tool(
            "plan",
            json!({"action": "set", "steps": [
                format!("read notes.md, token {SECRET}"),
                "fix the \u{1b}[2J\u{1b}[31mtitle\nnow",
                "check the diff",
            ]}),
        ),
        tool(
            "plan",
            json!({"action": "update", "step": 1, "status": "done"}),
        ),
        text("Planned."),
    ]
}

fn session_file(world: &World) -> String {
    let dir = world.home.path().join("sessions");
    let entry = std::fs::read_dir(dir).unwrap().next().unwrap().unwrap();
    std::fs::read_to_string(entry.path()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_sets_and_updates_its_plan_and_a_resumed_session_shows_it() {
    let mut replies = planning_model();
    replies.push(text("Continuing."));
    let world = World::with("openai-chat", replies, "").await;
    let out = mino(
        &world,
        &[
            "-p",
            "plan the fix",
            "--mode",
            "accept-edits",
            "--output-format",
            "stream-json",
        ],
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let events = records(&out.stdout);
    let plan_decisions: Vec<_> = decisions(&events)
        .into_iter()
        .filter(|(tool, _, _)| tool == "plan")
        .collect();
    assert_eq!(plan_decisions.len(), 2, "{events:#?}");
    assert!(plan_decisions.iter().all(|(_, d, _)| d == "allow"));
    let plans = of_type(&events, "plan");
    assert_eq!(plans.len(), 2, "{events:#?}");
    let last = &plans[1]["steps"];
    assert_eq!(last[0]["status"], "done", "{last}");
    assert_eq!(last[1]["status"], "pending", "{last}");
    // The secret never stays in the plan; the step is one line.
    let first = last[0]["text"].as_str().unwrap();
    assert!(!first.contains(SECRET), "{first}");
    assert!(first.contains("[redacted: "), "{first}");
    assert_eq!(last[1]["text"], "fix the \u{1b}[2J\u{1b}[31mtitle now");
    let results = outputs(&events);
    assert!(results[1].starts_with("Plan (1/3 done):"), "{results:?}");
    assert!(results.iter().all(|r| !r.contains(SECRET)), "{results:?}");
    // What the model service received: no secret in any result.
    for body in world.llm.bodies().iter().skip(1) {
        let body: Value = serde_json::from_str(body).unwrap();
        for message in body["messages"].as_array().unwrap() {
            if message["role"] == "tool" {
                let content = message["content"].to_string();
                assert!(!content.contains(SECRET), "{content}");
            }
        }
    }
    // The session file holds the plan after each change.
    let file = session_file(&world);
    let saved: Vec<Value> = file
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "plan")
        .collect();
    assert_eq!(saved.len(), 2, "{file}");
    assert_eq!(saved[1]["steps"], *last);

    // `--continue` brings it back: a plan record right after the session's.
    let out = mino(
        &world,
        &["-c", "-p", "go on", "--output-format", "stream-json"],
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let events = records(&out.stdout);
    assert_eq!(events[0]["type"], "session", "{events:#?}");
    let resumed = of_type(&events, "plan");
    assert_eq!(resumed.len(), 1, "{events:#?}");
    assert_eq!(resumed[0]["steps"], *last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_nobody_can_ask_a_plan_change_in_manual_is_refused_and_plan_mode_runs_it() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("plan", json!({"action": "add", "text": "one"})),
            text("refused"),
            tool("plan", json!({"action": "add", "text": "one"})),
            text("planned"),
        ],
        "",
    )
    .await;
    let out = mino(
        &world,
        &["-p", "plan", "--output-format", "stream-json"],
        None,
    )
    .await;
    let events = records(&out.stdout);
    assert_eq!(
        decisions(&events),
        [(
            "plan".to_string(),
            "deny".to_string(),
            "MINO_DENY_NOBODY_TO_ASK".to_string()
        )]
    );
    assert!(of_type(&events, "plan").is_empty());
    let out = mino(
        &world,
        &[
            "-p",
            "plan",
            "--mode",
            "plan",
            "--output-format",
            "stream-json",
        ],
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let events = records(&out.stdout);
    assert_eq!(
        decisions(&events),
        [("plan".to_string(), "allow".to_string(), String::new())]
    );
    // Plan mode runs it without a question or a record line.
    let decision = of_type(&events, "decision")[0];
    assert_eq!(decision["unasked"], false, "{decision}");
    assert_eq!(of_type(&events, "plan").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_screen_draws_a_resumed_plan_and_ctrl_t_hides_it() {
    let world = World::with("openai-chat", planning_model(), "").await;
    let out = mino(&world, &["-p", "plan the fix", "--mode", "bypass"], None).await;
    assert!(out.status.success(), "{out:?}");
    let mut screen = world.full_screen_in(world.project.path(), &["--continue"], &[]);
    let shown = screen.wait_until("the plan in the status bar", |s| {
        status_bar(s).contains("plan 1/3")
    });
    assert!(shown.contains("plan 1/3 ─"), "the panel's title\n{shown}");
    assert!(status_bar(&shown).contains("plan 1/3"), "{shown}");
    assert!(shown.contains("[x] read notes.md"), "{shown}");
    // The escape sequence is drawn as text, and did not clear the screen.
    assert!(shown.contains("fix the ␛[2J␛[31mtitle now"), "{shown}");
    assert!(shown.contains("check the diff"), "{shown}");
    // The chat names the calls without their step texts.
    assert!(shown.contains("plan set 3 steps"), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    screen.send(b"\x14");
    let hidden = screen.wait_until("the panel hidden", |s| !s.contains("plan 1/3 ─"));
    assert!(status_bar(&hidden).contains("plan 1/3"), "{hidden}");
    screen.send(b"\x14");
    screen.wait_for("plan 1/3 ─");
    quit(&mut screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_receives_the_plan_as_acp_plan_updates() {
    let world = World::with("openai-chat", planning_model(), "").await;
    let run = world
        .client(
            json!([world.new_session(), {"setMode": "accept-edits"}, {"prompt": "plan the fix"}]),
            json!({}),
        )
        .await;
    let plans = run.updates("plan");
    assert_eq!(plans.len(), 2, "{:#?}", run.log);
    let entries = plans[1]["entries"].as_array().unwrap();
    let statuses: Vec<&str> = entries
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "pending", "pending"]);
    assert!(
        !entries[0]["content"].as_str().unwrap().contains(SECRET),
        "{entries:?}"
    );
    assert_eq!(entries[2]["content"], "check the diff");
    assert!(run.permissions().is_empty(), "{:#?}", run.log);
    // Loading the session sends its plan again.
    let id = run.events("session")[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let loaded = world
        .client(
            json!([{"load": id, "cwd": world.project.path()}]),
            json!({}),
        )
        .await;
    let again = loaded.updates("plan");
    assert_eq!(again.len(), 1, "{:#?}", loaded.log);
    assert_eq!(again[0]["entries"], plans[1]["entries"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_manual_an_editor_is_asked_and_a_rejected_change_leaves_the_plan() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("plan", json!({"action": "set", "steps": ["one", "two"]})),
            tool("plan", json!({"action": "remove", "step": 1})),
            text("ok"),
        ],
        "",
    )
    .await;
    let run = world
        .client(
            json!([world.new_session(), {"prompt": "plan", "answers": ["allow_once", "reject_once"]}]),
            json!({}),
        )
        .await;
    let asked = run.permissions();
    assert_eq!(asked.len(), 2, "{:#?}", run.log);
    let first = asked[0]["toolCall"].to_string();
    assert!(
        first.contains("1. one\\n2. two"),
        "the steps are shown: {first}"
    );
    let plans = run.updates("plan");
    assert_eq!(plans.len(), 1, "{:#?}", run.log);
    assert_eq!(plans[0]["entries"].as_array().unwrap().len(), 2);
}
