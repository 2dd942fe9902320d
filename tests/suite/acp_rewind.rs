//! `/rewind` over ACP, driven by the official TypeScript SDK client against
//! a loopback model service: the command advertised in
//! `available_commands_update`, `/rewind` listing the session's prompts,
//! `/rewind N` putting the three choices as a permission request, a
//! cancelled answer rewinding nothing, and *code and conversation* taking
//! the turn's file back.

use serde_json::json;

use crate::support::llm::{text, tool};
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_is_advertised_lists_prompts_and_its_choices_come_as_a_permission_request() {
    let world = World::with(
        "openai-chat",
        vec![
            tool(
                "bash",
                json!({"command": "printf 'one\\ntwo\\n' > made.txt"}),
            ),
            text("made it"),
        ],
        "",
    )
    .await;
    let made = world.project.path().join("made.txt");
    let run = world
        .client(
            json!([
                world.new_session(),
                {"setMode": "bypass"},
                {"prompt": "make the file"},
                {"prompt": "/rewind"},
                {"prompt": "/rewind 1", "answers": ["cancelled"]},
                {"prompt": "/rewind 1", "answers": ["both"]},
            ]),
            json!({}),
        )
        .await;
    let advertised = run.updates("available_commands_update");
    assert_eq!(advertised.len(), 1, "{:#?}", run.log);
    let names: Vec<&str> = advertised[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"rewind"), "{names:?}");
    let stops: Vec<&str> = run
        .events("stop")
        .iter()
        .map(|e| e["stopReason"].as_str().unwrap())
        .collect();
    assert_eq!(stops, ["end_turn"; 4], "{:#?}", run.log);
    let said: String = run
        .updates("agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert!(
        said.contains("1  make the file  — 1 file(s): made.txt +2 -0"),
        "{said}"
    );
    // Two requests, each with the three choices and a way out.
    let asked = run.permissions();
    assert_eq!(asked.len(), 2, "{:#?}", run.log);
    let ids: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["both", "conversation", "code", "cancel"]);
    let labels = asked[0]["options"].to_string();
    assert!(
        labels.contains("delete 1 file(s): made.txt (+0 -2 lines)"),
        "{labels}"
    );
    assert!(said.contains("Nothing was rewound."), "{said}");
    assert!(
        said.contains("Rewound to before prompt 1: 0 file(s) restored, 1 deleted"),
        "{said}"
    );
    assert!(!made.exists(), "the turn's file is still there");
    // Only the turn's prompt reached the model: commands never do.
    let bodies = world.llm.bodies().join("\n");
    assert!(!bodies.contains("/rewind"), "{bodies}");
}
