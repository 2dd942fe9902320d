//! The sandbox's own network end to end (issue 20's finding 9 and
//! deliverable 2): the built binary in bypass against the loopback model
//! service, each command run for real with `curl`, `pip` and `tar`,
//! checked on what the host's services received, on what the command's
//! result says and on every request body the model service received.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::sandbox::{Setup, bash, outside_tmp, stderr};
use crate::support::llm::text;
use crate::support::stream::outputs;

const MARKER: &str = "HOST-LOOPBACK-SERVICE-4b7e";

/// A host loopback listener nobody may reach: accepting never succeeds
/// while the test looks.
struct Untouched(TcpListener);

impl Untouched {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Self(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn never_reached(&self) {
        match self.0.accept() {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            other => panic!("the host's loopback service was reached: {other:?}"),
        }
    }
}

/// A loopback HTTP server on the host serving `files` by path, counting
/// the requests it answered.
struct Index {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl Index {
    fn start(files: Vec<(String, Vec<u8>)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        let files = Arc::new(files);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let files = files.clone();
                std::thread::spawn(move || answer(stream, &files));
            }
        });
        Self { port, requests }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn answer(mut stream: TcpStream, files: &[(String, Vec<u8>)]) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/").to_string();
    let found = files.iter().find(|(p, _)| *p == path);
    let (status, body): (&str, &[u8]) = match found {
        Some((_, body)) => ("200 OK", body),
        None => ("404 Not Found", b"missing"),
    };
    let kind = if path.ends_with('/') {
        "text/html"
    } else {
        "application/octet-stream"
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(body);
}

/// Finding 9: `curl` to a service on the host's loopback from bash in
/// bypass: the service never gets a request, its marker never reaches the
/// model, and the result names the proxy's refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_loopback_service_is_refused_by_the_proxy() {
    let service = Untouched::start();
    let port = service.port();
    let b = Setup::new(
        vec![
            bash(&format!(
                "curl -s http://127.0.0.1:{port}/; echo; curl -s http://localhost:{port}/; echo; \
                 curl -s http://[::ffff:127.0.0.1]:{port}/; echo; echo end-curl"
            )),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("reach the host").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-curl"), "{result}");
    assert_eq!(
        result.matches("\"error\":\"mino-proxy\"").count(),
        3,
        "{result}"
    );
    assert!(
        result.contains("\"reason\":\"private-address\""),
        "{result}"
    );
    assert!(
        result.contains(&format!("\"destination\":\"127.0.0.1:{port}\"")),
        "{result}"
    );
    assert!(result.contains("\"class\":\"loopback\""), "{result}");
    assert!(
        result.contains("[Sandbox: the command's network goes through mino's proxy"),
        "{result}"
    );
    service.never_reached();
    assert!(!b.bodies().contains(MARKER));
    let shown = stderr(&out);
    assert!(shown.contains("network via proxy"), "{shown}");
}

/// A wheel of the package `minotestpkg` 1.0, made by the host's python.
fn wheel(dir: &Path) -> (String, Vec<u8>) {
    let name = "minotestpkg-1.0-py3-none-any.whl";
    let path = dir.join(name);
    let script = format!(
        "import zipfile\nz = zipfile.ZipFile({:?}, 'w')\n\
         z.writestr('minotestpkg/__init__.py', 'MARK = \"{MARKER}\"\\n')\n\
         z.writestr('minotestpkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: minotestpkg\\nVersion: 1.0\\n')\n\
         z.writestr('minotestpkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
         z.writestr('minotestpkg-1.0.dist-info/RECORD', '')\n\
         z.close()\n",
        path.to_str().unwrap()
    );
    let out = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (name.to_string(), std::fs::read(path).unwrap())
}

/// A package install through the proxy from a loopback package index the
/// test starts: it works when the user's settings name the index in
/// `allow_private`, and is refused (the index never asked) without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_installs_from_a_private_index_named_in_allow_private() {
    if !Path::new("/usr/bin/pip3").exists() {
        eprintln!("skipped: no /usr/bin/pip3 on this machine");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("sandbox-index")
        .tempdir_in(outside_tmp())
        .unwrap();
    let (name, bytes) = wheel(dir.path());
    let page = format!("<html><body><a href=\"/files/{name}\">{name}</a></body></html>");
    let index = Index::start(vec![
        ("/simple/minotestpkg/".into(), page.into_bytes()),
        (format!("/files/{name}"), bytes),
    ]);
    let port = index.port;
    let install = format!(
        "/usr/bin/pip3 install --no-cache-dir --disable-pip-version-check --no-deps \
         --target ./site --index-url http://127.0.0.1:{port}/simple minotestpkg 2>&1 | tail -3; \
         cat site/minotestpkg/__init__.py; \
         curl -s http://127.0.0.1:{port}/simple/minotestpkg/ | head -c 400; echo; echo end-install"
    );
    for allowed in [false, true] {
        let settings = if allowed {
            format!("[sandbox]\nallow_private = [\"127.0.0.1:{port}\"]\n")
        } else {
            String::new()
        };
        let before = index.requests();
        let b = Setup::new(vec![bash(&install), text("done")], &settings).await;
        let (events, out) = b.bypass("install").await;
        assert!(out.status.success(), "{}", stderr(&out));
        let result = &outputs(&events)[0];
        assert!(result.contains("end-install"), "{result}");
        let installed = b.project().join("site/minotestpkg/__init__.py");
        if allowed {
            assert!(result.contains(MARKER), "{result}");
            assert!(installed.exists(), "{result}");
            assert!(index.requests() >= before + 3, "{result}");
        } else {
            assert!(!installed.exists(), "{result}");
            assert_eq!(index.requests(), before, "{result}");
            assert!(
                result.contains("\"reason\":\"private-address\""),
                "{result}"
            );
        }
    }
}

/// `[sandbox] allowed_domains` makes the network an allow-list: through
/// `-p`, where nobody can be asked, a host outside it is refused with
/// "not-allowed-domain" before anything is resolved, and a host inside it
/// is still refused when it resolves to a private address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_outside_allowed_domains_is_refused_through_print_mode() {
    let service = Untouched::start();
    let port = service.port();
    let b = Setup::new(
        vec![
            bash(&format!(
                "curl -s http://example.org/; echo; curl -s -o /dev/null -w '%{{http_code}}' \
                 https://api.example.com/; echo; curl -s http://localhost:{port}/; echo; \
                 echo end-allow-list"
            )),
            text("done"),
        ],
        "[sandbox]\nallowed_domains = [\"*.crates.io\", \"localhost\"]\n",
    )
    .await;
    let (events, out) = b.bypass("reach outside the list").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-allow-list"), "{result}");
    assert!(
        result.contains("\"reason\":\"not-allowed-domain\",\"destination\":\"example.org:80\""),
        "{result}"
    );
    // The tunnel for https is refused too (curl shows no body for it).
    assert!(
        result.contains("\n000\n") || result.contains("\n403\n"),
        "{result}"
    );
    assert!(
        result.contains(&format!(
            "\"reason\":\"private-address\",\"destination\":\"localhost:{port}\""
        )),
        "{result}"
    );
    service.never_reached();
    let shown = stderr(&out);
    assert!(
        shown.contains("network via proxy, allow-list: *.crates.io localhost"),
        "{shown}"
    );
}

/// On the full screen, a host outside `allowed_domains` is a question
/// while the command waits on its connection: "allow for session" lets it
/// through (the index answers), and a second connection to that host in
/// the same session is not asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_outside_allowed_domains_is_asked_about_on_the_full_screen() {
    let index = Index::start(vec![("/x".into(), b"INDEX-BODY-77".to_vec())]);
    let port = index.port;
    let b = Setup::new(
        vec![
            bash(&format!(
                "curl -s http://127.0.0.1:{port}/x; echo; curl -s http://127.0.0.1:{port}/x; echo; echo end-asked"
            )),
            text("fetched twice"),
        ],
        &format!(
            "[sandbox]\nallowed_domains = [\"*.crates.io\"]\nallow_private = [\"127.0.0.1:{port}\"]\n"
        ),
    )
    .await;
    let mut screen = b.full_screen_in_bypass();
    screen.submit("fetch it");
    let shown = screen.wait_for(&format!("bash wants to reach 127.0.0.1:{port}"));
    assert!(
        shown.contains("outside [sandbox] allowed_domains"),
        "{shown}"
    );
    assert_eq!(index.requests(), 0, "the connection waits for the answer");
    screen.wait_for("keys armed");
    screen.send(b"a");
    // A session-wide answer to a question that came while typing is
    // confirmed once.
    screen.wait_for(&format!(
        "Allow 127.0.0.1:{port} for the rest of this session? [y/N]"
    ));
    screen.send(b"y");
    let after = screen.wait_for("fetched twice");
    assert_eq!(
        index.requests(),
        2,
        "both connections went through: {after}\n{}",
        b.bodies()
    );
    let bodies = b.bodies();
    assert_eq!(bodies.matches("INDEX-BODY-77").count(), 2, "{bodies}");
    assert!(bodies.contains("end-asked"), "{bodies}");
}

/// SOCKS5 to the host's loopback, with the name resolved by the proxy or
/// by curl: refused (reply 2), the service never reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socks5_to_the_hosts_loopback_is_refused() {
    let service = Untouched::start();
    let port = service.port();
    let b = Setup::new(
        vec![
            bash(&format!(
                "curl -sS --socks5-hostname 127.0.0.1:3128 http://localhost:{port}/; \
                 echo \"exit=$?\"; curl -sS --socks5 127.0.0.1:3128 http://127.0.0.1:{port}/; \
                 echo \"exit=$?\"; curl -sS -x \"$ALL_PROXY\" http://[::1]:{port}/; \
                 echo \"exit=$?\"; echo end-socks"
            )),
            text("done"),
        ],
        "",
    )
    .await;
    let (events, out) = b.bypass("socks").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-socks"), "{result}");
    assert_eq!(result.matches("exit=97").count(), 3, "{result}");
    service.never_reached();
}

/// Times `n` HTTP requests, each on a connection of its own, to the
/// server on 127.0.0.1:`port`: through the proxy on the namespace's
/// 127.0.0.1:3128 (`via`), or directly; prints the median and the 90th
/// percentile in microseconds.
fn timing_script(port: u16, n: usize, via_proxy: bool) -> String {
    let (connect, target) = if via_proxy {
        ("3128".to_string(), format!("http://127.0.0.1:{port}/"))
    } else {
        (port.to_string(), "/".to_string())
    };
    format!(
        "/usr/bin/python3 -c '\nimport socket, statistics, time\nts = []\nfor i in range({n}):\n    t = time.perf_counter()\n    s = socket.create_connection((\"127.0.0.1\", {connect}))\n    s.sendall(b\"GET {target} HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\nConnection: close\\r\\n\\r\\n\")\n    got = b\"\"\n    while True:\n        b = s.recv(65536)\n        if not b: break\n        got += b\n    s.close()\n    assert b\"200 OK\" in got, got\n    ts.append(time.perf_counter() - t)\nts.sort()\nprint(\"median_us=%d p90_us=%d n=%d\" % (statistics.median(ts) * 1e6, ts[int(len(ts) * 0.9)] * 1e6, len(ts)))\n'"
    )
}

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // Fields 14 and 15 of stat(5), counted from the state (field 3).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// The figures of issue 20, deliverable 8, for the proxy: what it adds to
/// a connection (the same requests from inside the sandbox through the
/// proxy and from the host directly, to a loopback server named in
/// `allow_private`), and that an idle proxy costs no CPU (mino's utime +
/// stime over 10 s after a call that used it). A measurement, not a check:
/// `cargo test --locked --test all proxy_figures -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run it by name"]
async fn proxy_figures() {
    const N: usize = 500;
    let index = Index::start(vec![("/".into(), b"ok".to_vec())]);
    let port = index.port;
    let b = Setup::new(
        vec![
            bash(&format!(
                "{} > proxy-figures.txt 2>&1; echo measured",
                timing_script(port, N, true)
            )),
            text("measured-and-done"),
        ],
        &format!("[sandbox]\nallow_private = [\"127.0.0.1:{port}\"]\n"),
    )
    .await;
    let mut pty = b.line_in_bypass();
    pty.send_line("measure");
    pty.expect("measured-and-done");
    let figures = std::fs::read_to_string(b.project().join("proxy-figures.txt")).unwrap();
    let direct = Command::new("bash")
        .arg("-c")
        .arg(timing_script(port, N, false))
        .output()
        .unwrap();
    println!("through the proxy (inside the sandbox): {}", figures.trim());
    println!(
        "direct (on the host):                  {}",
        String::from_utf8_lossy(&direct.stdout).trim()
    );
    let pid = pty.pid();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let before = cpu_ticks(pid);
    std::thread::sleep(std::time::Duration::from_secs(10));
    let after = cpu_ticks(pid);
    println!("mino idle after the call: utime+stime {before} -> {after} ticks over 10 s");
    pty.send_line("/quit");
}

/// With the network on, a host service on an abstract unix socket is not
/// even listed inside (`/proc/net/unix` is the command's namespace's own),
/// and connecting to it fails; the service is never reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_abstract_socket_is_outside_the_commands_network() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let name = format!("mino-net-test-{}", std::process::id());
    let listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    listener.set_nonblocking(true).unwrap();
    assert!(
        std::fs::read_to_string("/proc/net/unix")
            .unwrap()
            .contains(&name)
    );
    let b = Setup::new(
        vec![
            bash(&format!(
                "echo \"listed=$(grep -c {name} /proc/net/unix)\"; /usr/bin/python3 -c '\n\
                 import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    \
                 s.connect(\"\\0{name}\"); print(\"connected\")\nexcept OSError as e:\n    \
                 print(\"refused\", e)\n'; echo end-abstract"
            )),
            text("done"),
        ],
        "[sandbox]\nnetwork = \"on\"\n",
    )
    .await;
    let (events, out) = b.bypass("connect").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-abstract"), "{result}");
    assert!(result.contains("listed=0"), "{result}");
    assert!(result.contains("refused"), "{result}");
    assert!(!result.contains("connected"), "{result}");
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the host's abstract socket was reached: {other:?}"),
    }
}
