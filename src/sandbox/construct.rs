//! The constructed root (DESIGN section 5a): an empty tmpfs on the plan's
//! base, into which the system directories and toolchains are bound
//! read-only, the project and the named writable directories writable, the
//! caches through an overlay of the sandbox's own, with a private `/tmp`
//! and `/var/tmp`, a fresh `/dev` (the harmless devices, a new `devpts`
//! instance, a private `shm`) and the PID namespace's own `/proc`; then it
//! becomes `/` and the host's root is detached. Runs in the helper's
//! `init`, inside its own mount namespace only; never changes a mount of
//! the user's and never writes outside the new root and the cache layers.

use std::path::{Path, PathBuf};

use rustix::mount::{
    MountFlags, MountPropagationFlags, UnmountFlags, mount, mount_bind, mount_bind_recursive,
    mount_change, mount_remount, unmount,
};

use super::mounts::{mount_points, read_only, step};
use super::plan::CacheLayer;
use super::{HELPER_PREFIX, PROXY_SOCKET, Plan, SandboxError};

/// The devices bound from the host's `/dev`: none of them reaches a
/// terminal, a disk or the kernel.
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// One piece of the root, placed outermost first.
enum Piece<'a> {
    Tmp,
    Home,
    ReadOnly,
    Writable,
    Cache(&'a CacheLayer),
}

impl Piece<'_> {
    /// At the same path, the home goes first, a cache last.
    fn rank(&self) -> u8 {
        match self {
            Piece::Tmp | Piece::Home => 0,
            Piece::ReadOnly => 1,
            Piece::Writable => 2,
            Piece::Cache(_) => 3,
        }
    }
}

/// Builds the root on `plan.root.base` and makes it `/`.
pub fn build(plan: &Plan) -> Result<(), SandboxError> {
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(|e| step("make every mount private")(e))?;
    let base = plan.root.base.as_path();
    let plain = MountFlags::NOSUID | MountFlags::NODEV;
    mount("tmpfs", base, "tmpfs", plain, c"mode=0755")
        .map_err(|e| step("mount the new root")(e))?;
    let at = |path: &Path| base.join(path.strip_prefix("/").unwrap_or(path));

    let mut pieces: Vec<(PathBuf, Piece)> = vec![
        (PathBuf::from("/tmp"), Piece::Tmp),
        (PathBuf::from("/var/tmp"), Piece::Tmp),
    ];
    if let Some(home) = plan.root.home.as_ref().filter(|h| h.parent().is_some()) {
        pieces.push((home.clone(), Piece::Home));
    }
    pieces.extend(
        plan.root
            .read_only
            .iter()
            .map(|p| (p.clone(), Piece::ReadOnly)),
    );
    pieces.extend(plan.writable.iter().map(|p| (p.clone(), Piece::Writable)));
    pieces.extend(
        plan.root
            .caches
            .iter()
            .map(|c| (c.path.clone(), Piece::Cache(c))),
    );
    pieces.sort_by_key(|(path, piece)| (path.components().count(), piece.rank()));

    dev(&at(Path::new("/dev")), plan.proxy.as_deref())?;
    for (path, piece) in &pieces {
        let target = at(path);
        match piece {
            Piece::Tmp => {
                make_dir(&target)?;
                mount("tmpfs", &target, "tmpfs", plain, c"mode=1777")
                    .map_err(|e| step(format!("mount a private {}", path.display()))(e))?;
            }
            Piece::Home => {
                make_dir(&target)?;
                mount("tmpfs", &target, "tmpfs", plain, c"mode=0755")
                    .map_err(|e| step("mount the empty home")(e))?;
            }
            Piece::ReadOnly => bind_read_only(path, &target, plan)?,
            Piece::Writable => {
                make_dir(&target)?;
                mount_bind_recursive(path.as_path(), &target)
                    .map_err(|e| step(format!("bind {} writable", path.display()))(e))?;
            }
            Piece::Cache(cache) => place_cache(cache, &target),
        }
    }
    let proc = at(Path::new("/proc"));
    make_dir(&proc)?;
    mount(
        "proc",
        &proc,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .map_err(|e| step("mount a fresh /proc")(e))?;
    // Nothing more is made in the home or the root itself.
    // (Unless the project is the home: then the project's bind is on top.)
    if let Some(home) = pieces.iter().find(|(_, p)| matches!(p, Piece::Home))
        && !plan.writable.contains(&home.0)
    {
        remount_read_only(&at(&home.0))?;
    }
    remount_read_only(base)?;
    pivot(base)
}

/// The host's root leaves: `base` becomes `/`.
fn pivot(base: &Path) -> Result<(), SandboxError> {
    rustix::process::chdir(base).map_err(|e| step("enter the new root")(e))?;
    rustix::process::pivot_root(".", ".").map_err(|e| step("pivot to the new root")(e))?;
    unmount(".", UnmountFlags::DETACH).map_err(|e| step("detach the host's root")(e))?;
    rustix::process::chdir("/").map_err(|e| step("enter /")(e))?;
    Ok(())
}

/// A fresh `/dev`: the harmless devices bound from the host's, a devpts
/// of its own (the host's terminals are not in it), a private `shm`, and
/// the proxy's socket at `PROXY_SOCKET` when the network goes through it.
fn dev(dev: &Path, proxy: Option<&Path>) -> Result<(), SandboxError> {
    make_dir(dev)?;
    mount(
        "tmpfs",
        dev,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"mode=0755",
    )
    .map_err(|e| step("mount a fresh /dev")(e))?;
    for name in DEVICES {
        let host = Path::new("/dev").join(name);
        if host.symlink_metadata().is_err() {
            continue;
        }
        let target = dev.join(name);
        std::fs::write(&target, b"").map_err(SandboxError::step(format!("create /dev/{name}")))?;
        mount_bind(&host, &target).map_err(|e| step(format!("bind /dev/{name}"))(e))?;
    }
    let pts = dev.join("pts");
    make_dir(&pts)?;
    mount(
        "devpts",
        &pts,
        "devpts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    )
    .map_err(|e| step("mount a new devpts instance")(e))?;
    let shm = dev.join("shm");
    make_dir(&shm)?;
    mount(
        "tmpfs",
        &shm,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        c"mode=1777",
    )
    .map_err(|e| step("mount a private /dev/shm")(e))?;
    let links = [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ];
    for (name, target) in links {
        std::os::unix::fs::symlink(target, dev.join(name))
            .map_err(SandboxError::step(format!("link /dev/{name}")))?;
    }
    if let Some(socket) = proxy {
        let name = Path::new(PROXY_SOCKET)
            .strip_prefix("/dev")
            .unwrap_or(Path::new("mino-proxy"));
        let target = dev.join(name);
        std::fs::write(&target, b"").map_err(SandboxError::step("create the proxy's socket"))?;
        mount_bind(socket, &target).map_err(|e| step("bind the proxy's socket")(e))?;
    }
    remount_read_only(dev)
}

/// A read-only part of the root: a directory or file bound with every mount
/// under it read-only; a link to a system directory made again as the same
/// link, any other link bound where it leads.
fn bind_read_only(path: &Path, target: &Path, plan: &Plan) -> Result<(), SandboxError> {
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(());
    };
    if meta.file_type().is_symlink()
        && let Ok(link) = std::fs::read_link(path)
        && let Ok(real) = std::fs::canonicalize(path)
        && plan
            .root
            .read_only
            .iter()
            .any(|other| other != path && real.starts_with(other))
    {
        if let Some(parent) = target.parent() {
            make_dir(parent)?;
        }
        return std::os::unix::fs::symlink(&link, target)
            .map_err(SandboxError::step(format!("link {}", path.display())));
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        make_dir(target)?;
        mount_bind_recursive(path, target)
            .map_err(|e| step(format!("bind {}", path.display()))(e))?;
        for point in mount_points()? {
            if point.starts_with(target) {
                read_only(&point)?;
            }
        }
        return Ok(());
    }
    if let Some(parent) = target.parent() {
        make_dir(parent)?;
    }
    if target.symlink_metadata().is_err() {
        std::fs::write(target, b"")
            .map_err(SandboxError::step(format!("create {}", target.display())))?;
    }
    mount_bind(path, target).map_err(|e| step(format!("bind {}", path.display()))(e))?;
    read_only(target)
}

/// A cache: an overlay of the user's copy and the sandbox's layer; the
/// layer alone when there is no copy; a private empty directory, said on
/// stderr, when neither can be had. A cache whose place cannot be made
/// (under a read-only toolchain that lacks it) is left out.
fn place_cache(cache: &CacheLayer, target: &Path) {
    if std::fs::create_dir_all(target).is_err() {
        return;
    }
    let why = match (&cache.layer, cache.lower) {
        (Some(layer), true) => match overlay(&cache.path, layer, target) {
            Ok(()) => return,
            Err(why) => why,
        },
        (Some(layer), false) => match mount_bind(layer.join("upper"), target) {
            Ok(()) => return,
            Err(e) => format!("its layer cannot be bound: {e}"),
        },
        (None, _) => "mino has no home to keep its layer in".to_string(),
    };
    let flags = MountFlags::NOSUID | MountFlags::NODEV;
    if mount("tmpfs", target, "tmpfs", flags, c"mode=0755").is_ok() {
        eprintln!(
            "{HELPER_PREFIX} {} is an empty private directory for this command ({why})",
            cache.path.display()
        );
    }
}

fn overlay(lower: &Path, layer: &Path, target: &Path) -> Result<(), String> {
    let paths = [lower.to_path_buf(), layer.join("upper"), layer.join("work")];
    let texts: Vec<&str> = paths.iter().filter_map(|p| p.to_str()).collect();
    if texts.len() != 3 || texts.iter().any(|t| t.contains([',', ':', '\\', '\0'])) {
        return Err("its path cannot be written in overlay options".into());
    }
    let options = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        texts[0], texts[1], texts[2]
    );
    let options = std::ffi::CString::new(options).map_err(|e| e.to_string())?;
    mount(
        "overlay",
        target,
        "overlay",
        MountFlags::NOSUID | MountFlags::NODEV,
        options.as_c_str(),
    )
    .map_err(|e| format!("overlay: {e}"))
}

fn make_dir(path: &Path) -> Result<(), SandboxError> {
    std::fs::create_dir_all(path).map_err(SandboxError::step(format!("create {}", path.display())))
}

fn remount_read_only(path: &Path) -> Result<(), SandboxError> {
    mount_remount(
        path,
        MountFlags::BIND
            | MountFlags::RDONLY
            | MountFlags::NOSUID
            | MountFlags::NODEV
            | MountFlags::NOEXEC,
        c"",
    )
    .map_err(|e| step(format!("make {} read-only", path.display()))(e))
}
