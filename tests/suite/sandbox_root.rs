//! The constructed root end to end (issue 20's findings 3, 4, 7 and 8):
//! the built binary in bypass against the loopback model service, each
//! command run for real, checked on what happened outside the sandbox: the
//! user's terminal, the home's files, a host service listening on a unix
//! socket, and every request body the model service received.

use std::io::ErrorKind;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use super::sandbox::{Setup, bash, outside_tmp, stderr};
use crate::support::llm::text;
use crate::support::stream::outputs;
use serde_json::Value;

/// Finding 3: the command writes to every terminal it can find and lists
/// what `/dev` holds; the person's terminal (mino's pty) never shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_terminals_are_out_of_reach() {
    let b = Setup::new(
        vec![
            // The marker is spelled with escapes, so only a write shows it.
            bash(
                "for t in /dev/pts/[0-9]* /dev/tty /dev/console /dev/tty0; do \
                 printf 'HIJ\\x41CK-\\x37\\x37' > \"$t\" 2>/dev/null && echo \"wrote $t\"; done; \
                 ls /dev; ls /dev/pts; echo end-dev",
            ),
            text("all finished"),
        ],
        "",
    )
    .await;
    let mut pty = b.line_in_bypass();
    pty.send_line("write to the terminal");
    pty.expect("all finished");
    assert!(
        !pty.all().contains("HIJACK-77"),
        "the command wrote to the user's terminal"
    );
    let last: Value = serde_json::from_str(b.llm.bodies().last().unwrap()).unwrap();
    let result = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap();
    assert!(result.contains("end-dev"), "{result}");
    assert!(!result.contains("wrote"), "{result}");
    // A fresh /dev: its own devpts (ptmx only), none of the host's devices.
    for absent in ["console", "tty0", "sda", "vda", "kmsg", "mem"] {
        assert!(
            !result.lines().any(|l| l.trim() == absent),
            "/dev/{absent} is there: {result}"
        );
    }
    assert!(result.lines().any(|l| l.trim() == "ptmx"), "{result}");
    assert!(result.lines().any(|l| l.trim() == "urandom"), "{result}");
}

/// Findings 7 and 3 of the environment: the home's tokens outside the old
/// fourteen names, and the tokens in mino's environment, reach nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_tokens_and_the_environment_never_reach_the_model() {
    let secrets = [
        (".cache/huggingface/token", "HF-TOKEN-51a2"),
        (".cargo/credentials.toml", "CARGO-TOKEN-77b1"),
        (".gemini/oauth_creds.json", "GEMINI-TOKEN-9e0c"),
        (".config/github-copilot/hosts.json", "COPILOT-TOKEN-4d3f"),
        (".config/rclone/rclone.conf", "RCLONE-TOKEN-2c8a"),
        (".pgpass", "PGPASS-TOKEN-6b5e"),
        (".vault-token", "VAULT-TOKEN-0f1d"),
        (".terraformrc", "TERRAFORM-TOKEN-8a7c"),
    ];
    let reads: String = secrets
        .iter()
        .map(|(path, _)| format!("cat ~/{path}; "))
        .collect();
    let b = Setup::new(
        vec![
            bash(&format!("{reads} echo end-reads")),
            bash("env; echo end-env"),
            text("done"),
        ],
        "",
    )
    .await;
    for (path, marker) in secrets {
        let file = b.home().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, marker).unwrap();
    }
    let mut command = b.command(&["-p", "read", "--output-format", "stream-json", "--yolo"]);
    command
        .env("GITHUB_TOKEN", "ghp_PLANTED_GITHUB")
        .env("ANTHROPIC_API_KEY", "sk-ant-PLANTED")
        .env("AWS_SECRET_ACCESS_KEY", "AWS-PLANTED-SECRET")
        .env("LC_TIME", "C");
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events = crate::support::stream::records(&out.stdout);
    let results = outputs(&events);
    assert!(results[0].contains("end-reads"), "{}", results[0]);
    assert!(results[1].contains("end-env"), "{}", results[1]);
    assert!(results[1].contains("LC_TIME=C"), "{}", results[1]);
    assert!(results[1].contains("PATH="), "{}", results[1]);
    let bodies = b.bodies();
    for (path, marker) in secrets {
        assert!(!bodies.contains(marker), "~/{path} reached the model");
    }
    for planted in ["ghp_PLANTED_GITHUB", "sk-ant-PLANTED", "AWS-PLANTED-SECRET"] {
        assert!(!bodies.contains(planted), "{planted} reached the model");
    }
    assert!(!bodies.contains("MINO_HOME="), "{}", results[1]);
}

/// Finding 8: with a populated home, every place code could be planted for
/// later (start-up files, git's and npm's configuration, the user's bin,
/// systemd units, the build caches' sources) stays as it was outside; the
/// caches are still writable inside, in a layer of the sandbox's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_planted_in_the_home_or_the_caches() {
    let b = Setup::new(
        vec![
            bash(
                "echo '[core] fsmonitor = touch /tmp/x' >> ~/.gitconfig; \
                 echo 'alias ls=evil' >> ~/.bash_aliases; echo 'x=1' >> ~/.npmrc; \
                 mkdir -p ~/.local/bin && echo evil > ~/.local/bin/git; \
                 mkdir -p ~/.config/systemd/user && echo evil > ~/.config/systemd/user/x.service; \
                 echo planted > ~/.cargo/registry/src/index/crate/build.rs; \
                 mkdir -p ~/.npm/_npx && echo planted > ~/.npm/_npx/x.js; \
                 mkdir -p ~/.cache/pre-commit && echo planted > ~/.cache/pre-commit/hook && \
                 cat ~/.cache/pre-commit/hook ~/.cargo/registry/src/index/crate/build.rs; \
                 echo end-plant",
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let home = b.home();
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = t\n").unwrap();
    let build_rs = home.join(".cargo/registry/src/index/crate/build.rs");
    std::fs::create_dir_all(build_rs.parent().unwrap()).unwrap();
    std::fs::write(&build_rs, "fn main() {}\n").unwrap();
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    let (events, out) = b.bypass("plant").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-plant"), "{result}");
    // Writable inside: the caches are the sandbox's own layer.
    assert!(result.contains("planted\nplanted"), "{result}");
    assert_eq!(
        std::fs::read_to_string(home.join(".gitconfig")).unwrap(),
        "[user]\n\tname = t\n"
    );
    assert_eq!(
        std::fs::read_to_string(&build_rs).unwrap(),
        "fn main() {}\n"
    );
    for planted in [
        ".bash_aliases",
        ".npmrc",
        ".local/bin/git",
        ".config/systemd/user/x.service",
        ".npm/_npx/x.js",
        ".cache/pre-commit/hook",
    ] {
        assert!(!home.join(planted).exists(), "~/{planted} was written");
    }
}

/// A unix-socket service outside that trusts its caller's uid (as dbus,
/// ssh-agent and docker do): one on an abstract name, one on a path.
struct Services {
    abstract_name: String,
    abstract_listener: UnixListener,
    path_listener: UnixListener,
    path: std::path::PathBuf,
}

impl Services {
    fn start(dir: &std::path::Path, label: &str) -> Self {
        let abstract_name = format!("mino-test-service-{label}-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let abstract_listener = UnixListener::bind_addr(&addr).unwrap();
        abstract_listener.set_nonblocking(true).unwrap();
        let path = dir.join("service.sock");
        let path_listener = UnixListener::bind(&path).unwrap();
        path_listener.set_nonblocking(true).unwrap();
        Self {
            abstract_name,
            abstract_listener,
            path_listener,
            path,
        }
    }

    /// A command that tries both with the system's python.
    fn attempt(&self) -> String {
        format!(
            "/usr/bin/python3 -c '\nimport socket\nfor a in [\"\\0{}\", \"{}\"]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(a); print(\"connected\")\n    except OSError as e:\n        print(\"refused\", e)\n'; echo end-sockets",
            self.abstract_name,
            self.path.display()
        )
    }

    fn never_connected(&self) {
        for listener in [&self.abstract_listener, &self.path_listener] {
            match listener.accept() {
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                other => panic!("the service was reached: {other:?}"),
            }
        }
    }
}

/// Finding 4: neither socket is reached, with the network on or off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_services_on_unix_sockets_are_out_of_reach() {
    for network in ["on", "off"] {
        let dir = tempfile::Builder::new()
            .prefix("sandbox-service")
            .tempdir_in(outside_tmp())
            .unwrap();
        let services = Services::start(dir.path(), network);
        let b = Setup::new(
            vec![bash(&services.attempt()), text("done")],
            &format!("[sandbox]\nnetwork = \"{network}\"\n"),
        )
        .await;
        let (events, out) = b.bypass("connect").await;
        assert!(out.status.success(), "{}", stderr(&out));
        let result = &outputs(&events)[0];
        assert!(result.contains("end-sockets"), "{network}: {result}");
        assert!(!result.contains("connected"), "{network}: {result}");
        services.never_connected();
    }
}

/// Finding 10: a committed `.ssh -> /usr` masks nothing outside the
/// project: commands start, `/usr` is whole, and the result says the link
/// was ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_named_like_a_secret_masks_nothing_outside() {
    let b = Setup::new(
        vec![bash("ls /usr/bin | grep -c . ; echo started"), text("ok")],
        "",
    )
    .await;
    std::os::unix::fs::symlink("/usr", b.project().join(".ssh")).unwrap();
    let (events, out) = b.bypass("run").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("Exit code: 0"), "{result}");
    assert!(result.contains("started"), "{result}");
    assert!(
        result.contains(".ssh named like a secret but leading out of the project"),
        "{result}"
    );
    let count: usize = result
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or(0);
    assert!(count > 10, "{result}");
}

/// Finding 6, the Landlock-only path (`[sandbox] namespaces = false`): the
/// machine's `/tmp` is not writable (the command gets a `TMPDIR` of its
/// own), and a tmux server outside is out of reach: by Landlock where the
/// kernel's can scope pathname sockets (ABI 9), else by the seccomp filter
/// that refuses unix sockets, which `mino sandbox check` names with its
/// cost. What the fallback still lacks (secrets unmasked, the host's
/// network) is said, and `required = true` refuses to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_alone_keeps_tmp_and_says_what_it_cannot_do() {
    let probe = format!("mino-landlock-tmp-{}", std::process::id());
    let dir = tempfile::Builder::new()
        .prefix("sandbox-tmux")
        .tempdir_in(outside_tmp())
        .unwrap();
    let socket = dir.path().join("tmux.sock");
    let planted = dir.path().join("planted-by-tmux");
    let escape = format!(
        "tmux -S {} new-window -d 'touch {}'; echo \"tmux-exit=$?\"; echo end-tmux",
        socket.display(),
        planted.display()
    );
    let b = Setup::new(
        vec![
            bash(&format!(
                "touch /tmp/{probe}; touch \"$TMPDIR/own\" && echo tmpdir-ok; echo end-tmp"
            )),
            bash(&escape),
            text("done"),
        ],
        "[sandbox]\nnamespaces = false\n",
    )
    .await;
    let check = b.command(&["sandbox", "check"]).output().unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    let abi = report["landlock_abi"].as_i64().unwrap_or(0);
    let tmux = std::process::Command::new("tmux")
        .args([
            "-S",
            socket.to_str().unwrap(),
            "new-session",
            "-d",
            "sleep 60",
        ])
        .status()
        .is_ok_and(|s| s.success());
    let (events, out) = b.bypass("escape").await;
    if tmux {
        let _ = std::process::Command::new("tmux")
            .args(["-S", socket.to_str().unwrap(), "kill-server"])
            .status();
    }
    assert!(
        tmux,
        "tmux must be installed for this test (scripts/test-deps)"
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&events);
    assert!(results[0].contains("tmpdir-ok"), "{}", results[0]);
    assert!(!std::path::Path::new("/tmp").join(&probe).exists());
    assert!(results[1].contains("end-tmux"), "{}", results[1]);
    assert!(
        !planted.exists(),
        "the tmux server ran a command: {}",
        results[1]
    );
    assert!(results[1].contains("tmux-exit=1"), "{}", results[1]);
    let missing = report["missing"].to_string();
    assert!(!missing.contains("pathname unix sockets"), "{report}");
    assert!(missing.contains("secrets are not masked"), "{report}");
    let sockets = report["unix_sockets"].as_str().unwrap_or_default();
    if abi < 9 {
        assert_eq!(report["socket_filter"], true, "{report}");
        assert!(sockets.contains("seccomp filter"), "{report}");
        assert!(
            sockets.contains("programs that make their own unix sockets"),
            "{report}"
        );
        assert!(
            results[1].contains("Permission denied"),
            "the tmux client did not fail on its socket: {}",
            results[1]
        );
        assert!(
            stderr(&out).contains("unix sockets refused (seccomp)"),
            "{}",
            stderr(&out)
        );
    } else {
        assert!(sockets.contains("Landlock"), "{report}");
    }
    assert!(
        !stderr(&out).contains("unix sockets and the host's loopback reachable"),
        "{}",
        stderr(&out)
    );
    let b = b
        .with_replies(
            vec![bash("echo ran"), text("done")],
            "[sandbox]\nnamespaces = false\nrequired = true\n",
        )
        .await;
    let (events, out) = b.bypass("run").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let refused = &outputs(&events)[0];
    assert!(refused.contains("did not run"), "{refused}");
    assert!(refused.contains("secrets are not masked"), "{refused}");
    assert!(refused.contains("no network namespace"), "{refused}");
    assert!(!refused.contains("pathname unix sockets"), "{refused}");
}

/// The unix-socket filter is the fallback's alone: under Landlock alone a
/// program cannot make a unix socket (not even an abstract one) nor set up
/// io_uring, whose socket operation would pass the filter by; in the full
/// sandbox both work as on the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_landlock_fallback_refuses_unix_sockets() {
    let attempt = "python3 -c \"import socket; socket.socket(socket.AF_UNIX); print('unix-ok')\"; \
                   python3 -c \"import socket; a, b = socket.socketpair(); print('pair-ok')\"; \
                   python3 -c \"import ctypes; c = ctypes.CDLL(None, use_errno=True); \
                   r = c.syscall(425, 1, ctypes.create_string_buffer(120)); \
                   print('uring', r, ctypes.get_errno())\"; echo end-unix";
    let b = Setup::new(
        vec![bash(attempt), text("done")],
        "[sandbox]\nnamespaces = false\n",
    )
    .await;
    let check = b.command(&["sandbox", "check"]).output().unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    let (events, out) = b.bypass("sockets").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-unix"), "{result}");
    assert!(result.contains("pair-ok"), "{result}");
    if report["landlock_abi"].as_i64().unwrap_or(0) < 9 {
        assert!(!result.contains("unix-ok"), "{result}");
        assert!(result.contains("PermissionError"), "{result}");
        assert!(
            result.contains("uring -1 38"),
            "io_uring is not ENOSYS: {result}"
        );
    }
    let b = b.with_replies(vec![bash(attempt), text("done")], "").await;
    let (events, out) = b.bypass("sockets").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &outputs(&events)[0];
    assert!(result.contains("end-unix"), "{result}");
    assert!(result.contains("unix-ok"), "{result}");
    assert!(result.contains("pair-ok"), "{result}");
    assert!(!result.contains("uring -1 38"), "{result}");
}

/// Finding 8 with the project at `~`: the project is writable, the home's
/// start-up files, git configuration and bin directory in it are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_that_is_the_home_keeps_its_start_up_files() {
    let b = Setup::new(
        vec![
            bash(
                "echo evil >> ~/.bashrc; echo evil >> ~/.gitconfig; echo evil >> ~/.bash_aliases; \
                 echo evil > ~/.local/bin/git; touch ~/made && echo made; echo end-home",
            ),
            text("done"),
        ],
        "",
    )
    .await;
    let home = b.project();
    for (name, text) in [
        (".bashrc", "# rc\n"),
        (".gitconfig", "[user]\n\tname = t\n"),
        (".bash_aliases", "alias l=ls\n"),
    ] {
        std::fs::write(home.join(name), text).unwrap();
    }
    std::fs::create_dir_all(home.join(".local/bin")).unwrap();
    let mut command = b.command(&["-p", "plant", "--output-format", "stream-json", "--yolo"]);
    command.env("HOME", &home);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events = crate::support::stream::records(&out.stdout);
    let result = &outputs(&events)[0];
    assert!(result.contains("end-home"), "{result}");
    assert!(result.contains("made"), "{result}");
    assert!(home.join("made").exists());
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# rc\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".gitconfig")).unwrap(),
        "[user]\n\tname = t\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".bash_aliases")).unwrap(),
        "alias l=ls\n"
    );
    assert!(!home.join(".local/bin/git").exists());
}
