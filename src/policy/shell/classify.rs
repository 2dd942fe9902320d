//! The classifier: one command and its shell in, a verdict out, in the
//! seed's precedence (input, dangerous anywhere, identity, syntax, the
//! narrow allowance). It reads words and the evidence it is handed; it
//! never touches the filesystem, never resolves PATH and never rewrites
//! the command.

use super::codes::*;
use super::crude;
use super::danger::{self, Danger};
use super::eligible::eligible;
use super::reach;
use super::read::{Read, read};
use super::repository;
use super::targets;
use super::{
    Dialect, Evidence, FileEvidence, MAX_INPUT_BYTES, Rules, SHELL_NAMES, Shell, Trusted, Verdict,
    readonly,
};

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
    rules
        .trusted(&first)
        .map(|t| t.path.clone())
        .or_else(|| rules.git.clone().filter(|git| *git == first))
}

/// Whether the caller must also say what `path` (as
/// `executable_to_examine` gave it) reads in the repository: for git.
pub fn repository_to_examine(path: &str) -> bool {
    danger::program_name(path) == "git"
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
    // 3. Missing, oversized, malformed input: the outcome is the input's,
    // and the bypass guard still hears of a catastrophic command in it.
    if command.trim().is_empty() {
        return Verdict::code(INPUT_MISSING, "the command is empty");
    }
    if command.len() > MAX_INPUT_BYTES {
        return unreadable(
            INPUT_OVERSIZED,
            format!(
                "the command is {} bytes; the gate reads at most {MAX_INPUT_BYTES}",
                command.len()
            ),
            command,
            rules,
        );
    }
    if command.contains('\0') {
        return unreadable(
            INPUT_MALFORMED,
            "the command holds a NUL byte".into(),
            command,
            rules,
        );
    }
    if command
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return unreadable(
            INPUT_MALFORMED,
            "the command holds a control character (a carriage return, an escape, ...)".into(),
            command,
            rules,
        );
    }
    let read = read(shell, command);
    if let Some(why) = read.malformed {
        return unreadable(
            INPUT_MALFORMED,
            format!("the command has {why}"),
            command,
            rules,
        );
    }
    with_guard(
        classify_read(shell, &read, rules, evidence),
        shell,
        &read,
        rules,
    )
}

/// Levels 4 to 7 for input the tokenizer read.
fn classify_read(shell: Shell, read: &Read, rules: &Rules, evidence: Option<&Evidence>) -> Verdict {
    // 4. Dangerous anywhere.
    if let Some(danger) = find_danger(shell, read, rules) {
        let code = if danger.catastrophic {
            CATASTROPHIC
        } else {
            DANGEROUS
        };
        let mut v = Verdict::code(code, danger.reason);
        v.catastrophic = danger.catastrophic;
        v.unseen = danger.unseen;
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
    // ... and for git, trusted or the judge's, what it reads in the
    // repository it runs in.
    let git = trusted
        .map(|t| t.path.as_str())
        .or(first
            .as_deref()
            .filter(|f| rules.git.as_deref() == Some(*f)))
        .filter(|path| repository_to_examine(path));
    if let Some(git) = git
        && let Some(why) = repository::refusal(
            evidence
                .filter(|e| e.path == git)
                .and_then(|e| e.repository.as_ref()),
        )
    {
        return Verdict::code(REPOSITORY, why).with_executable(Some(git));
    }
    // 6. Syntax.
    let words = match &read.simple {
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
            unseen: false,
            judge: None,
            git: git.is_some(),
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
        v.git = true;
        return v;
    }
    let why = match (trusted, table) {
        (None, _) => format!("{program} is not in the trusted executables"),
        (Some(_), Err(why)) => why,
        (Some(_), Ok(_)) => "no allowance applies".to_string(),
    };
    Verdict::code(AMBIGUOUS, why).with_executable(trusted.map(|t| t.path.as_str()))
}

/// The bypass guard errs toward hearing of a catastrophic command: when
/// the precise scan found none, a crude one reads each command's words
/// (every word a possible program) and the text a shell may run as code.
/// What it finds marks the verdict for the guard and is added to its
/// reason; the outcome and the code stay the precise ones, so a read-only
/// `grep rm -r .` still runs in auto mode.
fn with_guard(mut verdict: Verdict, shell: Shell, read: &Read, rules: &Rules) -> Verdict {
    if verdict.catastrophic {
        return verdict;
    }
    let found = read
        .code
        .iter()
        .find_map(|text| crude::scan_text(text, rules))
        .or_else(|| {
            read.commands
                .iter()
                .find_map(|words| crude::scan_command(words, rules))
        })
        .map(|d| d.reason)
        .or_else(|| reach::reach(shell, read));
    if let Some(why) = found {
        verdict.catastrophic = true;
        verdict.reason = format!(
            "{}; read crudely, it may change what no checkpoint restores: {why}",
            verdict.reason
        );
    }
    verdict
}

/// A verdict of level 3 for `command`, with what the crude scan finds in it
/// for the bypass guard.
fn unreadable(code: &'static str, reason: String, command: &str, rules: &Rules) -> Verdict {
    match crude::scan_text(command, rules) {
        Some(danger) => {
            let mut v = Verdict::code(
                code,
                format!(
                    "{reason}; read crudely, it may hold a catastrophic command: {}",
                    danger.reason
                ),
            );
            v.catastrophic = true;
            v
        }
        None => Verdict::code(code, reason),
    }
}

fn find_danger(shell: Shell, read: &Read, rules: &Rules) -> Option<Danger> {
    let mut found = Vec::new();
    for target in &read.truncated {
        if targets::inside_git(target) {
            found.push(Danger {
                catastrophic: true,
                unseen: false,
                reason: format!("a redirection truncates {target}, which the repository needs"),
            });
        }
    }
    for target in &read.written {
        if rules.names_protected(target) {
            found.push(Danger {
                catastrophic: false,
                unseen: false,
                reason: format!("a redirection writes into the protected path {target}"),
            });
        } else if danger::device(target) {
            found.push(Danger {
                catastrophic: true,
                unseen: false,
                reason: format!("a redirection writes onto the device {target}"),
            });
        }
    }
    for words in &read.commands {
        danger::scan_words(words, shell.dialect(), rules, &mut found);
    }
    // Asked about only as one command on its own (nothing piped into it or
    // run beside it) whose code runs nothing it builds or decodes.
    // The interpreter itself starts the command: no assignment before it
    // (`PYTHONPATH=…`), no program that runs it (`env`, `nice`).
    let starts_it = |words: &Vec<String>| {
        words
            .first()
            .is_some_and(|w| danger::is_interpreter(&danger::program_name(w)))
    };
    let unseen = found.iter().all(|d| d.unseen)
        && read.commands.len() == 1
        && read.commands.first().is_some_and(starts_it)
        && !read.code.iter().any(|code| builds_code(code));
    found
        .iter()
        .find(|d| d.catastrophic)
        .or_else(|| found.first())
        .cloned()
        .map(|d| Danger { unseen, ..d })
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

/// Words of code that runs code it builds or decodes, which a person
/// shown the command could not read either.
const BUILT_CODE: &[&str] = &[
    // An expansion or a substitution: the code is not on the line as
    // written (and a `$` in quoted code is taken the same way).
    "$",
    "`",
    "exec",
    "eval",
    "compile",
    "__import__",
    "importlib",
    "base64",
    "b64decode",
    "codecs",
    "decode(",
    "fromcharcode",
    "atob",
    "buffer.from",
    "function(",
    "unpack",
    "marshal",
    "pickle",
    "\\x",
    "\\u",
    "chr(",
];

fn builds_code(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    BUILT_CODE.iter().any(|word| lower.contains(word))
}
