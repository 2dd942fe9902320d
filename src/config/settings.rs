//! The second stage of settings: validated, typed values with their built-in
//! defaults (DESIGN sections 3, 9 and 11). Everything here is already checked;
//! nothing here reads a file or the environment.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde_json::Value;

use crate::policy::{Mode, ProtectedPaths};
use crate::sandbox::SandboxSettings;

/// The wire format a model service speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    OpenAiResponses,
    OpenAiChat,
    Anthropic,
    /// Plays a script file; used by the demo and by tests.
    Scripted,
}

/// The names `model.provider` and `--provider` accept.
pub const PROVIDER_NAMES: &str = "openai-responses, openai-chat, anthropic, scripted";

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::OpenAiResponses,
        ProviderKind::OpenAiChat,
        ProviderKind::Anthropic,
        ProviderKind::Scripted,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::OpenAiChat => "openai-chat",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Scripted => "scripted",
        }
    }

    /// The base URL used when the settings give none.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
            _ => "https://api.openai.com/v1",
        }
    }

    /// The variable holding the API key when the settings name none.
    pub fn default_api_key_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            _ => "OPENAI_API_KEY",
        }
    }

    /// The model used when the settings name none.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            _ => "gpt-5-mini",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown provider name; its text says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {given:?}; accepted: {PROVIDER_NAMES}")]
pub struct UnknownProvider {
    pub given: String,
}

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| UnknownProvider {
                given: s.to_string(),
            })
    }
}

/// `[model]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub provider: ProviderKind,
    /// An http(s) URL.
    pub base_url: String,
    pub model: String,
    /// The name of the environment variable that holds the API key (never
    /// the key itself).
    pub api_key_env: String,
    /// Tokens.
    pub context_window: u64,
    /// `context_window` was written in a settings file (else it is the
    /// default, or the built-in table's for a well-known hosted model).
    pub context_window_set: bool,
    /// `profile`; `None`: chosen by the window (`config::profile`).
    pub profile: Option<super::Profile>,
    /// Extra fields merged into every request body.
    pub extra_body: serde_json::Map<String, Value>,
    /// The script a `scripted` provider plays, resolved against the file
    /// that named it. Always present when the provider is `scripted`.
    pub script: Option<PathBuf>,
    /// How long a request may wait for its next byte once the answer began.
    pub request_timeout: Duration,
    /// How long a request may wait for the first byte of its answer; `None`
    /// is the default for the service's address (see `first_byte_timeout`).
    pub first_byte_timeout: Option<Duration>,
    /// Once the answer began, fewer bytes than this in any window of
    /// `request_timeout` is a stall.
    pub stall_min_bytes: u64,
    /// What one response may send: bytes of text, tool calls, bytes of one
    /// call's arguments.
    pub max_response_text_bytes: u64,
    pub max_tool_calls: u64,
    pub max_tool_argument_bytes: u64,
    /// Retries for 429 and 5xx before the first byte.
    pub max_retries: u32,
    /// The output cap of a turn's requests; `None` is the default (see
    /// `max_output_tokens`).
    pub max_output_tokens: Option<u32>,
    /// Which field an `openai-chat` request's output cap goes in; `None` is
    /// the default for the service's address (see `max_tokens_field`).
    pub max_tokens_field: Option<MaxTokensField>,
    /// Extra fields for the first request of a turn only.
    pub first_request_extra_body: serde_json::Map<String, Value>,
    /// `[model.compaction]`.
    pub compaction: CompactionSettings,
    /// `[model] models` and `[model.prices.NAME]`.
    pub choices: super::models::ModelChoices,
}

/// `[model.compaction]`: compaction requests carry these instead of
/// `extra_body`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactionSettings {
    pub extra_body: serde_json::Map<String, Value>,
    pub max_output_tokens: Option<u32>,
}

/// The first-byte timeout for a loopback service (a local server reads a
/// long prompt on a CPU first) and for any other.
pub const FIRST_BYTE_TIMEOUT_LOOPBACK: Duration = Duration::from_secs(300);
pub const FIRST_BYTE_TIMEOUT_REMOTE: Duration = Duration::from_secs(60);
/// The output cap is at most this many tokens by default.
pub const MAX_OUTPUT_TOKENS_DEFAULT: u32 = 4096;

impl ModelSettings {
    /// The built-in settings for `provider`.
    pub fn defaults_for(provider: ProviderKind) -> Self {
        Self {
            provider,
            base_url: provider.default_base_url().to_string(),
            model: provider.default_model().to_string(),
            api_key_env: provider.default_api_key_env().to_string(),
            context_window: DEFAULT_CONTEXT_WINDOW,
            context_window_set: false,
            profile: None,
            extra_body: serde_json::Map::new(),
            script: None,
            request_timeout: Duration::from_secs(60),
            first_byte_timeout: None,
            stall_min_bytes: 64,
            max_response_text_bytes: 8 << 20,
            max_tool_calls: 64,
            max_tool_argument_bytes: 1 << 20,
            max_retries: 3,
            max_output_tokens: None,
            max_tokens_field: None,
            first_request_extra_body: serde_json::Map::new(),
            compaction: CompactionSettings::default(),
            choices: Default::default(),
        }
    }

    /// The first-byte timeout in force: the setting, else 300 s for a
    /// loopback service and 60 s for any other.
    pub fn first_byte_timeout(&self) -> Duration {
        self.first_byte_timeout.unwrap_or_else(|| {
            if is_loopback_url(&self.base_url) {
                FIRST_BYTE_TIMEOUT_LOOPBACK
            } else {
                FIRST_BYTE_TIMEOUT_REMOTE
            }
        })
    }

    /// The output cap's field for `openai-chat` in force: the setting, else
    /// the default for `base_url`.
    pub fn max_tokens_field(&self) -> MaxTokensField {
        self.max_tokens_field
            .unwrap_or_else(|| MaxTokensField::for_base_url(&self.base_url))
    }

    /// The output cap in force: the setting, else the smaller of 4,096 and
    /// a quarter of the context window.
    pub fn max_output_tokens(&self) -> u32 {
        self.max_output_tokens.unwrap_or_else(|| {
            let quarter = u32::try_from(self.context_window / 4).unwrap_or(u32::MAX);
            MAX_OUTPUT_TOKENS_DEFAULT.min(quarter.max(1))
        })
    }
}

/// Whether `url` names a loopback host (127.0.0.0/8, ::1, localhost).
pub fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The field an `openai-chat` request's output cap goes in: OpenAI's own
/// service refuses `max_tokens` for its current models and wants
/// `max_completion_tokens`; llama.cpp, Ollama and vLLM read `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxCompletionTokens,
    MaxTokens,
}

/// The values `model.max_tokens_field` accepts.
pub const MAX_TOKENS_FIELD_NAMES: &str = "\"max_completion_tokens\", \"max_tokens\"";

impl MaxTokensField {
    /// The setting's word, which is also the body's field name.
    pub fn as_str(self) -> &'static str {
        match self {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        }
    }

    /// Reads the setting's word.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "max_completion_tokens" => Some(MaxTokensField::MaxCompletionTokens),
            "max_tokens" => Some(MaxTokensField::MaxTokens),
            _ => None,
        }
    }

    /// The default for a service at `base_url`: `max_completion_tokens` for
    /// OpenAI's own host (`api.openai.com`), `max_tokens` for any other.
    pub fn for_base_url(base_url: &str) -> Self {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        match host.as_deref().map(|h| h.trim_end_matches('.')) {
            Some("api.openai.com") => MaxTokensField::MaxCompletionTokens,
            _ => MaxTokensField::MaxTokens,
        }
    }
}

/// The context window when the model's settings give none.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// `[tools]`: whether each tool is offered to the model at all. Asking is a
/// separate matter (the mode's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSwitches {
    pub bash: bool,
    /// write_file and edit_file.
    pub edit: bool,
    /// fetch_content.
    pub fetch: bool,
    /// plan (the session's step list).
    pub plan: bool,
    /// lsp (language servers' navigation and rename).
    pub lsp: bool,
    /// `fetch_private_hosts = "allow"` (user settings only).
    pub fetch_private_hosts_allowed: bool,
}

impl Default for ToolSwitches {
    fn default() -> Self {
        Self {
            bash: true,
            edit: true,
            fetch: true,
            plan: true,
            lsp: true,
            fetch_private_hosts_allowed: false,
        }
    }
}

/// How many background processes a session runs at once by default.
pub const DEFAULT_BACKGROUND_SHELLS: usize = 4;

/// `[limits]` (DESIGN section 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSettings {
    pub bash_timeout: Duration,
    pub bash_output_bytes: usize,
    /// Model requests per turn.
    pub turn_requests: u32,
    /// Tool calls per turn, denied ones counted.
    pub turn_tool_calls: u32,
    /// The largest prompt accepted, in bytes (a person's or an editor's,
    /// embedded resources included).
    pub prompt_bytes: usize,
    /// Background processes (`bash` with `background: true`) a session
    /// runs at once.
    pub background_shells: usize,
}

impl Default for LimitSettings {
    fn default() -> Self {
        Self {
            bash_timeout: Duration::from_secs(30),
            bash_output_bytes: 64 * 1024,
            turn_requests: 8,
            turn_tool_calls: 16,
            prompt_bytes: 1 << 20,
            background_shells: DEFAULT_BACKGROUND_SHELLS,
        }
    }
}

/// One executable the shell gate may treat as safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedExecutable {
    /// Absolute.
    pub path: PathBuf,
    /// Lowercase hex SHA-256 the file must match, when given.
    pub sha256: Option<String>,
}

/// `[shell_gate.judge]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JudgeSettings {
    pub enabled: bool,
    pub timeout: Duration,
}

impl Default for JudgeSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            timeout: Duration::from_secs(10),
        }
    }
}

/// `[shell_gate]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellGateSettings {
    pub trusted_executables: Vec<TrustedExecutable>,
    /// The exact git path a judge may consider; none means no request is
    /// judge-eligible.
    pub git: Option<PathBuf>,
    pub judge: JudgeSettings,
    /// The catastrophic subset asks even in bypass mode.
    pub guard_bypass: bool,
}

impl Default for ShellGateSettings {
    fn default() -> Self {
        Self {
            trusted_executables: Vec::new(),
            git: None,
            judge: JudgeSettings::default(),
            guard_bypass: true,
        }
    }
}

/// `[mcp.servers.NAME]`: a server mino starts as a child process and talks
/// to on its stdin and stdout (`command`), or one it reaches over
/// streamable HTTP (`url`); exactly one of the two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Empty for a server given by `url`.
    pub command: String,
    pub args: Vec<String>,
    /// Variables set for the server. A value is a literal or a reference
    /// (`$NAME`, `${NAME}`) to a variable of mino's environment; either way a
    /// credential, never shown, logged, sent or saved.
    pub env: BTreeMap<String, EnvValue>,
    /// The server's working directory (absolute); the project's when unset.
    pub cwd: Option<PathBuf>,
    /// A streamable-HTTP server's address (http or https).
    pub url: Option<String>,
    /// Headers sent with every request to `url`, valued like `env`: each a
    /// credential, never shown, logged, sent or saved.
    pub headers: BTreeMap<String, EnvValue>,
    /// `enabled = false`: not started, its tools not offered.
    pub enabled: bool,
    /// Marked `ask`: every call asks, in every mode.
    pub trust_ask: bool,
    /// `trust_annotations = true` (user settings only): the server's claim
    /// that a tool only reads lets the call run where a file edit would.
    pub trust_annotations: bool,
    /// How long starting (the `initialize` handshake and the first tool list) may take.
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    pub tool_timeout: Duration,
}

impl Default for McpServer {
    fn default() -> Self {
        Self {
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            trust_ask: false,
            trust_annotations: false,
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(120),
        }
    }
}

/// One value of a server's `env`.
#[derive(Clone, PartialEq, Eq)]
pub enum EnvValue {
    Literal(String),
    /// `$NAME` or `${NAME}`: read from mino's environment when the server starts.
    Variable(String),
}

impl std::fmt::Debug for EnvValue {
    /// A literal is a credential: `Debug` never prints it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnvValue::Literal(_) => f.write_str("Literal(<redacted>)"),
            EnvValue::Variable(name) => write!(f, "Variable(${name})"),
        }
    }
}

/// `[agents.NAME]`: an agent this one can ask. Its calls are decided by this
/// agent's settings, never by its own file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedAgent {
    /// That agent's own settings file (its model, its tools).
    pub config: PathBuf,
    /// When set, decides that agent's calls instead of this agent's mode:
    /// `true` runs them, `false` asks for each one.
    pub yolo: Option<bool>,
}

/// Validated settings, built once before anything uses them.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The mode every new session starts in.
    pub start_mode: Mode,
    pub model: ModelSettings,
    /// `[providers.NAME]`, from the user's settings only: the services
    /// `/model PRESET` switches a session to.
    pub providers: BTreeMap<String, ModelSettings>,
    pub tools: ToolSwitches,
    pub limits: LimitSettings,
    /// The user's and the project's added patterns, built-ins excluded.
    pub protected_patterns: Vec<String>,
    pub shell_gate: ShellGateSettings,
    /// `[hooks]`: Claude Code's events, and the deprecated `pre_tool_call`.
    pub hooks: super::hooks::HookSettings,
    /// What loading found worth saying (a deprecated key), file and line.
    pub warnings: Vec<String>,
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// `[agents.NAME]`, from the user's settings only.
    pub agents: BTreeMap<String, AskedAgent>,
    /// `[sandbox]`: how bash commands are confined.
    pub sandbox: SandboxSettings,
    /// `[ui]`: the full screen's manners towards the terminal.
    pub ui: super::UiSettings,
    /// `[checkpoints]`: what the project's checkpoint store keeps.
    pub checkpoints: super::limits::Retention,
    /// `[[rules]]`: the user's, then the project's (ask and deny only).
    pub rules: std::sync::Arc<crate::policy::saved::SavedRules>,
    /// `[lsp]`: the language servers and diagnostics after edits.
    pub lsp: super::lsp::LspSettings,
    /// The settings files that were read, lowest layer first.
    pub sources: Vec<PathBuf>,
    /// The user's settings file, whether or not it exists yet.
    pub user_file: Option<PathBuf>,
    /// mino's home directory, when the settings were loaded from one.
    pub mino_home: Option<PathBuf>,
    /// `protected_patterns` compiled with the built-ins, once, at load.
    pub(crate) protected: ProtectedPaths,
}

impl Settings {
    /// The built-in and added protected patterns, compiled.
    pub fn protected(&self) -> ProtectedPaths {
        self.protected.clone()
    }
}

impl Default for Settings {
    /// The built-in defaults: what mino runs with when no file says more.
    fn default() -> Self {
        Self {
            start_mode: Mode::Manual,
            model: ModelSettings::defaults_for(ProviderKind::OpenAiResponses),
            providers: BTreeMap::new(),
            tools: ToolSwitches::default(),
            limits: LimitSettings::default(),
            protected_patterns: Vec::new(),
            shell_gate: ShellGateSettings::default(),
            hooks: Default::default(),
            warnings: Vec::new(),
            mcp_servers: BTreeMap::new(),
            agents: BTreeMap::new(),
            sandbox: SandboxSettings::default(),
            ui: super::UiSettings::default(),
            checkpoints: super::limits::Retention::default(),
            rules: Default::default(),
            user_file: None,
            lsp: super::lsp::LspSettings::default(),
            sources: Vec::new(),
            mino_home: None,
            protected: ProtectedPaths::builtin(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_round_trip() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.name().parse::<ProviderKind>(), Ok(kind));
            assert!(PROVIDER_NAMES.contains(kind.name()));
        }
        let err = "openai".parse::<ProviderKind>().unwrap_err();
        assert!(err.to_string().contains(PROVIDER_NAMES));
    }

    #[test]
    fn defaults_follow_the_design() {
        let s = Settings::default();
        assert_eq!(s.start_mode, Mode::Manual);
        assert_eq!(s.model.provider, ProviderKind::OpenAiResponses);
        assert_eq!(s.model.base_url, "https://api.openai.com/v1");
        assert_eq!(s.model.context_window, 128_000);
        assert_eq!(s.limits.bash_timeout, Duration::from_secs(30));
        assert_eq!(s.limits.bash_output_bytes, 65_536);
        assert_eq!((s.limits.turn_requests, s.limits.turn_tool_calls), (8, 16));
        assert!(s.protected().is_protected(".env"));
    }

    #[test]
    fn the_output_cap_field_follows_the_host_unless_set() {
        let mut m = ModelSettings::defaults_for(ProviderKind::OpenAiChat);
        for (url, field) in [
            (
                "https://api.openai.com/v1",
                MaxTokensField::MaxCompletionTokens,
            ),
            (
                "https://API.OpenAI.com./v1",
                MaxTokensField::MaxCompletionTokens,
            ),
            ("http://127.0.0.1:8080/v1", MaxTokensField::MaxTokens),
            ("http://localhost:11434/v1", MaxTokensField::MaxTokens),
            (
                "https://api.openai.com.evil.example/v1",
                MaxTokensField::MaxTokens,
            ),
            ("https://openrouter.ai/api/v1", MaxTokensField::MaxTokens),
        ] {
            m.base_url = url.to_string();
            assert_eq!(m.max_tokens_field(), field, "{url}");
        }
        m.max_tokens_field = Some(MaxTokensField::MaxCompletionTokens);
        assert_eq!(m.max_tokens_field(), MaxTokensField::MaxCompletionTokens);
        for field in [
            MaxTokensField::MaxCompletionTokens,
            MaxTokensField::MaxTokens,
        ] {
            assert_eq!(MaxTokensField::from_name(field.as_str()), Some(field));
            assert!(MAX_TOKENS_FIELD_NAMES.contains(field.as_str()));
        }
        assert_eq!(MaxTokensField::from_name("MAX_TOKENS"), None);
    }
}
