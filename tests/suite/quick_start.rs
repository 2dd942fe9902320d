//! The README's quick-start blocks, pasted as they are into a settings
//! file (only `base_url` pointed at a loopback server of the block's wire),
//! answer a `-p` prompt: a newcomer who copies one gets a working mino.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use crate::support::llm::{Llm, text};

/// The ```toml blocks of the README's quick-start section.
fn blocks() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("## Quick start: a real model").unwrap();
    let section = &readme[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .split("```toml\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_quick_start_block_works_against_a_server_of_its_wire() {
    let blocks = blocks();
    assert_eq!(blocks.len(), 5, "{blocks:?}");
    let mut wires = std::collections::BTreeSet::new();
    for block in blocks {
        let table: toml::Table = toml::from_str(&block).unwrap();
        let model = &table["model"];
        let provider = model["provider"].as_str().unwrap().to_string();
        let name = model["model"].as_str().unwrap().to_string();
        wires.insert(provider.clone());
        let llm = Llm::start(&provider, vec![text("QUICK-START-OK")]).await;
        let original = model["base_url"].as_str().unwrap();
        let pasted = block.replace(original, &llm.base_url());
        assert_ne!(pasted, block);
        let home = tempfile::TempDir::new().unwrap();
        let project = tempfile::TempDir::new().unwrap();
        std::fs::write(home.path().join("config.toml"), &pasted).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(["-p", "hello", "--cd"])
            .arg(project.path())
            .current_dir(project.path())
            .env("MINO_HOME", home.path())
            .env("AGENT_YOLO", "");
        if let Some(key) = model.get("api_key_env").and_then(|v| v.as_str()) {
            command.env(key, "quick-start-test-key");
        }
        let out = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{provider}: {stdout}\n{stderr}");
        assert!(stdout.contains("QUICK-START-OK"), "{provider}: {stdout}");
        assert!(!stderr.contains("warning"), "{provider}: {stderr}");
        let bodies = llm.bodies();
        assert_eq!(bodies.len(), 1, "{provider}");
        assert!(
            bodies[0].contains(&format!("\"{name}\"")),
            "{provider}: {}",
            bodies[0]
        );
        let path = &llm.paths()[0];
        let expected = match provider.as_str() {
            "openai-responses" => "/responses",
            "openai-chat" => "/chat/completions",
            "anthropic" => "/messages",
            other => panic!("a quick start for {other}"),
        };
        assert!(path.ends_with(expected), "{provider}: {path}");
    }
    assert_eq!(wires.len(), 3, "every wire has a block: {wires:?}");
}

/// `-p hello` against `llm` with `extra` settings: the banner line of the
/// context window.
async fn window_line(llm: &Llm, extra: &str) -> String {
    let home = tempfile::TempDir::new().unwrap();
    let project = tempfile::TempDir::new().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"local\"\n{extra}",
            llm.base_url()
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
    command
        .args(["-p", "hello", "--cd"])
        .arg(project.path())
        .env("MINO_HOME", home.path())
        .env("OPENAI_API_KEY", "k")
        .env("AGENT_YOLO", "");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    stderr
        .lines()
        .find(|l| l.starts_with("Context window:"))
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_servers_window_is_the_one_it_reports_unless_the_settings_say() {
    let props = serde_json::json!({"default_generation_settings": {"n_ctx": 8192}});
    let llm = Llm::start_with_props("openai-chat", vec![text("OK")], props.clone()).await;
    assert_eq!(
        window_line(&llm, "").await,
        "Context window: 8192 tokens (reported by the server: llama.cpp /props n_ctx)."
    );
    assert_eq!(llm.bodies().len(), 1, "the question is no model request");
    let llm = Llm::start_with_props("openai-chat", vec![text("OK")], props).await;
    assert_eq!(
        window_line(&llm, "context_window = 32000\n").await,
        "Context window: 32000 tokens (from settings)."
    );
    // A server that is not llama.cpp (nor Ollama) leaves the default.
    let llm = Llm::start("openai-chat", vec![text("OK")]).await;
    assert!(window_line(&llm, "").await.ends_with("tokens (default)."));
}
