//! Landlock, the second layer (and the only one without namespaces): the
//! whole filesystem readable and executable, writes only in the writable set,
//! the sandbox's own `/tmp` (with namespaces) or a private `TMPDIR` (without:
//! the machine's `/tmp` stays read-only) and the few devices a shell writes
//! to. Best-effort ABI: a kernel
//! without some access rights enforces the rest. Also `PR_SET_NO_NEW_PRIVS`.
//! Never loosens anything the mounts set up.

use landlock::{
    ABI, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    Scope, path_beneath_rules,
};

use super::{Plan, SandboxError};

/// The newest access rights asked for; older kernels get what they know.
/// From ABI 6 on, abstract unix sockets and signals are scoped: a command
/// connects to no abstract socket and signals no process made outside it;
/// from ABI 9 on, pathname sockets are reached only where writes are.
const ABI_WANTED: ABI = ABI::V10;

/// Devices a command may write to.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/pts",
    "/dev/ptmx",
];

/// Restricts this process and everything it starts. `/tmp` and `/dev/shm`
/// stay writable: the sandbox's own with namespaces, else the machine's.
pub fn restrict(plan: &Plan) -> Result<(), SandboxError> {
    rustix::thread::set_no_new_privs(true)
        .map_err(|e| SandboxError::step("set PR_SET_NO_NEW_PRIVS")(e.into()))?;
    let mut writable: Vec<&std::path::Path> = plan.writable.iter().map(|p| p.as_path()).collect();
    writable.extend(plan.root.caches.iter().map(|c| c.path.as_path()));
    if plan.namespaces {
        // The sandbox's own, private ones.
        writable.push(std::path::Path::new("/tmp"));
        writable.push(std::path::Path::new("/var/tmp"));
        writable.push(std::path::Path::new("/dev/shm"));
    } else if let Some(tmp) = &plan.private_tmp {
        // The machine's are shared with every other program: not written.
        writable.push(tmp.as_path());
    }
    writable.retain(|p| p.exists());
    let devices: Vec<&str> = DEVICES
        .into_iter()
        .filter(|d| std::path::Path::new(d).exists())
        .collect();
    let fail = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .map_err(fail)?
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(fail)?
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(ABI_WANTED)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(devices, AccessFs::from_all(ABI_WANTED)))
        .map_err(fail)?
        .restrict_self()
        .map_err(fail)?;
    if status.ruleset == RulesetStatus::NotEnforced && !plan.namespaces {
        return Err(SandboxError::Landlock(
            "this kernel does not enforce Landlock".into(),
        ));
    }
    Ok(())
}

/// The Landlock ABI this kernel offers, found by restricting a throwaway
/// thread (the crate exposes the version only that way).
pub fn abi() -> Option<i32> {
    let probe = std::thread::spawn(|| {
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI::V1))
            .ok()?
            .create()
            .ok()?
            .restrict_self()
            .ok()?;
        match status.landlock {
            LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
            _ => None,
        }
    });
    probe.join().ok().flatten()
}
