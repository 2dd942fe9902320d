//! A loopback HTTP/1.1 model service for tests: it answers each request
//! with the next scripted reply (SSE frames, an error status, or silence)
//! and records every request's path, headers and body. Never binds anything
//! but 127.0.0.1.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How an SSE reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The terminating chunk, then the connection closes.
    Complete,
    /// The socket closes without the terminating chunk.
    Abrupt,
    /// Nothing more is ever written; the socket stays open.
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    Sse {
        frames: Vec<Vec<u8>>,
        end: End,
    },
    Status {
        code: u16,
        retry_after: Option<&'static str>,
        body: String,
    },
    /// Reads the request and never answers.
    Silent,
    /// `307 Temporary Redirect` to this location.
    Redirect(String),
    /// Waits (on tokio's clock, so a paused test clock skips it), then
    /// answers with the inner reply.
    Delayed {
        delay: std::time::Duration,
        then: Box<Reply>,
    },
    /// A model with a context window of `window` tokens, counted by
    /// `prompt_tokens`: a larger request is refused with status 400 as
    /// llama.cpp refuses it; any other gets `then`, whose usage numbers
    /// (`"prompt_tokens":100`, `"input_tokens":100`) say the request's count.
    Windowed {
        window: u64,
        then: Box<Reply>,
    },
    /// OpenAI's chat completions as it answers for its current models: a
    /// body with `max_tokens` is refused with status 400 and OpenAI's own
    /// error; any other gets `then`.
    RefusesMaxTokens(Box<Reply>),
}

/// OpenAI's answer to a chat completions body with `max_tokens`.
pub const OPENAI_MAX_TOKENS_REFUSAL: &str = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;

/// This server's own token count of a request: every string and key in the
/// body, a run of ASCII letters one token per four letters, any other
/// character but a space one token, and one token per object. It counts
/// more than mino's estimate does, so mino must learn from the usage.
pub fn prompt_tokens(body: &Value) -> u64 {
    fn text(s: &str) -> u64 {
        let (mut n, mut letters) = (0u64, 0u64);
        for c in s.chars() {
            if c.is_ascii_alphabetic() {
                letters += 1;
                continue;
            }
            n += letters.div_ceil(4);
            letters = 0;
            if c != ' ' {
                n += 1;
            }
        }
        n + letters.div_ceil(4)
    }
    match body {
        Value::String(s) => text(s),
        Value::Array(items) => items.iter().map(prompt_tokens).sum(),
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(k, v)| text(k) + prompt_tokens(v))
                .sum::<u64>()
        }
        _ => 1,
    }
}

impl Reply {
    pub fn sse(frames: Vec<String>) -> Self {
        Reply::Sse {
            frames: frames.into_iter().map(String::into_bytes).collect(),
            end: End::Complete,
        }
    }

    pub fn sse_ending(frames: Vec<String>, end: End) -> Self {
        Reply::Sse {
            frames: frames.into_iter().map(String::into_bytes).collect(),
            end,
        }
    }

    pub fn status(code: u16, body: &str) -> Self {
        Reply::Status {
            code,
            retry_after: None,
            body: body.to_string(),
        }
    }
}

/// One SSE frame with data only.
pub fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// One SSE frame with an event name.
pub fn named(event: &str, value: &Value) -> String {
    format!("event: {event}\ndata: {value}\n\n")
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: Value,
}

/// What `GET /v1/models` answers, as OpenAI's and Anthropic's do.
pub const MODEL_LIST: &str = r#"{"object":"list","data":[{"id":"test-model","object":"model"},{"id":"served-model","object":"model"}]}"#;

pub struct TestServer {
    pub base_url: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    /// Starts a server that answers requests with `replies` in order (and
    /// with 404 once they run out). `base_url` ends in `/v1`.
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::answering_props(replies, None).await
    }

    /// As `start`, and `GET /props` (llama.cpp's server) answers `props`.
    /// `GET /v1/models` always answers `MODEL_LIST`, never recorded.
    /// Without it, `/props` and Ollama's `/api/show` get a 404, as from any
    /// server that is neither; those questions are never recorded and never
    /// take a scripted reply.
    pub async fn answering_props(replies: Vec<Reply>, props: Option<Value>) -> Self {
        let props = Arc::new(props);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let task_log = log.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let log = task_log.clone();
                let replies = replies.clone();
                let props = props.clone();
                tokio::spawn(serve(socket, replies, log, props));
            }
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            log,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    log: Arc<Mutex<Vec<Recorded>>>,
    props: Arc<Option<Value>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    if request.path == "/props" || request.path == "/api/show" || request.path == "/v1/models" {
        let (code, body) = match (request.path.as_str(), props.as_ref()) {
            ("/props", Some(props)) => (200, props.to_string()),
            ("/v1/models", _) => (200, MODEL_LIST.to_string()),
            _ => (404, r#"{"error":"not found"}"#.to_string()),
        };
        let head = format!(
            "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(head.as_bytes()).await;
        let _ = socket.shutdown().await;
        return;
    }
    log.lock().unwrap().push(request);
    let mut reply = replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Reply::status(404, r#"{"error":{"message":"no reply scripted"}}"#));
    while let Reply::Delayed { delay, then } = reply {
        tokio::time::sleep(delay).await;
        reply = *then;
    }
    if let Reply::RefusesMaxTokens(then) = reply {
        let body = log.lock().unwrap().last().unwrap().body.clone();
        reply = if body.get("max_tokens").is_some() {
            Reply::status(400, OPENAI_MAX_TOKENS_REFUSAL)
        } else {
            *then
        };
    }
    if let Reply::Windowed { window, then } = reply {
        let body = log.lock().unwrap().last().unwrap().body.clone();
        let count = prompt_tokens(&body);
        reply = if count > window {
            Reply::status(
                400,
                &serde_json::json!({"error":{"code":400,"message":format!("the request exceeds the available context size ({count} tokens > {window} tokens), try increasing it"),"type":"exceed_context_size_error"}}).to_string(),
            )
        } else {
            match *then {
                Reply::Sse { frames, end } => Reply::Sse {
                    frames: frames
                        .into_iter()
                        .map(|f| {
                            String::from_utf8(f)
                                .unwrap()
                                .replace(
                                    "\"prompt_tokens\":100",
                                    &format!("\"prompt_tokens\":{count}"),
                                )
                                .replace(
                                    "\"input_tokens\":100",
                                    &format!("\"input_tokens\":{count}"),
                                )
                                .into_bytes()
                        })
                        .collect(),
                    end,
                },
                other => other,
            }
        };
    }
    match reply {
        Reply::Delayed { .. } | Reply::Windowed { .. } | Reply::RefusesMaxTokens(_) => {}
        Reply::Silent => std::future::pending::<()>().await,
        Reply::Redirect(location) => {
            let head = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Reply::Status {
            code,
            retry_after,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            if let Some(seconds) = retry_after {
                head.push_str(&format!("Retry-After: {seconds}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Reply::Sse { frames, end } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for frame in frames {
                let mut chunk = format!("{:x}\r\n", frame.len()).into_bytes();
                chunk.extend_from_slice(&frame);
                chunk.extend_from_slice(b"\r\n");
                if socket.write_all(&chunk).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
            }
            match end {
                End::Complete => {
                    let _ = socket.write_all(b"0\r\n\r\n").await;
                    let _ = socket.shutdown().await;
                }
                End::Abrupt => drop(socket),
                End::Hang => std::future::pending::<()>().await,
            }
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut start = lines.next()?.split(' ');
    let method = start.next()?.to_string();
    let path = start.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|value| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
