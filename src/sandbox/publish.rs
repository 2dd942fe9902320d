//! `[sandbox] publish`: the session's shared network reached from the
//! host's loopback. The helper started as `mino __sandbox publish PID
//! START PORT...` listens on `127.0.0.1:PORT` of the host first (a socket
//! keeps the namespace it was made in), then enters the keeper's user and
//! network namespaces (`helper::join`), and forwards every connection to
//! the same port on the namespace's loopback. It dies with mino (its stdin
//! is mino's lifeline, and the parent-death signal) and with the keeper's
//! session. Never reads or changes what passes through it.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};

use super::{Join, PUBLISH_READY, SandboxError};

/// The helper stage: `args` are what follows `publish`.
pub(super) fn stage(args: &[OsString]) -> Result<i32, SandboxError> {
    let number = |arg: Option<&OsString>| -> Option<u64> { arg?.to_str()?.parse().ok() };
    let pid = number(args.first()).and_then(|p| i32::try_from(p).ok());
    let start = number(args.get(1));
    let (Some(pid), Some(start)) = (pid, start) else {
        return Err(SandboxError::Plan(
            "publish expects PID START PORT...".to_string(),
        ));
    };
    let mut listeners = Vec::new();
    for arg in args.iter().skip(2) {
        let port = number(Some(arg))
            .and_then(|p| u16::try_from(p).ok())
            .ok_or_else(|| SandboxError::Plan(format!("{arg:?} is not a port")))?;
        let listener = TcpListener::bind(("127.0.0.1", port)).map_err(SandboxError::step(
            format!("listen on the host's 127.0.0.1:{port} ([sandbox] publish)"),
        ))?;
        listeners.push((port, listener));
    }
    let parent = rustix::process::getppid();
    super::helper::join(Join { pid, start })?;
    super::helper::keep_dying_with(parent)?;
    let mut out = std::io::stdout();
    writeln!(out, "{PUBLISH_READY}")
        .and_then(|()| out.flush())
        .map_err(SandboxError::step("say the forwarding is ready"))?;
    for (port, listener) in listeners {
        std::thread::spawn(move || {
            for outside in listener.incoming().flatten() {
                std::thread::spawn(move || forward(outside, port));
            }
        });
    }
    // mino's end (or its dropping the keeper) closes stdin: stop.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    Ok(0)
}

/// One connection: to the same port on the namespace's loopback, both
/// ways until either side ends.
fn forward(outside: TcpStream, port: u16) {
    let Ok(inside) = TcpStream::connect(("127.0.0.1", port)) else {
        let _ = outside.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(mut outside_read), Ok(mut inside_write)) = (outside.try_clone(), inside.try_clone())
    else {
        return;
    };
    let there = std::thread::spawn(move || {
        let _ = std::io::copy(&mut outside_read, &mut inside_write);
        let _ = inside_write.shutdown(Shutdown::Write);
    });
    let (mut inside_read, mut outside_write) = (inside, outside);
    let _ = std::io::copy(&mut inside_read, &mut outside_write);
    let _ = outside_write.shutdown(Shutdown::Write);
    let _ = there.join();
}
