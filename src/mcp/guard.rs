//! The helper process every stdio MCP server runs under, so that nothing a
//! server starts outlives mino, even when mino is killed with SIGKILL.
//!
//! mino starts its own binary as `mino __mcp-guard PARENT -- COMMAND ARGS`
//! as the leader of a new process group, with the server's stdin, stdout
//! and stderr pipes. The guard makes itself a child subreaper (whatever the
//! server forks and orphans, `setsid` daemons included, is reparented to
//! it) and starts the server through the bash guard's exec helper (`tools::bash::guard`)
//! (`mino __bash-exec GUARD -- COMMAND ARGS`), which sets
//! `PR_SET_PDEATHSIG` (SIGKILL) on itself before it becomes the server, so
//! the server dies with its guard. The server inherits the guard's pipes
//! and process group; the guard never reads or writes them.
//!
//! The guard ends everything below it (the server, then each process
//! reparented to it, until none is left) and exits when the server exits,
//! when it receives SIGTERM, SIGINT or SIGHUP (mino stopping the server),
//! or when its parent is no longer mino (mino died, however it died; the
//! guard looks twice a second, which survives any of mino's threads ending,
//! unlike a parent-death signal bound to the thread that forked it). Never
//! decides, never reads the server's traffic.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use rustix::process::{getpid, getppid};

use crate::process_guard::kill_all_descendants;
use crate::tools::bash::guard::EXEC;

/// The guard's subcommand: `mino __mcp-guard PARENT -- COMMAND ARGS...`.
pub const MCP_GUARD: &str = "__mcp-guard";

/// How long the guard keeps killing what is left below it.
const SWEEP: Duration = Duration::from_secs(5);

/// How often the guard looks whether mino is still its parent.
const PARENT_CHECK: Duration = Duration::from_millis(500);

/// The exit code when the guard could not start the server.
const CANNOT_START: i32 = 126;

/// The exit code when the guard ended the server on mino's behalf.
const STOPPED: i32 = 143;

/// The guard's main: `args` are what follows `__mcp-guard`.
pub fn guard_main(args: &[OsString]) -> i32 {
    let parent = args
        .first()
        .and_then(|p| p.to_str())
        .and_then(|p| p.parse::<i32>().ok());
    let server = match args.iter().position(|a| a == "--") {
        Some(at) => &args[at + 1..],
        None => &[],
    };
    let (Some(parent), false) = (parent, server.is_empty()) else {
        eprintln!("mino {MCP_GUARD}: expected `PARENT -- COMMAND ARGS...`");
        return 2;
    };
    if let Err(e) = crate::process_guard::harden_at_start() {
        eprintln!("mino {MCP_GUARD}: {e}");
        return CANNOT_START;
    }
    let parent_alive = move || getppid().map(|p| p.as_raw_nonzero().get()) == Some(parent);
    // mino may have died between starting the guard and now.
    if !parent_alive() {
        return CANNOT_START;
    }
    let mut signals = match signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ]) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("mino {MCP_GUARD}: could not listen for signals: {e}");
            return CANNOT_START;
        }
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("mino {MCP_GUARD}: cannot find mino's own binary: {e}");
            return CANNOT_START;
        }
    };
    let me = getpid().as_raw_nonzero().get();
    let mut child = match Command::new(exe)
        .arg(EXEC)
        .arg(me.to_string())
        .arg("--")
        .args(server)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("mino {MCP_GUARD}: could not start the server: {e}");
            return CANNOT_START;
        }
    };
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            end_everything(STOPPED);
        }
    });
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(PARENT_CHECK);
            if !parent_alive() {
                end_everything(STOPPED);
            }
        }
    });
    let status = child.wait();
    kill_all_descendants(SWEEP);
    match status {
        Ok(status) => status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(CANNOT_START),
        Err(e) => {
            eprintln!("mino {MCP_GUARD}: could not wait for the server: {e}");
            CANNOT_START
        }
    }
}

/// Kills the server and everything below the guard, then exits.
fn end_everything(code: i32) -> ! {
    kill_all_descendants(SWEEP);
    std::process::exit(code)
}
