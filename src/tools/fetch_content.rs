//! `fetch_content`: GET an http(s) URL and return readable text, or save the
//! body into a project file with `output` (a write: located, inspected,
//! rechecked). A URL is a destination that data can leave through, so the
//! decision treats every fetch as `CallKind::Fetch`. Never decides.

use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::blocking::inspected;
use super::fetch_destination::{FetchClients, MAX_REDIRECTS, private_address, private_host};
use super::fs::change::CHANGE_LIMIT;
use super::fs::confine::{Expected, Project, digest};
use super::wording::looks_binary;
use super::{
    BoxFuture, Field, PreparedCall, Tool, ToolContext, ToolError, ToolOutcome, ToolSpec, parse_args,
};
use crate::policy::{CallFacts, CallKind, PathTarget, ToolKey};
use crate::tools::FieldRole;
use std::sync::Arc;

/// The key a private destination's answers are remembered under.
pub const PRIVATE_KEY: &str = crate::policy::PRIVATE_FETCH_KEY;

/// The most bytes downloaded.
const DOWNLOAD_LIMIT: usize = 2 * 1024 * 1024;
/// The most characters of text returned to the model.
const TEXT_LIMIT: usize = 100 * 1024;

/// The tool. `timeout` bounds the whole request; `output` is a write, so it
/// exists only where the edit tools do (`[tools] edit`).
pub struct FetchContent {
    pub timeout: Duration,
    pub output: bool,
}

impl Default for FetchContent {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            output: true,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    url: String,
    #[serde(default)]
    output: Option<String>,
}

struct Prepared {
    facts: CallFacts,
    url: reqwest::Url,
    /// The private host the URL names, when the call is for one.
    private: Option<String>,
    /// Whether a name may resolve to a private address (the call is for a
    /// private destination, or the user's settings allow them).
    allow_private: bool,
    /// The run's shared clients.
    clients: Arc<FetchClients>,
    output: Option<(String, Arc<Project>)>,
    expected: Option<Expected>,
    timeout: Duration,
}

impl Tool for FetchContent {
    fn spec(&self) -> ToolSpec {
        let mut properties = json!({
            "url": {"type": "string", "description": "http or https URL"}
        });
        if self.output {
            properties["output"] = json!({"type": "string", "description": "project-relative file to save the body into"});
        }
        ToolSpec {
            name: "fetch_content".into(),
            description: if self.output {
                "Fetch an http(s) URL and return its readable text. With `output`, save the body into that project file instead."
            } else {
                "Fetch an http(s) URL and return its readable text."
            }
            .into(),
            parameters: json!({
                "type": "object",
                "properties": properties,
                "required": ["url"],
                "additionalProperties": false
            }),
        }
    }

    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let args: Args = parse_args("fetch_content", args)?;
        if args.output.is_some() && !self.output {
            return Err(ToolError::InvalidArguments {
                tool: "fetch_content",
                message: "`output` is not accepted: the edit tools are turned off ([tools] edit = false), and saving a file is an edit; only `url` is accepted".to_string(),
            });
        }
        let url = reqwest::Url::parse(&args.url).map_err(|e| ToolError::InvalidArguments {
            tool: "fetch_content",
            message: format!(
                "url {:?} is not a URL: {e}; an http or https URL is accepted",
                args.url
            ),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::InvalidArguments {
                tool: "fetch_content",
                message: format!(
                    "url scheme {:?} is not accepted; only http and https are",
                    url.scheme()
                ),
            });
        }
        let private = if cx.fetch_private_hosts_allowed {
            None
        } else {
            private_host(&url)
        };
        // A private destination is its own kind, remembered apart: allowing
        // fetch_content for the session does not allow it.
        let mut facts = match private {
            Some(_) => CallFacts::new(ToolKey::new(PRIVATE_KEY), CallKind::FetchPrivate),
            None => CallFacts::new(ToolKey::new("fetch_content"), CallKind::Fetch),
        };
        facts.url = crate::config::url_parts(&url).map(Box::new);
        let mut output = None;
        if let Some(path) = args.output {
            let target = cx.project.locate(&path)?;
            if let PathTarget::Inside { relative, .. } = &target {
                output = Some((relative.clone(), cx.project.clone()));
            }
            facts = facts.with_target(target);
        }
        Ok(Box::new(Prepared {
            facts,
            allow_private: private.is_some() || cx.fetch_private_hosts_allowed,
            clients: Arc::clone(&cx.fetch_clients),
            private,
            url,
            output,
            expected: None,
            timeout: self.timeout,
        }))
    }
}

impl PreparedCall for Prepared {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        let mut fields = vec![Field::named(FieldRole::Url, self.url.as_str())];
        if let Some((path, project)) = &self.output {
            fields.push(Field::text("Save to", path.clone()));
            fields.push(Field::text(
                "Project directory",
                project.root().display().to_string(),
            ));
        }
        if let Some(host) = &self.private {
            fields.push(Field::warning(format!(
                "{host} is a private address (loopback, link-local such as the cloud metadata service, or a private network): this fetch can reach services on this machine or its network, and anything written into the URL reaches them. It asks in every mode."
            )));
        } else {
            fields.push(Field::warning(
                "The URL is a destination: anything written into it leaves this machine.",
            ));
        }
        fields
    }

    fn needs_inspection(&self) -> bool {
        self.output.is_some()
    }

    fn inspect(&mut self) -> Result<(), ToolError> {
        if let Some((path, project)) = &self.output {
            let current = project.read_current(path, CHANGE_LIMIT)?;
            self.expected = Some(match current {
                Some(contents) if contents.truncated => {
                    return Err(ToolError::Failed(format!(
                        "{path} is larger than {CHANGE_LIMIT} bytes; fetch_content does not replace it"
                    )));
                }
                Some(contents) => Expected::Digest(digest(&contents.bytes)),
                None => Expected::Absent,
            });
        }
        Ok(())
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            let already = self.output.is_none() || self.expected.is_some();
            let call = match inspected(self, already, "fetch_content").await {
                Ok(call) => call,
                Err(outcome) => return outcome,
            };
            let fetched = tokio::select! {
                _ = cancel.cancelled() => return ToolOutcome::interrupted("The fetch was interrupted."),
                fetched = download(&call.clients, &call.url, call.timeout, call.allow_private) => fetched,
            };
            let (body, content_type) = match fetched {
                Ok(got) => got,
                Err(e) => return ToolOutcome::error(e.to_string()),
            };
            if let (Some((path, project)), Some(expected)) = (&call.output, call.expected) {
                let done = format!("Saved {} to {path} ({} bytes).", call.url, body.len());
                let (path, project) = (path.clone(), Arc::clone(project));
                // The atomic write and its fsync run on the blocking pool.
                let write = tokio::task::spawn_blocking(move || {
                    project.write_atomic(&path, &body, expected)
                });
                return match write.await {
                    Ok(Ok(())) => ToolOutcome::completed(done),
                    Ok(Err(e)) => ToolOutcome::error(e.to_string()),
                    Err(e) => ToolOutcome::error(format!("the write failed: {e}")),
                };
            }
            ToolOutcome::completed(readable(&call.url, &body, &content_type))
        })
    }
}

/// Why a download failed; each names the URL. The text is the call's
/// error result.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("could not build the HTTP client: {0}")]
    Client(reqwest::Error),
    #[error(
        "{url} was not fetched: {private}, and mino connects to a private destination only in a call for it, which the user is asked about. Do not retry or work around this with another tool."
    )]
    Private { url: reqwest::Url, private: String },
    #[error(
        "{url} redirected more than {MAX_REDIRECTS} times on its own origin; the fetch was stopped"
    )]
    TooManyRedirects { url: reqwest::Url },
    #[error("fetching {url} failed: {source}")]
    Send {
        url: reqwest::Url,
        source: reqwest::Error,
    },
    #[error(
        "{url} redirected to {to}, which is another origin; mino does not follow it. Fetching {to} would be a new call, decided (and asked about) on its own."
    )]
    Redirected { url: reqwest::Url, to: reqwest::Url },
    #[error("{url} answered HTTP {status} without a usable Location")]
    NoLocation { url: reqwest::Url, status: u16 },
    #[error("{url} answered HTTP {status}")]
    Status { url: reqwest::Url, status: u16 },
    #[error("reading {url} failed: {source}")]
    Read {
        url: reqwest::Url,
        source: reqwest::Error,
    },
    #[error("{url} is larger than {DOWNLOAD_LIMIT} bytes; the fetch was stopped")]
    TooLarge { url: reqwest::Url },
}

async fn download(
    clients: &FetchClients,
    url: &reqwest::Url,
    timeout: Duration,
    allow_private: bool,
) -> Result<(Vec<u8>, String), FetchError> {
    let client = clients.get(allow_private).map_err(FetchError::Client)?;
    let response = client
        .get(url.clone())
        .timeout(timeout)
        .send()
        .await
        .map_err(|source| match private_address(&source) {
            Some(private) => FetchError::Private {
                url: url.clone(),
                private: private.to_string(),
            },
            // The only redirect the policy refuses with an error.
            None if source.is_redirect() => FetchError::TooManyRedirects { url: url.clone() },
            None => FetchError::Send {
                url: url.clone(),
                source,
            },
        })?;
    let status = response.status();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|location| response.url().join(location).ok());
        return Err(match to {
            Some(to) => FetchError::Redirected {
                url: url.clone(),
                to,
            },
            None => FetchError::NoLocation {
                url: url.clone(),
                status: status.as_u16(),
            },
        });
    }
    if !status.is_success() {
        return Err(FetchError::Status {
            url: url.clone(),
            status: status.as_u16(),
        });
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|source| FetchError::Read {
            url: url.clone(),
            source,
        })?;
        if body.len() + chunk.len() > DOWNLOAD_LIMIT {
            return Err(FetchError::TooLarge { url: url.clone() });
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, content_type))
}

/// The text the model receives for a body.
fn readable(url: &reqwest::Url, body: &[u8], content_type: &str) -> String {
    if looks_binary(body) {
        return format!(
            "{url} returned {} bytes of binary content ({content_type}); not shown.",
            body.len()
        );
    }
    let text = String::from_utf8_lossy(body);
    let mut text = if content_type.contains("html") || text.trim_start().starts_with('<') {
        html_to_text(&text)
    } else {
        text.into_owned()
    };
    if text.len() > TEXT_LIMIT {
        let mut cut = TEXT_LIMIT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[content truncated]");
    }
    format!("Content of {url}:\n\n{text}")
}

/// A small HTML-to-text pass: drops scripts, styles and tags, decodes the
/// common entities and collapses blank runs.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        let rest = &lower[i..];
        if rest.starts_with("<script") || rest.starts_with("<style") {
            let close = if rest.starts_with("<script") {
                "</script>"
            } else {
                "</style>"
            };
            i = match rest.find(close) {
                Some(end) => i + end + close.len(),
                None => html.len(),
            };
            continue;
        }
        if rest.starts_with('<') {
            let end = rest.find('>').map_or(html.len(), |e| i + e + 1);
            let tag = &rest[..(end - i).min(rest.len())];
            if [
                "<br", "<p", "</p", "<div", "</div", "<li", "<h", "</h", "<tr",
            ]
            .iter()
            .any(|t| tag.starts_with(t))
            {
                out.push('\n');
            }
            i = end;
            continue;
        }
        let next = rest.find('<').map_or(html.len(), |n| i + n);
        out.push_str(&html[i..next]);
        i = next;
    }
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let mut lines: Vec<&str> = Vec::new();
    for line in decoded.lines().map(str::trim) {
        if line.is_empty() && lines.last().is_some_and(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    lines.join("\n").trim().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn warnings(url: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let cx = ToolContext::new(crate::tools::fs::confine::Project::new(dir.path()).unwrap());
        let tool = FetchContent {
            output: false,
            timeout: Duration::from_secs(5),
        };
        let call = tool.prepare(&json!({"url": url}), &cx).unwrap();
        call.fields()
            .into_iter()
            .filter(|f| f.kind == crate::tools::FieldKind::Warning)
            .map(|f| f.value)
            .collect()
    }

    #[test]
    fn a_private_destination_is_not_said_to_leave_this_machine() {
        let private = warnings("http://127.0.0.1:8080/x");
        assert_eq!(private.len(), 1, "{private:?}");
        assert!(private[0].contains("services on this machine"));
        assert!(!private[0].contains("leaves this machine"));
        let public = warnings("https://example.com/");
        assert_eq!(
            public,
            ["The URL is a destination: anything written into it leaves this machine."]
        );
    }

    #[test]
    fn html_becomes_text() {
        let html = "<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>A &amp; B</p><p>x&lt;y</p></body></html>";
        assert_eq!(html_to_text(html), "Title\n\nA & B\n\nx<y");
    }
}
