//! Plan mode end to end with the built binary against the loopback model
//! service: a write, a bash call and an MCP call (a small script server)
//! each denied with the plan-mode reason in `-p` (stream-json), in line
//! mode after `/mode plan` (no question), and in ACP through the editor's
//! mode selector; nothing of the refused calls runs, and reads still do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::llm::{Reply, text};
use crate::support::pty::Pty;
use crate::support::stream::{decisions, of_type, outputs, records, statuses};
use crate::support::world::World;
use serde_json::{Value, json};

const REASON: &str = "Plan mode: only reads run now; present a plan instead. Do not retry or work around this with another tool.";

/// One model reply with a read, a write, a bash call and an MCP call.
fn four_calls() -> Reply {
    Reply::Tools(vec![
        ("read_file".into(), json!({"path": "notes.md"})),
        (
            "write_file".into(),
            json!({"path": "planned.txt", "content": "x"}),
        ),
        ("bash".into(), json!({"command": "touch ran.txt"})),
        ("mcp_fake_argv".into(), json!({})),
    ])
}

/// A world whose settings add the script MCP server `fake` (its one tool
/// `argv`).
async fn world() -> World {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fake-server.mjs");
    let extra = format!(
        "\n[mcp.servers.fake]\ncommand = \"node\"\nargs = [{:?}, \"argv\"]\n",
        server.display().to_string()
    );
    World::with(
        "openai-chat",
        vec![four_calls(), text("Here is the plan.")],
        &extra,
    )
    .await
}

/// The second request carries the four results: the read ran, the other
/// three were refused with the plan-mode reason; nothing was written.
fn refused_in_the_model_request(world: &World) {
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let body: Value = serde_json::from_str(&bodies[1]).unwrap();
    let tool_results: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(tool_results.len(), 4, "{tool_results:?}");
    assert!(tool_results[0].contains("Relase notes"), "{tool_results:?}");
    for refused in &tool_results[1..] {
        assert!(refused.contains(REASON), "{refused}");
    }
    assert!(!world.project.path().join("planned.txt").exists());
    assert!(!world.project.path().join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_p_a_write_a_bash_call_and_an_mcp_call_are_denied_with_the_plan_reason() {
    let world = world().await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mino"))
        .args([
            "-p",
            "plan it",
            "--output-format",
            "stream-json",
            "--mode",
            "plan",
        ])
        .arg("--cd")
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "test")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = records(&out.stdout);
    let plan = "MINO_DENY_PLAN_MODE".to_string();
    let denied: Vec<(String, String, String)> = decisions(&events)
        .into_iter()
        .filter(|d| d.1 == "deny")
        .collect();
    assert_eq!(
        denied,
        [
            ("write_file".into(), "deny".into(), plan.clone()),
            ("bash".into(), "deny".into(), plan.clone()),
            ("mcp_fake_argv".into(), "deny".into(), plan),
        ],
        "{stderr}"
    );
    assert_eq!(
        statuses(&events),
        ["completed", "denied", "denied", "denied"]
    );
    for output in &outputs(&events)[1..] {
        assert_eq!(output, REASON);
    }
    assert_eq!(of_type(&events, "session")[0]["mode"], "plan");
    let answer: String = of_type(&events, "assistant")
        .iter()
        .map(|a| a["text"].as_str().unwrap())
        .collect();
    assert!(answer.contains("Here is the plan."), "{answer}");
    // A read ran, so not every call was refused: -p exits 0.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    refused_in_the_model_request(&world);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_line_mode_mode_plan_tightens_without_a_question_and_denies_with_the_reason() {
    let world = world().await;
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    let mut pty = Pty::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--line", "--cd", &project],
        world.project.path(),
        &[
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", "test"),
            ("AGENT_YOLO", ""),
        ],
    );
    pty.expect("MCP server fake started");
    pty.send_line("/mode plan");
    pty.expect("Permission mode for this session: plan.");
    pty.send_line("plan it");
    pty.expect("Here is the plan.");
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
    let all = pty.all();
    assert!(!all.contains("Switch to this mode?"), "{all}");
    assert!(!all.contains("Approve this operation?"), "{all}");
    assert!(all.contains("Plan mode: only reads run now"), "{all}");
    refused_in_the_model_request(&world);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_acp_plan_is_a_session_mode_and_denies_with_the_reason() {
    let world = world().await;
    let run = world
        .client(
            json!([world.new_session(), {"setMode": "plan"}, {"prompt": "plan it"}]),
            json!({}),
        )
        .await;
    let modes = &run.events("session")[0]["modes"];
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["plan", "manual", "accept-edits", "auto", "bypass"]);
    assert!(run.permissions().is_empty(), "{:#?}", run.log);
    let changed = run.updates("current_mode_update");
    assert_eq!(changed[0]["currentModeId"], "plan", "{:#?}", run.log);
    let failed: Vec<&Value> = run
        .updates("tool_call_update")
        .into_iter()
        .filter(|u| u["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 3, "{:#?}", run.log);
    for update in failed {
        assert!(update.to_string().contains(REASON), "{update}");
    }
    refused_in_the_model_request(&world);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_agent_is_held_to_plan_mode_even_with_yolo_true_in_its_entry() {
    use crate::suite::asked::{Asking, bash};
    use crate::support::llm::tool;
    let asking = Asking::new(
        vec![],
        vec![
            tool("read_file", json!({"path": "notes.md"})),
            bash("touch jan.txt"),
            text("only read"),
        ],
        "yolo = true\n",
    )
    .await;
    let (status, stdout, stderr) = asking.ask(&["--mode", "plan"], "make a file\n").await;
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "only read\n");
    assert!(!asking.exists("jan.txt"), "{stderr}");
    let bodies = asking.jan.bodies();
    assert!(
        bodies[1].contains("Relase notes"),
        "the read ran: {}",
        bodies[1]
    );
    // jan's own process hears a rejection of its permission request.
    assert!(bodies[2].contains("did not approve"), "{}", bodies[2]);
}
