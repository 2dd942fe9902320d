//! How a command's main process ended, in the words its result uses:
//! `Exit code: N`, or the signal that killed it by name.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// `Exit code: N`, or the signal that ended the main process.
pub(super) fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("Exit code: {code}")
    } else if let Some(signal) = status.signal() {
        match signal_name(signal) {
            Some(name) => format!("Killed by signal {signal} ({name})"),
            None => format!("Killed by signal {signal}"),
        }
    } else {
        format!("Exit status: {status}")
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}
