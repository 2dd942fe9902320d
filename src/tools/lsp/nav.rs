//! The `lsp` navigation actions, confined reads that never ask:
//! definition, references, hover, a file's or the workspace's symbols, a
//! file's or every open file's diagnostics. Each reads the file it names
//! through the confined open, hands its text to the server, and lists what
//! the server points at through `results.rs` (so protected files, links and
//! places outside the project are left out and said so). Never writes.

use std::sync::Arc;

use lsp_types::request::{
    DocumentSymbolRequest, GotoDefinition, HoverRequest, References, WorkspaceSymbolRequest,
};
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams,
    GotoDefinitionResponse, HoverContents, HoverParams, MarkedString, OneOf, PartialResultParams,
    Position, ReferenceContext, ReferenceParams, SymbolKind, TextDocumentIdentifier,
    TextDocumentPositionParams, Uri, WorkDoneProgressParams, WorkspaceSymbolParams,
    WorkspaceSymbolResponse,
};
use tokio_util::sync::CancellationToken;

use super::diagnostics::diagnostics_of;
use super::position::{column_of, line_of};
use super::results::{Raw, render};
use super::{Action, At, Hub, NAME, no_file_facts};
use crate::lsp::Connected;
use crate::policy::{CallFacts, PathTarget, ProtectedPaths};
use crate::tools::{BoxFuture, Field, PreparedCall, Project, ToolContext, ToolOutcome};

/// The most bytes of a file handed to a server.
const FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// The most hover text kept.
const HOVER_LIMIT: usize = 8 * 1024;

/// A call that carries its facts to the decision and cannot run: its
/// target may not be read, or there are no servers.
pub(super) struct Refused {
    pub facts: CallFacts,
    pub why: &'static str,
}

impl PreparedCall for Refused {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        Vec::new()
    }

    fn run(self: Box<Self>, _cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(std::future::ready(ToolOutcome::error(self.why)))
    }
}

enum What {
    AtSymbol(Action, At),
    File(Action, String),
    WorkspaceSymbols(String),
    AllDiagnostics,
}

struct NavCall {
    project: Arc<Project>,
    protected: Arc<ProtectedPaths>,
    hub: Hub,
    facts: CallFacts,
    what: What,
}

pub(super) fn symbol_call(
    cx: &ToolContext,
    hub: Hub,
    action: Action,
    facts: CallFacts,
    _target: PathTarget,
    at: At,
) -> Box<dyn PreparedCall> {
    nav(cx, hub, facts, What::AtSymbol(action, at))
}

pub(super) fn file_call(
    cx: &ToolContext,
    hub: Hub,
    action: Action,
    facts: CallFacts,
    _target: PathTarget,
    relative: String,
) -> Box<dyn PreparedCall> {
    nav(cx, hub, facts, What::File(action, relative))
}

pub(super) fn workspace_symbols(
    cx: &ToolContext,
    hub: Hub,
    query: String,
) -> Box<dyn PreparedCall> {
    nav(cx, hub, no_file_facts(), What::WorkspaceSymbols(query))
}

pub(super) fn all_diagnostics(cx: &ToolContext, hub: Hub) -> Box<dyn PreparedCall> {
    nav(cx, hub, no_file_facts(), What::AllDiagnostics)
}

fn nav(cx: &ToolContext, hub: Hub, facts: CallFacts, what: What) -> Box<dyn PreparedCall> {
    Box::new(NavCall {
        project: Arc::clone(&cx.project),
        protected: Arc::clone(&cx.protected),
        hub,
        facts,
        what,
    })
}

impl PreparedCall for NavCall {
    fn facts(&self) -> &CallFacts {
        &self.facts
    }

    fn fields(&self) -> Vec<Field> {
        Vec::new()
    }

    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome> {
        Box::pin(async move {
            tokio::select! {
                biased;
                () = cancel.cancelled() => ToolOutcome::interrupted("Interrupted; the language server's answer was not awaited."),
                outcome = self.answer() => outcome,
            }
        })
    }
}

/// A project file handed to its server.
pub(super) struct Opened {
    pub connected: Connected,
    pub uri: Uri,
    pub text: String,
    /// `lsp: started NAME` the first time, else empty.
    pub note: String,
}

/// Reads `relative` confined, finds its server (starting it on first use)
/// and tells the server what the file holds.
pub(super) async fn open_file(
    project: &Arc<Project>,
    hub: &Hub,
    relative: &str,
) -> Result<Opened, String> {
    let (reader, name) = (Arc::clone(project), relative.to_string());
    let file = tokio::task::spawn_blocking(move || reader.read(&name, FILE_LIMIT))
        .await
        .map_err(|e| format!("reading {relative} stopped: {e}"))?
        .map_err(|e| e.to_string())?;
    if file.truncated {
        return Err(format!(
            "{relative} is {} bytes; lsp hands files of at most {FILE_LIMIT} bytes to a server.",
            file.size
        ));
    }
    let text =
        String::from_utf8(file.bytes).map_err(|_| format!("{relative} is not UTF-8 text."))?;
    let connected = hub.for_file(relative).await.map_err(|e| e.to_string())?;
    let note = if connected.first_start {
        format!("lsp: started {}\n", connected.server)
    } else {
        String::new()
    };
    let uri = connected
        .client
        .sync_document(
            &project.root().join(relative),
            &connected.language_id,
            text.clone(),
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(Opened {
        connected,
        uri,
        text,
        note,
    })
}

/// The server's position of `at` in `text`, or why there is none.
pub(super) fn position_of(text: &str, at: &At) -> Result<Position, String> {
    let shown_line = at.line + 1;
    let line = line_of(text, at.line as usize).ok_or_else(|| {
        format!(
            "{} has no line {shown_line}; it has {} lines.",
            at.relative,
            text.lines().count()
        )
    })?;
    let column = column_of(line, &at.symbol).ok_or_else(|| {
        format!(
            "{:?} is not on line {shown_line} of {}; the line reads: {}",
            at.symbol,
            at.relative,
            line.trim()
        )
    })?;
    Ok(Position::new(at.line, column))
}

fn document(uri: &Uri) -> TextDocumentIdentifier {
    TextDocumentIdentifier { uri: uri.clone() }
}

impl NavCall {
    async fn answer(self) -> ToolOutcome {
        let result = match &self.what {
            What::AtSymbol(action, at) => self.at_symbol(*action, at).await,
            What::File(Action::Symbols, relative) => self.file_symbols(relative).await,
            What::File(_, relative) => self.file_diagnostics(relative).await,
            What::WorkspaceSymbols(query) => self.workspace_symbols(query).await,
            What::AllDiagnostics => self.every_diagnostic().await,
        };
        match result {
            Ok(text) => ToolOutcome::completed(text),
            Err(text) => ToolOutcome::error(text),
        }
    }

    /// `raw` as the model reads it, the files' lines read confined on the
    /// blocking pool.
    async fn render(&self, raw: Vec<Raw>, heading: String, none: String) -> Result<String, String> {
        render(&self.project, &self.protected, raw, heading, none).await
    }

    async fn at_symbol(&self, action: Action, at: &At) -> Result<String, String> {
        let opened = open_file(&self.project, &self.hub, &at.relative).await?;
        let position = position_of(&opened.text, at)?;
        let client = &opened.connected.client;
        let place = TextDocumentPositionParams {
            text_document: document(&opened.uri),
            position,
        };
        let where_ = format!("{} at {}:{}", at.symbol, at.relative, at.line + 1);
        let text = match action {
            Action::Definition => {
                let answer = client
                    .request::<GotoDefinition>(GotoDefinitionParams {
                        text_document_position_params: place,
                        work_done_progress_params: WorkDoneProgressParams::default(),
                        partial_result_params: PartialResultParams::default(),
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                let raw = match answer {
                    None => Vec::new(),
                    Some(GotoDefinitionResponse::Scalar(location)) => vec![Raw::location(location)],
                    Some(GotoDefinitionResponse::Array(list)) => {
                        list.into_iter().map(Raw::location).collect()
                    }
                    Some(GotoDefinitionResponse::Link(links)) => links
                        .into_iter()
                        .map(|link| Raw::At {
                            uri: link.target_uri,
                            position: link.target_selection_range.start,
                            prefix: String::new(),
                        })
                        .collect(),
                };
                self.render(
                    raw,
                    format!("Definition of {where_}:"),
                    format!("The language server knows no definition of {where_}."),
                )
                .await?
            }
            Action::References => {
                let answer = client
                    .request::<References>(ReferenceParams {
                        text_document_position: place,
                        work_done_progress_params: WorkDoneProgressParams::default(),
                        partial_result_params: PartialResultParams::default(),
                        context: ReferenceContext {
                            include_declaration: true,
                        },
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                let raw = answer
                    .unwrap_or_default()
                    .into_iter()
                    .map(Raw::location)
                    .collect();
                self.render(
                    raw,
                    format!("References to {where_}:"),
                    format!("The language server knows no references to {where_}."),
                )
                .await?
            }
            _ => {
                let answer = client
                    .request::<HoverRequest>(HoverParams {
                        text_document_position_params: place,
                        work_done_progress_params: WorkDoneProgressParams::default(),
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                match answer.map(|h| hover_text(h.contents)) {
                    Some(text) if !text.trim().is_empty() => format!("Hover for {where_}:\n{text}"),
                    _ => format!("The language server has no hover text for {where_}."),
                }
            }
        };
        Ok(format!("{}{text}", opened.note))
    }

    async fn file_symbols(&self, relative: &str) -> Result<String, String> {
        let opened = open_file(&self.project, &self.hub, relative).await?;
        let answer = opened
            .connected
            .client
            .request::<DocumentSymbolRequest>(DocumentSymbolParams {
                text_document: document(&opened.uri),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            })
            .await
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        match answer {
            None => {}
            Some(DocumentSymbolResponse::Flat(list)) => {
                for symbol in list {
                    raw.push(Raw::At {
                        prefix: format!("{} {} ", kind_name(symbol.kind), symbol.name),
                        uri: symbol.location.uri,
                        position: symbol.location.range.start,
                    });
                }
            }
            Some(DocumentSymbolResponse::Nested(list)) => {
                nested(&mut raw, &opened.uri, &list, 0);
            }
        }
        let text = self
            .render(
                raw,
                format!("Symbols of {relative}:"),
                format!("The language server lists no symbols in {relative}."),
            )
            .await?;
        Ok(format!("{}{text}", opened.note))
    }

    async fn workspace_symbols(&self, query: &str) -> Result<String, String> {
        let running = self.hub.running().await;
        if running.is_empty() {
            return Err(
                "No language server is running yet: give path (a file of the language) to start one."
                    .into(),
            );
        }
        let mut raw = Vec::new();
        for (_, client) in running {
            let answer = client
                .request::<WorkspaceSymbolRequest>(WorkspaceSymbolParams {
                    query: query.to_string(),
                    work_done_progress_params: WorkDoneProgressParams::default(),
                    partial_result_params: PartialResultParams::default(),
                })
                .await
                .map_err(|e| e.to_string())?;
            match answer {
                None => {}
                Some(WorkspaceSymbolResponse::Flat(list)) => {
                    for symbol in list {
                        raw.push(Raw::At {
                            prefix: format!("{} {} ", kind_name(symbol.kind), symbol.name),
                            uri: symbol.location.uri,
                            position: symbol.location.range.start,
                        });
                    }
                }
                Some(WorkspaceSymbolResponse::Nested(list)) => {
                    for symbol in list {
                        let (uri, position) = match symbol.location {
                            OneOf::Left(location) => (location.uri, location.range.start),
                            OneOf::Right(location) => (location.uri, Position::new(0, 0)),
                        };
                        raw.push(Raw::At {
                            prefix: format!("{} {} ", kind_name(symbol.kind), symbol.name),
                            uri,
                            position,
                        });
                    }
                }
            }
        }
        self.render(
            raw,
            format!("Symbols matching {query:?}:"),
            format!("The language server lists no symbols matching {query:?}."),
        )
        .await
    }

    async fn file_diagnostics(&self, relative: &str) -> Result<String, String> {
        let (text, note) = diagnostics_of(&self.project, &self.hub, relative, usize::MAX).await?;
        Ok(format!("{note}{text}"))
    }

    async fn every_diagnostic(&self) -> Result<String, String> {
        let mut raw = Vec::new();
        for (_, client) in self.hub.running().await {
            for uri in client.open_documents() {
                let Ok(uri) = uri.parse::<Uri>() else {
                    continue;
                };
                for diagnostic in client.diagnostics(uri.as_str()) {
                    raw.push(Raw::Diagnostic {
                        uri: uri.clone(),
                        diagnostic: Box::new(diagnostic),
                    });
                }
            }
        }
        let count = raw.len();
        self.render(
            raw,
            format!(
                "{} in the open files:",
                crate::tools::wording::plural(count, "diagnostic")
            ),
            "No diagnostics in the files the language servers have open.".into(),
        )
        .await
    }
}

fn nested(raw: &mut Vec<Raw>, uri: &Uri, list: &[DocumentSymbol], depth: usize) {
    for symbol in list {
        raw.push(Raw::At {
            uri: uri.clone(),
            position: symbol.selection_range.start,
            prefix: format!(
                "{}{} {} ",
                "  ".repeat(depth),
                kind_name(symbol.kind),
                symbol.name
            ),
        });
        if let Some(children) = &symbol.children {
            nested(raw, uri, children, depth + 1);
        }
    }
}

fn kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FILE => "file",
        SymbolKind::MODULE => "module",
        SymbolKind::NAMESPACE => "namespace",
        SymbolKind::PACKAGE => "package",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::ENUM => "enum",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        SymbolKind::STRUCT => "struct",
        SymbolKind::ENUM_MEMBER => "variant",
        SymbolKind::TYPE_PARAMETER => "type parameter",
        _ => "symbol",
    }
}

fn hover_text(contents: HoverContents) -> String {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => l.value,
    };
    let mut text = match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(list) => list.into_iter().map(marked).collect::<Vec<_>>().join("\n"),
        HoverContents::Markup(m) => m.value,
    };
    if text.len() > HOVER_LIMIT {
        let mut end = HOVER_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n(hover text cut)");
    }
    let _ = NAME;
    text
}
