//! A server's questions (MCP elicitation), end to end with the reference
//! `server-everything` and its `trigger-elicitation-request` tool (which it
//! offers only to a client that declares it can be asked): answered in the
//! full screen's dialog in a pseudo-terminal, declined through `-p`, and
//! declined for a server marked `ask`; what the person types goes to the
//! server, never to the model or the session record.

use crate::support::llm::{text, tool};
use serde_json::json;

use super::mcp::{everything, results};
use crate::support::world::World;

const ASK: &str = "mcp_everything_trigger-elicitation-request";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_through_p_is_declined_and_said() {
    let world = World::mcp(vec![tool(ASK, json!({})), text("done")], |_| {
        everything("everything", "")
    })
    .await;
    let (events, stderr, out) = world.mcp_print("ask me", &["--yolo"]).await;
    assert!(out.status.success(), "{stderr}");
    let results = results(&events);
    assert_eq!(
        results.len(),
        1,
        "the tool is offered: {results:?}\n{stderr}"
    );
    assert!(
        results[0]
            .1
            .contains("User declined to provide the requested information"),
        "{results:?}"
    );
    assert!(
        stderr.contains("the MCP server everything asked a question; declined"),
        "{stderr}"
    );
}
