//! The sandbox's proxy (DESIGN section 5a): with `[sandbox] network = "on"`
//! a command's traffic leaves its network namespace only through here. It
//! runs in the mino process, on the runtime, started by the first
//! sandboxed call that needs it, and listens on a unix socket in a
//! directory of this run's own (0700, in mino's home), which the sandbox
//! binds into the command's root; a bridge inside the namespace (the
//! helper's `bridge.rs`) carries each loopback connection to it.
//!
//! It speaks HTTP `CONNECT`, plain HTTP with an absolute URI (`http.rs`)
//! and SOCKS5 (`socks.rs`), told apart by the first byte. It resolves a
//! name itself and asks `policy::destination` about every address before
//! connecting to it, so the address checked is the address reached. A host
//! outside `allowed_domains` is put to the person through the agent's
//! `HostAsk` when one is set (a front end that can ask): the connection
//! waits for the answer. Idle, it waits in `accept` and costs nothing: no
//! timer, no polling.

mod http;
mod socks;
#[cfg(test)]
mod tests;

use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::policy::destination::{NetworkRules, Refusal};

/// The file name of the socket in the run's directory.
const SOCKET_NAME: &str = "proxy.sock";

/// How a run's directory's name starts.
const RUN_PREFIX: &str = "run-";

/// Who is asked about a host outside `allowed_domains`: the agent, which
/// remembers the person's answers per host and refuses where nobody can
/// answer. `true` lets the connection go on (every other rule still holds).
pub trait HostAsk: Send + Sync + std::fmt::Debug {
    fn ask(&self, host: &str, port: u16) -> futures_util::future::BoxFuture<'static, bool>;
}

/// The asker a proxy's connections consult, set once an agent runs.
pub type Asker = Arc<Mutex<Option<Arc<dyn HostAsk>>>>;

/// The proxy of one mino run: not started until asked for its socket.
#[derive(Debug)]
pub struct Proxy {
    /// Where the run's directory is made (`None`: the system's temporary
    /// directory).
    base: Option<PathBuf>,
    rules: Arc<NetworkRules>,
    asker: Asker,
    running: Mutex<Option<Running>>,
}

/// What a connection decides by: the rules, and who to ask.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) rules: Arc<NetworkRules>,
    asker: Asker,
}

#[derive(Debug)]
struct Running {
    /// Removed when mino's planner goes.
    _dir: tempfile::TempDir,
    socket: PathBuf,
}

/// Why the proxy could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the sandbox's network proxy: {0}")]
pub struct ProxyError(String);

impl Proxy {
    /// A proxy whose run directory goes under `base`, deciding by `rules`.
    pub fn new(base: Option<PathBuf>, rules: NetworkRules) -> Self {
        Self {
            base,
            rules: Arc::new(rules),
            asker: Arc::new(Mutex::new(None)),
            running: Mutex::new(None),
        }
    }

    /// Sets who is asked about a host outside `allowed_domains` (none:
    /// such a host is refused).
    pub fn set_asker(&self, asker: Option<Arc<dyn HostAsk>>) {
        *self
            .asker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = asker;
    }

    /// The rules it decides by.
    pub fn rules(&self) -> &NetworkRules {
        &self.rules
    }

    /// The socket it listens on, starting it on the current runtime the
    /// first time.
    pub fn socket(&self) -> Result<PathBuf, ProxyError> {
        let mut running = match self.running.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(running) = running.as_ref() {
            return Ok(running.socket.clone());
        }
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|e| ProxyError(e.to_string()))?;
        let base = self.base.clone().unwrap_or_else(std::env::temp_dir);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&base)
            .map_err(|e| ProxyError(format!("{}: {e}", base.display())))?;
        sweep(&base);
        let dir = tempfile::Builder::new()
            .prefix(RUN_PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&base)
            .map_err(|e| ProxyError(format!("{}: {e}", base.display())))?;
        let listener = {
            let _entered = runtime.enter();
            bind(dir.path()).map_err(|e| ProxyError(format!("{}: {e}", dir.path().display())))?
        };
        let socket = dir.path().join(SOCKET_NAME);
        let gate = Gate {
            rules: self.rules.clone(),
            asker: self.asker.clone(),
        };
        runtime.spawn(serve(listener, gate));
        *running = Some(Running {
            _dir: dir,
            socket: socket.clone(),
        });
        Ok(socket)
    }
}

/// Removes the directories of runs that ended without removing theirs
/// (mino killed): those whose socket exists and refuses a connection, so
/// that nobody listens on it. A directory without a socket may be another
/// run's that is binding now: it stays.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let is_run = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(RUN_PREFIX))
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_run {
            continue;
        }
        let dir = entry.path();
        let refused = std::fs::File::open(&dir).is_ok_and(|handle| {
            let short = format!("/proc/self/fd/{}/{SOCKET_NAME}", handle.as_raw_fd());
            matches!(
                std::os::unix::net::UnixStream::connect(short),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused
            )
        });
        if refused {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Binds the socket through the directory's descriptor, so that a long
/// path to mino's home never exceeds what a socket address holds.
fn bind(dir: &Path) -> std::io::Result<UnixListener> {
    let handle = std::fs::File::open(dir)?;
    let short = format!("/proc/self/fd/{}/{SOCKET_NAME}", handle.as_raw_fd());
    let listener = std::os::unix::net::UnixListener::bind(short)?;
    listener.set_nonblocking(true)?;
    UnixListener::from_std(listener)
}

async fn serve(listener: UnixListener, gate: Gate) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(connection(stream, gate.clone()));
            }
            Err(e) => {
                tracing::warn!("sandbox proxy: accept failed: {e}");
                // Only after a failure (out of descriptors): never when idle.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(stream: UnixStream, rules: Gate) {
    let mut client = BufReader::new(stream);
    let socks = match client.fill_buf().await {
        Ok(buf) if !buf.is_empty() => buf[0] == socks::VERSION,
        _ => return,
    };
    let result = if socks {
        socks::serve(client, &rules).await
    } else {
        http::serve(client, &rules).await
    };
    if let Err(e) = result {
        tracing::debug!("sandbox proxy: connection ended: {e}");
    }
}

/// Why a destination was not reached.
#[derive(Debug)]
pub(crate) enum Failure {
    Refused {
        refusal: Refusal,
        address: Option<SocketAddr>,
    },
    Unresolved(String),
    Unreachable(String),
}

impl Failure {
    fn reason(&self) -> &'static str {
        match self {
            Failure::Refused { refusal, .. } => refusal.reason(),
            Failure::Unresolved(_) => "unresolvable",
            Failure::Unreachable(_) => "unreachable",
        }
    }

    /// The machine-readable body of a refusal.
    fn body(&self, destination: &str) -> serde_json::Value {
        let mut body = json!({
            "error": "mino-proxy",
            "reason": self.reason(),
            "destination": destination,
        });
        match self {
            Failure::Refused { refusal, address } => {
                if let Some(address) = address {
                    body["address"] = json!(address.to_string());
                }
                if let Refusal::PrivateAddress(class) = refusal {
                    body["class"] = json!(class.name());
                }
                body["message"] = json!(refusal.explain());
            }
            Failure::Unresolved(why) | Failure::Unreachable(why) => {
                body["message"] = json!(why);
            }
        }
        body
    }
}

/// Returns once `client` has hung up (read end-of-file); never while it
/// is open, even with bytes waiting (they are the caller's to read).
async fn hung_up(client: &UnixStream) {
    use rustix::net::RecvFlags;
    loop {
        if client.readable().await.is_err() {
            return;
        }
        let mut byte = [0u8; 1];
        let peeked = client.try_io(tokio::io::Interest::READABLE, || {
            rustix::net::recv(client, &mut byte, RecvFlags::PEEK | RecvFlags::DONTWAIT)
                .map(|(n, _)| n)
                .map_err(std::io::Error::from)
        });
        match peeked {
            Ok(0) => return,
            Ok(_) => return std::future::pending().await,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}

/// Connects to `host:port` when the rules allow it: the host first (one
/// outside `allowed_domains` put to the asker, when there is one), then
/// every address it resolves to, each checked before it is tried.
pub(crate) async fn connect(
    gate: &Gate,
    client: &UnixStream,
    host: &str,
    port: u16,
) -> Result<TcpStream, Failure> {
    let rules = &gate.rules;
    if let Err(refusal) = rules.check_host(host) {
        let asker = gate
            .asker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let allowed = match (&refusal, asker) {
            // A command killed or timed out while asked hangs up: the
            // question is then dropped, and its dialog closes.
            (Refusal::NotAllowedDomain, Some(asker)) => tokio::select! {
                allowed = asker.ask(host, port) => allowed,
                () = hung_up(client) => false,
            },
            _ => false,
        };
        if !allowed {
            return Err(Failure::Refused {
                refusal,
                address: None,
            });
        }
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| Failure::Unresolved(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    let mut refused = None;
    let mut failed = None;
    for address in addresses {
        match rules.check_address(host, address.ip(), address.port()) {
            Err(refusal) => {
                refused.get_or_insert(Failure::Refused {
                    refusal,
                    address: Some(address),
                });
            }
            Ok(()) => match TcpStream::connect(address).await {
                Ok(stream) => return Ok(stream),
                Err(e) => failed = Some(Failure::Unreachable(format!("{address}: {e}"))),
            },
        }
    }
    Err(failed
        .or(refused)
        .unwrap_or_else(|| Failure::Unresolved(format!("{host} has no address"))))
}
