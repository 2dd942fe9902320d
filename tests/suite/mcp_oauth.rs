//! OAuth for a remote MCP server, end to end: a loopback server on the
//! official Python SDK's auth helpers (`tests/mcp/oauth-server.py`, pinned
//! in `tests/mcp/requirements.txt`) that is both the MCP server and its
//! authorization server. mino says the server needs authorization;
//! `/mcp auth` discovers the authorization server, registers dynamically
//! and prints the PKCE authorization URL, which the test fetches as a
//! browser would (its redirect reaches mino's loopback listener); the
//! token is kept in mino's home (0600), refreshed when the server rejects
//! it, never in a request to the model or a log; `/mcp logout` forgets it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::llm::{text, tool};
use crate::support::pty::Pty;
use crate::support::world::World;
use serde_json::{Value, json};

use super::mcp::KEY;

/// The OAuth server, stopped when dropped.
struct OAuthServer {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OAuthServer {
    /// Starts it; each access token it issues is accepted for `uses`
    /// requests.
    fn start(uses: u32) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let python = root.join(".test-deps/pymcp/bin/python");
        assert!(
            python.is_file(),
            "the Python MCP SDK is not installed in {}: run scripts/test-deps",
            python.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("oauth.log");
        let mut child = Command::new(python)
            .arg(root.join("tests/mcp/oauth-server.py"))
            .env("OAUTH_LOG", &log)
            .env("OAUTH_TOKEN_USES", uses.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().strip_prefix("port ").unwrap().parse().unwrap();
        Self {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Line mode for `world`, with a browser that opens nothing (`true`).
fn line_mode(world: &World) -> Pty {
    let home = world.home.path().to_str().unwrap().to_string();
    let project = world.project.path().to_str().unwrap().to_string();
    Pty::spawn(
        env!("CARGO_BIN_EXE_mino"),
        &["--line", "--cd", &project, "--yolo"],
        world.project.path(),
        &[
            ("MINO_HOME", &home),
            ("OPENAI_API_KEY", KEY),
            ("AGENT_YOLO", ""),
            ("BROWSER", "true"),
        ],
    )
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The token values in the token files.
fn stored_tokens(home: &Path) -> Vec<String> {
    let mut tokens = Vec::new();
    for file in files(&home.join("mcp-oauth")) {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for entry in json["resources"].as_object().unwrap().values() {
            for key in ["access_token", "refresh_token"] {
                if let Some(token) = entry["token_response"][key].as_str() {
                    tokens.push(token.to_string());
                }
            }
        }
    }
    tokens
}

/// Plays the browser: fetches the authorization URL and follows its
/// redirect to mino's loopback listener.
async fn browse(url: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new().get(url).send().await.unwrap();
    assert!(response.status().is_success(), "{response:?}");
    assert!(
        response.url().as_str().contains("/callback?"),
        "{response:?}"
    );
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_is_authorized_in_the_browser_refreshed_and_logged_out() {
    // Each token serves three requests: the session's later ones need a
    // refreshed one.
    let server = OAuthServer::start(3);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let world = World::mcp(
        vec![
            tool("mcp_remote_echo", json!({"text": "one"})),
            tool("mcp_remote_echo", json!({"text": "two"})),
            text("done"),
        ],
        |_| format!("[mcp.servers.remote]\nurl = {url:?}\n"),
    )
    .await;
    let mut pty = line_mode(&world);
    pty.expect("MCP server remote needs authorization (it answered 401 without a token): run /mcp auth remote");
    pty.send_line("/mcp");
    let listing = pty.expect("Destination: ");
    assert!(
        listing.contains(
            "remote: failed: it needs authorization (it answered 401): run /mcp auth remote"
        ),
        "{listing}"
    );
    pty.send_line("/mcp auth remote");
    pty.expect("if it did not show, open: ");
    let address = pty.expect("\n").trim().to_string();
    assert!(address.contains("/authorize?"), "{address}");
    assert!(address.contains("code_challenge="), "{address}");
    assert!(address.contains("code_challenge_method=S256"), "{address}");
    assert!(
        address.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"),
        "{address}"
    );
    let page = browse(&address).await;
    assert!(page.contains("mino received the authorization"), "{page}");
    pty.expect("MCP server remote is authorized; connecting to it again.");
    pty.expect("MCP server remote started: 1 tools.");
    pty.send_line("echo twice");
    pty.expect("done");

    let said = server.said();
    for step in ["registered", "authorized", "token code", "token refresh"] {
        assert!(said.lines().any(|l| l == step), "{step}: {said}");
    }
    assert_eq!(said.matches("call echo").count(), 2, "{said}");
    let bodies = world.llm.bodies();
    assert!(bodies[1].contains("echo: one"), "{}", bodies[1]);
    assert!(bodies[2].contains("echo: two"), "{}", bodies[2]);

    // One file per issuer, private, holding the refreshed tokens; never in
    // a request to the model, a session, a log.
    let home = world.home.path();
    let tokens = stored_tokens(home);
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    use std::os::unix::fs::PermissionsExt;
    let token_files = files(&home.join("mcp-oauth"));
    assert_eq!(token_files.len(), 1);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&token_files[0]), 0o600);
    assert_eq!(mode(&home.join("mcp-oauth")), 0o700);
    let elsewhere: Vec<PathBuf> = files(home)
        .into_iter()
        .filter(|p| !p.starts_with(home.join("mcp-oauth")))
        .collect();
    for token in &tokens {
        for body in &bodies {
            assert!(!body.contains(token.as_str()), "{body}");
        }
        for file in &elsewhere {
            let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).to_string();
            assert!(!text.contains(token.as_str()), "{}", file.display());
        }
        assert!(!pty.all().contains(token.as_str()));
    }

    pty.send_line("/mcp logout remote");
    pty.expect(
        "Forgot the OAuth tokens of the MCP server remote; connecting to it again without them.",
    );
    pty.expect("MCP server remote needs authorization");
    assert!(files(&home.join("mcp-oauth")).is_empty());
    pty.send_line("/quit");
    assert_eq!(pty.wait(), 0);
}

/// A token kept in mino's home is out of bash's reach in the sandbox (the
/// home is masked: not even the file's other fields show) and of the file
/// tools', and its value is redacted from every result all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_token_is_masked_in_the_sandbox_and_redacted() {
    use super::sandbox::{Setup, bash, stderr};
    let b = Setup::new(vec![], "").await;
    let dir = b.mino_home().join("mcp-oauth");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("issuer.example-000000000000.json");
    std::fs::write(
        &file,
        json!({
            "issuer": "https://issuer.example/",
            "resources": {"https://mcp.example/mcp": {
                "client_id": "client-id-visible-marker",
                "token_response": {
                    "access_token": "at-kept-token-5f1e2d3c4b",
                    "token_type": "bearer",
                    "refresh_token": "rt-kept-token-9a8b7c6d5e"
                },
                "granted_scopes": [],
                "issuer": "https://issuer.example/"
            }}
        })
        .to_string(),
    )
    .unwrap();
    let b = b
        .with_replies(
            vec![
                bash(&format!("cat {}/*.json; echo end-cat", dir.display())),
                tool("read_file", json!({"path": file.display().to_string()})),
                text("done"),
            ],
            "",
        )
        .await;
    let (events, out) = b.bypass("read the tokens").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = crate::support::stream::outputs(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("end-cat"), "{}", results[0]);
    assert!(
        results[0].contains("masked by the sandbox"),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with("Blocked by policy"),
        "{}",
        results[1]
    );
    for result in &results {
        assert!(!result.contains("client-id-visible-marker"), "{result}");
    }
    let bodies = b.bodies();
    for token in ["at-kept-token-5f1e2d3c4b", "rt-kept-token-9a8b7c6d5e"] {
        assert!(!bodies.contains(token), "{bodies}");
    }
}
