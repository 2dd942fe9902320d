//! The `search` tool against ripgrep (issue 23): one rare regular
//! expression over a large tree, the cache warm. The tree is
//! `MINO_BENCH_SEARCH_DIR` (default: cargo's registry sources,
//! `$CARGO_HOME/registry/src`), the pattern `MINO_BENCH_SEARCH_PATTERN`
//! (default `fn \w+_unchecked_mut\b`). Criterion times the tool's call
//! (`prepare` and `run`) and, when `rg` is on the PATH, `rg --hidden` as a
//! whole process on the same tree, the ratio of the two medians being the
//! figure. With `MINO_BENCH_SEARCH_ONCE=1` it instead runs the call once
//! and prints the result, so that the whole process can be timed against
//! `rg` from outside (`/usr/bin/time`, `hyperfine`).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use mino::tools::search::Search;
use mino::tools::{Project, Tool, ToolContext, ToolOutcome, ToolStatus};

const DEFAULT_PATTERN: &str = r"fn \w+_unchecked_mut\b";

fn tree() -> PathBuf {
    if let Some(dir) = std::env::var_os("MINO_BENCH_SEARCH_DIR") {
        return dir.into();
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .unwrap_or_else(|| panic!("set MINO_BENCH_SEARCH_DIR (no CARGO_HOME, no HOME)"));
    cargo_home.join("registry/src")
}

fn pattern() -> String {
    std::env::var("MINO_BENCH_SEARCH_PATTERN").unwrap_or_else(|_| DEFAULT_PATTERN.to_string())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn search(rt: &tokio::runtime::Runtime, cx: &ToolContext, pattern: &str) -> ToolOutcome {
    let call = Search
        .prepare(&json!({ "pattern": pattern, "max_results": 2000 }), cx)
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = rt.block_on(call.run(CancellationToken::new()));
    assert_eq!(outcome.status, ToolStatus::Completed, "{}", outcome.output);
    outcome
}

fn context() -> ToolContext {
    let dir = tree();
    let project = Project::new(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    ToolContext::new(project)
}

fn rg(dir: &PathBuf, pattern: &str) -> Option<Command> {
    let mut command = Command::new("rg");
    command
        .args(["--hidden", "--no-config", "-n", "--", pattern])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command.status().ok()?;
    Some(command)
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let cx = context();
    let pattern = pattern();
    eprintln!("tree {}, pattern /{pattern}/", cx.project.root().display());
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("mino", |b| {
        b.iter(|| black_box(search(&rt, &cx, &pattern)));
    });
    if let Some(mut command) = rg(&tree(), &pattern) {
        group.bench_function("rg", |b| {
            b.iter(|| black_box(command.status().unwrap_or_else(|e| panic!("rg: {e}"))));
        });
    } else {
        eprintln!("rg is not on the PATH: only mino is timed");
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if std::env::var_os("MINO_BENCH_SEARCH_ONCE").is_some() {
        let outcome = search(&runtime(), &context(), &pattern());
        print!("{}", outcome.output);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
