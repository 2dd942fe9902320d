//! The suites of the integration tests, one file per concern. This module
//! only lists them.

mod acp;
mod agent_e2e;
mod asked;
mod bash_tool;
mod checkpoints;
mod context_budget;
mod decision_table;
mod dir_tools;
mod eval;
mod file_tools;
mod hardening;
mod layers;
mod line_mode;
mod mcp;
mod model_bounds;
mod policy_check;
mod protected_paths;
mod providers;
mod real_models;
mod redaction;
mod redirects;
mod sandbox;
mod sandbox_git;
mod sandbox_root;
mod sessions;
mod settings;
mod shell_gate;
mod shell_gate_git;
mod surfaces;
mod tui_answers;
mod tui_attention;
mod tui_demo;
mod tui_e2e;
mod tui_input;
mod tui_sessions;
