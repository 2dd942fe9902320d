//! The built binary run once, as a script runs it: in a test world's home,
//! in a project directory, with bytes (or nothing: `/dev/null`) on stdin,
//! its whole output collected.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::world::World;

/// `mino ARGS --cd PROJECT` in `world`'s home, `input` on stdin.
pub async fn mino_in(world: &World, project: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mino"));
    command
        .args(args)
        .arg("--cd")
        .arg(project)
        .current_dir(project)
        .env("MINO_HOME", world.home.path())
        .env("OPENAI_API_KEY", "test")
        .env("AGENT_YOLO", "")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let input = input.map(<[u8]>::to_vec);
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        if let Some(input) = input {
            child.stdin.take().unwrap().write_all(&input).unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// `mino_in` the world's own project.
pub async fn mino(world: &World, args: &[&str], input: Option<&[u8]>) -> Output {
    mino_in(world, world.project.path(), args, input).await
}
