//! The README's quick-start blocks, pasted as they are into a settings
//! file (only `base_url` pointed at a loopback server of the block's wire),
//! answer a `-p` prompt: a newcomer who copies one gets a working mino. The
//! provider presets' block, pasted after one of them, gives `/model NAME`
//! for each preset, whose prompt goes to that preset's server.

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
    let blocks: Vec<String> = blocks()
        .into_iter()
        .filter(|b| b.starts_with("[model]"))
        .collect();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_presets_block_switches_a_session_to_each_preset() {
    let block = blocks()
        .into_iter()
        .find(|b| b.starts_with("[providers."))
        .expect("a presets block in the quick start");
    let table: toml::Table = toml::from_str(&block).unwrap();
    let presets = table["providers"].as_table().unwrap();
    assert!(presets.len() >= 2, "{presets:?}");
    let default = Llm::start("openai-chat", vec![]).await;
    let mut pasted = block.clone();
    let mut servers = Vec::new();
    for (name, preset) in presets {
        let provider = preset["provider"].as_str().unwrap();
        let llm = Llm::start(provider, vec![text("PRESET-OK")]).await;
        pasted = pasted.replace(preset["base_url"].as_str().unwrap(), &llm.base_url());
        servers.push((name.clone(), preset.clone(), llm));
    }
    let home = tempfile::TempDir::new().unwrap();
    let project = tempfile::TempDir::new().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"local\"\n\n{pasted}",
            default.base_url()
        ),
    )
    .unwrap();
    for (name, preset, llm) in &servers {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
        command
            .args(["--line", "--cd"])
            .arg(project.path())
            .current_dir(project.path())
            .env("MINO_HOME", home.path())
            .env("AGENT_YOLO", "")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(key) = preset.get("api_key_env").and_then(|v| v.as_str()) {
            command.env(key, "quick-start-test-key");
        }
        let input = format!("/model {name}\nhello\n");
        let out = tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let mut child = command.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
        let model = preset["model"].as_str().unwrap();
        assert!(
            stdout.contains(&format!(
                "Model for this session from now on: {name}/{model} ("
            )),
            "{name}: {stdout}\n{stderr}"
        );
        assert!(stdout.contains("PRESET-OK"), "{name}: {stdout}\n{stderr}");
        let bodies = llm.bodies();
        assert_eq!(bodies.len(), 1, "{name}");
        assert!(bodies[0].contains(&format!("\"{model}\"")), "{}", bodies[0]);
        assert!(bodies[0].contains("hello"), "{}", bodies[0]);
    }
    assert!(default.bodies().is_empty(), "{:?}", default.bodies());
}
