//! No `MINO_*` variable reaches a child that is not mino: an MCP server and
//! a preToolCall hook each print their environment, which holds the rest of
//! mino's (a marker variable passes) but none of mino's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::json;

use crate::support::llm::{text, tool};
use crate::support::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_and_hooks_get_no_mino_variables() {
    let world = World::with(
        "openai-chat",
        vec![
            tool("mcp_everything_echo", json!({"message": "hello"})),
            text("done"),
        ],
        "",
    )
    .await;
    let server_env = world.home.path().join("server-env.txt");
    let hook_env = world.home.path().join("hook-env.txt");
    let everything = super::mcp::servers().join("server-everything/dist/index.js");
    let config = world.home.path().join("config.toml");
    let mut settings = std::fs::read_to_string(&config).unwrap();
    settings.push_str(&format!(
        "\n[hooks]\npre_tool_call = [\"/bin/sh\", \"-c\", \"env > '{}'\"]\n\
         [mcp.servers.everything]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"env > '{}'; exec node '{}'\"]\n",
        hook_env.display(),
        server_env.display(),
        everything.display()
    ));
    std::fs::write(&config, settings).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args([
            "-p",
            "echo",
            "--output-format",
            "stream-json",
            "--yolo",
            "--cd",
        ])
        .arg(world.project.path())
        .env("MINO_HOME", world.home.path())
        .env("MINO_LOG", "info")
        .env("MINO_CHILD_ENV_MARKER", "mino-only")
        .env("CHILD_ENV_MARKER", "passes")
        .env("OPENAI_API_KEY", "sk-test-child-env")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(world.llm.bodies().len(), 2, "{stderr}");
    for (who, file) in [("the MCP server", &server_env), ("the hook", &hook_env)] {
        let env = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{who}: {e}\n{stderr}"));
        assert!(env.contains("CHILD_ENV_MARKER=passes"), "{who}: {env}");
        let own: Vec<&str> = env.lines().filter(|l| l.starts_with("MINO_")).collect();
        assert!(own.is_empty(), "{who} got {own:?}");
    }
}
