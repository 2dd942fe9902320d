//! The tools the model can call. A tool validates its arguments and
//! establishes the facts (`prepare`), inspects before a write (`inspect`),
//! then runs (`run`). It never decides whether it may run: `policy` does.

pub mod bash;
pub mod bash_kill;
pub mod bash_output;
mod blocking;
pub mod edit_file;
mod edit_nearest;
pub mod editor;
pub mod fetch_content;
pub mod fetch_destination;
pub mod final_answer;
pub mod fs;
pub mod gate;
pub mod git_evidence;
pub mod list_dir;
pub mod lsp;
pub mod plan;
pub mod read_file;
pub mod registry;
pub mod search;
pub mod shell_tools;
pub mod skill_view;
pub mod small;
pub(crate) mod wording;
pub mod write_file;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use crate::model::ToolSpec;
use crate::policy::{CallFacts, ProtectedPaths};
use crate::sandbox::{Planner, Sandbox, SandboxSettings};
use crate::secrets::HeldSecrets;
use crate::session::Plan;
pub use bash::LiveOutput;
pub use fs::confine::{ConfineError, Project};
pub use registry::{Registry, ToolSource};

/// A boxed future, for the object-safe `run`.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One field a confirmation shows and a record line repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Field {
    pub label: String,
    pub value: String,
    pub kind: FieldKind,
    /// What the value is, where a front end shows it apart from the rest.
    #[serde(default, skip_serializing_if = "FieldRole::is_plain")]
    pub role: FieldRole,
}

/// What a field's value is, for the front ends that show some apart: the
/// full screen's record lines show a command as its own lines, the place
/// a call runs only when it changed, and no text its diff says again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldRole {
    #[default]
    Plain,
    /// A command line, shown as its lines (a here-document too).
    Command,
    /// Where a call runs (its working directory, its sandbox).
    Place,
    /// Text the call's diff says too (an edit's Remove and Insert).
    SaidByDiff,
    /// The project path (or paths) a call reads or writes.
    Path,
    /// The line an edit starts at.
    StartingLine,
    /// The address a call fetches.
    Url,
    /// The MCP server a call goes to.
    Server,
    /// The host and port a command wants to reach.
    Host,
}

impl FieldRole {
    pub fn is_plain(&self) -> bool {
        *self == FieldRole::Plain
    }

    /// The label every field of this role has (`Field::named`); the roles
    /// that stand for many different fields have none.
    pub fn label(&self) -> Option<&'static str> {
        match self {
            FieldRole::Plain | FieldRole::Command | FieldRole::Place | FieldRole::SaidByDiff => {
                None
            }
            FieldRole::Path => Some("Path"),
            FieldRole::StartingLine => Some("Starting line"),
            FieldRole::Url => Some("URL"),
            FieldRole::Server => Some("Server"),
            FieldRole::Host => Some("Host"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// Shown as `Label: "value"`.
    Text,
    /// A unified diff, shown coloured in a dialog and as text in a record.
    Diff,
    /// A tool-specific warning: shown in a dialog, never repeated in a record.
    Warning,
    /// A value of many lines (an MCP call's arguments as pretty JSON): its
    /// own lines in a dialog, scrolled with the rest; `Label: "value"` in a
    /// record.
    Block,
}

impl Field {
    pub fn text(label: &str, value: impl Into<String>) -> Self {
        Self {
            label: label.to_string(),
            value: value.into(),
            kind: FieldKind::Text,
            role: FieldRole::Plain,
        }
    }

    /// A text field of `role`, labelled as that role always is.
    pub fn named(role: FieldRole, value: impl Into<String>) -> Self {
        Self::text(role.label().unwrap_or_default(), value).with_role(role)
    }

    /// The value of the first text field of `role`.
    pub fn find(fields: &[Field], role: FieldRole) -> Option<&str> {
        fields
            .iter()
            .find(|f| f.kind == FieldKind::Text && f.role == role)
            .map(|f| f.value.as_str())
    }

    pub fn block(label: &str, value: impl Into<String>) -> Self {
        Self {
            label: label.to_string(),
            value: value.into(),
            kind: FieldKind::Block,
            role: FieldRole::Plain,
        }
    }

    pub fn diff(value: impl Into<String>) -> Self {
        Self {
            label: "Diff".to_string(),
            value: value.into(),
            kind: FieldKind::Diff,
            role: FieldRole::Plain,
        }
    }

    /// This field, of `role`.
    pub fn with_role(mut self, role: FieldRole) -> Self {
        self.role = role;
        self
    }

    pub fn warning(value: impl Into<String>) -> Self {
        Self {
            label: String::new(),
            value: value.into(),
            kind: FieldKind::Warning,
            role: FieldRole::Plain,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Completed,
    Error,
    Interrupted,
}

/// The result a run hands back: the text the model receives and a one-line
/// summary for the chat pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub status: ToolStatus,
    pub output: String,
    /// The `plan` tool only: the session's whole plan after the change,
    /// which the driver saves with the session before it is shown.
    pub plan: Option<Plan>,
}

impl ToolOutcome {
    pub fn completed(output: impl Into<String>) -> Self {
        Self {
            status: ToolStatus::Completed,
            output: output.into(),
            plan: None,
        }
    }

    pub fn error(output: impl Into<String>) -> Self {
        Self {
            status: ToolStatus::Error,
            output: output.into(),
            plan: None,
        }
    }

    pub fn interrupted(output: impl Into<String>) -> Self {
        Self {
            status: ToolStatus::Interrupted,
            output: output.into(),
            plan: None,
        }
    }
}

/// Why a call could not be prepared or inspected. The text is what the
/// model receives as the call's error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: &'static str, message: String },
    #[error("{0}")]
    Path(#[from] ConfineError),
    #[error("{0}")]
    Failed(String),
}

/// Limits and settings the tools need; built once from `Settings`.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub project: Arc<Project>,
    /// Built-in and user-added protected patterns (search and list skip them).
    pub protected: Arc<ProtectedPaths>,
    pub bash_timeout: Duration,
    /// Bytes of bash output kept (stdout and stderr together).
    pub bash_output_limit: usize,
    /// Environment variables removed from every child process (the model
    /// service's key variable, so a command cannot print it into context).
    pub hidden_env: Vec<String>,
    /// The secret values mino holds; every tool result is redacted with
    /// them before it is saved or sent.
    pub secrets: HeldSecrets,
    /// The shell gate's rules and the bypass guard's switch.
    pub gate: Arc<gate::GateSetup>,
    /// mino's own binary, which every bash call runs under (its
    /// `__bash-guard`), so that nothing a command starts outlives the call
    /// or mino. `None` runs bash directly, and only its process group is
    /// killed.
    pub bash_guard: Option<PathBuf>,
    /// `[tools] fetch_private_hosts = "allow"`: a private destination is
    /// fetched like any other (by default it is its own call kind, which
    /// asks in every mode).
    pub fetch_private_hosts_allowed: bool,
    /// The HTTP clients `fetch_content` calls share (built on first use).
    pub fetch_clients: Arc<fetch_destination::FetchClients>,
    /// The editor driving mino, when its front end has one: file reads see
    /// its buffers and writes go through it, after mino's own decision and
    /// confinement (see `editor.rs`).
    pub editor: editor::Editor,
    /// The sandbox bash commands run in, and the plans for them.
    pub sandbox: Arc<Planner>,
    /// The language servers of this run (`None`: the lsp tool is off).
    pub lsp: Option<Arc<crate::lsp::LspHub>>,
    /// The execution surfaces (policy's table): an lsp rename never
    /// writes there.
    pub surfaces: crate::policy::Surfaces,
    /// The session's background processes (`bash` with `background:
    /// true`), read by `bash_output` and stopped by `bash_kill`.
    pub shells: Arc<bash::Shells>,
}

impl ToolContext {
    /// Defaults of DESIGN section 11 for `project`: 30 s, 64 KiB, built-in
    /// protected patterns, and no sandbox (the agent's launch sets one up).
    pub fn new(project: Project) -> Self {
        let protected = Arc::new(ProtectedPaths::builtin());
        let sandbox = Planner::new(
            Sandbox::off(SandboxSettings::default()),
            project.root().to_path_buf(),
            None,
            None,
            protected.clone(),
        );
        Self {
            project: Arc::new(project),
            protected,
            bash_timeout: Duration::from_secs(30),
            bash_output_limit: 64 * 1024,
            hidden_env: Vec::new(),
            secrets: HeldSecrets::default(),
            gate: Arc::new(gate::GateSetup::default()),
            bash_guard: None,
            fetch_private_hosts_allowed: false,
            fetch_clients: Arc::default(),
            editor: None,
            sandbox: Arc::new(sandbox),
            lsp: None,
            surfaces: crate::policy::Surfaces::default(),
            shells: Arc::default(),
        }
    }
}

/// A call that has been prepared: its facts, the fields a question shows,
/// and, after `inspect`, what the write was bound to.
pub trait PreparedCall: Send {
    fn facts(&self) -> &CallFacts;

    /// What a confirmation shows and an unasked record line repeats.
    fn fields(&self) -> Vec<Field>;

    /// Whether `inspect` must run before the call may run: a write binds
    /// itself to the file as inspection read it.
    fn needs_inspection(&self) -> bool {
        false
    }

    /// Writes only: read the current file, take its digest, build the
    /// preview. Runs only when the call was not denied.
    fn inspect(&mut self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Bash only: variables to set in the command's environment (the shell
    /// gate's hardened git environment). Other tools ignore it.
    fn set_env(&mut self, _vars: Vec<(String, String)>) {}

    /// `plan` only: the session's plan as it stands, given just before
    /// the call runs. Other tools ignore it.
    fn give_plan(&mut self, _plan: &Plan) {}

    /// Bash only: a reader of what the command prints while it runs, taken
    /// before `run`, so it can be shown as it arrives (redacted first, as
    /// the result is). Other tools have none.
    fn live_output(&self) -> Option<LiveOutput> {
        None
    }

    /// Runs the call. Cancelling `cancel` stops it at once.
    fn run(self: Box<Self>, cancel: CancellationToken) -> BoxFuture<ToolOutcome>;
}

/// A tool the model can be offered.
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;

    /// Validates `args` and establishes the facts. Never reads the contents
    /// of a file and never decides.
    fn prepare(&self, args: &Value, cx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError>;
}

/// Deserializes a tool's arguments, naming the tool on failure.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &'static str,
    args: &Value,
) -> Result<T, ToolError> {
    serde_json::from_value(args.clone()).map_err(|e| ToolError::InvalidArguments {
        tool,
        message: e.to_string(),
    })
}
