//! The helper: the mino binary started as `mino __sandbox STAGE`, single
//! threaded, before any runtime. It carries out a plan read from its
//! arguments (`exec`, started under the bash guard, whose stdin is the
//! guard's) or from stdin (`init`, started by `exec`).
//!
//! The chain of one sandboxed call: mino → `__bash-guard` (a subreaper that
//! kills every descendant when the command ends or mino dies) →
//! `__bash-exec` (sets the parent-death signal, then runs `__sandbox exec`
//! in the same process) → `__sandbox init` (PID 1 of the new namespace) →
//! `bash -c`.
//!
//! - `exec`: with namespaces, unshares user, mount, PID and network
//!   namespaces (the network's always: the host's loopback and abstract
//!   unix sockets are never in reach), maps the user's ids to root inside, and
//!   starts `init` as the first process of the new PID namespace; without,
//!   applies Landlock (and, where the plan says, the unix-socket filter of
//!   `seccomp.rs`) and runs the command itself.
//! - `init`: PID 1 of the namespace. Makes the filesystem read-only but the
//!   writable set, masks, mounts a fresh `/proc`, brings the namespace's own
//!   loopback up, enters a nested user namespace that maps the user's own
//!   ids back (so the command keeps them and cannot undo a mount), sets
//!   `PR_SET_NO_NEW_PRIVS`, applies Landlock, runs `bash -c COMMAND`, reaps
//!   every orphan and exits with the command's status. Its exit kills
//!   everything left in the namespace.
//! - A session's keeper (`plan.keeper`): `exec` prints its own id, `init`
//!   sets the namespace up as for a command, prints that it is ready and
//!   holds the namespace instead of running anything. A call with
//!   `plan.join` enters the keeper's user and network namespaces instead of
//!   making them (so it reaches what a background process serves on the
//!   namespace's loopback) and unshares a mount and PID namespace of its
//!   own, built from its own plan: only the network is shared.
//! - `probe`: tries the namespaces and reports what works, as JSON.
//!
//! It never runs the command when a step of the sandbox failed (it prints
//! the step and exits with `SETUP_FAILED`) and never reads a masked file.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};

use nix::sched::{CloneFlags, setns, unshare};
use rustix::process::{
    DumpableBehavior, Signal, WaitOptions, set_dumpable_behavior, set_parent_process_death_signal,
};
use serde_json::json;

use super::{
    HELPER_PREFIX, Join, KEEPER_AT, KEEPER_READY, PROXY_PORT, Plan, SETUP_FAILED, SandboxError,
    bridge, construct, lock, mounts, netlink, root, seccomp,
};

pub fn main(args: &[OsString]) -> i32 {
    let result = match args.first().and_then(|a| a.to_str()) {
        Some("exec") => Plan::from_args(&args[1..]).and_then(|plan| stage_exec(&plan)),
        Some("init") => read_plan().and_then(|plan| stage_init(&plan)),
        // A command that reads the helper's stdin: the plan comes as
        // arguments, as `exec`'s does.
        Some("init-args") => Plan::from_args(&args[1..]).and_then(|plan| stage_init(&plan)),
        Some("probe") => Ok(probe()),
        Some("publish") => super::publish::stage(&args[1..]),
        _ => {
            eprintln!("{HELPER_PREFIX} expected exec, init, probe or publish");
            return SETUP_FAILED;
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{HELPER_PREFIX} could not set up the sandbox: {e}");
            SETUP_FAILED
        }
    }
}

fn read_plan() -> Result<Plan, SandboxError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| SandboxError::Plan(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| SandboxError::Plan(e.to_string()))
}

/// The first stage: outside the new PID namespace.
fn stage_exec(plan: &Plan) -> Result<i32, SandboxError> {
    if !plan.namespaces {
        lock::restrict(plan)?;
        if plan.socket_filter {
            seccomp::install()?;
        }
        let child = bash(plan)
            .spawn()
            .map_err(SandboxError::step("start bash"))?;
        let mut child = child;
        let status = child.wait().map_err(SandboxError::step("wait for bash"))?;
        return Ok(exit_code(status));
    }
    let parent = rustix::process::getppid();
    match plan.join {
        // The session's network namespace, held by its keeper: the same
        // user namespace (where this process is root, as in its own) and
        // network, a mount and PID namespace of its own.
        Some(keeper) => {
            join(keeper)?;
            unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID).map_err(|e| {
                SandboxError::Step {
                    step: "unshare the mount and PID namespaces".into(),
                    source: e.into(),
                }
            })?;
        }
        None => {
            // A network namespace of its own whatever `network` says: the
            // host's loopback and abstract unix sockets are never in reach.
            let flags = CloneFlags::CLONE_NEWUSER
                | CloneFlags::CLONE_NEWNS
                | CloneFlags::CLONE_NEWPID
                | CloneFlags::CLONE_NEWNET;
            unshare(flags).map_err(|e| SandboxError::Step {
                step: "unshare the user, mount, PID and network namespaces".into(),
                source: e.into(),
            })?;
            map_ids(&format!("0 {} 1", plan.uid), &format!("0 {} 1", plan.gid))?;
        }
    }
    // Entering a user namespace without privileges outside clears the
    // parent-death signal `__bash-exec` set: set it again, and make sure the
    // guard did not die before it was.
    keep_dying_with(parent)?;
    if plan.keeper {
        // Where the namespaces are, for the calls that join them.
        let mut out = std::io::stdout();
        writeln!(
            out,
            "{KEEPER_AT} {}",
            rustix::process::getpid().as_raw_nonzero()
        )
        .and_then(|()| out.flush())
        .map_err(SandboxError::step("say where the keeper is"))?;
    }
    let exe = std::env::current_exe().map_err(SandboxError::step("find the mino binary"))?;
    if plan.pass_stdin {
        let args = plan
            .to_args()
            .map_err(|e| SandboxError::Plan(e.to_string()))?;
        let status = Command::new(exe)
            .arg(super::HELPER_ARG)
            .arg("init-args")
            // `to_args` starts with `__sandbox exec`: the plan's pieces follow.
            .args(args.into_iter().skip(2))
            .status()
            .map_err(SandboxError::step("start the namespace's init"))?;
        return Ok(exit_code(status));
    }
    let mut init = Command::new(exe)
        .arg(super::HELPER_ARG)
        .arg("init")
        .stdin(Stdio::piped())
        .spawn()
        .map_err(SandboxError::step("start the namespace's init"))?;
    let text = serde_json::to_vec(plan).map_err(|e| SandboxError::Plan(e.to_string()))?;
    if let Some(mut stdin) = init.stdin.take() {
        stdin
            .write_all(&text)
            .map_err(SandboxError::step("hand the plan to init"))?;
    }
    let status = init
        .wait()
        .map_err(SandboxError::step("wait for the namespace's init"))?;
    Ok(exit_code(status))
}

/// The second stage: PID 1 of the new namespace, root of the outer user
/// namespace (all its capabilities there, none outside).
fn stage_init(plan: &Plan) -> Result<i32, SandboxError> {
    // The first stage dying (killed with its group) takes the namespace along.
    set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|e| SandboxError::step("set the parent-death signal")(e.into()))?;
    construct::build(plan)?;
    mounts::finish(plan)?;
    netlink::loopback_up().map_err(SandboxError::step("bring loopback up"))?;
    // A call that joined the keeper's network finds its bridge listening.
    let bridge = match (&plan.proxy, plan.join) {
        (Some(_), None) => Some(bridge::listen().map_err(SandboxError::step(format!(
            "listen on 127.0.0.1:{PROXY_PORT} for the proxy"
        )))?),
        _ => None,
    };
    // The command's own user namespace: its ids as outside, no capability
    // over the mounts above (they cannot be unmounted or remounted).
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| SandboxError::Step {
        step: "unshare the command's user namespace".into(),
        source: e.into(),
    })?;
    map_ids(&format!("{} 0 1", plan.uid), &format!("{} 0 1", plan.gid))?;
    // A parent outside the PID namespace shows as 0.
    keep_dying_with(None)?;
    // Like mino itself: a command running as an ordinary user cannot read
    // init's /proc entries (bash, started by exec, is dumpable again).
    set_dumpable_behavior(DumpableBehavior::NotDumpable)
        .map_err(|e| SandboxError::step("make init non-dumpable")(e.into()))?;
    lock::restrict(plan)?;
    if let Some(listener) = bridge {
        bridge::serve(listener).map_err(SandboxError::step("start the proxy's bridge"))?;
    }
    if plan.keeper {
        return hold();
    }
    let child = bash(plan)
        .spawn()
        .map_err(SandboxError::step("start bash"))?;
    let main = rustix::process::Pid::from_child(&child);
    // Reap every orphan; leave with the command's status.
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == main => {
                return Ok(match (status.exit_status(), status.terminating_signal()) {
                    (Some(code), _) => code,
                    (None, Some(signal)) => 128 + signal,
                    (None, None) => 1,
                });
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(SandboxError::step("wait for bash")(e.into())),
        }
    }
}

/// Enters the user and network namespaces of the keeper's first stage,
/// after checking that the process is still the one that was named (its
/// start time), so a reused id is never joined.
pub(super) fn join(keeper: Join) -> Result<(), SandboxError> {
    let open = |ns: &str| {
        std::fs::File::open(format!("/proc/{}/ns/{ns}", keeper.pid)).map_err(SandboxError::step(
            format!("open the keeper's {ns} namespace"),
        ))
    };
    let user = open("user")?;
    let net = open("net")?;
    let same =
        crate::process_guard::proc_entry(keeper.pid).is_some_and(|p| p.start == keeper.start);
    if !same {
        return Err(SandboxError::Step {
            step: "join the session's sandbox".into(),
            source: std::io::Error::other("its keeper is gone"),
        });
    }
    setns(&user, CloneFlags::CLONE_NEWUSER).map_err(|e| SandboxError::Step {
        step: "enter the keeper's user namespace".into(),
        source: e.into(),
    })?;
    setns(&net, CloneFlags::CLONE_NEWNET).map_err(|e| SandboxError::Step {
        step: "enter the keeper's network namespace".into(),
        source: e.into(),
    })?;
    Ok(())
}

/// The keeper's init, once its namespace is ready: says so and holds it
/// until the first stage dies (the parent-death signal), which ends it.
fn hold() -> Result<i32, SandboxError> {
    let mut out = std::io::stdout();
    writeln!(out, "{KEEPER_READY}")
        .and_then(|()| out.flush())
        .map_err(SandboxError::step("say the keeper is ready"))?;
    loop {
        std::thread::park();
    }
}

/// Sets the parent-death signal (again: a change of user namespace may
/// clear it) and checks that the parent is still `parent`: one that died
/// before the signal was set would never send it.
pub(super) fn keep_dying_with(parent: Option<rustix::process::Pid>) -> Result<(), SandboxError> {
    set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(|e| SandboxError::step("set the parent-death signal")(e.into()))?;
    if rustix::process::getppid() != parent {
        return Err(SandboxError::Step {
            step: "check the parent is alive".into(),
            source: std::io::Error::other("the process that started the sandbox is gone"),
        });
    }
    Ok(())
}

/// `bash -c COMMAND` in the project, stdin empty (or the helper's, for a
/// language server), output inherited, with
/// only the variables the table and the plan name.
fn bash(plan: &Plan) -> Command {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(&plan.command)
        .current_dir(&plan.cwd)
        .stdin(if plan.pass_stdin {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .env_clear();
    for (name, value) in std::env::vars_os() {
        // With namespaces a proxy of mino's environment is out of reach:
        // the sandbox's own (or none) replaces it.
        if name.to_str().is_some_and(|name| {
            root::env_passes(name, &plan.keep_env)
                && !(plan.namespaces && root::PROXY_ENV.contains(&name))
        }) {
            command.env(name, value);
        }
    }
    if plan.namespaces && plan.proxy.is_some() {
        for (name, value) in root::proxy_env(PROXY_PORT, plan.direct_loopback) {
            command.env(name, value);
        }
    }
    if let Some(tmp) = &plan.private_tmp {
        command.env("TMPDIR", tmp);
    }
    command
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Writes this process's id maps (one id each) after denying setgroups.
fn map_ids(uid_map: &str, gid_map: &str) -> Result<(), SandboxError> {
    std::fs::write("/proc/self/setgroups", "deny")
        .map_err(SandboxError::step("write /proc/self/setgroups"))?;
    std::fs::write("/proc/self/uid_map", uid_map)
        .map_err(SandboxError::step("write /proc/self/uid_map"))?;
    std::fs::write("/proc/self/gid_map", gid_map)
        .map_err(SandboxError::step("write /proc/self/gid_map"))?;
    Ok(())
}

/// Whether user, mount, PID and network namespaces can be made here, printed as JSON.
fn probe() -> i32 {
    // Before the namespaces: a thread of this process may not be started after.
    let landlock_abi = lock::abi();
    let socket_filter = seccomp::probe();
    let flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWNET;
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let result = unshare(flags)
        .map_err(|e| format!("unshare: {e}"))
        .and_then(|()| {
            map_ids(&format!("0 {uid} 1"), &format!("0 {gid} 1")).map_err(|e| e.to_string())
        });
    let mut value = match result {
        Ok(()) => json!({ "user_namespaces": true, "landlock_abi": landlock_abi }),
        Err(e) => json!({ "user_namespaces": false, "error": e, "landlock_abi": landlock_abi }),
    };
    value["socket_filter"] = json!(socket_filter.is_ok());
    if let Err(e) = socket_filter {
        value["socket_filter_error"] = json!(e.to_string());
    }
    println!("{value}");
    0
}
