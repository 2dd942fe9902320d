//! The command line's words: every flag and subcommand, as clap reads
//! them. `main.rs` acts on them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use mino::frontend::line::OutputFormat;
use mino::policy::Mode;

/// mino: a terminal coding agent whose every tool call goes through one
/// decision (allow, ask, deny) made by the program.
#[derive(Debug, Parser)]
#[command(name = "mino", version, disable_version_flag = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Sub>,
    /// Print the version; with -v (`mino -vV`), the long form: the wires,
    /// the MCP and ACP revisions, the sandbox this machine allows, the build.
    #[arg(short = 'V', long = "version")]
    pub(crate) version: bool,
    /// With -V: the long form of the version.
    #[arg(short = 'v', long = "verbose", requires = "version")]
    pub(crate) verbose: bool,
    /// The project directory (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) cd: Option<PathBuf>,
    /// Read this settings file instead of the home's config.toml (an asked
    /// agent runs on its own).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) settings: Option<PathBuf>,
    /// Ask the agent NAME of [agents.NAME] the question read from stdin,
    /// print its answer and exit; nobody can answer questions.
    #[arg(long, value_name = "NAME", conflicts_with = "prompt")]
    pub(crate) ask: Option<String>,
    /// Start mode for sessions of this run: plan, manual, accept-edits, auto,
    /// bypass (or yolo).
    #[arg(long, value_name = "MODE")]
    pub(crate) mode: Option<Mode>,
    /// Start sessions in bypass mode (same as --mode bypass).
    #[arg(long)]
    pub(crate) yolo: bool,
    /// Model service wire format: openai-responses, openai-chat, anthropic, scripted.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// Base URL of the model service.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Resume the session with this id.
    #[arg(long, value_name = "ID")]
    pub(crate) resume: Option<String>,
    /// Resume this project's most recent session.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub(crate) continue_last: bool,
    /// Run one turn with this prompt and exit; nobody can answer questions.
    /// Piped standard input goes before the prompt (git diff | mino -p
    /// "review this").
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub(crate) prompt: Option<String>,
    /// Output of -p: text, json, or stream-json (one JSON object a line).
    #[arg(long, value_enum, default_value = "text", requires = "prompt")]
    pub(crate) output_format: OutputFormat,
    /// Interactive line mode instead of the full screen (the default when
    /// stdin and stdout are terminals).
    #[arg(long)]
    pub(crate) line: bool,
    /// The built-in demo: a scripted model in a temporary project; no key, no network.
    #[arg(long)]
    pub(crate) demo: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Sub {
    /// Print the version; --verbose adds the wires, the MCP and ACP
    /// revisions, the sandbox this machine allows and the build.
    Version {
        #[arg(short = 'v', long)]
        verbose: bool,
    },
    /// Print a completion script for SHELL (bash, zsh, fish, powershell,
    /// elvish), generated from these very arguments. Bash: `source <(mino
    /// completions bash)`.
    Completions {
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from these very arguments:
    /// `mino man > mino.1; man ./mino.1`.
    Man {
        /// Write mino.1 and a page for each subcommand (mino-eval.1, ...)
        /// into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Serve the Agent Client Protocol on stdin and stdout, for editors.
    Acp,
    /// Inspect the decision.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Saved rules ([[rules]] in the settings).
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Inspect the sandbox bash commands run in.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// The shell gate of auto mode, as a command and as a hook for other agents.
    Gate {
        #[command(subcommand)]
        command: GateCommand,
    },
    /// A session's prompts with the files each turn changed (--list), or
    /// back to the state just before prompt N (--to N); JSON out. Run in
    /// the session's project directory.
    Rewind {
        /// The session's id (or the start of it).
        #[arg(long, value_name = "ID")]
        session: String,
        #[arg(long, conflicts_with = "to", required_unless_present = "to")]
        list: bool,
        /// The prompt, numbered from 1 as --list numbers them.
        #[arg(long, value_name = "N")]
        to: Option<usize>,
        /// Restore the project's files only.
        #[arg(long, requires = "to", conflicts_with_all = ["conversation", "both"])]
        code: bool,
        /// Cut the conversation there only (the files are left).
        #[arg(long, requires = "to", conflicts_with = "both")]
        conversation: bool,
        /// Both (the default).
        #[arg(long, requires = "to")]
        both: bool,
        /// Restore files changed since mino left them too (they are kept
        /// and listed otherwise).
        #[arg(long, requires = "to")]
        force: bool,
    },
    /// Run eval cases (TOML files, or directories of them) through the
    /// turn loop and grade each run against the records it saved.
    Eval {
        /// Case files and directories holding them.
        #[arg(required = true, value_name = "CASES")]
        cases: Vec<PathBuf>,
        /// Runs of each live case; the report gives each pass rate with a
        /// 95% Wilson interval.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
        repeat: u32,
        /// Run every case against the configured model, not its script.
        #[arg(long)]
        live: bool,
        /// Run the cases with this mino binary instead of this one, to
        /// compare two builds on the same cases; it must take `-p`,
        /// `--output-format stream-json`, `--mode` and `--cd`.
        #[arg(long, value_name = "PATH")]
        mino: Option<PathBuf>,
        /// text, or json (one object).
        #[arg(long = "output-format", value_enum, default_value = "text")]
        format: EvalFormat,
        /// Keep each run's project, home (settings, session records, audit
        /// log) and output under DIR, one directory a run
        /// (`CASE-MODEL-N`), instead of deleting them.
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EvalFormat {
    Text,
    Json,
}

/// `mino gate`: the shell gate on its own.
#[derive(Debug, Subcommand)]
pub(crate) enum GateCommand {
    /// Classifies one command and prints one canonical JSON object
    /// (outcome, code, reason, executable, operation); exit 0 only for
    /// allow-final.
    Check {
        /// The shell that would run the command: bash, sh, powershell, cmd.
        #[arg(long, default_value = "bash")]
        shell: String,
        /// The command, after `--`; several words are joined with spaces.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Answers one PreToolUse hook event read on stdin.
    Hook {
        #[arg(long, value_enum)]
        format: HookFormatArg,
        /// What an unresolved command gets: no decision (the other agent's
        /// own rules), or `ask`.
        #[arg(long, value_enum)]
        unresolved: Option<UnresolvedArg>,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum HookFormatArg {
    ClaudeCode,
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum UnresolvedArg {
    Ask,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RulesCommand {
    /// Print, as one JSON object, which rule decides a call and why; with
    /// no call, the rules (exit 0), or exit 2 naming the rule and the
    /// example that disagree.
    Check {
        /// The tool called: bash, write_file, edit_file, read_file, ...
        #[arg(long)]
        tool: Option<String>,
        /// bash's command line, exactly as the model would send it.
        #[arg(long, conflicts_with_all = ["path", "url"])]
        command: Option<String>,
        /// A file tool's path, relative to the project.
        #[arg(long, conflicts_with = "url")]
        path: Option<String>,
        /// fetch_content's URL.
        #[arg(long)]
        url: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SandboxCommand {
    /// Print, as one JSON object, what this machine supports and what a
    /// command would see (masked, writable and read-only paths, network).
    Check,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Print how a call would be decided, as one JSON object
    /// (decision, unasked, code, reason); the call itself never runs.
    Check {
        /// The permission mode to decide in: plan, manual, accept-edits,
        /// auto, bypass (or yolo).
        #[arg(long)]
        mode: Mode,
        /// The tool called: read_file, write_file, edit_file, list_dir,
        /// search, bash, fetch_content, skill_view, plan.
        #[arg(long)]
        tool: String,
        /// The file tools' path argument, relative to the project.
        #[arg(long)]
        path: Option<String>,
        /// bash's command line, exactly as the model would send it.
        #[arg(long)]
        command: Option<String>,
        /// fetch_content's URL.
        #[arg(long)]
        url: Option<String>,
        /// plan's action (show, set, add, update, remove) or lsp's
        /// (definition, references, hover, symbols, diagnostics, rename).
        #[arg(long)]
        action: Option<String>,
    },
}
