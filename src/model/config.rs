//! Which model service to talk to and how: the validated provider settings
//! and the one function that turns them into a `Provider`. Never reads files
//! or environment variables itself (settings hand it the key already read),
//! and never shows the key: `Debug` redacts it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::anthropic::Anthropic;
use super::bounds::StreamBounds;
use super::openai_chat::OpenAiChat;
use super::openai_responses::OpenAiResponses;
use super::scripted::Scripted;
use super::{BodyExtras, ModelError, Provider};

/// The field of `openai-chat`'s output cap is the settings' own type too.
pub use crate::config::MaxTokensField;
/// The wire format is the settings' own `ProviderKind`: one type for both.
pub use crate::config::ProviderKind;

/// How error texts name the service, before " at BASE_URL".
pub(crate) fn service_label(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAiResponses => "OpenAI responses",
        ProviderKind::OpenAiChat => "OpenAI chat completions",
        ProviderKind::Anthropic => "Anthropic messages",
        ProviderKind::Scripted => "scripted model",
    }
}

/// Validated settings for one model service.
#[derive(Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// Without the endpoint path, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    /// Already read from its environment variable. Never logged, never put
    /// in an error text, redacted from `Debug`.
    pub api_key: Option<String>,
    /// The output cap and the extra fields each kind of request carries.
    pub extras: BodyExtras,
    /// Which field `openai-chat` puts the output cap in; `None` is the
    /// default for `base_url` (`MaxTokensField::for_base_url`).
    pub max_tokens_field: Option<MaxTokensField>,
    /// The script file, for `ProviderKind::Scripted`.
    pub script: Option<PathBuf>,
    /// From sending a request to the first byte of its answer's body (a
    /// local server reads a long prompt first).
    pub first_byte_timeout: Duration,
    /// A stall: no bytes from the service for this long, once it answered.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// What one response may send (text, calls, arguments, pace).
    pub bounds: StreamBounds,
    /// Retries for connection errors, 429 and 5xx before the first byte.
    pub max_retries: u32,
    /// How long each retry waits.
    pub backoff: Backoff,
    /// The judge's requests: the answer must come as the event stream
    /// asked for, in one choice, with no reasoning text; anything else is
    /// a malformed answer (the judge then fails closed).
    pub strict: bool,
}

/// How long retries wait: the first `first` long, each further one twice as
/// long up to `cap`; a `Retry-After` the service sends is honoured instead,
/// up to `retry_after_cap`. Not a user setting: mino always uses the
/// default; a test sets it to count retries without waiting for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub cap: Duration,
    pub retry_after_cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            first: Duration::from_millis(500),
            cap: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// Every wait `wait` long, and `Retry-After` honoured as usual.
    pub fn fixed(wait: Duration) -> Self {
        Self {
            first: wait,
            cap: wait,
            ..Self::default()
        }
    }

    /// The wait before retry number `retries + 1`.
    pub fn wait(&self, retries: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.retry_after_cap);
        }
        let factor = 1u32.checked_shl(retries).unwrap_or(u32::MAX);
        self.first.saturating_mul(factor).min(self.cap)
    }
}

impl ProviderConfig {
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
    pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(60);
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    pub const DEFAULT_MAX_RETRIES: u32 = 3;

    /// Settings with the kind's default base URL, no key, and default limits.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: kind.default_base_url().to_string(),
            model: model.into(),
            api_key: None,
            extras: BodyExtras::default(),
            max_tokens_field: None,
            script: None,
            first_byte_timeout: Self::DEFAULT_FIRST_BYTE_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            bounds: StreamBounds::default(),
            max_retries: Self::DEFAULT_MAX_RETRIES,
            backoff: Backoff::default(),
            strict: false,
        }
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("extras", &self.extras)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("script", &self.script)
            .field("first_byte_timeout", &self.first_byte_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("bounds", &self.bounds)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("strict", &self.strict)
            .finish()
    }
}

/// Builds the provider the settings describe. The HTTP client is built here,
/// once; a scripted provider reads and checks its script here.
pub fn build_provider(cfg: &ProviderConfig) -> Result<Box<dyn Provider>, ModelError> {
    if cfg.kind != ProviderKind::Scripted && cfg.model.trim().is_empty() {
        return Err(ModelError::Setup(format!(
            "the {} provider needs a model name",
            cfg.kind
        )));
    }
    let provider: Box<dyn Provider> = match cfg.kind {
        ProviderKind::OpenAiChat => Box::new(OpenAiChat::new(cfg)?),
        ProviderKind::OpenAiResponses => Box::new(OpenAiResponses::new(cfg)?),
        ProviderKind::Anthropic => Box::new(Anthropic::new(cfg)?),
        ProviderKind::Scripted => {
            let path = cfg.script.as_deref().ok_or_else(|| {
                ModelError::Setup(
                    "the scripted provider needs a script file (`script` in the model settings)"
                        .to_string(),
                )
            })?;
            Box::new(Scripted::from_file(path, &cfg.model)?)
        }
    };
    Ok(provider)
}
