//! The helper process every `bash` call runs under, so that nothing a
//! command starts outlives it, even when mino itself is killed.
//!
//! mino starts its own binary as `mino __bash-guard -- bash -c COMMAND`
//! with a pipe on its stdin, the lifeline. The guard makes itself a child
//! subreaper (every process the command orphans, `setsid` and double-forked
//! daemons included, is reparented to it), and starts the shell through a
//! second, tiny re-exec, `mino __bash-exec PARENT -- bash -c COMMAND`,
//! which sets `PR_SET_PDEATHSIG` (SIGKILL) on itself and then replaces
//! itself with the shell, so the shell dies with its guard. That second
//! exec is how the death signal reaches the shell without `unsafe`: setting
//! it between fork and exec needs `pre_exec`, which is `unsafe`, while a
//! process may always set it on itself and keep it across `execve`. When
//! what it would start is the sandbox helper (this same binary), it runs
//! the helper's first stage in its own process instead of starting the
//! binary again.
//!
//! The shell runs in a session of its own, with no controlling terminal, so
//! nothing it starts can read or write the user's terminal or push keys
//! into it (TIOCSTI). The lifeline carries mino's orders: `T` sends SIGTERM
//! to the shell's process group, `K` (or any other byte) SIGKILL; its end (mino exited,
//! was killed, or dropped the call) kills the group too. When the shell
//! ends, however it ends, the guard kills its group and then every process
//! still below it, reaps them, and exits with the shell's status (an exit
//! code as its own, a signal by raising it on itself), so mino reports the
//! command as before. Never decides and never reads the command.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal, getpid, kill_process, kill_process_group};

use crate::process_guard::kill_all_descendants;

/// The guard's subcommand: `mino __bash-guard -- SHELL ARGS...`.
pub const GUARD: &str = "__bash-guard";

/// The exec helper's subcommand: `mino __bash-exec PARENT -- SHELL ARGS...`.
pub const EXEC: &str = "__bash-exec";

/// How long the guard keeps killing what is left below it.
const SWEEP: Duration = Duration::from_secs(5);

/// The exit code when the guard could not start the shell.
const CANNOT_START: i32 = 126;

/// The guard's main: `args` are what follows `__bash-guard`.
pub fn guard_main(args: &[OsString]) -> i32 {
    let shell = after_separator(args);
    if shell.is_empty() {
        eprintln!("mino {GUARD}: expected `-- SHELL ARGS...`");
        return 2;
    }
    if let Err(e) = crate::process_guard::harden_at_start() {
        eprintln!("mino {GUARD}: {e}");
        return CANNOT_START;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("mino {GUARD}: cannot find mino's own binary: {e}");
            return CANNOT_START;
        }
    };
    let me = getpid().as_raw_nonzero().get();
    let mut child = match Command::new(exe)
        .arg(EXEC)
        .arg(me.to_string())
        .arg("--")
        .args(shell)
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("mino {GUARD}: could not start the shell: {e}");
            return CANNOT_START;
        }
    };
    let Some(group) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        let _ = child.kill();
        return CANNOT_START;
    };
    std::thread::spawn(move || follow_lifeline(group));
    let status = child.wait();
    let _ = kill_process_group(group, Signal::KILL);
    kill_all_descendants(SWEEP);
    match status {
        Ok(status) => {
            if let Some(code) = status.code() {
                return code;
            }
            if let Some(signal) = status.signal().and_then(Signal::from_named_raw) {
                let _ = kill_process(getpid(), signal);
                return 128 + signal.as_raw();
            }
            CANNOT_START
        }
        Err(e) => {
            eprintln!("mino {GUARD}: could not wait for the shell: {e}");
            CANNOT_START
        }
    }
}

/// Reads mino's orders until the lifeline ends, then kills the group.
fn follow_lifeline(group: Pid) {
    let mut stdin = std::io::stdin();
    let mut byte = [0u8; 1];
    loop {
        match stdin.read(&mut byte) {
            Ok(1) if byte[0] == b'T' => signal_shell(group, Signal::TERM),
            Ok(1) => signal_shell(group, Signal::KILL),
            Ok(_) | Err(_) => {
                signal_shell(group, Signal::KILL);
                return;
            }
        }
    }
}

/// Signals the shell's session (its group has the shell's id once
/// `__bash-exec` made it) and the shell itself, which an order arriving
/// before the session exists still reaches. An order racing the shell's
/// end may name a freed id, as the group's already could; ids are handed
/// out in a cycle, so it is not reused this soon.
fn signal_shell(shell: Pid, signal: Signal) {
    let _ = kill_process_group(shell, signal);
    let _ = kill_process(shell, signal);
}

/// The exec helper's main: sets the parent-death signal on itself, makes
/// sure the parent it was started by is still there (it may have died
/// before the signal was set), and becomes the shell. Returns only when
/// that fails.
pub fn exec_main(args: &[OsString]) -> i32 {
    let parent = args
        .first()
        .and_then(|p| p.to_str())
        .and_then(|p| p.parse::<i32>().ok());
    let shell = after_separator(args);
    let (Some(parent), Some((program, rest))) = (parent, shell.split_first()) else {
        eprintln!("mino {EXEC}: expected `PARENT -- SHELL ARGS...`");
        return 2;
    };
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        if let Err(e) = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)) {
            eprintln!("mino {EXEC}: could not set the parent-death signal: {e}");
            return CANNOT_START;
        }
        if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(parent) {
            return CANNOT_START;
        }
    }
    // A session of its own, without a controlling terminal: the command
    // cannot open the user's terminal (`/dev/tty`), read what the user
    // types into mino, or push keys into it (TIOCSTI). Its process group is
    // the session's, named by this process's id, which the guard signals.
    if let Err(e) = rustix::process::setsid() {
        eprintln!("mino {EXEC}: could not start a session of its own: {e}");
        return CANNOT_START;
    }
    // The sandbox helper is this same binary: run its first stage here
    // instead of starting the binary once more (one exec less per call; the
    // stage needs a single-threaded process, which this is).
    if is_sandbox_helper(program, rest) {
        return crate::sandbox::helper_main(&rest[1..]);
    }
    let error = Command::new(program).args(rest).exec();
    eprintln!(
        "mino {EXEC}: could not start {}: {error}",
        program.to_string_lossy()
    );
    CANNOT_START
}

/// Whether `program rest...` starts mino's own binary as the sandbox
/// helper: the same file as this process's (a binary replaced on disk since
/// is not), with the helper's argument first.
fn is_sandbox_helper(program: &OsString, rest: &[OsString]) -> bool {
    if rest
        .first()
        .is_none_or(|arg| arg != crate::sandbox::HELPER_ARG)
    {
        return false;
    }
    match (std::fs::canonicalize(program), std::env::current_exe()) {
        (Ok(program), Ok(me)) => program == me,
        _ => false,
    }
}

fn after_separator(args: &[OsString]) -> &[OsString] {
    match args.iter().position(|a| a == "--") {
        Some(at) => &args[at + 1..],
        None => &[],
    }
}
