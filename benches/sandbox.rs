//! What the sandbox adds to one bash call (DESIGN 5a, issue point 8): the
//! same `true` command through the real bash tool on a project of 20,000
//! files (200 directories of 100, a few protected files among them), once
//! without a sandbox and once in it, with the masked-path walk cached as in
//! a session (the first call walks; later calls only check the
//! directories). Also the cached plan alone, and a plan right after a
//! directory changed (a walk). The added cost is the difference of the
//! first two. Uses the built mino binary as the helper; the sandbox builds
//! its whole root (system binds, the home's toolchains, the cache overlays
//! in a mino home of its own, `/dev`, `/proc`) on every call.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use mino::policy::ProtectedPaths;
use mino::sandbox::{Planner, Sandbox, SandboxSettings, Support};
use mino::tools::bash::Bash;
use mino::tools::{Project, Tool, ToolContext, ToolStatus};

const DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;

fn lay_out(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("src/mod{d:03}"));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for f in 0..FILES_PER_DIR {
            let name = if f == 0 && d % 50 == 0 {
                ".env".to_string()
            } else {
                format!("file{f:03}.rs")
            };
            std::fs::write(dir.join(name), "x").unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

fn run(rt: &tokio::runtime::Runtime, cx: &ToolContext) {
    let call = Bash
        .prepare(&json!({ "command": "true" }), cx)
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = rt.block_on(call.run(CancellationToken::new()));
    assert_eq!(outcome.status, ToolStatus::Completed, "{}", outcome.output);
    assert!(
        outcome.output.starts_with("Exit code: 0"),
        "{}",
        outcome.output
    );
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    lay_out(dir.path());
    let project = Project::new(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let helper = Path::new(env!("CARGO_BIN_EXE_mino")).to_path_buf();
    // Both run under the guard, as every bash call of a session does.
    let mut plain = ToolContext::new(project);
    plain.bash_guard = Some(helper.clone());
    let support = Support::probe(&helper);
    let sandbox = Sandbox::choose(SandboxSettings::default(), &support, helper);
    eprintln!("sandbox level: {:?}", sandbox.level);
    let protected = Arc::new(ProtectedPaths::builtin());
    let mino_home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let planner = Planner::new(
        sandbox,
        plain.project.root().to_path_buf(),
        std::env::var_os("HOME").map(Into::into),
        Some(mino_home.path().to_path_buf()),
        protected,
    );
    let mut sandboxed = plain.clone();
    sandboxed.sandbox = Arc::new(planner.clone());

    let mut group = c.benchmark_group("bash call, 20000-file project");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("no sandbox", |b| b.iter(|| run(&rt, &plain)));
    group.bench_function("sandboxed", |b| b.iter(|| run(&rt, &sandboxed)));
    group.finish();

    let mut group = c.benchmark_group("sandbox plan, 20000-file project");
    group.sample_size(30);
    group.bench_function("cached", |b| b.iter(|| black_box(planner.plan("true"))));
    let touched = dir.path().join("src/mod100/touch");
    group.bench_function("after a directory changed", |b| {
        b.iter(|| {
            // A new entry changes the directory: the next plan walks.
            let _ = std::fs::remove_file(&touched);
            std::fs::write(&touched, "").unwrap_or_else(|e| panic!("{e}"));
            black_box(planner.plan("true"))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
