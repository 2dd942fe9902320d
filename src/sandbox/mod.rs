//! The sandbox every bash command runs in (DESIGN section 5a): what the user's
//! settings ask for, what this machine supports, and the plan one command is
//! run under. The plan is carried out by the mino binary itself, started as a
//! hidden helper (`mino __sandbox`, `helper.rs`), so no unsafe code is needed
//! to set up namespaces between fork and exec.
//!
//! It never decides whether a command runs (`policy` does), never reads what
//! a masked file holds, and never writes into the user's files: masks and
//! read-only binds exist only inside the command's own mount namespace.

#[cfg(target_os = "linux")]
mod bridge;
pub mod call_check;
pub mod check;
#[cfg(target_os = "linux")]
mod construct;
mod describe;
pub mod git;
#[cfg(target_os = "linux")]
mod helper;
#[cfg(target_os = "linux")]
mod lock;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod netlink;
pub mod plan;
pub mod probe;
pub mod proxy;
#[cfg(target_os = "linux")]
mod publish;
pub mod root;
pub mod scan;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod set_aside;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::policy::BashConfinement;

pub use describe::{links_note, masked_note, network_note, result_note, summary};
pub use plan::{Join, Plan, Planner};
pub use probe::Support;

/// The loopback port of the proxy inside every command's network namespace.
pub const PROXY_PORT: u16 = 3128;

/// Where the proxy's unix socket is bound in the command's root.
pub const PROXY_SOCKET: &str = "/dev/mino-proxy";

/// The line a keeper's first stage prints, followed by its process id.
pub const KEEPER_AT: &str = "mino-keeper at";

/// The line a keeper's init prints once its namespace is ready.
pub const KEEPER_READY: &str = "mino-keeper ready";

/// The line the publishing helper prints once it forwards.
pub const PUBLISH_READY: &str = "mino-publish ready";

/// The first argument that starts the helper instead of mino.
pub const HELPER_ARG: &str = "__sandbox";

/// Files and directories of the home where code that runs later could be
/// planted: read-only inside the sandbox even where their parent is writable.
/// With the constructed root they matter only where the home is visible:
/// a project that is the home, or holds it.
pub const HOME_PLANTING: [&str; 24] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".claude",
    ".codex",
    ".gemini",
    ".config/git",
    ".gitconfig",
    ".bash_aliases",
    ".local/bin",
    ".config/systemd",
    ".config/autostart",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".cargo/config.toml",
    ".cargo/bin",
];

/// The same inside the project (`.git` entries exist only in a repository).
pub const PROJECT_PLANTING: [&str; 3] = [".git/hooks", ".git/config", ".mino"];

/// What Landlock alone cannot give of the full sandbox (DESIGN 5a), each
/// with what keeps it anyway where something does.
pub const MISSING_WITH_LANDLOCK_ONLY: [(&str, Kept); 6] = [
    (
        "secrets are not masked (the home and the project are readable)",
        Kept::Never,
    ),
    (
        "the project's planting paths (.git/hooks, .git/config, the execution surfaces that exist) stay writable: Landlock cannot make a path read-only inside a writable one",
        Kept::Never,
    ),
    (
        "pathname unix sockets stay reachable (a tmux or docker server outside can be driven)",
        Kept::UnlessSocketsGuarded,
    ),
    (
        "no network namespace of its own: the host's loopback and network stay reachable whatever [sandbox] network says, and no proxy checks where traffic goes",
        Kept::Never,
    ),
    ("processes outside are visible in /proc", Kept::Never),
    (
        "nothing a command starts is confined to a namespace of its own",
        Kept::Never,
    ),
];

/// Whether an entry of `MISSING_WITH_LANDLOCK_ONLY` can be kept anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    Never,
    /// Kept where Landlock (ABI 9) or the seccomp filter keeps unix
    /// sockets out of reach (`UnixSockets`).
    UnlessSocketsGuarded,
}

/// The first Landlock ABI that restricts connecting to a pathname unix
/// socket (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`).
pub const LANDLOCK_UNIX_ABI: i32 = 9;

/// What keeps the unix sockets outside from a command run under Landlock
/// alone (the full sandbox's network namespace and root keep them anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnixSockets {
    /// Landlock (ABI 9 and later): pathname sockets are reached only in
    /// the writable directories, abstract ones only within the sandbox.
    Landlock,
    /// The seccomp filter (`seccomp.rs`): no unix socket can be made.
    Filtered,
    /// Nothing: this kernel's Landlock cannot, and the filter could not be
    /// installed.
    Reachable,
}

impl UnixSockets {
    /// What this machine can use: Landlock where it can, else the filter.
    pub fn on(support: &Support) -> Self {
        if support
            .landlock_abi
            .is_some_and(|abi| abi >= LANDLOCK_UNIX_ABI)
        {
            UnixSockets::Landlock
        } else if support.socket_filter {
            UnixSockets::Filtered
        } else {
            UnixSockets::Reachable
        }
    }
}

/// Whether a sandboxed command reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// Out through mino's proxy only (with namespaces every command has a
    /// network namespace of its own: the host's loopback and abstract unix
    /// sockets are out of reach in every setting).
    On,
    /// The network namespace's own loopback and nothing else.
    Off,
}

impl Network {
    pub fn name(self) -> &'static str {
        match self {
            Network::On => "on",
            Network::Off => "off",
        }
    }
}

/// What a `sandbox: false` call does in bypass mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsandboxedInBypass {
    /// Asks like in every other mode (the default).
    Ask,
    /// Runs without a question, shown as allowed by bypass.
    Run,
}

/// `[sandbox]`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `false` turns the sandbox off: commands run with the user's account.
    pub enabled: bool,
    /// `false` skips the namespaces and uses Landlock alone.
    pub namespaces: bool,
    pub network: Network,
    /// Refuse to run a command when no sandbox can be set up.
    pub required: bool,
    pub unsandboxed_in_bypass: UnsandboxedInBypass,
    /// Writable directories besides the project and `/tmp`, absolute or
    /// starting with `~/`: the real ones, bound writable (user settings).
    pub writable: Vec<String>,
    /// Added to the root's toolchains (read-only), user settings only.
    pub toolchains: Vec<String>,
    /// Added to the root's caches (the sandbox's own layer), user settings.
    pub caches: Vec<String>,
    /// Variables passed to commands besides `root::ENV_ALLOWED` (a name
    /// ending in `*` is a prefix), user settings only.
    pub pass_env: Vec<String>,
    /// Exact `host:port` destinations the proxy reaches although private,
    /// user settings only.
    pub allow_private: Vec<String>,
    /// When set, the only hosts the proxy reaches (patterns, `*` any run
    /// of characters), user settings only.
    pub allowed_domains: Option<Vec<String>>,
    /// Ports of the session's shared network forwarded to the host's
    /// loopback (the same port), so the person's browser reaches a dev
    /// server a background process started; user settings only.
    pub publish: Vec<u16>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            namespaces: true,
            network: Network::On,
            required: false,
            unsandboxed_in_bypass: UnsandboxedInBypass::Ask,
            writable: Vec::new(),
            toolchains: Vec::new(),
            caches: Vec::new(),
            pass_env: Vec::new(),
            allow_private: Vec::new(),
            allowed_domains: None,
            publish: Vec::new(),
        }
    }
}

/// How strongly this run's commands are sandboxed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// User, mount, PID and network namespaces, masks, Landlock.
    Full,
    /// Landlock alone: writes restricted, secrets not masked.
    LandlockOnly,
    /// Nothing: commands run with the user's account permissions.
    None,
}

/// The sandbox this run uses: the settings, what the machine supports, and
/// the binary that sets it up.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub settings: SandboxSettings,
    pub level: Level,
    /// Why the level is lower than asked, said once at start.
    pub degraded: Option<String>,
    /// What keeps unix sockets out of reach under Landlock alone.
    pub unix_sockets: UnixSockets,
    /// The mino binary started as the helper.
    pub helper: PathBuf,
}

impl Sandbox {
    /// No sandbox at all (the sandbox is off, or on a platform without one).
    pub fn off(settings: SandboxSettings) -> Self {
        Self {
            settings,
            level: Level::None,
            degraded: None,
            unix_sockets: UnixSockets::Reachable,
            helper: PathBuf::new(),
        }
    }

    /// The level `settings` allow on a machine that supports `support`, and
    /// what to tell the user when it is lower than asked.
    pub fn choose(settings: SandboxSettings, support: &Support, helper: PathBuf) -> Self {
        if !settings.enabled {
            return Self::off(settings);
        }
        let (level, degraded) = if settings.namespaces && support.user_namespaces {
            (Level::Full, None)
        } else if support.landlock_abi.is_some() {
            let why = if settings.namespaces {
                format!(
                    "user namespaces are not available here ({}); bash runs under Landlock alone: \
                     writes are restricted, secrets are not masked{}",
                    support
                        .namespace_error
                        .as_deref()
                        .unwrap_or("unknown reason"),
                    probe::apparmor_hint().unwrap_or_default()
                )
            } else {
                "[sandbox] namespaces = false: bash runs under Landlock alone: writes are \
                 restricted, secrets are not masked"
                    .to_string()
            };
            (Level::LandlockOnly, Some(why))
        } else {
            (
                Level::None,
                Some(
                    "no sandbox: this machine offers neither user namespaces nor Landlock; bash \
                     runs with your account permissions"
                        .to_string(),
                ),
            )
        };
        Self {
            settings,
            level,
            degraded,
            unix_sockets: UnixSockets::on(support),
            helper,
        }
    }

    /// The guarantees of the full sandbox this level cannot give (empty
    /// for the full sandbox and for none at all, which says so itself).
    pub fn missing(&self) -> Vec<&'static str> {
        match self.level {
            Level::Full | Level::None => Vec::new(),
            Level::LandlockOnly => MISSING_WITH_LANDLOCK_ONLY
                .iter()
                .filter(|(_, kept)| match kept {
                    Kept::Never => true,
                    Kept::UnlessSocketsGuarded => self.unix_sockets == UnixSockets::Reachable,
                })
                .map(|(what, _)| *what)
                .collect(),
        }
    }

    /// How commands run under this sandbox, for the bypass question.
    pub fn confinement(&self) -> BashConfinement {
        match self.level {
            Level::None => BashConfinement::Unconfined,
            Level::Full | Level::LandlockOnly => BashConfinement::Sandboxed {
                summary: summary(self),
                outside_asks: self.settings.unsandboxed_in_bypass == UnsandboxedInBypass::Ask,
            },
        }
    }

    /// The status bar's word for the level, when it is worth showing.
    pub fn badge(&self) -> Option<&'static str> {
        match self.level {
            Level::Full => None,
            Level::LandlockOnly => Some("sandbox: Landlock only"),
            Level::None => Some("no sandbox"),
        }
    }
}

/// Why the helper could not set up the sandbox or run the command.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot read the sandbox plan: {0}")]
    Plan(String),
    #[error("{step}: {source}")]
    Step {
        step: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error("the unix-socket filter (seccomp): {0}")]
    Seccomp(String),
}

impl SandboxError {
    pub(crate) fn step(step: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let step = step.into();
        move |source| SandboxError::Step { step, source }
    }
}

/// The helper's entry: `args` are the arguments after `HELPER_ARG`. Returns
/// the process's exit code. Must run before any thread is started.
pub fn helper_main(args: &[std::ffi::OsString]) -> i32 {
    #[cfg(target_os = "linux")]
    {
        helper::main(args)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        eprintln!("mino sandbox: not available on this platform");
        125
    }
}

/// The exit code the helper uses when the sandbox could not be set up.
pub const SETUP_FAILED: i32 = 125;

/// The prefix of every message the helper prints about itself.
pub const HELPER_PREFIX: &str = "mino sandbox:";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confinement_is_the_levels_with_the_sandboxs_own_summary() {
        assert_eq!(
            Sandbox::off(SandboxSettings::default()).confinement(),
            BashConfinement::Unconfined
        );
        let mut sandbox = Sandbox::off(SandboxSettings::default());
        sandbox.level = Level::Full;
        assert_eq!(
            sandbox.confinement(),
            BashConfinement::Sandboxed {
                summary: summary(&sandbox),
                outside_asks: true,
            }
        );
        sandbox.settings.unsandboxed_in_bypass = UnsandboxedInBypass::Run;
        sandbox.level = Level::LandlockOnly;
        let BashConfinement::Sandboxed {
            summary: said,
            outside_asks,
        } = sandbox.confinement()
        else {
            panic!("Landlock alone is a sandbox");
        };
        assert!(said.contains("Landlock only"), "{said}");
        assert!(!outside_asks);
    }

    #[test]
    fn the_pathname_socket_entry_is_missing_only_where_nothing_guards_them() {
        let support = |abi, filter| Support {
            user_namespaces: false,
            landlock_abi: Some(abi),
            socket_filter: filter,
            ..Support::default()
        };
        let settings = SandboxSettings {
            namespaces: false,
            ..SandboxSettings::default()
        };
        for (abi, filter, guard) in [
            (8, false, UnixSockets::Reachable),
            (8, true, UnixSockets::Filtered),
            (9, false, UnixSockets::Landlock),
            (9, true, UnixSockets::Landlock),
        ] {
            let sandbox = Sandbox::choose(settings.clone(), &support(abi, filter), PathBuf::new());
            assert_eq!(sandbox.level, Level::LandlockOnly);
            assert_eq!(sandbox.unix_sockets, guard);
            let missing = sandbox.missing().join("; ");
            assert_eq!(
                missing.contains("pathname unix sockets"),
                guard == UnixSockets::Reachable,
                "{missing}"
            );
            assert!(missing.contains("secrets are not masked"), "{missing}");
            let said = summary(&sandbox);
            assert_eq!(
                said.contains("unix sockets and the host's loopback reachable"),
                guard == UnixSockets::Reachable,
                "{said}"
            );
        }
    }
}
