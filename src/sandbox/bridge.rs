//! The bridge inside a command's network namespace: a listener on the
//! namespace's own `127.0.0.1:PROXY_PORT` whose every connection is carried
//! to the proxy's unix socket, bound into the root at `PROXY_SOCKET`. Runs
//! on threads of the helper's `init` (PID 1 of the namespace), so it ends
//! when the command does: it never outlives the command and never keeps
//! the call from ending. Blocked in `accept` and `read` when idle; never
//! looks at what it carries (the proxy decides).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::thread;

use super::{PROXY_PORT, PROXY_SOCKET};

/// The listener, made while the namespace's loopback belongs to init.
pub fn listen() -> io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", PROXY_PORT))
}

/// Carries every connection to the proxy, on threads of their own.
pub fn serve(listener: TcpListener) -> io::Result<()> {
    thread::Builder::new()
        .name("proxy-bridge".into())
        .spawn(move || {
            for connection in listener.incoming().flatten() {
                let _ = thread::Builder::new().spawn(move || carry(connection));
            }
        })
        .map(|_| ())
}

fn carry(tcp: TcpStream) {
    let Ok(unix) = UnixStream::connect(PROXY_SOCKET) else {
        let _ = tcp.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(tcp_back), Ok(unix_back)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = thread::Builder::new().spawn(move || {
        pump(tcp, unix);
    });
    pump_back(unix_back, tcp_back);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

fn pump(mut from: TcpStream, mut to: UnixStream) {
    let _ = copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

fn pump_back(mut from: UnixStream, mut to: TcpStream) {
    let _ = copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

fn copy(from: &mut impl Read, to: &mut impl Write) -> io::Result<u64> {
    io::copy(from, to)
}
