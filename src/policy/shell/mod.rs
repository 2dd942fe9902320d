//! The shell gate of auto mode (DESIGN section 5, the Auto Mode Gate seed):
//! one command and the shell that will run it in, a verdict out, in the
//! seed's precedence. Pure: the evidence about a trusted executable (what a
//! stat and a SHA-256 found) is taken by the caller and handed in; the gate
//! never touches the filesystem, never resolves PATH, never expands or runs
//! anything, and never rewrites a command.

mod codes;
pub mod danger;
mod lex;
mod other;
pub mod readonly;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use codes::{
    AMBIGUOUS, CATASTROPHIC, DANGEROUS, IDENTITY_MISMATCH, IDENTITY_MISSING, INPUT_MALFORMED,
    INPUT_MISSING, INPUT_OVERSIZED, INTERNAL, JUDGE_CANCELLED, JUDGE_DENIED, JUDGE_ERROR,
    JUDGE_INVALID_RESPONSE, JUDGE_TIMEOUT, JUDGE_UNAVAILABLE, PROTECTED_PATH, UNKNOWN_SHELL,
};
pub use codes::{CODES, Code, Outcome};
pub use danger::Danger;

use super::ProtectedPaths;

/// The longest command the gate reads, in bytes. Longer input is
/// `AMG_DENY_INPUT_OVERSIZED` without being looked at.
pub const MAX_INPUT_BYTES: usize = 8 * 1024;

/// The shells the gate knows. The shell that parses must be the one that
/// runs: mino's bash tool runs `bash -c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    Bash,
    Sh,
    PowerShell,
    Cmd,
}

/// The names `--shell` accepts.
pub const SHELL_NAMES: &[&str] = &["bash", "sh", "powershell", "cmd"];

impl Shell {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "bash" => Some(Shell::Bash),
            "sh" => Some(Shell::Sh),
            "powershell" | "pwsh" => Some(Shell::PowerShell),
            "cmd" => Some(Shell::Cmd),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Sh => "sh",
            Shell::PowerShell => "powershell",
            Shell::Cmd => "cmd",
        }
    }

    fn dialect(self) -> Dialect {
        match self {
            Shell::Bash | Shell::Sh => Dialect::Posix,
            Shell::PowerShell => Dialect::PowerShell,
            Shell::Cmd => Dialect::Cmd,
        }
    }
}

/// The syntax family a table row applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Posix,
    PowerShell,
    Cmd,
}

/// One entry of the user's trusted-executable list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    /// Absolute, exactly as configured.
    pub path: String,
    /// Lowercase hex SHA-256, when the list gives one.
    pub sha256: Option<String>,
}

/// What the gate is configured with, built once from the settings.
#[derive(Debug, Clone)]
pub struct Rules {
    pub trusted: Vec<Trusted>,
    /// The exact git path a judge may consider.
    pub git: Option<String>,
    pub protected: ProtectedPaths,
    /// mino's home directory, never named by an allowed command.
    pub mino_home: Option<String>,
    /// The user's home and the project root, for the catastrophic subset.
    pub home: Option<String>,
    pub project_root: Option<String>,
}

impl Rules {
    pub fn new(protected: ProtectedPaths) -> Self {
        Self {
            trusted: Vec::new(),
            git: None,
            protected,
            mino_home: None,
            home: None,
            project_root: None,
        }
    }

    fn trusted(&self, path: &str) -> Option<&Trusted> {
        self.trusted.iter().find(|t| t.path == path)
    }

    /// An argument names a protected path (every part between `=` and `:`
    /// is looked at, so `--file=.env` and `HEAD:.env` count) or mino's home.
    pub fn names_protected(&self, arg: &str) -> bool {
        let in_home = |p: &str| {
            self.mino_home.as_ref().is_some_and(|home| {
                let home = home.trim_end_matches('/');
                p == home || p.strip_prefix(home).is_some_and(|r| r.starts_with('/'))
            })
        };
        arg.split(['=', ':']).any(|part| {
            let part = part.replace('\\', "/");
            let trimmed = part.trim_start_matches("./").trim_end_matches('/');
            in_home(&part)
                || (!trimmed.is_empty()
                    && (self.protected.is_protected(trimmed)
                        || self.protected.is_protected(trimmed.trim_start_matches('/'))))
        })
    }
}

/// What the caller found at a trusted executable's path, at decision time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The path that was examined, exactly as the command wrote it.
    pub path: String,
    pub file: FileEvidence,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvidence {
    /// Nothing there, or it could not be examined.
    Missing { why: String },
    /// Something other than a regular file (after following links).
    NotRegular,
    Regular {
        /// The permission bits.
        mode: u32,
        owner: u32,
        /// The uid mino runs as.
        user: u32,
        /// Lowercase hex, taken when the list gives a digest to match.
        sha256: Option<String>,
    },
}

/// The kinds of words a judge is told about: never their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentKind {
    Option,
    Separator,
    Revision,
    Path,
    Word,
}

/// Whether every option is in the known read-only list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionRisk {
    None,
    Unlisted,
}

/// What a judge may be asked: enums only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeRequest {
    pub shell: Shell,
    pub operation: &'static str,
    pub option_risk: OptionRisk,
    pub argument_kinds: Vec<ArgumentKind>,
}

/// The gate's verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Every outcome but `allow-final` has one.
    pub code: Option<&'static str>,
    pub reason: String,
    /// The trusted executable it recognised at the start, if any.
    pub executable: Option<String>,
    /// What it recognised the command to do (`status`, `ls`, ...).
    pub operation: Option<String>,
    /// The dangerous part of the input is in the bypass guard's subset.
    pub catastrophic: bool,
    /// For `unresolved-eligible`: what a judge may be told.
    pub judge: Option<JudgeRequest>,
}

impl Verdict {
    fn code(code: &'static str, reason: impl Into<String>) -> Self {
        let outcome = CODES
            .iter()
            .find(|c| c.name == code)
            .map_or(Outcome::DenyFinal, |c| c.outcome);
        Self {
            outcome,
            code: Some(code),
            reason: reason.into(),
            executable: None,
            operation: None,
            catastrophic: false,
            judge: None,
        }
    }

    fn with_executable(mut self, executable: Option<&str>) -> Self {
        self.executable = executable.map(str::to_string);
        self
    }
}

impl Verdict {
    /// The gate could not finish its evaluation.
    pub fn internal(reason: impl Into<String>) -> Self {
        Self::code(INTERNAL, reason)
    }

    /// What `decide` reads of it.
    pub fn for_decision(&self) -> super::GateVerdict {
        let code = self.code.unwrap_or(INTERNAL);
        match self.outcome {
            Outcome::AllowFinal => super::GateVerdict::AllowFinal,
            Outcome::DenyFinal => super::GateVerdict::DenyFinal {
                code,
                reason: self.reason.clone(),
            },
            Outcome::UnresolvedEligible | Outcome::UnresolvedIneligible => {
                super::GateVerdict::Unresolved {
                    code,
                    reason: self.reason.clone(),
                }
            }
        }
    }

    /// One line for a dialog or a record: the outcome, the code, the reason.
    pub fn describe(&self) -> String {
        match self.code {
            Some(code) => format!("{} {code}: {}", self.outcome.as_str(), self.reason),
            None => format!("{}: {}", self.outcome.as_str(), self.reason),
        }
    }
}

/// A command read into words, for whichever shell.
struct Read {
    /// Words of each command found (outer and nested), after quote removal.
    commands: Vec<Vec<String>>,
    /// Redirection targets written to, for the protected-path rule.
    written: Vec<String>,
    malformed: Option<&'static str>,
    /// The words of the one simple literal command, or why it is not one.
    simple: Result<Vec<String>, &'static str>,
}

fn read(shell: Shell, command: &str) -> Read {
    match shell.dialect() {
        Dialect::Posix => {
            let lexed = lex::lex(command);
            let simple = match (&lexed.complex, lexed.commands.as_slice()) {
                (Some(why), _) => Err(*why),
                (None, [one]) if one.redirects.is_empty() => {
                    if one.words.iter().all(|w| w.literal) {
                        Ok(one.words.iter().map(|w| w.text.clone()).collect())
                    } else {
                        Err("a word that is not plainly literal")
                    }
                }
                (None, [_]) => Err("a redirection"),
                (None, _) => Err("more than one command"),
            };
            Read {
                written: lexed
                    .commands
                    .iter()
                    .flat_map(|c| &c.redirects)
                    .filter(|r| r.op.contains('>'))
                    .map(|r| r.target.text.clone())
                    .collect(),
                commands: lexed
                    .commands
                    .into_iter()
                    .map(|c| c.words.into_iter().map(|w| w.text).collect())
                    .collect(),
                malformed: lexed.malformed,
                simple,
            }
        }
        dialect => other::read(dialect, command),
    }
}

/// The absolute path at the start of `command` when it is a trusted
/// executable: the one file whose evidence the caller must take.
pub fn executable_to_examine(shell: &str, command: &str, rules: &Rules) -> Option<String> {
    let shell = Shell::from_name(shell)?;
    if command.len() > MAX_INPUT_BYTES {
        return None;
    }
    let first = read(shell, command)
        .commands
        .into_iter()
        .next()?
        .into_iter()
        .next()?;
    rules.trusted(&first).map(|t| t.path.clone())
}

fn absolute(shell: Shell, path: &str) -> bool {
    match shell.dialect() {
        Dialect::Posix => path.starts_with('/'),
        _ => {
            let b = path.as_bytes();
            path.starts_with('/')
                || (b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\')
        }
    }
}

/// Classifies `command` for `shell` with the evidence the caller took
/// about `executable_to_examine`'s path.
pub fn classify(shell: &str, command: &str, rules: &Rules, evidence: Option<&Evidence>) -> Verdict {
    // 2. Unknown shell.
    let Some(shell) = Shell::from_name(shell) else {
        return Verdict::code(
            UNKNOWN_SHELL,
            format!(
                "{shell:?} is not a shell the gate knows; it knows {}",
                SHELL_NAMES.join(", ")
            ),
        );
    };
    // 3. Missing, oversized, malformed input.
    if command.trim().is_empty() {
        return Verdict::code(INPUT_MISSING, "the command is empty");
    }
    if command.len() > MAX_INPUT_BYTES {
        return Verdict::code(
            INPUT_OVERSIZED,
            format!(
                "the command is {} bytes; the gate reads at most {MAX_INPUT_BYTES}",
                command.len()
            ),
        );
    }
    if command.contains('\0') {
        return Verdict::code(INPUT_MALFORMED, "the command holds a NUL byte");
    }
    if command
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Verdict::code(
            INPUT_MALFORMED,
            "the command holds a control character (a carriage return, an escape, ...)",
        );
    }
    let read = read(shell, command);
    if let Some(why) = read.malformed {
        return Verdict::code(INPUT_MALFORMED, format!("the command has {why}"));
    }
    // 4. Dangerous anywhere.
    if let Some(danger) = find_danger(shell, &read, rules) {
        let code = if danger.catastrophic {
            CATASTROPHIC
        } else {
            DANGEROUS
        };
        let mut v = Verdict::code(code, danger.reason);
        v.catastrophic = danger.catastrophic;
        return v;
    }
    // 5. Identity of a trusted executable at the start.
    let first = read.commands.first().and_then(|c| c.first()).cloned();
    let trusted = first.as_deref().and_then(|f| rules.trusted(f));
    if let Some(trusted) = trusted
        && let Some(v) = identity(trusted, evidence)
    {
        return v.with_executable(Some(&trusted.path));
    }
    // 6. Syntax.
    let words = match read.simple {
        Ok(words) => words,
        Err(why) => {
            return Verdict::code(
                AMBIGUOUS,
                format!("the command is not one simple literal command: it has {why}"),
            )
            .with_executable(trusted.map(|t| t.path.as_str()));
        }
    };
    let Some((program, args)) = words.split_first() else {
        return Verdict::code(INTERNAL, "a simple command without words");
    };
    if danger::is_assignment(program) {
        return Verdict::code(AMBIGUOUS, "the command starts with a variable assignment");
    }
    if !absolute(shell, program) {
        return Verdict::code(
            AMBIGUOUS,
            format!(
                "{program} is not an absolute path; bare names, builtins and relative paths are never resolved"
            ),
        );
    }
    if let Some(arg) = args.iter().find(|a| rules.names_protected(a)) {
        return Verdict::code(
            PROTECTED_PATH,
            format!("the argument {arg} names a protected path or mino's home"),
        )
        .with_executable(trusted.map(|t| t.path.as_str()));
    }
    let name = danger::program_name(program);
    let table = readonly::read_only(&name, args);
    // 7. The narrow allowance.
    if let (Some(trusted), Ok(operation)) = (trusted, &table) {
        return Verdict {
            outcome: Outcome::AllowFinal,
            code: None,
            reason: format!(
                "{} is trusted and its evidence matches; {operation} is read-only",
                trusted.path
            ),
            executable: Some(trusted.path.clone()),
            operation: Some(operation.clone()),
            catastrophic: false,
            judge: None,
        };
    }
    if let Some(judge) = eligible(shell, program, args, rules) {
        let mut v = Verdict::code(
            JUDGE_UNAVAILABLE,
            format!(
                "a closed read-only git {} request through {program}, which is not trusted; no judge is enabled",
                judge.operation
            ),
        );
        v.executable = Some(program.clone());
        v.operation = Some(judge.operation.to_string());
        v.judge = Some(judge);
        return v;
    }
    let why = match (trusted, table) {
        (None, _) => format!("{program} is not in the trusted executables"),
        (Some(_), Err(why)) => why,
        (Some(_), Ok(_)) => "no allowance applies".to_string(),
    };
    Verdict::code(AMBIGUOUS, why).with_executable(trusted.map(|t| t.path.as_str()))
}

fn find_danger(shell: Shell, read: &Read, rules: &Rules) -> Option<Danger> {
    let mut found = Vec::new();
    for target in &read.written {
        if rules.names_protected(target) {
            found.push(Danger {
                catastrophic: false,
                reason: format!("a redirection writes into the protected path {target}"),
            });
        } else if target.starts_with("/dev/sd") || target.starts_with("/dev/nvme") {
            found.push(Danger {
                catastrophic: true,
                reason: format!("a redirection writes onto the device {target}"),
            });
        }
    }
    for words in &read.commands {
        danger::scan_words(words, shell.dialect(), rules, &mut found);
    }
    found
        .iter()
        .find(|d| d.catastrophic)
        .or_else(|| found.first())
        .cloned()
}

fn identity(trusted: &Trusted, evidence: Option<&Evidence>) -> Option<Verdict> {
    let Some(evidence) = evidence else {
        return Some(Verdict::code(
            IDENTITY_MISSING,
            format!("no evidence was taken about {}", trusted.path),
        ));
    };
    if evidence.path != trusted.path {
        return Some(Verdict::code(
            INTERNAL,
            format!(
                "evidence about {} was given for {}",
                evidence.path, trusted.path
            ),
        ));
    }
    match &evidence.file {
        FileEvidence::Missing { why } => Some(Verdict::code(
            IDENTITY_MISSING,
            format!("{} could not be examined: {why}", trusted.path),
        )),
        FileEvidence::NotRegular => Some(Verdict::code(
            IDENTITY_MISSING,
            format!("{} is not a regular file", trusted.path),
        )),
        FileEvidence::Regular {
            mode,
            owner,
            user,
            sha256,
        } => {
            if mode & 0o022 != 0 {
                return Some(Verdict::code(
                    IDENTITY_MISMATCH,
                    format!(
                        "{} is group- or world-writable (mode {:o})",
                        trusted.path,
                        mode & 0o7777
                    ),
                ));
            }
            if *owner != 0 && owner != user {
                return Some(Verdict::code(
                    IDENTITY_MISMATCH,
                    format!(
                        "{} is owned by uid {owner}, neither root nor you",
                        trusted.path
                    ),
                ));
            }
            match (&trusted.sha256, sha256) {
                (Some(want), Some(got)) if want.eq_ignore_ascii_case(got) => None,
                (Some(_), Some(_)) => Some(Verdict::code(
                    IDENTITY_MISMATCH,
                    format!(
                        "the SHA-256 of {} differs from the trusted digest",
                        trusted.path
                    ),
                )),
                (Some(_), None) => Some(Verdict::code(
                    IDENTITY_MISSING,
                    format!("the SHA-256 of {} was not taken", trusted.path),
                )),
                (None, _) => None,
            }
        }
    }
}

/// A closed read-only request to the configured git: what a judge may be
/// told about it.
fn eligible(shell: Shell, program: &str, args: &[String], rules: &Rules) -> Option<JudgeRequest> {
    if rules.git.as_deref() != Some(program) {
        return None;
    }
    let operation = readonly::git(args).ok()?;
    let operation = *readonly::GIT_READ_ONLY
        .iter()
        .find(|op| **op == operation)?;
    let (_, sub) = danger::git_subcommand(args);
    let rest = sub.map_or(&[][..], |(_, rest)| rest);
    let mut after_separator = false;
    let argument_kinds: Vec<ArgumentKind> = rest
        .iter()
        .map(|a| {
            if a == "--" && !after_separator {
                after_separator = true;
                ArgumentKind::Separator
            } else if a.starts_with('-') && !after_separator {
                ArgumentKind::Option
            } else if revision_like(a) && !after_separator {
                ArgumentKind::Revision
            } else if a.contains('/') || a.contains('.') {
                ArgumentKind::Path
            } else {
                ArgumentKind::Word
            }
        })
        .collect();
    let known = [
        "--oneline",
        "--stat",
        "--shortstat",
        "--name-only",
        "--name-status",
        "-p",
        "--patch",
        "--cached",
        "--staged",
        "-s",
        "--short",
        "--porcelain",
        "-b",
        "--branch",
        "--no-color",
        "--graph",
        "--decorate",
        "--no-ext-diff",
        "--no-textconv",
        "--summary",
        "--numstat",
    ];
    let option_risk = if rest
        .iter()
        .filter(|a| a.starts_with('-') && *a != "--")
        .all(|a| {
            known.contains(&a.as_str()) || a.starts_with("-n") || a.starts_with("--max-count=")
        }) {
        OptionRisk::None
    } else {
        OptionRisk::Unlisted
    };
    Some(JudgeRequest {
        shell,
        operation,
        option_risk,
        argument_kinds,
    })
}

fn revision_like(arg: &str) -> bool {
    let hex = arg.len() >= 7 && arg.len() <= 64 && arg.chars().all(|c| c.is_ascii_hexdigit());
    hex || arg.contains("..")
        || arg.starts_with("HEAD")
        || arg.contains('~')
        || arg.contains('^')
        || arg.contains('@')
}
