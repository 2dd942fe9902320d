//! The Landlock-only fallback's unix-socket filter: where the kernel's
//! Landlock cannot restrict connecting to a pathname unix socket (ABI < 9),
//! a seccomp filter installed by the helper before it runs bash makes
//! `socket(AF_UNIX, ...)` and datagram `socketpair(AF_UNIX, ...)` fail with
//! `EACCES` and the `io_uring` calls fail with `ENOSYS`, so no command
//! reaches a tmux, docker or X server outside. A stream pair stays allowed:
//! it is connected to itself and reaches nothing (a datagram pair could be
//! pointed at any path by `connect` or `sendto`). Built with `seccompiler`
//! where it builds filters (little-endian x86_64, aarch64, riscv64); a
//! syscall of another architecture (i386's `socketcall`, arm32) kills the
//! process, and x86_64's x32 numbers are filtered like the native ones.
//!
//! Never used with namespaces: the full sandbox is not filtered.

use super::SandboxError;

/// Installs the filter on the calling thread and everything it starts
/// (after `PR_SET_NO_NEW_PRIVS`, which seccompiler sets again).
pub fn install() -> Result<(), SandboxError> {
    imp::install()
}

/// Whether the filter can be installed here: tried on a throwaway thread,
/// which then must fail to make a unix socket with `EACCES`.
pub fn probe() -> Result<(), SandboxError> {
    let probe = std::thread::spawn(|| {
        install()?;
        match rustix::net::socket(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::STREAM,
            None,
        ) {
            Err(rustix::io::Errno::ACCESS) => Ok(()),
            Err(e) => Err(SandboxError::Seccomp(format!(
                "socket(AF_UNIX) failed with {e}, not EACCES"
            ))),
            Ok(_) => Err(SandboxError::Seccomp(
                "socket(AF_UNIX) was let through".to_string(),
            )),
        }
    });
    probe
        .join()
        .unwrap_or_else(|_| Err(SandboxError::Seccomp("the probe's thread panicked".into())))
}

#[cfg(all(
    target_endian = "little",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
))]
mod imp {
    use std::collections::BTreeMap;

    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    use super::SandboxError;

    /// x86_64's x32 ABI: the same architecture in the filter's check, its
    /// syscall numbers with this bit set.
    #[cfg(target_arch = "x86_64")]
    pub(super) const X32_BIT: i64 = 0x4000_0000;

    /// The kernel's mask of a socket's type (the rest are flags such as
    /// `SOCK_CLOEXEC`).
    const SOCK_TYPE_MASK: u64 = 0xf;

    pub(super) fn install() -> Result<(), SandboxError> {
        for program in programs()? {
            seccompiler::apply_filter(&program)
                .map_err(|e| SandboxError::Seccomp(format!("install the filter: {e}")))?;
        }
        Ok(())
    }

    /// The two programs: unix sockets refused with `EACCES`, io_uring with
    /// `ENOSYS` (one filter has one answer for what it matches).
    pub(super) fn programs() -> Result<Vec<BpfProgram>, SandboxError> {
        let failed = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
        let unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )
        .map_err(failed)?;
        let datagram = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            libc::SOCK_DGRAM as u64,
        )
        .map_err(failed)?;
        let sockets = [
            (
                libc::SYS_socket,
                vec![SeccompRule::new(vec![unix.clone()]).map_err(failed)?],
            ),
            (
                libc::SYS_socketpair,
                vec![SeccompRule::new(vec![unix, datagram]).map_err(failed)?],
            ),
        ];
        let uring = [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ]
        .map(|nr| (nr, Vec::new()));
        Ok(vec![
            program(&sockets, libc::EACCES)?,
            program(&uring, libc::ENOSYS)?,
        ])
    }

    /// A program that answers `errno` to the calls `rules` match (under
    /// their native and, on x86_64, their x32 numbers) and allows the rest.
    fn program(rules: &[(i64, Vec<SeccompRule>)], errno: i32) -> Result<BpfProgram, SandboxError> {
        let failed = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
        let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for (nr, chain) in rules {
            map.insert(*nr, chain.clone());
            #[cfg(target_arch = "x86_64")]
            map.insert(nr | X32_BIT, chain.clone());
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(failed)?;
        let filter = SeccompFilter::new(
            map,
            SeccompAction::Allow,
            SeccompAction::Errno(errno.unsigned_abs()),
            arch,
        )
        .map_err(failed)?;
        BpfProgram::try_from(filter)
            .map_err(|e| SandboxError::Seccomp(format!("build the filter: {e}")))
    }
}

#[cfg(not(all(
    target_endian = "little",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
)))]
mod imp {
    use super::SandboxError;

    pub(super) fn install() -> Result<(), SandboxError> {
        Err(SandboxError::Seccomp(format!(
            "no filter can be built for {}",
            std::env::consts::ARCH
        )))
    }
}

#[allow(clippy::unwrap_used)]
#[cfg(all(
    test,
    target_endian = "little",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
))]
mod tests {
    use rustix::io::Errno;
    use rustix::net::{AddressFamily, SocketFlags, SocketType, socket, socketpair};

    use super::*;

    /// Runs `check` on a thread of its own with the filter installed: the
    /// filter stays with that thread, the rest of the test process is free.
    fn filtered<T: Send + 'static>(check: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(move || {
            install().unwrap();
            check()
        })
        .join()
        .unwrap()
    }

    #[test]
    fn unix_sockets_are_refused_and_stream_pairs_and_the_network_are_not() {
        let (unix, abstract_too, dgram_pair, stream_pair, inet) = filtered(|| {
            (
                socket(AddressFamily::UNIX, SocketType::STREAM, None).err(),
                socket(AddressFamily::UNIX, SocketType::DGRAM, None).err(),
                socketpair(
                    AddressFamily::UNIX,
                    SocketType::DGRAM,
                    SocketFlags::CLOEXEC,
                    None,
                )
                .err(),
                socketpair(
                    AddressFamily::UNIX,
                    SocketType::STREAM,
                    SocketFlags::CLOEXEC,
                    None,
                )
                .is_ok(),
                socket(AddressFamily::INET, SocketType::STREAM, None).is_ok(),
            )
        });
        assert_eq!(unix, Some(Errno::ACCESS));
        assert_eq!(abstract_too, Some(Errno::ACCESS));
        assert_eq!(dgram_pair, Some(Errno::ACCESS));
        assert!(stream_pair);
        assert!(inet);
        // This thread was never filtered.
        assert!(socket(AddressFamily::UNIX, SocketType::STREAM, None).is_ok());
    }

    #[test]
    fn the_probe_finds_the_filter_working() {
        assert!(probe().is_ok());
    }

    #[test]
    fn another_architecture_is_killed_and_x32_is_filtered() {
        let programs = imp::programs().unwrap();
        assert_eq!(programs.len(), 2);
        for program in &programs {
            // Load the architecture, compare, kill the process on a mismatch.
            assert_eq!(program[0].k, 4, "seccomp_data.arch");
            assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        }
        let compared = |program: &seccompiler::BpfProgram, nr: i64| {
            program
                .iter()
                .any(|i| i.code == 0x15 && i64::from(i.k) == nr)
        };
        assert!(compared(&programs[0], libc::SYS_socket));
        assert!(compared(&programs[1], libc::SYS_io_uring_setup));
        #[cfg(target_arch = "x86_64")]
        {
            assert!(compared(&programs[0], libc::SYS_socket | imp::X32_BIT));
            assert!(compared(&programs[0], libc::SYS_socketpair | imp::X32_BIT));
            assert!(compared(
                &programs[1],
                libc::SYS_io_uring_setup | imp::X32_BIT
            ));
        }
    }
}
