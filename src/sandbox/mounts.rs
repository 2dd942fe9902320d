//! What is done in the constructed root once it is `/` (`construct.rs`
//! builds it): planting paths read-only again, secrets masked; and the
//! mount helpers both use. Runs in the helper's `init`, inside its own mount
//! namespace only; never touches a mount of the user's, never creates
//! anything outside the new `/tmp`.

use std::path::{Path, PathBuf};

use rustix::fs::{StatVfsMountFlags, statvfs};
use rustix::mount::{
    MountFlags, UnmountFlags, mount, mount_bind, mount_bind_recursive, mount_remount, unmount,
};

use super::{Plan, SandboxError};

/// Where the empty file masks are bound from, inside the private `/tmp`,
/// unmounted before the command starts.
const STAGING: &str = "/tmp/.mino-sandbox";

/// Inside the constructed root, once it is `/`: the planting paths bound
/// read-only again, the secrets masked.
pub fn finish(plan: &Plan) -> Result<(), SandboxError> {
    let mut pinned: Vec<&PathBuf> = plan.pinned.iter().filter(|p| is_real(p)).collect();
    pinned.sort();
    pinned.dedup();
    pinned.sort_by_key(|p| p.components().count());
    for dir in pinned {
        mount_bind_recursive(dir.as_path(), dir.as_path())
            .map_err(|e| step(format!("pin {}", dir.display()))(e))?;
    }
    for path in &plan.read_only {
        if path.symlink_metadata().is_err() {
            continue;
        }
        mount_bind_recursive(path.as_path(), path.as_path())
            .map_err(|e| step(format!("bind {}", path.display()))(e))?;
        read_only(path)?;
    }
    mask(plan)
}

/// Files get an empty read-only file bound over them, directories an empty
/// read-only tmpfs.
fn mask(plan: &Plan) -> Result<(), SandboxError> {
    if !plan.mask_files.is_empty() {
        std::fs::create_dir_all(STAGING)
            .map_err(SandboxError::step(format!("create {STAGING}")))?;
        mount(
            "tmpfs",
            STAGING,
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            c"mode=0700,size=4k",
        )
        .map_err(|e| step("mount the mask staging area")(e))?;
        let empty = Path::new(STAGING).join("empty");
        std::fs::write(&empty, b"").map_err(SandboxError::step("create the empty mask file"))?;
        for file in plan.mask_files.iter().filter(|p| is_real(p)) {
            mount_bind(empty.as_path(), file.as_path())
                .map_err(|e| step(format!("mask {}", file.display()))(e))?;
            read_only(file)?;
        }
        unmount(STAGING, UnmountFlags::DETACH)
            .map_err(|e| step("unmount the mask staging area")(e))?;
        let _ = std::fs::remove_dir(STAGING);
    }
    for dir in plan.mask_dirs.iter().filter(|p| is_real(p) && p.is_dir()) {
        mount(
            "tmpfs",
            dir.as_path(),
            "tmpfs",
            MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            c"mode=0555,size=4k",
        )
        .map_err(|e| step(format!("mask {}", dir.display()))(e))?;
    }
    Ok(())
}

/// A path that exists and leads through no link: a mask is mounted on the
/// real path only, never where a link (made since the plan) points.
fn is_real(path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| real == path)
}

/// Remounts the mount at `path` read-only, keeping the flags it has (a
/// mount inherited from outside has them locked).
pub(super) fn read_only(path: &Path) -> Result<(), SandboxError> {
    let Ok(stat) = statvfs(path) else {
        // Gone, or unreachable (a mount point under a masked directory).
        return Ok(());
    };
    let mut flags = MountFlags::BIND | MountFlags::RDONLY;
    let kept = [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ];
    for (has, keep) in kept {
        if stat.f_flag.contains(has) {
            flags |= keep;
        }
    }
    match mount_remount(path, flags, c"") {
        Ok(()) => Ok(()),
        // A mount hidden under another one, or a special one the kernel
        // keeps as it is: nothing reachable is writable through it.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(step(format!("make {} read-only", path.display()))(e)),
    }
}

/// Every mount point, from `/proc/self/mountinfo`, outermost first.
pub(super) fn mount_points() -> Result<Vec<PathBuf>, SandboxError> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(SandboxError::step("read /proc/self/mountinfo"))?;
    let mut points: Vec<PathBuf> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .collect();
    points.sort();
    points.dedup();
    Ok(points)
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len() + 1
            && let Some(octal) = field.get(i + 1..i + 4)
            && let Ok(value) = u8::from_str_radix(octal, 8)
        {
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn step(what: impl Into<String>) -> impl FnOnce(rustix::io::Errno) -> SandboxError {
    let what = what.into();
    move |errno| SandboxError::Step {
        step: what,
        source: errno.into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape(r"/a\040b\134c"), "/a b\\c");
        assert_eq!(unescape("/plain"), "/plain");
    }
}
