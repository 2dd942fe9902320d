//! The cached index of a project's store: for every path the last
//! checkpoint read, the stat it had (size, mtime, ctime, inode, mode) and
//! the digest its bytes had then. A path whose stat is unchanged is not
//! read again, so a checkpoint where nothing changed is a stat walk. A file
//! modified within `RACY_NS` of being read may change again without its
//! stat showing it, so it is read once more next time (git's "racy"
//! rule).

use std::collections::HashMap;
use std::fs::Metadata;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::manifest::Kind;

/// How close to its reading a modification makes a cached digest untrusted.
pub const RACY_NS: i64 = 2_000_000_000;

/// The part of a path's stat that says whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub mode: u32,
}

impl Stat {
    /// The same fields from a `stat` the walk made itself.
    // The fields' types differ between targets: on some these are no-ops.
    #[allow(clippy::useless_conversion)]
    pub fn of_raw(raw: &rustix::fs::Stat) -> Stat {
        let ns = |secs: i64, nsec| {
            secs.saturating_mul(1_000_000_000)
                .saturating_add(i64::try_from(nsec).unwrap_or(0))
        };
        Stat {
            size: u64::try_from(raw.st_size).unwrap_or(0),
            mtime_ns: ns(i64::from(raw.st_mtime), raw.st_mtime_nsec),
            ctime_ns: ns(i64::from(raw.st_ctime), raw.st_ctime_nsec),
            ino: u64::from(raw.st_ino),
            mode: u32::from(raw.st_mode) & 0o7777,
        }
    }

    pub fn of(meta: &Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: meta.size(),
            mtime_ns: meta
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.mtime_nsec()),
            ctime_ns: meta
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.mode() & 0o7777,
        }
    }
}

/// One cached path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cached {
    pub stat: Stat,
    pub kind: Kind,
    pub digest: String,
    /// When the bytes were read (ns since the epoch).
    pub read_ns: i64,
}

impl Cached {
    /// Whether this entry still describes a path of kind `kind` with `stat`.
    pub fn fresh(&self, stat: &Stat, kind: Kind) -> bool {
        self.kind == kind
            && self.stat == *stat
            && self.stat.mtime_ns.saturating_add(RACY_NS) < self.read_ns
    }
}

impl Cached {
    /// Whether this entry, judged earlier by the same protected set, still
    /// describes a path the walk found as `kind` with `stat`: its recorded
    /// kind is that one, or what the judgement and the size limit made of it.
    pub fn fresh_as(&self, stat: &Stat, kind: Kind, size_limit: u64) -> bool {
        let compatible = match (self.kind, kind) {
            (a, b) if a == b => true,
            (Kind::Protected, Kind::File | Kind::Symlink | Kind::GitObject) => true,
            (Kind::Large, Kind::File) => stat.size > size_limit,
            _ => false,
        };
        compatible && self.fresh(stat, self.kind)
    }
}

/// Path -> what it was when last read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    pub entries: HashMap<String, Cached>,
}

impl Index {
    /// The index in `path`; empty when there is none or it does not decode
    /// (it is only a cache: every path is then read again).
    pub fn load(path: &Path) -> Index {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(io::Error::other)
    }
}

/// Now, in ns since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn stat(mtime_ns: i64) -> Stat {
        Stat {
            size: 3,
            mtime_ns,
            ctime_ns: mtime_ns,
            ino: 7,
            mode: 0o644,
        }
    }

    #[test]
    fn an_entry_is_fresh_only_with_the_same_stat_read_well_after_its_change() {
        let cached = Cached {
            stat: stat(1_000),
            kind: Kind::File,
            digest: "d".into(),
            read_ns: 1_000 + RACY_NS + 1,
        };
        assert!(cached.fresh(&stat(1_000), Kind::File));
        assert!(!cached.fresh(&stat(1_001), Kind::File));
        assert!(!cached.fresh(&stat(1_000), Kind::Protected));
        let racy = Cached {
            read_ns: 1_000 + RACY_NS,
            ..cached
        };
        assert!(!racy.fresh(&stat(1_000), Kind::File));
    }

    #[test]
    fn a_damaged_index_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.json");
        std::fs::write(&path, b"{not json").unwrap();
        assert!(Index::load(&path).entries.is_empty());
        let mut index = Index::default();
        index.entries.insert(
            "a".into(),
            Cached {
                stat: stat(5),
                kind: Kind::File,
                digest: "x".into(),
                read_ns: 9,
            },
        );
        std::fs::write(&path, index.to_bytes().unwrap()).unwrap();
        assert_eq!(Index::load(&path), index);
    }
}
