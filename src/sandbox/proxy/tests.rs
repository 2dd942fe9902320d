//! The proxy over its real unix socket, against a loopback server: what
//! each protocol answers for a refused, an allowed and a malformed request.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use super::Proxy;
use crate::policy::destination::NetworkRules;

/// A loopback server that answers one HTTP request per connection with
/// the request line it got.
async fn echo_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&got).replace("\r\n", "|");
                let body = format!("got:{text}");
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    port
}

async fn proxy(
    allow_private: &[String],
    domains: Option<&[String]>,
) -> (tempfile::TempDir, PathBuf, Proxy) {
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::new(
        Some(dir.path().to_path_buf()),
        NetworkRules::new(allow_private, domains).unwrap(),
    );
    let socket = proxy.socket().unwrap();
    (dir, socket, proxy)
}

async fn exchange(socket: &PathBuf, request: &[u8]) -> Vec<u8> {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut got = Vec::new();
    stream.read_to_end(&mut got).await.unwrap();
    got
}

#[tokio::test]
async fn http_to_loopback_is_refused_with_a_reason_a_program_can_read() {
    let port = echo_server().await;
    let (_dir, socket, _proxy) = proxy(&[], None).await;
    for request in [
        format!("GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: a\r\n\r\n"),
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
        format!("GET http://user:pw@LOCALHOST:{port}/ HTTP/1.1\r\n\r\n"),
        format!("GET http://[::ffff:127.0.0.1]:{port}/ HTTP/1.1\r\n\r\n"),
        format!("GET http://0x7f000001:{port}/ HTTP/1.1\r\n\r\n"),
    ] {
        let got = String::from_utf8(exchange(&socket, request.as_bytes()).await).unwrap();
        assert!(
            got.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "{request}: {got}"
        );
        assert!(
            got.contains("X-Mino-Proxy-Refusal: private-address\r\n"),
            "{got}"
        );
        let body: serde_json::Value =
            serde_json::from_str(got.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["error"], "mino-proxy");
        assert_eq!(body["reason"], "private-address");
        assert_eq!(body["class"], "loopback", "{got}");
        assert!(!got.contains("got:"), "{got}");
    }
}

#[tokio::test]
async fn a_destination_in_allow_private_is_reached_in_origin_form() {
    let port = echo_server().await;
    let (_dir, socket, _proxy) = proxy(&[format!("127.0.0.1:{port}")], None).await;
    let got = exchange(
        &socket,
        format!(
            "GET http://127.0.0.1:{port}/path?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Proxy-Connection: keep-alive\r\nProxy-Authorization: x\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    let got = String::from_utf8(got).unwrap();
    assert!(got.starts_with("HTTP/1.1 200 OK"), "{got}");
    assert!(
        got.contains("got:GET /path?q=1 HTTP/1.1|Host: 127.0.0.1|Connection: close||"),
        "{got}"
    );
    // A tunnel to it too.
    let mut stream = UnixStream::connect(&socket).await.unwrap();
    stream
        .write_all(
            format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET /t HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut got = Vec::new();
    stream.read_to_end(&mut got).await.unwrap();
    let got = String::from_utf8(got).unwrap();
    assert!(
        got.starts_with("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK"),
        "{got}"
    );
    assert!(got.contains("got:GET /t HTTP/1.1"), "{got}");
    // Another port of the same host is not named.
    let other = exchange(
        &socket,
        format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", port ^ 1).as_bytes(),
    )
    .await;
    assert!(String::from_utf8_lossy(&other).starts_with("HTTP/1.1 403"));
}

#[tokio::test]
async fn the_allow_list_refuses_before_resolving() {
    let (_dir, socket, _proxy) = proxy(&[], Some(&["*.crates.io".to_string()])).await;
    let got = exchange(
        &socket,
        b"CONNECT no-such-host.invalid:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    let got = String::from_utf8(got).unwrap();
    assert!(
        got.contains("X-Mino-Proxy-Refusal: not-allowed-domain"),
        "{got}"
    );
    assert!(
        got.contains("\"destination\":\"no-such-host.invalid:443\""),
        "{got}"
    );
}

#[tokio::test]
async fn malformed_requests_get_a_400() {
    let (_dir, socket, _proxy) = proxy(&[], None).await;
    for request in [
        &b"GET https://example.com/ HTTP/1.1\r\n\r\n"[..],
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"CONNECT example.com HTTP/1.1\r\n\r\n",
        b"nonsense\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
    ] {
        let got = String::from_utf8_lossy(&exchange(&socket, request).await).into_owned();
        assert!(got.starts_with("HTTP/1.1 400 Bad Request"), "{got}");
        assert!(got.contains("X-Mino-Proxy-Refusal: bad-request"), "{got}");
    }
    // A head that never ends within 64 KiB.
    let mut huge = b"GET http://example.com/ HTTP/1.1\r\n".to_vec();
    huge.resize(64 * 1024, b'a');
    let got = String::from_utf8_lossy(&exchange(&socket, &huge).await).into_owned();
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
}

/// SOCKS5 greeting, then a CONNECT request for `address` (type and bytes).
fn socks_request(kind: u8, address: &[u8], port: u16) -> Vec<u8> {
    let mut request = vec![5, 1, 0, 5, 1, 0, kind];
    request.extend_from_slice(address);
    request.extend_from_slice(&port.to_be_bytes());
    request
}

#[tokio::test]
async fn socks5_refuses_loopback_of_every_address_type_with_code_2() {
    let port = echo_server().await;
    let (_dir, socket, _proxy) = proxy(&[], None).await;
    let mut domain = vec![9u8];
    domain.extend_from_slice(b"localhost");
    let mut v6 = [0u8; 16];
    v6[15] = 1;
    for (kind, address) in [(1u8, vec![127, 0, 0, 1]), (3, domain), (4, v6.to_vec())] {
        let got = exchange(&socket, &socks_request(kind, &address, port)).await;
        assert_eq!(&got[..2], &[5, 0], "method");
        assert_eq!(&got[2..4], &[5, 2], "type {kind}: {got:?}");
    }
    // Another command (BIND) and an unknown address type.
    let got = exchange(&socket, &[5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80]).await;
    assert_eq!(&got[2..4], &[5, 7]);
    let got = exchange(&socket, &[5, 1, 0, 5, 1, 0, 9, 0, 80]).await;
    assert_eq!(&got[2..4], &[5, 8]);
    // Only authentication methods offered.
    let got = exchange(&socket, &[5, 1, 2]).await;
    assert_eq!(got, vec![5, 0xff]);
}

#[tokio::test]
async fn socks5_reaches_a_destination_in_allow_private() {
    let port = echo_server().await;
    let (_dir, socket, _proxy) = proxy(&[format!("127.0.0.1:{port}")], None).await;
    let mut request = socks_request(1, &[127, 0, 0, 1], port);
    request.extend_from_slice(b"GET /s HTTP/1.1\r\n\r\n");
    let got = exchange(&socket, &request).await;
    assert_eq!(&got[2..4], &[5, 0], "{got:?}");
    assert!(String::from_utf8_lossy(&got[12..]).contains("got:GET /s HTTP/1.1"));
}

#[tokio::test]
async fn a_run_that_ended_without_cleaning_up_is_swept_and_a_live_one_kept() {
    let base = tempfile::tempdir().unwrap();
    let stale = base.path().join("run-stale");
    std::fs::create_dir(&stale).unwrap();
    drop(std::os::unix::net::UnixListener::bind(stale.join("proxy.sock")).unwrap());
    let binding = base.path().join("run-binding");
    std::fs::create_dir(&binding).unwrap();
    let other = base.path().join("kept");
    std::fs::create_dir(&other).unwrap();
    drop(std::os::unix::net::UnixListener::bind(other.join("proxy.sock")).unwrap());
    let live = Proxy::new(Some(base.path().to_path_buf()), NetworkRules::default());
    let live_socket = live.socket().unwrap();
    let next = Proxy::new(Some(base.path().to_path_buf()), NetworkRules::default());
    next.socket().unwrap();
    assert!(!stale.exists());
    assert!(binding.exists() && other.exists());
    assert!(live_socket.exists());
}

#[tokio::test]
async fn the_socket_lives_in_a_directory_of_the_runs_own() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, socket, proxy) = proxy(&[], None).await;
    let run = socket.parent().unwrap();
    assert_eq!(run.parent().unwrap(), dir.path());
    let mode = std::fs::metadata(run).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    // Asking again starts nothing new.
    assert_eq!(proxy.socket().unwrap(), socket);
    // A path longer than a socket address holds still binds.
    let deep = dir.path().join("d".repeat(100)).join("e".repeat(100));
    let long = Proxy::new(Some(deep), NetworkRules::default());
    assert!(long.socket().unwrap().as_os_str().len() > 200);
}

/// An asker that says yes to one host and records what it was asked.
#[derive(Debug)]
struct Answers {
    yes: String,
    asked: std::sync::Mutex<Vec<String>>,
}

impl super::HostAsk for Answers {
    fn ask(&self, host: &str, port: u16) -> futures_util::future::BoxFuture<'static, bool> {
        self.asked.lock().unwrap().push(format!("{host}:{port}"));
        let yes = host == self.yes;
        Box::pin(async move { yes })
    }
}

#[tokio::test]
async fn a_host_outside_the_allow_list_is_put_to_the_asker_and_other_rules_still_hold() {
    let port = echo_server().await;
    let (_dir, socket, proxy) = proxy(&[format!("127.0.0.1:{port}")], Some(&[])).await;
    let answers = std::sync::Arc::new(Answers {
        yes: "127.0.0.1".into(),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    proxy.set_asker(Some(answers.clone()));
    let get = |host: &str, port: u16| format!("GET http://{host}:{port}/a HTTP/1.1\r\n\r\n");
    let got =
        String::from_utf8(exchange(&socket, get("127.0.0.1", port).as_bytes()).await).unwrap();
    assert!(got.starts_with("HTTP/1.1 200 OK"), "{got}");
    // Said no: refused as outside the list.
    let got =
        String::from_utf8(exchange(&socket, get("localhost", port).as_bytes()).await).unwrap();
    assert!(
        got.contains("X-Mino-Proxy-Refusal: not-allowed-domain"),
        "{got}"
    );
    // Said yes to the host, but this port is not in allow_private: the
    // private-address rule still refuses it.
    let got =
        String::from_utf8(exchange(&socket, get("127.0.0.1", port ^ 1).as_bytes()).await).unwrap();
    assert!(
        got.contains("X-Mino-Proxy-Refusal: private-address"),
        "{got}"
    );
    assert_eq!(
        *answers.asked.lock().unwrap(),
        [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("127.0.0.1:{}", port ^ 1)
        ]
    );
    // Without an asker, nothing is asked and the host is refused.
    proxy.set_asker(None);
    let got =
        String::from_utf8(exchange(&socket, get("127.0.0.1", port).as_bytes()).await).unwrap();
    assert!(
        got.contains("X-Mino-Proxy-Refusal: not-allowed-domain"),
        "{got}"
    );
}

/// An asker that never answers, and says when its question was dropped.
#[derive(Debug, Default)]
struct Silent {
    dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

struct OnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl super::HostAsk for Silent {
    fn ask(&self, _host: &str, _port: u16) -> futures_util::future::BoxFuture<'static, bool> {
        let guard = OnDrop(self.dropped.clone());
        Box::pin(async move {
            let _guard = guard;
            std::future::pending::<bool>().await
        })
    }
}

#[tokio::test]
async fn a_command_that_hangs_up_while_asked_drops_its_question() {
    let (_dir, socket, proxy) = proxy(&[], Some(&[])).await;
    let silent = std::sync::Arc::new(Silent::default());
    proxy.set_asker(Some(silent.clone()));
    let mut stream = UnixStream::connect(&socket).await.unwrap();
    stream
        .write_all(b"CONNECT example.org:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    // The question is open while the client waits.
    tokio::task::yield_now().await;
    assert!(!silent.dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop(stream);
    for _ in 0..200 {
        if silent.dropped.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the question outlived the connection that asked it");
}
