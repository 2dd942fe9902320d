//! mino: a full-screen terminal coding agent whose every tool call goes
//! through one decision (allow, ask, deny) made from facts the program
//! established itself.

pub mod agent;
pub mod checkpoint;
pub mod config;
pub mod controls;
pub mod demo;
pub mod eval;
pub mod frontend;
pub mod home;
pub mod logging;
pub mod lsp;
pub mod mcp;
pub mod model;
pub mod policy;
pub mod process_guard;
pub mod prompt_history;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod small_file;
pub mod tools;
