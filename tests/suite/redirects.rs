//! Requests go where they were configured: a model service that answers
//! with a redirect is an error naming the new location, and the address it
//! names is never sent anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use crate::support::llm::{Llm, text};

/// A server on 127.0.0.1 that answers every request with `307` to
/// `location`, and counts them.
async fn redirecting(location: String) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 1 << 16];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            // mino asks a loopback server for its window first
            // (`model::window`); only model requests count here.
            let head = String::from_utf8_lossy(&buf[..n]);
            if !head.starts_with("GET /props") && !head.starts_with("POST /api/show") {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let head = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
        }
    });
    (format!("http://{addr}/v1"), hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_service_that_redirects_is_an_error_and_the_other_port_is_never_hit() {
    let other = Llm::start("openai-chat", vec![text("I am not the configured service")]).await;
    let target = format!("{}/chat/completions", other.base_url());
    let (base_url, hits) = redirecting(target.clone()).await;
    let home = tempfile::TempDir::new().unwrap();
    let project = tempfile::TempDir::new().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[model]\nprovider = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"m\"\nrequest_timeout_secs = 5\nmax_retries = 0\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mino"))
        .args(["-p", "hello", "--cd"])
        .arg(project.path())
        .env("MINO_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-redirect-test-key")
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("redirected the request to {target}")),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not the configured"));
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(other.bodies().is_empty(), "the redirect was followed");
}
