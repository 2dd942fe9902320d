//! What a checkpoint costs before a bash call on a 20,000-file project
//! where nothing changed (issue 22: at most 30 ms): a stat walk against the
//! cached index, no file read again, the manifest already there.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};

use mino::checkpoint::{Checkpoints, Store};
use mino::policy::ProtectedPaths;

fn checkpoint(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let root = dir.path().join("proj");
    let old = SystemTime::now() - Duration::from_secs(3600);
    for d in 0..200 {
        let sub = root.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
        for f in 0..100 {
            let path = sub.join(format!("f{f:03}.rs"));
            std::fs::write(&path, format!("pub fn f{d}_{f}() -> u32 {{ {f} }}\n"))
                .unwrap_or_else(|e| panic!("{e}"));
            // Old enough that a cached digest is trusted (the racy rule).
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("{e}"));
            file.set_modified(old).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap_or_else(|e| panic!("{e}"));
    let root = root.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::at(dir.path().join("home/checkpoints/p"));
    let checkpoints = Checkpoints::new(store, root, Arc::new(ProtectedPaths::builtin()));
    let first = checkpoints.take().unwrap_or_else(|e| panic!("{e}"));
    assert!(first.manifest.files.len() > 20_000);
    c.bench_function("checkpoint, 20,000 files, nothing changed", |b| {
        b.iter(|| black_box(checkpoints.take().map(|t| t.id)))
    });
}

criterion_group!(benches, checkpoint);
criterion_main!(benches);
