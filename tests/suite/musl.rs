//! The static `x86_64-unknown-linux-musl` build, made once for the suite
//! (`scripts/test` builds it before the tests, and the test asks cargo
//! again, which does nothing when it is fresh; `scripts/test-deps` installs
//! the target and musl's C compiler) and run: it is one static file, it
//! says its version, the demo draws its first frame in a pseudo-terminal,
//! and a bash call runs in the sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tempfile::TempDir;

use super::sandbox::{KEY, Setup, bash, stderr};
use crate::support::llm::text;
use crate::support::pty::Screen;
use crate::support::stream::{outputs, records};

const TARGET: &str = "x86_64-unknown-linux-musl";

/// The musl binary, built (or found fresh) once per test run.
fn musl_mino() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        // The host binary is TARGET_DIR/debug/mino.
        let target_dir = Path::new(env!("CARGO_BIN_EXE_mino"))
            .parent()
            .and_then(Path::parent)
            .unwrap()
            .to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["build", "--locked", "--bin", "mino", "--target", TARGET])
            .arg("--target-dir")
            .arg(&target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "building the {TARGET} binary failed (scripts/test-deps installs the target and musl-gcc):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target_dir.join(TARGET).join("debug/mino")
    })
}

/// Whether the ELF file at `path` has a PT_INTERP program header, that
/// is, names a dynamic loader (a static or static-pie binary has none).
fn needs_a_loader(path: &Path) -> bool {
    use std::io::Read;
    let mut head = vec![0u8; 64 * 1024];
    let mut file = std::fs::File::open(path).unwrap();
    let read = file.read(&mut head).unwrap();
    let head = &head[..read];
    assert_eq!(
        &head[..4],
        b"\x7fELF",
        "{} is not an ELF file",
        path.display()
    );
    let u16_at = |at: usize| u16::from_le_bytes(head[at..at + 2].try_into().unwrap()) as usize;
    let phoff = u64::from_le_bytes(head[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(head[at..at + 4].try_into().unwrap()) == 3
    })
}

#[test]
fn the_musl_binary_is_static_and_says_its_version() {
    let mino = musl_mino();
    assert!(
        !needs_a_loader(mino),
        "{} names a dynamic loader: it is not static",
        mino.display()
    );
    assert!(needs_a_loader(Path::new(env!("CARGO_BIN_EXE_mino"))));
    let out = Command::new(mino).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mino {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = Command::new(mino).arg("-vV").output().unwrap();
    let verbose = String::from_utf8_lossy(&out.stdout);
    assert!(verbose.contains("target_env musl"), "{verbose}");
}

#[test]
fn the_musl_demo_draws_its_first_frame() {
    let mino = musl_mino();
    let (home, temp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let env = [
        ("TERM", "xterm-256color"),
        ("AGENT_YOLO", ""),
        ("MINO_HOME", home.path().to_str().unwrap()),
        ("TMPDIR", temp.path().to_str().unwrap()),
    ];
    let mut screen = Screen::spawn(mino.to_str().unwrap(), &["--demo"], temp.path(), &env);
    screen.wait_for_all(&["Use /mode to change it.", " MANUAL "]);
    screen.send(&[0x04]);
    let (code, _) = screen.wait_exit();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_musl_binary_runs_bash_in_the_sandbox() {
    let mino = musl_mino().to_path_buf();
    let b = Setup::new(
        vec![
            bash("cat .env; echo made > inside.txt; echo x > ~/outside.txt; echo end"),
            text("done"),
        ],
        "",
    )
    .await;
    let mut command = Command::new(mino);
    command
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--yolo",
            "--cd",
        ])
        .arg(b.project())
        .current_dir(b.project())
        .env("HOME", b.home())
        .env("MINO_HOME", b.mino_home())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("AGENT_YOLO")
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let results = outputs(&records(&out.stdout));
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains(".env masked by the sandbox"),
        "{}",
        results[0]
    );
    assert!(results[0].contains("end"), "{}", results[0]);
    assert_eq!(
        std::fs::read_to_string(b.project().join("inside.txt")).unwrap(),
        "made\n"
    );
    assert!(!b.home().join("outside.txt").exists(), "{}", results[0]);
    assert!(
        stderr(&out).contains("Sandbox: \"project writable, secrets masked, network via proxy\""),
        "{}",
        stderr(&out)
    );
}
