//! The facts a tool establishes about one prepared call: what kind of call it
//! is, which project paths it touches and what the filesystem said about them,
//! and the verdicts of the hook and the shell gate when those ran.

use std::fmt;

use serde::Serialize;

/// The key a session's answers are remembered under: a tool name, or
/// `agent/tool` for a call made by an asked agent.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ToolKey(String);

impl ToolKey {
    pub fn new(tool: &str) -> Self {
        Self(tool.to_string())
    }

    /// A call made by the asked agent `agent`.
    pub fn for_agent(agent: &str, tool: &str) -> Self {
        Self(format!("{agent}/{tool}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a call is, for the mode table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallKind {
    /// read_file, skill_view, list_dir, search: reads confined to the project.
    ConfinedRead,
    /// write_file, edit_file, fetch_content with `output`.
    FileWrite,
    /// The `plan` tool's set, add, update and remove: they change the
    /// session's plan and nothing else. They run in plan mode (that is
    /// what it is for) and ask in manual.
    PlanChange,
    /// A file write to an execution surface (`surfaces.rs`): code written
    /// there runs later, so it asks in every mode. `why` names the surface.
    SurfaceWrite { why: String },
    /// bash, in the sandbox (or where there is none).
    Shell,
    /// bash with `sandbox: false`: asks in every mode. `run_in_bypass` when
    /// the user's settings say `[sandbox] unsandboxed_in_bypass = "run"`.
    UnsandboxedShell { run_in_bypass: bool },
    /// bash_kill: stops a background process this session started. Asks in
    /// manual like bash, runs shown in the looser modes; plan mode refuses it
    /// like every call that is not a read.
    ShellKill,
    /// fetch_content: a URL is a destination that data can leave through.
    Fetch,
    /// fetch_content to a loopback, link-local or private address: asks in
    /// every mode.
    FetchPrivate,
    /// A tool of an MCP server; `trust_ask` when the user marked the server
    /// `ask`; `claims` what the server's tool list said about the tool.
    Mcp {
        server: String,
        trust_ask: bool,
        claims: ToolClaims,
    },
}

/// What an MCP server's `tools/list` claimed about one of its tools (its
/// annotations), as the program read them from that list: never from a
/// model's text. The server's word, not a fact about the tool: a claim of
/// harm tightens always; a claim of harmlessness loosens only when the
/// user's own settings trust that server's annotations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolClaims {
    /// `destructiveHint: true`, given explicitly (the specification's
    /// default of true for an unannotated tool changes nothing: every MCP
    /// call already asks outside bypass).
    pub destructive: bool,
    /// `readOnlyHint: true`.
    pub read_only: bool,
    /// `[mcp.servers.NAME] trust_annotations = true` in the user's settings.
    pub trusted: bool,
}

impl ToolClaims {
    /// A claimed read-only tool of a trusted server that claims no harm too.
    pub fn trusted_read_only(self) -> bool {
        self.trusted && self.read_only && !self.destructive
    }
}

/// One path a file tool would touch, as the program resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathTarget {
    /// Inside the project: the normalized project-relative path (`/`
    /// separators, no `.` or `..`), and what a no-follow walk of it found.
    Inside {
        relative: String,
        /// The first component (as a relative path) that is a symbolic link.
        through_link: Option<String>,
        /// The target is a regular file with more than one hard link.
        hard_linked: bool,
    },
    /// Absolute outside the project, or escaping it with `..`.
    Outside { given: String },
}

/// The verdict of the user's preToolCall hook, when one is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookVerdict {
    /// The hook lets the call through to the rest of the decision.
    Continue,
    /// The hook denies: the call is never put to the user.
    Deny { reason: String },
}

/// The shell gate's outcome for a bash call in auto mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    AllowFinal,
    DenyFinal {
        code: &'static str,
        reason: String,
    },
    /// Not allowed and not denied outright: put to the user where someone can
    /// answer; otherwise denied with this code.
    Unresolved {
        code: &'static str,
        reason: String,
    },
}

/// Everything `decide` knows about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFacts {
    pub tool: ToolKey,
    pub kind: CallKind,
    /// The project paths the call touches (file tools; empty otherwise).
    pub targets: Vec<PathTarget>,
    pub hook: Option<HookVerdict>,
    /// Bash in auto mode: the shell gate's verdict. `None` means the gate did
    /// not run, and the call asks.
    pub gate: Option<GateVerdict>,
    /// Bash: the command line, exactly as it will run.
    pub command: Option<String>,
    /// Bash: the bypass guard's reason, when the command is in the gate's
    /// catastrophic subset and the guard is on. Read in bypass mode only.
    pub guard: Option<String>,
    /// fetch_content: the URL's parts, as the tool parsed them.
    pub url: Option<Box<super::saved::UrlParts>>,
    /// MCP calls: every string in the arguments. A server decides for itself
    /// what a string means, so one that names a protected file is refused.
    pub argument_strings: Vec<String>,
    /// The person typed this command themselves (`!command` in the input
    /// box): set by the turn machine for its own person's turn, never from
    /// anything a model or an asked agent sent.
    pub typed_by_person: bool,
}

impl CallFacts {
    pub fn new(tool: ToolKey, kind: CallKind) -> Self {
        Self {
            tool,
            kind,
            targets: Vec::new(),
            hook: None,
            gate: None,
            command: None,
            guard: None,
            url: None,
            argument_strings: Vec::new(),
            typed_by_person: false,
        }
    }

    pub fn with_target(mut self, target: PathTarget) -> Self {
        self.targets.push(target);
        self
    }
}
