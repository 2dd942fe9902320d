//! The first stage of settings: serde structs exactly as a `config.toml` is
//! written, every key optional (but a trusted executable's `path`) and every
//! table closed to unknown keys. Values are kept as TOML gives them (strings,
//! integers); nothing here checks a value's meaning or applies a default:
//! `validate.rs` does.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One settings file: the user's `config.toml` or a project's
/// `.mino/config.toml` (which `project.rs` restricts further).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub default_mode: Option<String>,
    pub yolo: Option<bool>,
    pub model: Option<RawModel>,
    /// `[providers.NAME]`: provider presets `/model` switches to, each
    /// with the keys of `[model]`.
    pub providers: Option<BTreeMap<String, RawModel>>,
    pub tools: Option<RawTools>,
    pub limits: Option<RawLimits>,
    pub protected: Option<RawProtected>,
    pub shell_gate: Option<RawShellGate>,
    pub hooks: Option<RawHooks>,
    pub mcp: Option<RawMcp>,
    pub agents: Option<BTreeMap<String, RawAgent>>,
    pub sandbox: Option<RawSandbox>,
    pub ui: Option<RawUi>,
    pub checkpoints: Option<RawCheckpoints>,
    pub rules: Option<Vec<RawRule>>,
    /// `[lsp]`: `diagnostics_after_edit` and one `[lsp.NAME]` table per
    /// language server, told apart by `config/lsp.rs` (one table holds
    /// both kinds of key).
    pub lsp: Option<BTreeMap<String, toml::Value>>,
}

/// One `[[rules]]` entry: a tool, at most one matcher, a decision, and
/// the examples mino checks it against at load.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub tool: Option<String>,
    pub command: Option<Vec<String>>,
    pub path: Option<Vec<String>>,
    pub url: Option<String>,
    pub decision: Option<String>,
    pub reason: Option<String>,
    #[serde(rename = "match")]
    pub match_examples: Option<Vec<String>>,
    pub not_match: Option<Vec<String>>,
}

/// `[lsp.NAME]`: a language server mino starts for files of its extensions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLspServer {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub extensions: Option<Vec<String>>,
    pub root_markers: Option<Vec<String>>,
    pub initialization_options: Option<toml::Table>,
}

/// `[checkpoints]`: how much of the undo history mino's home keeps.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheckpoints {
    pub keep_per_session: Option<i64>,
    pub max_age_days: Option<i64>,
    pub max_size_mib: Option<i64>,
}

/// `[ui]`: the full screen's manners towards the terminal.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUi {
    pub notify: Option<String>,
    pub mouse: Option<bool>,
}

/// `[model]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModel {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    /// Never accepted: read only to refuse it with the way that works.
    pub api_key: Option<toml::Value>,
    pub context_window: Option<i64>,
    pub profile: Option<String>,
    pub extra_body: Option<toml::Table>,
    pub script: Option<String>,
    pub request_timeout_secs: Option<i64>,
    pub first_byte_timeout_secs: Option<i64>,
    pub stall_min_bytes: Option<i64>,
    pub max_response_text_bytes: Option<i64>,
    pub max_tool_calls: Option<i64>,
    pub max_tool_argument_bytes: Option<i64>,
    pub max_retries: Option<i64>,
    pub max_output_tokens: Option<i64>,
    pub max_tokens_field: Option<String>,
    pub first_request_extra_body: Option<toml::Table>,
    pub compaction: Option<RawCompaction>,
    /// Other models `/model` offers for the session.
    pub models: Option<Vec<String>>,
    /// `[model.prices.NAME]`: US dollars per million tokens.
    pub prices: Option<BTreeMap<String, RawPrice>>,
}

/// `[model.prices.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrice {
    pub input: Option<f64>,
    pub output: Option<f64>,
}

/// `[model.compaction]`: what compaction requests carry instead of
/// `extra_body`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCompaction {
    pub extra_body: Option<toml::Table>,
    pub max_output_tokens: Option<i64>,
}

/// `[tools]`: whether each tool exists at all (not whether it asks).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTools {
    pub bash: Option<bool>,
    pub edit: Option<bool>,
    pub fetch: Option<bool>,
    pub plan: Option<bool>,
    pub lsp: Option<bool>,
    pub fetch_private_hosts: Option<String>,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub bash_timeout_secs: Option<i64>,
    pub bash_output_bytes: Option<i64>,
    pub turn_requests: Option<i64>,
    pub turn_tool_calls: Option<i64>,
    pub prompt_bytes: Option<i64>,
    pub background_shells: Option<i64>,
}

/// `[protected]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProtected {
    pub patterns: Option<Vec<String>>,
}

/// `[shell_gate]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShellGate {
    pub trusted_executables: Option<Vec<RawTrustedExecutable>>,
    pub git: Option<String>,
    pub judge: Option<RawJudge>,
    pub guard_bypass: Option<bool>,
}

/// One entry of `shell_gate.trusted_executables`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrustedExecutable {
    pub path: String,
    pub sha256: Option<String>,
}

/// `[shell_gate.judge]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawJudge {
    pub enabled: Option<bool>,
    pub timeout_secs: Option<i64>,
}

/// `[hooks]`: the deprecated `pre_tool_call` argv, and one array of
/// `[[hooks.EVENT]]` tables per Claude Code event mino tells.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    pub pre_tool_call: Option<Vec<String>>,
    #[serde(rename = "PreToolUse")]
    pub pre_tool_use: Option<Vec<RawHookGroup>>,
    #[serde(rename = "PostToolUse")]
    pub post_tool_use: Option<Vec<RawHookGroup>>,
    #[serde(rename = "UserPromptSubmit")]
    pub user_prompt_submit: Option<Vec<RawHookGroup>>,
    #[serde(rename = "SessionStart")]
    pub session_start: Option<Vec<RawHookGroup>>,
    #[serde(rename = "SessionEnd")]
    pub session_end: Option<Vec<RawHookGroup>>,
    #[serde(rename = "Stop")]
    pub stop: Option<Vec<RawHookGroup>>,
    #[serde(rename = "PreCompact")]
    pub pre_compact: Option<Vec<RawHookGroup>>,
    #[serde(rename = "Notification")]
    pub notification: Option<Vec<RawHookGroup>>,
    #[serde(rename = "PermissionRequest")]
    pub permission_request: Option<Vec<RawHookGroup>>,
}

/// One `[[hooks.EVENT]]` table: a matcher and its commands.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHookGroup {
    pub matcher: Option<String>,
    pub hooks: Option<Vec<RawHookCommand>>,
}

/// One entry of a group's `hooks`: `{ type = "command", command, timeout }`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHookCommand {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    pub timeout: Option<i64>,
}

/// `[mcp]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    pub servers: Option<BTreeMap<String, RawMcpServer>>,
}

/// `[mcp.servers.NAME]`. `command` is optional here because a project file
/// may name a user's server only to mark it `ask`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcpServer {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub enabled: Option<bool>,
    pub trust: Option<String>,
    pub trust_annotations: Option<bool>,
    pub startup_timeout_secs: Option<i64>,
    pub tool_timeout_secs: Option<i64>,
}

/// `[agents.NAME]`: another agent this one can ask (`/ask-NAME`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    pub config: Option<String>,
    pub yolo: Option<bool>,
}

/// `[sandbox]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSandbox {
    pub enabled: Option<bool>,
    pub namespaces: Option<bool>,
    pub network: Option<String>,
    pub required: Option<bool>,
    pub unsandboxed_in_bypass: Option<String>,
    pub writable: Option<Vec<String>>,
    pub toolchains: Option<Vec<String>>,
    pub caches: Option<Vec<String>>,
    pub pass_env: Option<Vec<String>>,
    pub allow_private: Option<Vec<String>>,
    pub allowed_domains: Option<Vec<String>>,
    pub publish: Option<Vec<i64>>,
}
