//! One language server's JSON-RPC connection over its stdio: requests
//! matched to their responses, notifications, the server's own requests
//! (answered with what a plain client has), the diagnostics it publishes,
//! the documents mino has opened, and the `initialize` handshake. Never
//! starts or stops a process (`spawn.rs` does) and never decides.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use lsp_types::notification::Notification;
use lsp_types::request::Request;
use lsp_types::{Diagnostic, PublishDiagnosticsParams, ServerCapabilities, Uri};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::framing::{FrameError, encode, read_message};
use super::uri::path_to_uri;

/// How long one request may take (a large workspace's first answer
/// comes after indexing).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The most documents whose diagnostics are kept: a server that reports
/// on every file of a huge tree cannot grow mino without bound.
const DOCUMENTS_KEPT: usize = 10_000;

/// Why a request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RpcError {
    #[error("the language server stopped")]
    Stopped,
    #[error("the language server did not answer {method} within {seconds} s")]
    Timeout { method: &'static str, seconds: u64 },
    #[error("the language server answered {method} with an error: {message}")]
    Server {
        method: &'static str,
        message: String,
    },
    #[error("the language server's answer to {method} is not what the protocol says: {message}")]
    Malformed {
        method: &'static str,
        message: String,
    },
}

type Writer = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>;

/// What a server published for each document, with a count of reports so
/// a caller can wait for a fresh one.
#[derive(Default)]
struct Published {
    by_uri: Mutex<HashMap<String, (u64, Vec<Diagnostic>)>>,
    changed: Notify,
}

/// A connection to one running server.
pub struct Client {
    writer: Writer,
    pending: Arc<Pending>,
    next_id: AtomicI64,
    published: Arc<Published>,
    /// Cancelled when the server's output ends.
    closed: CancellationToken,
    /// The version of each document mino opened.
    open: Mutex<HashMap<String, i32>>,
    pub capabilities: ServerCapabilities,
}

impl Client {
    /// Connects over `output` (the server's stdout) and `input` (its
    /// stdin) and runs `initialize` for `root` with the server's own
    /// `options`.
    pub async fn start(
        output: impl AsyncRead + Send + Unpin + 'static,
        input: impl AsyncWrite + Send + Unpin + 'static,
        root: &Path,
        options: Option<Value>,
        timeout: Duration,
    ) -> Result<Self, RpcError> {
        let pending: Arc<Pending> = Arc::default();
        let published: Arc<Published> = Arc::default();
        let closed = CancellationToken::new();
        let (answers_tx, answers_rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
        tokio::spawn(read_loop(
            BufReader::new(output),
            Arc::clone(&pending),
            Arc::clone(&published),
            closed.clone(),
            answers_tx,
        ));
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(Box::new(input)));
        tokio::spawn(answer_loop(answers_rx, Arc::clone(&writer)));
        let mut client = Self {
            writer,
            pending,
            next_id: AtomicI64::new(1),
            published,
            closed,
            open: Mutex::default(),
            capabilities: ServerCapabilities::default(),
        };
        let mut params = initialize_params(root);
        params.initialization_options = options;
        let result = tokio::time::timeout(
            timeout,
            client.request::<lsp_types::request::Initialize>(params),
        )
        .await
        .map_err(|_| RpcError::Timeout {
            method: lsp_types::request::Initialize::METHOD,
            seconds: timeout.as_secs(),
        })??;
        client.capabilities = result.capabilities;
        client
            .notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {})
            .await?;
        Ok(client)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    async fn send(&self, message: &Value) -> Result<(), RpcError> {
        write(&self.writer, message).await
    }

    /// Sends request `R` and waits for its result.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": R::METHOD, "params": params});
        self.send(&message).await?;
        let answer = tokio::select! {
            answer = rx => answer,
            () = tokio::time::sleep(REQUEST_TIMEOUT) => {
                if let Ok(mut pending) = self.pending.lock() {
                    pending.remove(&id);
                }
                return Err(RpcError::Timeout { method: R::METHOD, seconds: REQUEST_TIMEOUT.as_secs() });
            }
        };
        match answer {
            Err(_) => Err(RpcError::Stopped),
            Ok(Err(message)) => Err(RpcError::Server {
                method: R::METHOD,
                message,
            }),
            Ok(Ok(value)) => serde_json::from_value(value).map_err(|e| RpcError::Malformed {
                method: R::METHOD,
                message: e.to_string(),
            }),
        }
    }

    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), RpcError> {
        let message = json!({"jsonrpc": "2.0", "method": N::METHOD, "params": params});
        self.send(&message).await
    }

    /// Tells the server what `path` holds now: opens it the first time,
    /// sends the whole text as a change after that.
    pub async fn sync_document(
        &self,
        path: &Path,
        language_id: &str,
        text: String,
    ) -> Result<Uri, RpcError> {
        let uri = path_to_uri(path).ok_or(RpcError::Malformed {
            method: "textDocument/didOpen",
            message: format!("{} cannot be named as a file URI", path.display()),
        })?;
        let key = uri.as_str().to_string();
        let next = {
            let mut open = self.open.lock().map_err(|_| RpcError::Stopped)?;
            match open.get_mut(&key) {
                Some(version) => {
                    *version += 1;
                    Some(*version)
                }
                None => {
                    open.insert(key, 1);
                    None
                }
            }
        };
        match next {
            None => {
                self.notify::<lsp_types::notification::DidOpenTextDocument>(
                    lsp_types::DidOpenTextDocumentParams {
                        text_document: lsp_types::TextDocumentItem {
                            uri: uri.clone(),
                            language_id: language_id.to_string(),
                            version: 1,
                            text,
                        },
                    },
                )
                .await?;
            }
            Some(version) => {
                self.notify::<lsp_types::notification::DidChangeTextDocument>(
                    lsp_types::DidChangeTextDocumentParams {
                        text_document: lsp_types::VersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version,
                        },
                        content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text,
                        }],
                    },
                )
                .await?;
            }
        }
        Ok(uri)
    }

    /// The documents mino has opened, as URIs.
    pub fn open_documents(&self) -> Vec<String> {
        self.open
            .lock()
            .map(|open| open.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// How many reports the server has published for `uri` so far.
    pub fn reports(&self, uri: &str) -> u64 {
        self.published
            .by_uri
            .lock()
            .ok()
            .and_then(|map| map.get(uri).map(|(count, _)| *count))
            .unwrap_or(0)
    }

    /// The last diagnostics published for `uri`.
    pub fn diagnostics(&self, uri: &str) -> Vec<Diagnostic> {
        self.published
            .by_uri
            .lock()
            .ok()
            .and_then(|map| map.get(uri).map(|(_, list)| list.clone()))
            .unwrap_or_default()
    }

    /// Waits until the server has published more than `seen` reports for
    /// `uri`, at most `wait`; `false` when none came.
    pub async fn wait_report(&self, uri: &str, seen: u64, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let changed = self.published.changed.notified();
            if self.reports(uri) > seen {
                return true;
            }
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(deadline) => return self.reports(uri) > seen,
                () = self.closed.cancelled() => return false,
            }
        }
    }

    /// `shutdown`, then `exit`, each given a moment.
    pub async fn shutdown(&self) {
        let asked = tokio::time::timeout(
            Duration::from_secs(2),
            self.request::<lsp_types::request::Shutdown>(()),
        )
        .await;
        if matches!(asked, Ok(Ok(()))) {
            let _ = self.notify::<lsp_types::notification::Exit>(()).await;
        }
    }
}

async fn write(writer: &Writer, message: &Value) -> Result<(), RpcError> {
    let mut writer = writer.lock().await;
    writer
        .write_all(&encode(message))
        .await
        .map_err(|_| RpcError::Stopped)?;
    writer.flush().await.map_err(|_| RpcError::Stopped)
}

/// Answers the server's own requests, queued by the read loop so that
/// reading never waits for writing.
async fn answer_loop(mut answers: tokio::sync::mpsc::UnboundedReceiver<Value>, writer: Writer) {
    while let Some(answer) = answers.recv().await {
        if write(&writer, &answer).await.is_err() {
            return;
        }
    }
}

/// Reads every message until the output ends: responses to their waiting
/// request, diagnostics to the table, the server's requests to the
/// answering queue.
async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: BufReader<R>,
    pending: Arc<Pending>,
    published: Arc<Published>,
    closed: CancellationToken,
    answers: tokio::sync::mpsc::UnboundedSender<Value>,
) {
    loop {
        let message = match read_message(&mut reader).await {
            Ok(message) => message,
            Err(FrameError::Json(e)) => {
                tracing::warn!("a language server sent a message that is not JSON: {e}");
                continue;
            }
            Err(e) => {
                tracing::info!("a language server's connection ended: {e}");
                break;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) => answered(&pending, &id, &message),
            (Some(method), None)
                if method == lsp_types::notification::PublishDiagnostics::METHOD =>
            {
                publish(&published, &message);
            }
            (Some(method), Some(id)) => {
                let _ = answers.send(server_request_answer(method, id, &message));
            }
            _ => {}
        }
    }
    closed.cancel();
    published.changed.notify_waiters();
    if let Ok(mut pending) = pending.lock() {
        pending.clear();
    }
}

fn answered(pending: &Pending, id: &Value, message: &Value) {
    let Some(id) = id.as_i64() else {
        return;
    };
    let Some(tx) = pending.lock().ok().and_then(|mut p| p.remove(&id)) else {
        return;
    };
    let answer = match message.get("error") {
        Some(error) => Err(error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message")
            .to_string()),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    let _ = tx.send(answer);
}

fn publish(published: &Published, message: &Value) {
    let Some(params) = message.get("params").cloned() else {
        return;
    };
    let Ok(params) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
        return;
    };
    if let Ok(mut map) = published.by_uri.lock() {
        if map.len() >= DOCUMENTS_KEPT && !map.contains_key(params.uri.as_str()) {
            return;
        }
        let entry = map
            .entry(params.uri.as_str().to_string())
            .or_insert((0, Vec::new()));
        entry.0 += 1;
        entry.1 = params.diagnostics;
    }
    published.changed.notify_waiters();
}

/// The answer a plain client gives a server's request: no settings (one
/// null per item asked), nothing applied, everything else acknowledged.
fn server_request_answer(method: &str, id: Value, message: &Value) -> Value {
    let result = match method {
        "workspace/configuration" => {
            let items = message
                .pointer("/params/items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Value::Array(vec![Value::Null; items])
        }
        "workspace/applyEdit" => {
            json!({"applied": false, "failureReason": "mino applies edits itself"})
        }
        "workspace/workspaceFolders" => Value::Null,
        _ => Value::Null,
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[allow(deprecated)]
fn initialize_params(root: &Path) -> lsp_types::InitializeParams {
    use lsp_types::*;
    let root_uri = path_to_uri(root);
    let folders = root_uri.clone().map(|uri| {
        vec![WorkspaceFolder {
            uri,
            name: root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "project".into()),
        }]
    });
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "textDocument": {
            "synchronization": {"didSave": false, "dynamicRegistration": false},
            "publishDiagnostics": {"relatedInformation": false},
            "hover": {"contentFormat": ["plaintext", "markdown"]},
            "definition": {"linkSupport": true},
            "references": {},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "rename": {"prepareSupport": false}
        },
        "workspace": {
            "workspaceEdit": {"documentChanges": true},
            "symbol": {},
            "workspaceFolders": true,
            "configuration": true
        },
        "general": {"positionEncodings": ["utf-16"]}
    }))
    .unwrap_or_default();
    InitializeParams {
        process_id: Some(std::process::id()),
        root_uri,
        workspace_folders: folders,
        capabilities,
        client_info: Some(ClientInfo {
            name: "mino".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        ..InitializeParams::default()
    }
}
