//! `[model] profile = "small"` against the built binary and the loopback
//! model service: every request of a turn forces a tool call in its wire's
//! words and offers the seven tools, a `final_answer` call ends the turn
//! with its text as the answer (stream-json, -p, the session records),
//! the profile is chosen by a 4k window the server reports, results are
//! cut harder, a bad profile name is an error naming the file and the key,
//! and the default profile's requests stay as they were.

use crate::support::full_screen::quit;
use crate::support::llm::{Llm, Reply, text, tool};
use crate::support::stream::statuses;
use crate::support::world::World;
use serde_json::{Value, json};

use super::real_models::{bodies, of_type, print, run, session_of};

const SEVEN: [&str; 7] = [
    "read_file",
    "list_dir",
    "search",
    "edit_file",
    "write_file",
    "bash",
    "final_answer",
];

/// The names of the tools `body` offers, on any wire.
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    t["name"]
                        .as_str()
                        .or_else(|| t["function"]["name"].as_str())
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The records of session `id` in `home`.
fn session_records(world: &World, id: &str) -> Vec<Value> {
    let path = world
        .home
        .path()
        .join("sessions")
        .join(format!("{id}.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const ANSWER: &str = "notes.md lists one decision for every call.";

#[tokio::test]
async fn every_request_forces_a_call_offers_seven_tools_and_final_answer_ends_the_turn() {
    for provider in ["openai-chat", "openai-responses", "anthropic"] {
        let world = World::with(
            provider,
            vec![
                tool("read_file", json!({"path": "notes.md"})),
                tool("final_answer", json!({"answer": ANSWER})),
            ],
            "profile = \"small\"\n",
        )
        .await;
        let (events, stderr, out) = print(&world, "Summarize notes.md", &[]).await;
        assert!(out.status.success(), "{provider}: {stderr}");
        let bodies = bodies(&world);
        assert_eq!(bodies.len(), 2, "{provider}");
        let forced = if provider == "anthropic" {
            json!({"type": "any"})
        } else {
            json!("required")
        };
        for body in &bodies {
            assert_eq!(body["tool_choice"], forced, "{provider}: {body}");
            assert_eq!(tool_names(body), SEVEN, "{provider}");
        }
        let end = of_type(&events, "turn_end");
        assert_eq!(end[0]["stop"], "completed", "{provider}: {events:?}");
        let answers = of_type(&events, "assistant");
        assert_eq!(
            answers.last().unwrap()["text"],
            ANSWER,
            "{provider}: {events:?}"
        );
        // final_answer is not a call that runs, asks or is decided.
        let calls: Vec<&Value> = of_type(&events, "tool_call");
        assert!(
            calls.iter().all(|c| c["tool"] != "final_answer"),
            "{provider}: {calls:?}"
        );
        assert!(of_type(&events, "decision").len() <= 1, "{provider}");
        assert_eq!(statuses(&events), ["completed"], "{provider}");
        let records = session_records(&world, &session_of(&events));
        let last = records.last().unwrap();
        assert_eq!(last["type"], "assistant", "{provider}: {records:?}");
        assert_eq!(last["text"], ANSWER, "{provider}");
        assert!(last.get("tool_calls").is_none(), "{provider}: {last}");
        // The small SOUL: how to act and how a turn ends, and no modes.
        let system = bodies[0].to_string();
        assert!(system.contains("call final_answer"), "{provider}");
        assert!(!system.contains("accept-edits"), "{provider}");
        // The project's real top level, so a small model needs no example
        // path: never a protected entry (.env, .git) or a link (docs).
        assert!(
            system.contains("Its top level holds: notes.md."),
            "{provider}: {system}"
        );
        // The session's banner names the profile, in stream-json too.
        assert_eq!(of_type(&events, "session")[0]["profile"], "small");
    }
}

#[tokio::test]
async fn minus_p_prints_final_answer_s_text_as_the_answer() {
    let world = World::with(
        "openai-chat",
        vec![tool("final_answer", json!({"answer": ANSWER}))],
        "profile = \"small\"\n",
    )
    .await;
    let out = run(&world, &["-p", "What does notes.md say?"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), ANSWER, "{stderr}");
    assert!(
        stderr.contains("Profile: small (from settings)."),
        "{stderr}"
    );
}

/// A final_answer beside another call, or without an answer, ends
/// nothing: it is answered with an error saying how, the other call runs,
/// and the turn goes on to the answer.
#[tokio::test]
async fn a_final_answer_that_cannot_end_the_turn_is_an_error_result_and_the_turn_goes_on() {
    let world = World::with(
        "openai-chat",
        vec![
            Reply::Tools(vec![
                ("read_file".into(), json!({"path": "notes.md"})),
                ("final_answer".into(), json!({"answer": "too early"})),
            ]),
            tool("final_answer", json!({"answer": "  "})),
            tool("final_answer", json!({"answer": ANSWER})),
        ],
        "profile = \"small\"\n",
    )
    .await;
    let (events, stderr, out) = print(&world, "Summarize notes.md", &[]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(statuses(&events), ["completed", "error", "error"]);
    let results = of_type(&events, "tool_result");
    assert!(
        results[1]["output"]
            .as_str()
            .unwrap()
            .contains("only call of a response"),
        "{results:?}"
    );
    assert!(
        results[2]["output"]
            .as_str()
            .unwrap()
            .contains("answer is empty"),
        "{results:?}"
    );
    let answers = of_type(&events, "assistant");
    assert_eq!(answers.last().unwrap()["text"], ANSWER);
    assert!(
        answers.iter().all(|a| a["text"] != "too early"),
        "{answers:?}"
    );
}

/// The default profile offers no final_answer: a model that calls it
/// gets the unknown tool's error and no answer is made of it.
#[tokio::test]
async fn the_default_profile_has_no_final_answer() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("final_answer", json!({"answer": "INVENTED"})),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, stderr, out) = print(&world, "hi", &[]).await;
    assert!(out.status.success(), "{stderr}");
    assert_eq!(statuses(&events), ["error"]);
    let answers = of_type(&events, "assistant");
    assert_eq!(answers.last().unwrap()["text"], "done");
    let body = &bodies(&world)[0];
    assert!(body.get("tool_choice").is_none(), "{body}");
    assert!(!tool_names(body).contains(&"final_answer".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_4k_window_the_server_reports_chooses_the_small_profile() {
    let props = json!({"default_generation_settings": {"n_ctx": 4096}});
    let llm = Llm::start_with_props(
        "openai-chat",
        vec![tool("final_answer", json!({"answer": ANSWER}))],
        props,
    )
    .await;
    let world = World::serving("openai-chat", llm, "");
    let out = run(&world, &["-p", "hi"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Context window: 4096 tokens (reported by the server: llama.cpp /props n_ctx).\nProfile: small (chosen for a context window of 4096 tokens, 8192 or less; set [model] profile = \"default\" to change it)."),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), ANSWER);
    let body = &bodies(&world)[0];
    assert_eq!(body["tool_choice"], "required", "{body}");
    assert_eq!(tool_names(body), SEVEN);
    // The settings' profile wins over the window.
    let props = json!({"default_generation_settings": {"n_ctx": 4096}});
    let llm = Llm::start_with_props("openai-chat", vec![text("OK")], props).await;
    let world = World::serving("openai-chat", llm, "profile = \"default\"\n");
    let out = run(&world, &["-p", "hi"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Profile: default (from settings)."),
        "{stderr}"
    );
    assert!(bodies(&world)[0].get("tool_choice").is_none());
}

/// The default profile's requests are the same whether the profile is
/// named or chosen by a large window: byte for byte, once the temporary
/// project's path is the same.
#[tokio::test]
async fn the_default_profile_keeps_its_requests_byte_for_byte() {
    for provider in ["openai-chat", "openai-responses", "anthropic"] {
        let mut seen = Vec::new();
        for extra in [
            "max_output_tokens = 512\n",
            "max_output_tokens = 512\nprofile = \"default\"\ncontext_window = 4096\n",
        ] {
            let world = World::with(
                provider,
                vec![tool("read_file", json!({"path": "notes.md"})), text("ok")],
                extra,
            )
            .await;
            let (_, stderr, out) = print(&world, "Summarize notes.md", &[]).await;
            assert!(out.status.success(), "{provider}: {stderr}");
            let project = world.project.path().to_str().unwrap().to_string();
            let bodies: Vec<String> = world
                .llm
                .bodies()
                .iter()
                .map(|b| b.replace(&project, "PROJECT"))
                .collect();
            seen.push(bodies);
        }
        assert_eq!(seen[0], seen[1], "{provider}");
        let first: Value = serde_json::from_str(&seen[0][0]).unwrap();
        assert!(first.get("tool_choice").is_none(), "{provider}");
        assert!(
            tool_names(&first).contains(&"plan".to_string()),
            "{provider}"
        );
    }
}

/// Under the small profile one result keeps at most a fifth of the
/// prompt's room; the default profile in the same window keeps it whole.
#[tokio::test]
async fn results_are_cut_harder_under_the_small_profile() {
    let long = "word\n".repeat(1000);
    let mut kept = Vec::new();
    for profile in ["small", "default"] {
        let world = World::with(
            "openai-chat",
            vec![tool("read_file", json!({"path": "long.txt"})), text("ok")],
            &format!("profile = \"{profile}\"\ncontext_window = 8192\n"),
        )
        .await;
        std::fs::write(world.project.path().join("long.txt"), &long).unwrap();
        let (events, stderr, out) = print(&world, "read long.txt", &[]).await;
        assert!(out.status.success(), "{profile}: {stderr}");
        let results = of_type(&events, "tool_result");
        kept.push(results[0]["output"].as_str().unwrap().to_string());
    }
    assert!(kept[0].contains("cut from the middle"), "{}", kept[0]);
    assert!(!kept[1].contains("cut from the middle"));
    assert!(kept[0].len() * 2 < kept[1].len());
}

#[tokio::test]
async fn an_unknown_profile_is_an_error_naming_the_file_the_key_and_the_names() {
    let world = World::with("openai-chat", vec![text("never")], "profile = \"tiny\"\n").await;
    let out = run(&world, &["-p", "hi"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let file = world.home.path().join("config.toml");
    assert!(stderr.contains(file.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("profile"), "{stderr}");
    assert!(stderr.contains("\"default\", \"small\""), "{stderr}");
    assert!(world.llm.bodies().is_empty());
}

/// The full screen shows final_answer's text as the answer, and the
/// banner names the profile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_full_screen_shows_final_answer_s_text_as_the_answer() {
    let world = World::with(
        "openai-chat",
        vec![tool(
            "final_answer",
            json!({"answer": "FINAL-WORDS of the turn."}),
        )],
        "profile = \"small\"\n",
    )
    .await;
    let mut screen = world.full_screen();
    screen.wait_for_all(&[
        "Profile: small (from settings).",
        "Permission mode: manual. Use /mode to change it.",
    ]);
    screen.submit("What does notes.md say?");
    let after = screen.wait_for("FINAL-WORDS of the turn.");
    assert!(!after.contains("final_answer"), "{after}");
    quit(&mut screen);
}
