//! The HTTP side of every model service: one client per provider, built
//! once on the blocking pool (it reads the system's root certificates: never
//! on the first frame's path), a JSON POST with retries and backoff before the first byte of the
//! body, and error texts that name the service. Never reads the body past
//! its head on success (the SSE layer does) and never lets the API key into
//! a log line, an error text or a `Debug` output.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ModelError;
use super::bounds::{Bound, StreamBounds};
use super::config::{Backoff, ProviderConfig};

/// How much of an error body is read to explain a failed status.
const ERROR_BODY_READ: usize = 4096;
/// How much of an error body an error text quotes.
const ERROR_BODY_SHOWN: usize = 300;

/// One endpoint of one model service: where requests go, with which
/// headers, and how hard to try.
pub struct HttpEndpoint {
    /// Built on the blocking pool from `new` on; a request that comes
    /// first waits for it (or builds it).
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    /// The client reads no certificates (see `needs_certificates`).
    plain: bool,
    connect_timeout: Duration,
    url: Url,
    service: String,
    headers: HeaderMap,
    first_byte_timeout: Duration,
    request_timeout: Duration,
    bounds: StreamBounds,
    max_retries: u32,
    backoff: Backoff,
    /// Kept only to scrub it from texts the service sends back.
    secret: Option<String>,
    /// `ProviderConfig::strict`.
    strict: bool,
}

impl fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url.as_str())
            .field("service", &self.service)
            .field("header_names", &self.headers.keys().collect::<Vec<_>>())
            .field("first_byte_timeout", &self.first_byte_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

/// A response whose head said 2xx, and the time by which its body must
/// have begun.
pub struct Answered {
    pub response: reqwest::Response,
    pub first_byte_deadline: tokio::time::Instant,
}

/// What one POST came to, for its caller.
pub enum Posted {
    Answered(Answered),
    /// Try again after `delay`; `reason` is the status (`429`, `503`) or
    /// `no connection`.
    Retry {
        delay: Duration,
        reason: String,
    },
}

/// What one attempt came to.
enum Attempt {
    Answered(Answered),
    /// Worth another try (connection error, 429, 5xx); `wait` is what the
    /// service asked for in `Retry-After`.
    Retry {
        error: ModelError,
        wait: Option<Duration>,
    },
    Fatal(ModelError),
}

impl HttpEndpoint {
    /// An endpoint at `{base_url}/{path}`. `headers` carry the wire format's
    /// authentication and version headers (see `secret_header`).
    pub fn new(cfg: &ProviderConfig, path: &str, headers: HeaderMap) -> Result<Self, ModelError> {
        let base = cfg.base_url.trim().trim_end_matches('/');
        let url = Url::parse(&format!("{base}/{path}")).map_err(|err| {
            ModelError::Setup(format!(
                "the {} base URL `{}` is not a valid URL: {err}",
                cfg.kind,
                shown_url(base)
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ModelError::Setup(format!(
                "the {} base URL `{}` must start with http:// or https://",
                cfg.kind,
                shown_url(base)
            )));
        }
        let plain = !needs_certificates(&url, env_var);
        let service = format!(
            "{} at {}",
            super::config::service_label(cfg.kind),
            shown_url(base)
        );
        Ok(Self {
            client: building(cfg.connect_timeout, plain),
            plain,
            connect_timeout: cfg.connect_timeout,
            url,
            service,
            headers,
            first_byte_timeout: cfg.first_byte_timeout,
            request_timeout: cfg.request_timeout,
            bounds: cfg.bounds,
            max_retries: cfg.max_retries,
            backoff: cfg.backoff,
            secret: cfg.api_key.clone().filter(|key| !key.is_empty()),
            strict: cfg.strict,
        })
    }

    /// How error texts name this service, e.g.
    /// "OpenAI chat completions at http://127.0.0.1:8080/v1".
    pub fn service(&self) -> &str {
        &self.service
    }

    /// A stall: no bytes for this long.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// `ProviderConfig::strict`: one choice, as an event stream, no
    /// reasoning.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// What one response may send.
    pub fn bounds(&self) -> &StreamBounds {
        &self.bounds
    }

    /// A response past `bound` (whose value is `limit`).
    pub(crate) fn too_large(&self, bound: Bound, limit: usize) -> ModelError {
        let (what, setting) = bound.words();
        ModelError::TooLarge {
            service: self.service.clone(),
            what,
            limit,
            setting,
        }
    }

    /// A trickle: fewer than `stall_min_bytes` in a window.
    pub(crate) fn trickle(&self) -> ModelError {
        ModelError::Trickle {
            service: self.service.clone(),
            bytes: self.bounds.stall_min_bytes,
            seconds: whole_seconds(self.request_timeout),
        }
    }

    /// `text` with the API key, should the service echo it, replaced.
    pub fn redact(&self, text: &str) -> String {
        match &self.secret {
            // A value this short is no secret (a local server's dummy key):
            // replacing it would cut letters out of every text.
            Some(secret) if secret.len() >= crate::secrets::MIN_SECRET_BYTES => {
                text.replace(secret.as_str(), "[redacted]")
            }
            Some(_) => text.to_string(),
            None => text.to_string(),
        }
    }

    /// POSTs `body` (JSON, encoded) once. A 2xx head is `Posted::Answered`;
    /// a connection error, 429 or 5xx while fewer than `max_retries`
    /// retries were made (`retries` so far) is `Posted::Retry` with the
    /// wait before the next try (honouring `Retry-After` seconds), so the
    /// caller can say so before it waits; past them, the error. Other
    /// statuses, and a 5xx whose body says the request itself is
    /// malformed, fail at once. Cancelling `cancel` returns `Cancelled`.
    pub async fn post_once(
        &self,
        bytes: Vec<u8>,
        retries: u32,
        cancel: &CancellationToken,
    ) -> Result<Posted, ModelError> {
        let (error, wait) = match self.attempt(bytes, cancel).await? {
            Attempt::Answered(response) => return Ok(Posted::Answered(response)),
            Attempt::Fatal(error) => return Err(error),
            Attempt::Retry { error, wait } => (error, wait),
        };
        if retries >= self.max_retries {
            return Err(gave_up(error, retries + 1));
        }
        let delay = self.backoff.wait(retries, wait);
        tracing::warn!(
            service = %self.service,
            attempt = retries + 1,
            delay_ms = delay.as_millis() as u64,
            "model request failed, retrying: {error}"
        );
        let reason = match &error {
            ModelError::Status { status, .. } => status.to_string(),
            _ => "no connection".to_string(),
        };
        Ok(Posted::Retry { delay, reason })
    }

    async fn attempt(
        &self,
        body: Vec<u8>,
        cancel: &CancellationToken,
    ) -> Result<Attempt, ModelError> {
        let client = self
            .client
            .get_or_init(|| made(self.connect_timeout, self.plain))
            .clone()
            .map_err(ModelError::Setup)?;
        let send = client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body)
            .send();
        let first_byte_deadline = tokio::time::Instant::now() + self.first_byte_timeout;
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            sent = tokio::time::timeout_at(first_byte_deadline, send) => sent,
        };
        let response = match sent {
            Err(_elapsed) => return Ok(Attempt::Fatal(self.no_first_byte())),
            Ok(Err(err)) if err.is_builder() => {
                let err = err.without_url();
                return Ok(Attempt::Fatal(ModelError::Setup(format!(
                    "{}: cannot build the request: {}",
                    self.service,
                    self.redact(&describe(&err))
                ))));
            }
            Ok(Err(err)) => {
                let err = err.without_url();
                return Ok(Attempt::Retry {
                    error: ModelError::Connect {
                        service: self.service.clone(),
                        message: self.redact(&describe(&err)),
                    },
                    wait: None,
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() && self.strict && !is_event_stream(response.headers()) {
            let said = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|t| t.to_str().ok())
                .unwrap_or("none")
                .to_string();
            return Ok(Attempt::Fatal(ModelError::Malformed {
                service: self.service.clone(),
                message: format!(
                    "the answer's content type is {said}, not the text/event-stream asked for"
                ),
            }));
        }
        if status.is_success() {
            return Ok(Attempt::Answered(Answered {
                response,
                first_byte_deadline,
            }));
        }
        if status.is_redirection() {
            // Requests go only where they were configured: a redirect is
            // never followed (the body would go to an address nobody set).
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(|l| self.redact(l))
                .unwrap_or_else(|| "no location given".to_string());
            return Ok(Attempt::Fatal(ModelError::Status {
                service: self.service.clone(),
                status: status.as_u16(),
                message: format!(
                    "the service redirected the request to {location}; mino follows no redirect: set base_url to the address you mean"
                ),
            }));
        }
        let wait = retry_after(response.headers());
        let message = self.error_body(response, cancel).await?;
        let error = ModelError::Status {
            service: self.service.clone(),
            status: status.as_u16(),
            message,
        };
        let malformed = status.is_server_error() && error.says_request_is_malformed();
        if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) && !malformed {
            Ok(Attempt::Retry { error, wait })
        } else {
            Ok(Attempt::Fatal(error))
        }
    }

    /// The start of an error body, as a short explanation: the service's own
    /// `error.message` when it sent JSON, else the first few hundred bytes.
    async fn error_body(
        &self,
        mut response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<String, ModelError> {
        let reason = response
            .status()
            .canonical_reason()
            .unwrap_or("no reason given")
            .to_string();
        let mut body = Vec::new();
        while body.len() < ERROR_BODY_READ {
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                chunk = tokio::time::timeout(self.request_timeout, response.chunk()) => chunk,
            };
            match chunk {
                Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
                // An error body that stalls or breaks still leaves the status.
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
            }
        }
        let text = String::from_utf8_lossy(&body);
        let explained = explain_error_body(&text).unwrap_or_else(|| reason.clone());
        Ok(self.redact(&explained))
    }

    pub(crate) fn no_first_byte(&self) -> ModelError {
        ModelError::FirstByte {
            service: self.service.clone(),
            seconds: whole_seconds(self.first_byte_timeout),
        }
    }

    pub(crate) fn stalled(&self) -> ModelError {
        ModelError::Stalled {
            service: self.service.clone(),
            seconds: whole_seconds(self.request_timeout),
        }
    }
}

/// Whether `headers` say the body is an event stream.
fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// An HTTP header carrying a secret, marked sensitive so that `Debug` of
/// the request never shows it. The error names the header, never the value.
pub fn secret_header(
    name: &'static str,
    value: &str,
) -> Result<(HeaderName, HeaderValue), ModelError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        ModelError::Setup(format!(
            "the API key cannot be sent in the `{name}` header: it contains characters HTTP headers do not allow"
        ))
    })?;
    header.set_sensitive(true);
    Ok((HeaderName::from_static(name), header))
}

/// The headers of a service that takes its API key as `Authorization:
/// Bearer` (both OpenAI formats); none when no key is set.
pub fn bearer_headers(cfg: &ProviderConfig) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = cfg.api_key.as_deref().filter(|key| !key.is_empty()) {
        let (name, value) = secret_header("authorization", &format!("Bearer {key}"))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// The one place a reqwest client is built; the rustls provider must be
/// installed first or building panics.
pub(crate) fn client(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mino/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| format!("cannot set up the HTTP client: {}", describe(&err)))
}

/// A client for plain `http://` only: it trusts no certificate, so building
/// it reads none of the system's (about 20 ms, which the window probe would
/// otherwise put on the first frame's path). An `https://` request through
/// it fails its handshake.
pub(crate) fn plain_client(timeout: Duration) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("mino/", env!("CARGO_PKG_VERSION")))
        .tls_certs_only([])
        .build()
        .map_err(|err| format!("cannot set up the HTTP client: {}", describe(&err)))
}

/// Whether requests to `url` may need the system's certificates: an
/// `https://` service, or plain `http://` through a proxy reached over
/// https (`var` reads the environment). A local server over plain http
/// needs none, and its client is built without reading them (they are
/// about a tenth of mino's memory after start).
pub(crate) fn needs_certificates(url: &Url, var: impl Fn(&str) -> Option<String>) -> bool {
    url.scheme() != "http"
        || ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .filter_map(|name| var(name))
            .any(|proxy| proxy.trim().to_ascii_lowercase().starts_with("https:"))
}

/// The environment variable `name`, when set.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A client cell whose client is being built on the blocking pool (when
/// there is a runtime; else the first request builds it); `plain` for
/// one that reads no certificates.
fn building(
    connect_timeout: Duration,
    plain: bool,
) -> Arc<OnceLock<Result<reqwest::Client, String>>> {
    let cell = Arc::new(OnceLock::new());
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let filled = Arc::clone(&cell);
        drop(runtime.spawn_blocking(move || {
            filled.get_or_init(|| made(connect_timeout, plain));
        }));
    }
    cell
}

/// The service's client: `plain` reads no certificates.
fn made(connect_timeout: Duration, plain: bool) -> Result<reqwest::Client, String> {
    if plain {
        plain_client(connect_timeout)
    } else {
        client(connect_timeout)
    }
}

/// Whole seconds for an error text, rounded up so that a short timeout does
/// not read as "0 s".
pub(crate) fn whole_seconds(duration: Duration) -> u64 {
    let seconds = duration.as_secs();
    if duration.subsec_nanos() > 0 || seconds == 0 {
        seconds + 1
    } else {
        seconds
    }
}

/// An error's text with its causes, without the URL.
pub(crate) fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn gave_up(error: ModelError, attempts: u32) -> ModelError {
    let note = format!(" (gave up after {attempts} attempts)");
    match error {
        ModelError::Status {
            service,
            status,
            message,
        } => ModelError::Status {
            service,
            status,
            message: message + &note,
        },
        ModelError::Connect { service, message } => ModelError::Connect {
            service,
            message: message + &note,
        },
        other => other,
    }
}

/// `Retry-After` in seconds; an HTTP date is ignored (backoff applies).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    let seconds: f64 = value.trim().parse().ok()?;
    if seconds.is_finite() && seconds >= 0.0 {
        // Capped later (`Backoff::wait`); this only keeps it representable.
        Some(Duration::from_secs_f64(seconds.min(86_400.0)))
    } else {
        None
    }
}

/// A service's error body as the error text shows it: the `error` object's
/// message and kind when it is JSON, else the text itself, clipped.
fn explain_error_body(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(json) = serde_json::from_str::<Value>(trimmed) {
        let error = json.get("error").unwrap_or(&json);
        if let Some(message) = error_message(error) {
            return Some(clip(&error_with_kind(message, error), ERROR_BODY_SHOWN));
        }
    }
    Some(clip(trimmed, ERROR_BODY_SHOWN))
}

/// The text of an `error` object a service sent, in a body or in the
/// stream: `message (kind)`. The one explainer every wire format uses.
pub(crate) fn error_text(error: &Value) -> String {
    let message = error_message(error).unwrap_or_else(|| error.to_string());
    error_with_kind(message, error)
}

/// The error's message: its `message` field, or the error itself when it
/// is a string.
fn error_message(error: &Value) -> Option<String> {
    error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map(str::to_string)
}

/// `message (kind)` when the error names its `type` or `code`.
fn error_with_kind(message: String, error: &Value) -> String {
    let kind = error
        .get("type")
        .or_else(|| error.get("code"))
        .and_then(Value::as_str);
    match kind {
        Some(kind) => format!("{message} ({kind})"),
        None => message,
    }
}

/// At most `limit` characters, marked when cut.
pub(crate) fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A base URL as error texts show it: any user name or password removed.
pub(crate) fn shown_url(base: &str) -> String {
    match Url::parse(base) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.as_str().trim_end_matches('/').to_string()
        }
        _ => base.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_without_an_https_proxy_goes_without_certificates() {
        let url = |text: &str| Url::parse(text).unwrap();
        let none = |_: &str| None;
        assert!(!needs_certificates(&url("http://127.0.0.1:8080/v1"), none));
        assert!(needs_certificates(&url("https://api.openai.com/v1"), none));
        let proxy = |value: &'static str| {
            move |name: &str| (name == "HTTP_PROXY").then(|| value.to_string())
        };
        assert!(needs_certificates(
            &url("http://127.0.0.1/v1"),
            proxy(" HTTPS://proxy:3128")
        ));
        assert!(!needs_certificates(
            &url("http://127.0.0.1/v1"),
            proxy("http://proxy:3128")
        ));
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let backoff = Backoff::default();
        assert_eq!(backoff.wait(0, None), Duration::from_millis(500));
        assert_eq!(backoff.wait(1, None), Duration::from_secs(1));
        assert_eq!(backoff.wait(10, None), Duration::from_secs(8));
        assert_eq!(backoff.wait(40, None), Duration::from_secs(8));
        assert_eq!(backoff.wait(3, Some(Duration::ZERO)), Duration::ZERO);
        assert_eq!(
            backoff.wait(0, Some(Duration::from_secs(600))),
            Duration::from_secs(30)
        );
        let fixed = Backoff::fixed(Duration::ZERO);
        assert_eq!(fixed.wait(5, None), Duration::ZERO);
        assert_eq!(
            fixed.wait(0, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn error_bodies_are_explained_briefly() {
        let json = r#"{"error":{"message":"slow down","type":"rate_limit"}}"#;
        assert_eq!(
            explain_error_body(json).as_deref(),
            Some("slow down (rate_limit)")
        );
        assert_eq!(explain_error_body("  ").as_deref(), None);
        let long = "x".repeat(1000);
        let shown = explain_error_body(&long).unwrap_or_default();
        assert_eq!(shown.chars().count(), ERROR_BODY_SHOWN + 1);
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            shown_url("https://u:p@example.com/v1"),
            "https://example.com/v1"
        );
        assert_eq!(shown_url("http://127.0.0.1:1/v1"), "http://127.0.0.1:1/v1");
    }

    #[test]
    fn seconds_round_up() {
        assert_eq!(whole_seconds(Duration::from_millis(300)), 1);
        assert_eq!(whole_seconds(Duration::from_secs(2)), 2);
        assert_eq!(whole_seconds(Duration::from_millis(2500)), 3);
    }
}
