//! Test support: a loopback model service (raw frames in `server`, whole
//! answers in each wire format in `llm`) and the built binary in a
//! pseudo-terminal, its output or its screen as `vt100` parses it (`pty`).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod llm;
pub mod pty;
pub mod server;
pub mod world;

#[allow(unused_imports)]
pub use server::*;
