//! The plan one command runs under: which paths stay writable, which become
//! read-only again, which are masked, and whether the network is cut. Built
//! from the settings, the project's cached scan and what exists in the home;
//! sent to the helper as JSON. Never mounts anything and never reads what a
//! file holds; the only thing it makes is a repository's missing, empty
//! `hooks` directory (so that it can be read-only).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::git;
use super::proxy::{Proxy, ProxyError};
use super::root::{self as table, Part};
use super::scan::{ScanCache, Scanned};
use super::{HELPER_ARG, HOME_PLANTING, Level, Network, Sandbox, SandboxError, UnixSockets};
use crate::policy::destination::NetworkRules;
use crate::policy::{ProtectedPaths, Surfaces};

/// Everything the helper needs to run one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub command: String,
    pub cwd: PathBuf,
    /// The user's ids outside, kept as the command's ids inside.
    pub uid: u32,
    pub gid: u32,
    /// New user, mount and PID namespaces; `false` is Landlock alone.
    pub namespaces: bool,
    pub network: Network,
    /// Directories the command may write to (absolute, existing).
    pub writable: Vec<PathBuf>,
    /// Paths read-only again inside a writable directory.
    pub read_only: Vec<PathBuf>,
    /// Files covered by an empty read-only file.
    pub mask_files: Vec<PathBuf>,
    /// Directories covered by an empty read-only directory.
    pub mask_dirs: Vec<PathBuf>,
    /// Directories made mount points of their own so that they cannot be
    /// renamed: `.git` and the parents of every mask in the project.
    #[serde(default)]
    pub pinned: Vec<PathBuf>,
    /// Links named like a secret that lead out of the project, not masked.
    #[serde(default)]
    pub ignored_links: Vec<PathBuf>,
    /// The constructed root (with namespaces).
    #[serde(default)]
    pub root: Root,
    /// Landlock alone: the command's own temporary directory (`TMPDIR`),
    /// in mino's home, instead of the machine's `/tmp`, which stays
    /// read-only.
    #[serde(default)]
    pub private_tmp: Option<PathBuf>,
    /// Landlock alone on a kernel whose Landlock cannot restrict pathname
    /// unix sockets: the helper installs the seccomp filter that refuses
    /// them (`seccomp.rs`).
    #[serde(default)]
    pub socket_filter: bool,
    /// Variables of the helper's environment the command keeps besides
    /// `root::ENV_ALLOWED` (the user's `pass_env`, the shell gate's own).
    #[serde(default)]
    pub keep_env: Vec<String>,
    /// The proxy's unix socket outside (`network = "on"` with namespaces),
    /// bound at `PROXY_SOCKET` inside and bridged to the namespace's
    /// loopback.
    #[serde(default)]
    pub proxy: Option<PathBuf>,
    /// The command reads the helper's stdin (a language server's
    /// requests) instead of an empty one.
    #[serde(default)]
    pub pass_stdin: bool,
    /// Hold a network namespace instead of running the command: the
    /// session's keeper, whose namespace its background processes and the
    /// calls after them share (`helper.rs`).
    #[serde(default)]
    pub keeper: bool,
    /// Enter the keeper's network namespace (and the user namespace that
    /// owns it) instead of making a new one; everything else is this
    /// call's own.
    #[serde(default)]
    pub join: Option<Join>,
    /// The namespace's loopback reached without the proxy (`NO_PROXY`):
    /// a call in the shared network, unless the user's `allow_private`
    /// names a loopback service of the host, which only the proxy reaches.
    #[serde(default)]
    pub direct_loopback: bool,
}

/// The process whose namespaces a call joins: the keeper's first stage,
/// named by its id and its start time (clock ticks after boot), so that an
/// id reused by another process is never joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Join {
    pub pid: i32,
    pub start: u64,
}

/// What the command's root is built from: everything else is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// An empty directory the root is assembled on before it becomes `/`.
    pub base: PathBuf,
    /// Bound read-only at their own paths (a link is made again as a link).
    pub read_only: Vec<PathBuf>,
    /// The home: an empty, read-only tmpfs, the toolchains and caches in it.
    pub home: Option<PathBuf>,
    pub caches: Vec<CacheLayer>,
}

/// One cache: the user's copy (when it exists) below, the command's writes
/// in `layer` (`upper/` and `work/`, in mino's home per project), or in a
/// private empty directory when there is no layer or it cannot mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLayer {
    pub path: PathBuf,
    pub lower: bool,
    pub layer: Option<PathBuf>,
}

/// The longest piece of the plan in one argument (the kernel takes up to
/// 128 KiB per argument; a long command escaped in JSON may need several).
const ARG_PIECE: usize = 64 * 1024;

impl Plan {
    /// The helper's arguments for this plan: `__sandbox exec` and the plan
    /// as JSON, cut into pieces that each fit in one argument. Passed as
    /// arguments because the helper's stdin is its guard's, and the plan
    /// holds nothing secret (paths and the command, which bash's own
    /// arguments show anyway).
    pub fn to_args(&self) -> Result<Vec<OsString>, serde_json::Error> {
        let text = serde_json::to_string(self)?;
        let mut args: Vec<OsString> = vec![HELPER_ARG.into(), "exec".into()];
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut end = rest.len().min(ARG_PIECE);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            let (piece, tail) = rest.split_at(end);
            args.push(piece.into());
            rest = tail;
        }
        Ok(args)
    }

    /// The plan from the pieces `to_args` made (what follows `exec`).
    pub fn from_args(pieces: &[OsString]) -> Result<Plan, SandboxError> {
        let mut text = String::new();
        for piece in pieces {
            let piece = piece
                .to_str()
                .ok_or_else(|| SandboxError::Plan("a piece of the plan is not UTF-8".into()))?;
            text.push_str(piece);
        }
        serde_json::from_str(&text).map_err(|e| SandboxError::Plan(e.to_string()))
    }

    /// Every masked path, files first.
    pub fn masked(&self) -> impl Iterator<Item = &PathBuf> {
        self.mask_files.iter().chain(&self.mask_dirs)
    }
}

/// Builds plans for one project; the scan of its protected paths is cached
/// between calls.
#[derive(Debug, Clone)]
pub struct Planner {
    pub sandbox: Sandbox,
    pub project: PathBuf,
    /// The user's home directory, when known.
    pub home: Option<PathBuf>,
    /// mino's own home (settings, sessions, logs): masked.
    pub mino_home: Option<PathBuf>,
    protected: Arc<ProtectedPaths>,
    /// The execution surfaces (policy's table): read-only inside.
    surfaces: Surfaces,
    scan: Arc<Mutex<ScanCache>>,
    /// The network's way out, started by the first call that needs it.
    proxy: Arc<Proxy>,
}

impl Planner {
    pub fn new(
        sandbox: Sandbox,
        project: PathBuf,
        home: Option<PathBuf>,
        mino_home: Option<PathBuf>,
        protected: Arc<ProtectedPaths>,
    ) -> Self {
        let settings = &sandbox.settings;
        // The settings were checked when read; rules they cannot make
        // reach nothing.
        let rules = NetworkRules::new(&settings.allow_private, settings.allowed_domains.as_deref())
            .unwrap_or_else(|_| NetworkRules::nothing());
        let proxy = Proxy::new(
            mino_home.as_ref().map(|m| m.join("sandbox").join("proxy")),
            rules,
        );
        Self {
            sandbox,
            project,
            home,
            mino_home,
            protected,
            surfaces: Surfaces::default(),
            scan: Arc::new(Mutex::new(ScanCache::default())),
            proxy: Arc::new(proxy),
        }
    }

    /// Whether a call in the session's shared network reaches its loopback
    /// directly: not when `allow_private` names a loopback service of the
    /// host, which only the proxy reaches.
    pub fn direct_loopback(&self) -> bool {
        !self.sandbox.settings.allow_private.iter().any(|entry| {
            let host = entry.rsplit_once(':').map_or(entry.as_str(), |(h, _)| h);
            host.eq_ignore_ascii_case("localhost") || host.starts_with("127.") || host == "[::1]"
        })
    }

    /// Whether a command's traffic leaves through the proxy.
    pub fn uses_proxy(&self) -> bool {
        self.sandbox.level == Level::Full && self.sandbox.settings.network == Network::On
    }

    /// The proxy's socket, the proxy started on the current runtime the
    /// first time; `None` where commands do not use it.
    pub fn proxy_socket(&self) -> Option<Result<PathBuf, ProxyError>> {
        self.uses_proxy().then(|| self.proxy.socket())
    }

    /// Sets who the proxy asks about a host outside `allowed_domains`.
    pub fn set_host_asker(&self, asker: Option<Arc<dyn super::proxy::HostAsk>>) {
        self.proxy.set_asker(asker);
    }

    /// The rules the proxy decides by.
    pub fn network_rules(&self) -> &NetworkRules {
        self.proxy.rules()
    }

    /// The planner with this repository's execution surfaces (the same
    /// table a file tool's write there is decided by), read-only inside.
    pub fn with_surfaces(mut self, surfaces: Surfaces) -> Self {
        self.surfaces = surfaces;
        self
    }

    /// The plan for `command`. Walks the project only when its directories
    /// changed since the last call.
    pub fn plan(&self, command: &str) -> Plan {
        let project = canonical(&self.project).unwrap_or_else(|| self.project.clone());
        let namespaces = self.sandbox.level == Level::Full;
        let mut writable = vec![project.clone()];
        for entry in &self.sandbox.settings.writable {
            if let Some(path) = table::expand(entry, self.home.as_deref())
                .as_deref()
                .and_then(canonical)
            {
                writable.push(path);
            }
        }
        let mut read_only = git::project_read_only(&project);
        read_only.extend(git::surfaces(&project, &self.surfaces));
        // A verified linked worktree keeps its repository elsewhere: git
        // needs to write there too, its code-bearing parts stay read-only.
        if let Some((dirs, parts)) = git::linked_worktree(&project) {
            writable.extend(dirs);
            read_only.extend(parts);
        }
        if namespaces {
            git::make_placeholders(&project);
        }
        let mut mask_files = Vec::new();
        let mut mask_dirs = Vec::new();
        let mut ignored_links = Vec::new();
        let mut surfaces = Vec::new();
        if namespaces {
            let scanned = self.scan(&project);
            mask_files.extend(scanned.files);
            mask_dirs.extend(scanned.dirs);
            ignored_links = scanned.ignored_links;
            // Nested surfaces too: an AGENTS.md or .claude/ anywhere, where
            // it leads inside the project.
            surfaces = inside(&project, &scanned.surfaces);
            read_only.extend(surfaces.iter().cloned());
        }
        if let Some(home) = &self.home {
            for name in HOME_PLANTING {
                read_only.push(home.join(name));
            }
            if namespaces {
                for name in crate::policy::protected::home_secret_paths() {
                    classify(&home.join(name), &mut mask_files, &mut mask_dirs);
                }
            }
        }
        if namespaces && let Some(mino_home) = &self.mino_home {
            classify(mino_home, &mut mask_files, &mut mask_dirs);
        }
        read_only.retain(|p| p.symlink_metadata().is_ok());
        read_only.sort();
        read_only.dedup();
        // A mask over a directory holding the project would hide it.
        mask_dirs.retain(|dir| !project.starts_with(dir) && !self.project.starts_with(dir));
        writable.sort();
        writable.dedup();
        let root = if namespaces {
            self.root(&project)
        } else {
            Root::default()
        };
        let private_tmp = match (&self.mino_home, namespaces) {
            (Some(mino_home), false) => {
                let dir = mino_home
                    .join("sandbox")
                    .join(project_key(&project))
                    .join("tmp");
                std::fs::create_dir_all(&dir).ok().map(|()| dir)
            }
            _ => None,
        };
        let pinned = if namespaces {
            // A surface's parents too: moving one would carry the
            // read-only surface away and free its name for a new one.
            pinned(
                &project,
                mask_files.iter().chain(&mask_dirs).chain(&surfaces),
            )
        } else {
            Vec::new()
        };
        Plan {
            command: command.to_string(),
            cwd: project,
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            namespaces,
            network: self.sandbox.settings.network,
            writable,
            read_only,
            mask_files,
            mask_dirs,
            ignored_links,
            pinned,
            root,
            private_tmp,
            socket_filter: self.sandbox.level == Level::LandlockOnly
                && self.sandbox.unix_sockets == UnixSockets::Filtered,
            keep_env: self.sandbox.settings.pass_env.clone(),
            proxy: None,
            pass_stdin: false,
            keeper: false,
            join: None,
            direct_loopback: false,
        }
    }

    /// The root's parts that exist here, from the table and the user's
    /// additions. Makes the directories the cache layers and the root's
    /// base live in, in mino's home.
    fn root(&self, project: &Path) -> Root {
        let settings = &self.sandbox.settings;
        let home = self.home.as_deref();
        let layers = self.mino_home.as_ref().map(|m| m.join("sandbox"));
        let base = match &layers {
            Some(dir) if std::fs::create_dir_all(dir.join("root")).is_ok() => dir.join("root"),
            _ => PathBuf::from("/tmp"),
        };
        let mut root = Root {
            base,
            home: home.map(Path::to_path_buf),
            ..Root::default()
        };
        for (entry, part) in table::entries(&settings.toolchains, &settings.caches) {
            let Some(path) = table::expand(&entry, home) else {
                continue;
            };
            let exists = path.symlink_metadata().is_ok();
            match part {
                Part::System | Part::Toolchain if exists => root.read_only.push(path),
                Part::System | Part::Toolchain => {}
                Part::Cache => {
                    let layer = layers
                        .as_ref()
                        .map(|dir| dir.join(project_key(project)).join(layer_name(&entry)))
                        .filter(|layer| {
                            std::fs::create_dir_all(layer.join("upper")).is_ok()
                                && std::fs::create_dir_all(layer.join("work")).is_ok()
                        });
                    root.caches.push(CacheLayer {
                        path,
                        lower: exists,
                        layer,
                    });
                }
            }
        }
        // A resolver configuration that is a link into /run: the one file
        // it points to, not /run.
        if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
            && !target.starts_with("/etc")
            && !target.starts_with("/usr")
        {
            root.read_only.push(target);
        }
        root
    }

    /// The project's masked files (with namespaces; none under Landlock
    /// alone, which masks nothing) and its execution surfaces, as they are
    /// now: one look at the cached walk, walked again where a directory
    /// changed.
    pub fn project_scan(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let project = canonical(&self.project).unwrap_or_else(|| self.project.clone());
        let scanned = self.scan(&project);
        let masked = if self.sandbox.level == Level::Full {
            scanned.files
        } else {
            Vec::new()
        };
        (masked, scanned.surfaces)
    }

    /// The cached walk of the real project path.
    fn scan(&self, project: &Path) -> Scanned {
        match self.scan.lock() {
            Ok(mut cache) => cache.scan(project, &self.protected, &self.surfaces),
            Err(poisoned) => poisoned
                .into_inner()
                .scan(project, &self.protected, &self.surfaces),
        }
    }

    /// A masked path as the user writes it: project-relative, `~/...`, or
    /// absolute.
    pub fn display(&self, path: &Path) -> String {
        let project = canonical(&self.project).unwrap_or_else(|| self.project.clone());
        if let Ok(rel) = path.strip_prefix(&project) {
            return rel.to_string_lossy().into_owned();
        }
        if let Some(home) = &self.home
            && let Ok(rel) = path.strip_prefix(home)
        {
            return format!("~/{}", rel.to_string_lossy());
        }
        path.to_string_lossy().into_owned()
    }
}

/// The real paths inside `project` that `paths` lead to: a link out of the
/// project, or a dangling one, never stops a command from starting.
fn inside(project: &Path, paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|real| real.starts_with(project) && real != project)
        .collect()
}

/// The project's `.git` (a real directory) and every directory between the
/// project and a mask or a surface: renaming one of them would move a mask
/// (or a read-only surface) away from the name the next call looks for,
/// and a mount point cannot be renamed.
fn pinned<'a>(project: &Path, masks: impl Iterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let dot_git = project.join(".git");
    if dot_git.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        dirs.push(dot_git);
    }
    for mask in masks {
        for dir in mask.ancestors().skip(1) {
            if dir == project || !dir.starts_with(project) {
                break;
            }
            dirs.push(dir.to_path_buf());
        }
    }
    dirs.sort();
    dirs.dedup();
    dirs.sort_by_key(|d| d.components().count());
    dirs
}

/// The directory of one project's cache layers: a digest of its path.
fn project_key(project: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(project.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A cache's layer directory's name: its entry with `/` and `~` spelled out.
fn layer_name(entry: &str) -> String {
    entry
        .chars()
        .map(|c| match c {
            '/' => '%',
            '~' => '_',
            c => c,
        })
        .collect()
}

fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Adds `path` to the file or directory masks by what it is; nothing when
/// it does not exist or is a link (a mask goes on a real path only).
fn classify(path: &Path, files: &mut Vec<PathBuf>, dirs: &mut Vec<PathBuf>) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => dirs.push(path.to_path_buf()),
        Ok(meta) if meta.is_file() => files.push(path.to_path_buf()),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::policy::protected::home_secret_paths;
    use crate::sandbox::SandboxSettings;

    /// The one table: every secret the sandbox masks in a home is one the
    /// file tools refuse, and every fixed place of the table is masked.
    #[test]
    fn the_sandbox_and_the_file_tools_cannot_disagree_on_secrets() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let project = home.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let protected = ProtectedPaths::builtin();
        for secret in home_secret_paths() {
            assert!(
                protected.is_protected(secret),
                "{secret} readable by read_file"
            );
            let path = home.join(secret);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
        }
        let mut sandbox = Sandbox::off(SandboxSettings::default());
        sandbox.level = Level::Full;
        let planner = Planner::new(
            sandbox,
            project,
            Some(home.clone()),
            None,
            Arc::new(ProtectedPaths::builtin()),
        );
        let plan = planner.plan("true");
        let masked: Vec<&PathBuf> = plan.masked().collect();
        for secret in home_secret_paths() {
            assert!(
                masked.contains(&&home.join(secret)),
                "~/{secret} is not masked by the sandbox"
            );
        }
        for needed in [
            ".cache/huggingface/token",
            ".pgpass",
            ".vault-token",
            ".ssh",
        ] {
            assert!(home_secret_paths().any(|s| s == needed), "{needed}");
        }
    }
}
