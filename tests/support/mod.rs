//! Test support: a loopback model service (raw frames in `server`, whole
//! answers in each wire format in `llm`) and the built binary in a
//! pseudo-terminal, its output or its screen as `vt100` parses it (`pty`;
//! started on the full screen as every such test does in `full_screen`),
//! and the records of a `stream-json` run (`stream`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod full_screen;
pub mod llm;
pub mod pty;
pub mod run;
pub mod server;
pub mod stream;
pub mod world;

#[allow(unused_imports)]
pub use server::*;

/// The name libtest knows `function` by in this binary, given the
/// `module_path!()` of the file that defines it; for a test that runs itself
/// again in a child process.
pub fn test_name(module: &str, function: &str) -> String {
    let path = module.split_once("::").map_or("", |(_, rest)| rest);
    format!("{path}::{function}")
}
