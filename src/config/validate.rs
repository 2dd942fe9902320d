//! From the user's raw file to validated settings: every value checked, every
//! error naming the file, the key, the line and what is accepted. Also the
//! checks a command-line value shares with a file's. Never reads a file or
//! the environment itself.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::Value as Json;

use super::error::{ConfigError, KeyPath};
use super::raw::{RawAgent, RawFile, RawModel, RawShellGate, RawTools};
use super::settings::{
    AskedAgent, JudgeSettings, MAX_TOKENS_FIELD_NAMES, MaxTokensField, ModelSettings,
    PROVIDER_NAMES, ProviderKind, Settings, ShellGateSettings, TrustedExecutable,
};
use super::source::SourceFile;
use crate::policy::{MODE_NAMES, Mode, ProtectedPaths};

pub const BASE_URL_ACCEPTED: &str = "an http:// or https:// URL such as https://api.openai.com/v1";
pub const MODEL_ACCEPTED: &str = "a non-empty model name such as gpt-5-mini";
pub(super) const ENV_NAME_ACCEPTED: &str =
    "an environment variable name: letters, digits and _, not starting with a digit";
const PATTERN_ACCEPTED: &str = "a glob: NAME for a file name, DIR/ for a directory anywhere, or a/b for a project-relative path";
pub(super) const ABSOLUTE_ACCEPTED: &str =
    "an absolute path without . or .. components, such as /usr/bin/git";
const NAME_ACCEPTED: &str = "of 1 to 64 letters, digits, - and _";

/// Applies the user's file to `settings` (which hold the defaults).
pub fn apply_user(settings: &mut Settings, src: &SourceFile) -> Result<(), ConfigError> {
    let raw: &RawFile = &src.raw;
    if let Some(mode) = start_mode(src, raw)? {
        settings.start_mode = mode;
    }
    if let Some(model) = &raw.model {
        settings.model = model_settings(src, model, &KeyPath::of(&["model"]))?;
    }
    if let Some(presets) = &raw.providers {
        settings.providers = super::providers::read(src, presets)?;
    }
    if let Some(tools) = &raw.tools {
        apply_tools(settings, tools);
        if let Some(value) = &tools.fetch_private_hosts {
            settings.tools.fetch_private_hosts_allowed = private_hosts(src, value)?;
        }
    }
    if let Some(checkpoints) = &raw.checkpoints {
        settings.checkpoints = super::limits::retention(src, checkpoints)?;
    }
    if let Some(limits) = &raw.limits {
        settings.limits = super::limits::limits_settings(src, limits)?;
    }
    if let Some(patterns) = raw.protected.as_ref().and_then(|p| p.patterns.as_ref()) {
        add_patterns(settings, src, patterns)?;
    }
    if let Some(gate) = &raw.shell_gate {
        settings.shell_gate = shell_gate_settings(src, gate)?;
    }
    if let Some(hooks) = &raw.hooks {
        settings.hooks = super::hooks::hook_settings(src, hooks, &mut settings.warnings)?;
    }
    if let Some(agents) = &raw.agents {
        settings.agents = asked_agents(src, agents)?;
    }
    if let Some(mcp) = &raw.mcp {
        settings.mcp_servers = super::mcp::servers(src, mcp)?;
    }
    if let Some(sandbox) = &raw.sandbox {
        settings.sandbox = super::sandbox::sandbox_settings(src, sandbox)?;
    }
    if let Some(ui) = &raw.ui {
        settings.ui = super::ui::ui_settings(src, ui)?;
    }
    if let Some(rules) = &raw.rules {
        let rules = super::rules::rules(src, rules, 1, None)?;
        settings.rules = std::sync::Arc::new(crate::policy::saved::SavedRules::new(rules));
    }
    if let Some(lsp) = &raw.lsp {
        settings.lsp = super::lsp::lsp_settings(src, lsp)?;
    }
    Ok(())
}

fn start_mode(src: &SourceFile, raw: &RawFile) -> Result<Option<Mode>, ConfigError> {
    let named = match &raw.default_mode {
        Some(name) => Some(name.parse::<Mode>().map_err(|e| {
            src.invalid(
                KeyPath::of(&["default_mode"]),
                format!("unknown permission mode {:?}", e.given),
                MODE_NAMES,
            )
        })?),
        None => None,
    };
    let yolo = raw
        .yolo
        .map(|yolo| if yolo { Mode::Bypass } else { Mode::Manual });
    match (named, raw.yolo) {
        (Some(mode), Some(yolo)) if (mode == Mode::Bypass) != yolo => Err(src.invalid(
            KeyPath::of(&["yolo"]),
            format!(
                "yolo = {yolo} disagrees with default_mode = {:?}",
                mode.name()
            ),
            "one of them, or both saying the same (yolo = true with default_mode = \"bypass\")",
        )),
        (Some(mode), _) => Ok(Some(mode)),
        (None, _) => Ok(yolo),
    }
}

/// An integer at `key` within `min..=max`.
pub(super) fn ranged(
    src: &SourceFile,
    key: KeyPath,
    value: i64,
    min: i64,
    max: i64,
    unit: &str,
) -> Result<u64, ConfigError> {
    if (min..=max).contains(&value) {
        Ok(value.unsigned_abs())
    } else {
        Err(src.invalid(
            key,
            format!("{value} is out of range"),
            format!("an integer from {min} to {max}{unit}"),
        ))
    }
}

/// A `[model]` table, or a preset's (`[providers.NAME]`) at `table`.
pub(super) fn model_settings(
    src: &SourceFile,
    raw: &RawModel,
    table: &KeyPath,
) -> Result<ModelSettings, ConfigError> {
    let key = |k: &str| table.key(k);
    let provider = match &raw.provider {
        Some(name) => name.parse::<ProviderKind>().map_err(|e| {
            src.invalid(
                key("provider"),
                format!("unknown provider {:?}", e.given),
                PROVIDER_NAMES,
            )
        })?,
        None => ProviderKind::OpenAiResponses,
    };
    let mut model = ModelSettings::defaults_for(provider);
    if let Some(url) = &raw.base_url {
        model.base_url = check_base_url(url)
            .map_err(|problem| src.invalid(key("base_url"), problem, BASE_URL_ACCEPTED))?;
    }
    if let Some(name) = &raw.model {
        model.model = check_model(name)
            .map_err(|problem| src.invalid(key("model"), problem, MODEL_ACCEPTED))?;
    }
    if raw.api_key.is_some() {
        // The value is never repeated: it may be a real key.
        return Err(src.invalid(
            key("api_key"),
            "a key is never kept in a settings file",
            format!(
                "api_key_env = \"{}\" (the name of the environment variable that holds the key; export the key in your shell)",
                raw.api_key_env
                    .clone()
                    .unwrap_or_else(|| provider.default_api_key_env().to_string())
            ),
        ));
    }
    if let Some(name) = &raw.api_key_env {
        if !is_env_name(name) {
            return Err(src.invalid(
                key("api_key_env"),
                format!("{name:?} is not an environment variable name"),
                ENV_NAME_ACCEPTED,
            ));
        }
        model.api_key_env = name.clone();
    }
    if let Some(tokens) = raw.context_window {
        model.context_window_set = true;
        model.context_window = ranged(
            src,
            key("context_window"),
            tokens,
            1,
            100_000_000,
            " tokens",
        )?;
    }
    if let Some(name) = &raw.profile {
        model.profile = Some(super::Profile::from_name(name).ok_or_else(|| {
            src.invalid(
                key("profile"),
                format!("{name:?} is not a profile mino knows"),
                super::PROFILE_NAMES,
            )
        })?);
    }
    if let Some(table) = &raw.extra_body {
        model.extra_body = json_object(src, &key("extra_body"), table)?;
    }
    if let Some(script) = &raw.script {
        if script.trim().is_empty() {
            return Err(src.invalid(key("script"), "an empty path", SCRIPT_ACCEPTED));
        }
        model.script = Some(src.dir().join(script));
    }
    if let Some(secs) = raw.request_timeout_secs {
        model.request_timeout = Duration::from_secs(ranged(
            src,
            key("request_timeout_secs"),
            secs,
            1,
            3600,
            " seconds",
        )?);
    }
    if let Some(secs) = raw.first_byte_timeout_secs {
        model.first_byte_timeout = Some(Duration::from_secs(ranged(
            src,
            key("first_byte_timeout_secs"),
            secs,
            1,
            3600,
            " seconds",
        )?));
    }
    let bounds = [
        (
            raw.stall_min_bytes,
            "stall_min_bytes",
            1,
            1 << 20,
            &mut model.stall_min_bytes,
        ),
        (
            raw.max_response_text_bytes,
            "max_response_text_bytes",
            1024,
            1 << 30,
            &mut model.max_response_text_bytes,
        ),
        (
            raw.max_tool_calls,
            "max_tool_calls",
            1,
            4096,
            &mut model.max_tool_calls,
        ),
        (
            raw.max_tool_argument_bytes,
            "max_tool_argument_bytes",
            1024,
            1 << 30,
            &mut model.max_tool_argument_bytes,
        ),
    ];
    for (value, name, min, max, field) in bounds {
        if let Some(value) = value {
            *field = ranged(src, key(name), value, min, max, "")?;
        }
    }
    if let Some(tokens) = raw.max_output_tokens {
        model.max_output_tokens = Some(output_tokens(src, key("max_output_tokens"), tokens)?);
    }
    if let Some(name) = &raw.max_tokens_field {
        model.max_tokens_field = Some(MaxTokensField::from_name(name).ok_or_else(|| {
            src.invalid(
                key("max_tokens_field"),
                format!("{name:?} is not a field name mino knows"),
                MAX_TOKENS_FIELD_NAMES,
            )
        })?);
    }
    if let Some(table) = &raw.first_request_extra_body {
        model.first_request_extra_body = json_object(src, &key("first_request_extra_body"), table)?;
    }
    if let Some(compaction) = &raw.compaction {
        let key = |k: &str| table.key("compaction").key(k);
        if let Some(table) = &compaction.extra_body {
            model.compaction.extra_body = json_object(src, &key("extra_body"), table)?;
        }
        if let Some(tokens) = compaction.max_output_tokens {
            model.compaction.max_output_tokens =
                Some(output_tokens(src, key("max_output_tokens"), tokens)?);
        }
    }
    if let Some(retries) = raw.max_retries {
        model.max_retries =
            u32::try_from(ranged(src, key("max_retries"), retries, 0, 10, "")?).unwrap_or(10);
    }
    super::models::read(src, raw, table, &mut model.choices)?;
    if provider == ProviderKind::Scripted && model.script.is_none() {
        return Err(src.invalid(
            key("script"),
            format!("missing, and required when {table}.provider = \"scripted\""),
            SCRIPT_ACCEPTED,
        ));
    }
    Ok(model)
}

fn output_tokens(src: &SourceFile, key: KeyPath, tokens: i64) -> Result<u32, ConfigError> {
    let tokens = ranged(src, key, tokens, 1, 1_000_000, " tokens")?;
    Ok(u32::try_from(tokens).unwrap_or(1_000_000))
}

pub const SCRIPT_ACCEPTED: &str =
    "a path to a script file, absolute or relative to the file that names it";

/// A base URL, without a trailing `/`, or what is wrong with it.
pub fn check_base_url(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{url:?} uses the scheme {:?}", parsed.scheme()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("{url:?} has no host"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// A model name, or what is wrong with it.
pub fn check_model(name: &str) -> Result<String, String> {
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        Err(format!("{name:?} is not a model name"))
    } else {
        Ok(name.to_string())
    }
}

pub(super) fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A TOML table as a JSON object, for request bodies.
fn json_object(
    src: &SourceFile,
    key: &KeyPath,
    table: &toml::Table,
) -> Result<serde_json::Map<String, Json>, ConfigError> {
    table
        .iter()
        .map(|(k, v)| Ok((k.clone(), json_value(src, &key.key(k), v)?)))
        .collect()
}

fn json_value(src: &SourceFile, key: &KeyPath, value: &toml::Value) -> Result<Json, ConfigError> {
    Ok(match value {
        toml::Value::String(s) => Json::String(s.clone()),
        toml::Value::Integer(i) => Json::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .ok_or_else(|| {
                src.invalid(
                    key.clone(),
                    format!("{f} cannot be sent as JSON"),
                    "a finite number",
                )
            })?,
        toml::Value::Boolean(b) => Json::Bool(*b),
        toml::Value::Datetime(d) => Json::String(d.to_string()),
        toml::Value::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| json_value(src, &key.index(i), item))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(table) => Json::Object(json_object(src, key, table)?),
    })
}

/// `[tools] fetch_private_hosts`: `ask` (the default) or `allow`.
pub(super) fn private_hosts(src: &SourceFile, value: &str) -> Result<bool, ConfigError> {
    match value {
        "ask" => Ok(false),
        "allow" => Ok(true),
        other => Err(src.invalid(
            KeyPath::of(&["tools", "fetch_private_hosts"]),
            format!("{other:?} is not a choice"),
            "\"ask\" (a fetch to a loopback, link-local or private address asks in every mode) or \"allow\" (decided like any other fetch)",
        )),
    }
}

fn apply_tools(settings: &mut Settings, raw: &RawTools) {
    let tools = &mut settings.tools;
    tools.bash = raw.bash.unwrap_or(tools.bash);
    tools.edit = raw.edit.unwrap_or(tools.edit);
    tools.fetch = raw.fetch.unwrap_or(tools.fetch);
    tools.plan = raw.plan.unwrap_or(tools.plan);
    tools.lsp = raw.lsp.unwrap_or(tools.lsp);
}

/// Checks each of `patterns` and adds the new ones to `settings`.
pub fn add_patterns(
    settings: &mut Settings,
    src: &SourceFile,
    patterns: &[String],
) -> Result<(), ConfigError> {
    for (index, pattern) in patterns.iter().enumerate() {
        if let Err(e) = ProtectedPaths::new(&[pattern]) {
            return Err(src.invalid(
                KeyPath::of(&["protected", "patterns"]).index(index),
                e.to_string(),
                PATTERN_ACCEPTED,
            ));
        }
        let pattern = pattern.trim().to_string();
        if !settings.protected_patterns.contains(&pattern) {
            settings.protected_patterns.push(pattern);
        }
    }
    settings.protected = ProtectedPaths::new(&settings.protected_patterns).map_err(|e| {
        src.invalid(
            KeyPath::of(&["protected", "patterns"]),
            e.to_string(),
            PATTERN_ACCEPTED,
        )
    })?;
    Ok(())
}

/// `path` if it is absolute and plain, or what is wrong with it.
pub(super) fn absolute(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(format!("{path:?} is not an absolute path"));
    }
    if p.components()
        .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
    {
        return Err(format!("{path:?} has . or .. components"));
    }
    Ok(p.to_path_buf())
}

fn shell_gate_settings(
    src: &SourceFile,
    raw: &RawShellGate,
) -> Result<ShellGateSettings, ConfigError> {
    let mut gate = ShellGateSettings::default();
    let list = KeyPath::of(&["shell_gate", "trusted_executables"]);
    for (index, entry) in raw.trusted_executables.iter().flatten().enumerate() {
        let key = list.index(index);
        let path = absolute(&entry.path)
            .map_err(|p| src.invalid(key.key("path"), p, ABSOLUTE_ACCEPTED))?;
        let sha256 = match &entry.sha256 {
            Some(hex) if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                Some(hex.to_ascii_lowercase())
            }
            Some(hex) => {
                return Err(src.invalid(
                    key.key("sha256"),
                    format!("{hex:?} is not a SHA-256 digest"),
                    "64 hexadecimal digits",
                ));
            }
            None => None,
        };
        gate.trusted_executables
            .push(TrustedExecutable { path, sha256 });
    }
    if let Some(git) = &raw.git {
        gate.git =
            Some(absolute(git).map_err(|p| {
                src.invalid(KeyPath::of(&["shell_gate", "git"]), p, ABSOLUTE_ACCEPTED)
            })?);
    }
    if let Some(guard) = raw.guard_bypass {
        gate.guard_bypass = guard;
    }
    if let Some(judge) = &raw.judge {
        let key = KeyPath::of(&["shell_gate", "judge", "timeout_secs"]);
        gate.judge = JudgeSettings {
            enabled: judge.enabled.unwrap_or(false),
            timeout: match judge.timeout_secs {
                Some(secs) => Duration::from_secs(ranged(src, key, secs, 1, 120, " seconds")?),
                None => JudgeSettings::default().timeout,
            },
        };
        if gate.judge.enabled && gate.git.is_none() {
            return Err(src.invalid(
                KeyPath::of(&["shell_gate", "judge", "enabled"]),
                "the judge only considers requests to the configured git, and shell_gate.git is not set",
                "enabled = false, or shell_gate.git = an absolute path such as /usr/bin/git",
            ));
        }
    }
    Ok(gate)
}

fn asked_agents(
    src: &SourceFile,
    raw: &BTreeMap<String, RawAgent>,
) -> Result<BTreeMap<String, AskedAgent>, ConfigError> {
    let mut agents = BTreeMap::new();
    for (name, entry) in raw {
        let key = KeyPath::of(&["agents", name]);
        check_name(src, &key, name, "an agent name")?;
        let config = match entry.config.as_deref().map(str::trim) {
            Some(path) if !path.is_empty() => PathBuf::from(path),
            Some(_) | None => {
                return Err(src.invalid(
                    key.key("config"),
                    "missing or empty",
                    "the path of that agent's own settings file (relative to this file's directory)",
                ));
            }
        };
        let config = if config.is_absolute() {
            config
        } else {
            src.path
                .parent()
                .map_or(config.clone(), |dir| dir.join(&config))
        };
        agents.insert(
            name.clone(),
            AskedAgent {
                config,
                yolo: entry.yolo,
            },
        );
    }
    Ok(agents)
}

pub fn check_server_name(src: &SourceFile, key: &KeyPath, name: &str) -> Result<(), ConfigError> {
    check_name(src, key, name, "a server name")
}

/// A name used as a table key and in messages: an MCP server's, or an
/// asked agent's (which also becomes `/ask-NAME` and `NAME/tool`).
pub(super) fn check_name(
    src: &SourceFile,
    key: &KeyPath,
    name: &str,
    what: &str,
) -> Result<(), ConfigError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(src.invalid(
            key.clone(),
            format!("{name:?} is not {what}"),
            format!("{what} {NAME_ACCEPTED}"),
        ))
    }
}
