//! A model that asks again and again for what it was refused: the same
//! denied read three times in a turn ends the turn (`repeated_call`), each
//! refusal reaching the model with its reason, and no fourth request goes
//! out. A small model left to itself repeats such a call until the turn's
//! request limit; under the small profile, once it asked again, the next
//! request offers only `final_answer`, and a read that came back the same
//! is left out of the next request only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use crate::support::llm::{offered_tools as tools, text, tool};
use crate::support::run::mino;
use crate::support::stream::{decisions, of_type, records};
use crate::support::world::{SECRET, World};

/// `mino -p PROMPT` in bypass mode, with its stream-json records.
async fn print_in_bypass(
    world: &World,
    prompt: &str,
) -> (std::process::Output, Vec<serde_json::Value>) {
    let args = [
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--mode",
        "bypass",
    ];
    let out = mino(world, &args, None).await;
    let events = records(&out.stdout);
    (out, events)
}

#[tokio::test]
async fn the_same_denied_read_a_third_time_ends_the_turn() {
    let env = || tool("read_file", json!({"path": ".env"}));
    let replies = vec![env(), env(), env(), text("never requested")];
    let world = World::with("openai-chat", replies, "").await;
    let (out, events) = print_in_bypass(&world, "read .env").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let denied: Vec<_> = decisions(&events)
        .into_iter()
        .filter(|(tool, decision, _)| tool == "read_file" && decision == "deny")
        .collect();
    assert_eq!(denied.len(), 3, "every repeat is decided: {events:?}");
    let outputs: Vec<&str> = of_type(&events, "tool_result")
        .iter()
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(
        outputs
            .iter()
            .all(|o| *o == outputs[0] && o.contains(".env")),
        "{outputs:?}"
    );
    let end = of_type(&events, "turn_end");
    assert_eq!(end[0]["stop"], "repeated_call", "{end:?}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 3, "the turn ended before a fourth request");
    assert!(bodies.iter().all(|b| !b.contains(SECRET)));
}

/// A denied read and a different one in turn never reach three of a kind:
/// the turn goes on to its answer.
#[tokio::test]
async fn refusals_of_different_calls_do_not_end_the_turn() {
    let replies = vec![
        tool("read_file", json!({"path": ".env"})),
        tool("read_file", json!({"path": ".git/config"})),
        tool("read_file", json!({"path": ".env"})),
        text("I cannot read those files."),
    ];
    let world = World::with("openai-chat", replies, "").await;
    let (_, events) = print_in_bypass(&world, "read them").await;
    let end = of_type(&events, "turn_end");
    assert_eq!(end[0]["stop"], "completed", "{end:?}");
    assert_eq!(world.llm.bodies().len(), 4);
}

/// Under the small profile, a refused call asked for again leaves the
/// model nothing but its answer: the next request offers only
/// `final_answer`, and the turn ends with the answer, not as a repeat.
#[tokio::test]
async fn a_refusal_asked_for_again_leaves_a_small_model_only_its_answer() {
    let env = || tool("read_file", json!({"path": ".env"}));
    let answer = ".env is protected: mino blocked the read.";
    let replies = vec![
        env(),
        env(),
        tool("final_answer", json!({"answer": answer})),
    ];
    let world = World::with("openai-chat", replies, "profile = \"small\"\n").await;
    // -p still says every call was refused (its exit status says so too).
    let (out, events) = print_in_bypass(&world, "read .env").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rejected or denied (2 calls)"), "{stderr}");
    let end = of_type(&events, "turn_end");
    assert_eq!(end[0]["stop"], "completed", "{end:?}");
    assert_eq!(
        of_type(&events, "assistant").last().unwrap()["text"],
        answer
    );
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    assert_eq!(tools(&bodies[0]).len(), 7, "{:?}", tools(&bodies[0]));
    assert_eq!(tools(&bodies[1]).len(), 7);
    assert_eq!(tools(&bodies[2]), ["final_answer"]);
}

/// Under the small profile, a read that came back with the same result is
/// left out of the next request, so a model forced to call a tool must act
/// on what it read (here the edit) or answer; the request after that
/// offers it again.
#[tokio::test]
async fn a_small_model_s_repeated_read_is_left_out_of_the_next_request_only() {
    let read = || tool("read_file", json!({"path": "notes.md"}));
    let replies = vec![
        read(),
        read(),
        tool(
            "edit_file",
            json!({"path": "notes.md", "old_string": "# Relase", "new_string": "# Release"}),
        ),
        tool("final_answer", json!({"answer": "Fixed the title."})),
    ];
    let world = World::with("openai-chat", replies, "profile = \"small\"\n").await;
    let (out, events) = print_in_bypass(&world, "fix the title of notes.md").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let end = of_type(&events, "turn_end");
    assert_eq!(end[0]["stop"], "completed", "{end:?}");
    let notes = std::fs::read_to_string(world.project.path().join("notes.md")).unwrap();
    assert!(notes.starts_with("# Release notes"), "{notes}");
    let bodies = world.llm.bodies();
    assert_eq!(bodies.len(), 4, "{bodies:?}");
    let offered: Vec<bool> = bodies
        .iter()
        .map(|b| tools(b).iter().any(|t| t == "read_file"))
        .collect();
    assert_eq!(offered, [true, true, false, true]);
    assert_eq!(tools(&bodies[2]).len(), 6, "{:?}", tools(&bodies[2]));
}
