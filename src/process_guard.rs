//! What mino does to its own process, and to the processes a command leaves
//! behind. At start it makes itself non-dumpable, so its `/proc` entries
//! (`environ`, `mem`, ...) belong to root and a child running as the same
//! user cannot read the key out of its environment, and a child subreaper,
//! so a process orphaned by a command is reparented to mino rather than to
//! init, where mino can still find and stop it (`kill_strays`). Never
//! touches a process that is not its own child.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, getpid, kill_process};

/// Why hardening the process failed.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("could not make mino's process non-dumpable (prctl PR_SET_DUMPABLE): {0}")]
    Dumpable(#[source] std::io::Error),
    #[error("could not make mino a child subreaper (prctl PR_SET_CHILD_SUBREAPER): {0}")]
    Subreaper(#[source] std::io::Error),
}

/// Makes the calling process non-dumpable and a child subreaper. Linux
/// only; other systems keep their own defaults.
pub fn harden_at_start() -> Result<(), GuardError> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::process::{DumpableBehavior, set_child_subreaper, set_dumpable_behavior};
        set_dumpable_behavior(DumpableBehavior::NotDumpable)
            .map_err(|e| GuardError::Dumpable(e.into()))?;
        set_child_subreaper(Some(getpid())).map_err(|e| GuardError::Subreaper(e.into()))?;
    }
    Ok(())
}

/// One process as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: Pid,
    pub ppid: i32,
    /// Clock ticks after boot at which the process started.
    pub start: u64,
}

/// Reads `/proc/PID/stat`. `None` when the process is gone.
pub fn proc_entry(pid: i32) -> Option<ProcEntry> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// The fields after the command name, which may itself hold spaces and
/// parentheses: the fourth field is the parent, the twenty-second the
/// start time.
fn parse_stat(pid: i32, stat: &str) -> Option<ProcEntry> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcEntry {
        pid: Pid::from_raw(pid)?,
        ppid: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// The children of `parent` now, from `/proc`.
pub fn children_of(parent: Pid) -> Vec<ProcEntry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_entry)
        .filter(|p| p.ppid == parent.as_raw_nonzero().get())
        .collect()
}

/// Kills and reaps every child of this process that started at or after
/// `since` (clock ticks after boot) other than `except`: the processes a
/// command's helper left behind when it was itself killed, reparented to
/// mino because mino is a subreaper. Their own children are reparented to
/// mino as they die and are found on the next pass; gives up after `within`.
pub fn kill_strays(since: u64, except: Option<Pid>, within: Duration) {
    let me = getpid();
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let strays: Vec<ProcEntry> = children_of(me)
            .into_iter()
            .filter(|p| p.start >= since && Some(p.pid) != except)
            .collect();
        if strays.is_empty() {
            return;
        }
        for stray in &strays {
            let _ = kill_process(stray.pid, Signal::KILL);
        }
        for stray in &strays {
            let _ = rustix::process::waitpid(Some(stray.pid), WaitOptions::empty());
        }
    }
}

/// Kills every descendant of this process: its children, then the
/// processes reparented to it as they die (it must be a subreaper), until
/// it has no child left or `within` has passed. Reaps them all.
pub fn kill_all_descendants(within: Duration) {
    let me = getpid();
    let deadline = Instant::now() + within;
    loop {
        let children = children_of(me);
        for child in &children {
            let _ = kill_process(child.pid, Signal::KILL);
        }
        // Reap whatever has died; ECHILD means nothing is left.
        loop {
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => return,
            }
        }
        if Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(if children.is_empty() {
            5
        } else {
            1
        }));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line =
            "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let entry = parse_stat(4242, line).unwrap();
        assert_eq!(entry.ppid, 17);
        assert_eq!(entry.start, 987654);
    }

    #[test]
    fn this_process_is_found_among_its_parents_children() {
        let me = proc_entry(getpid().as_raw_nonzero().get()).unwrap();
        let parent = Pid::from_raw(me.ppid).unwrap();
        assert!(children_of(parent).iter().any(|c| c.pid == getpid()));
    }
}
