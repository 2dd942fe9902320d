//! The dangerous table: commands and options that are denied wherever they
//! appear in the input, without any evidence, and the catastrophic part of
//! it that the bypass guard stops even in bypass mode. It reads words only;
//! it never runs, resolves or expands anything.

mod checks;
pub mod push;

use super::targets::catastrophic_target;
use super::{Dialect, Rules};
use checks::{
    curl, find_delete, git, injecting_assignment, interpreter, recursive_ownership, removal, wget,
    windows_launcher,
};
pub use checks::{device, git_subcommand, injecting_prefix};

/// A dangerous command found in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Danger {
    /// Part of the bypass guard's subset.
    pub catastrophic: bool,
    /// Dangerous only in that an interpreter is given code on its command
    /// line (`python3 -c`, `node -e`): what mino's auto mode may put to
    /// the person where someone can answer, rather than denying outright
    /// (see `classify::find_danger` for when it does).
    pub unseen: bool,
    pub reason: String,
}

fn dangerous(reason: impl Into<String>) -> Option<Danger> {
    Some(Danger {
        catastrophic: false,
        unseen: false,
        reason: reason.into(),
    })
}

fn catastrophic(reason: impl Into<String>) -> Option<Danger> {
    Some(Danger {
        catastrophic: true,
        unseen: false,
        reason: reason.into(),
    })
}

/// The words a dangerous check sees: the program's name (lowercase, no
/// directory, no `.exe`) and its arguments as written after quote removal.
pub struct Call<'a> {
    pub name: String,
    pub args: &'a [String],
    pub rules: &'a Rules,
    /// For each argument: whether it names a catastrophic place
    /// (`targets::catastrophic_target`), worked out once per command.
    pub places: &'a [bool],
}

impl Call<'_> {
    /// Each argument with whether it names a catastrophic place.
    pub fn places(&self) -> impl Iterator<Item = (&String, bool)> + '_ {
        self.args.iter().zip(self.places.iter().copied())
    }
}

/// One row: the program names it applies to, the shells it applies in, and
/// what makes a call dangerous.
pub struct Row {
    pub names: &'static [&'static str],
    pub dialects: &'static [Dialect],
    pub what: &'static str,
    pub check: fn(&Call<'_>) -> Option<Danger>,
}

const POSIX: &[Dialect] = &[Dialect::Posix];
const ALL: &[Dialect] = &[Dialect::Posix, Dialect::PowerShell, Dialect::Cmd];

/// Shells: any run of one runs code mino never sees.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
];

/// Interpreters, dangerous when given code or reading it from stdin.
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "bun",
    "tclsh",
    "rscript",
    "osascript",
    "pypy",
    "pypy3",
];

/// The one dangerous table.
pub const TABLE: &[Row] = &[
    Row {
        names: &["rm", "remove-item", "ri", "del", "erase", "rd", "rmdir"],
        dialects: ALL,
        what: "recursive or forced removal (rm -rf, Remove-Item -Recurse, del /s, rd /s)",
        check: removal,
    },
    Row {
        names: &["sudo", "su", "doas", "pkexec", "runuser", "runas"],
        dialects: ALL,
        what: "running as another user",
        check: |c| dangerous(format!("{} runs a command as another user", c.name)),
    },
    Row {
        names: &["dd"],
        dialects: POSIX,
        what: "dd (catastrophic onto a device)",
        check: |c| {
            if c.args
                .iter()
                .any(|a| a.strip_prefix("of=").is_some_and(device))
            {
                catastrophic("dd writes onto a device")
            } else {
                dangerous("dd writes raw data")
            }
        },
    },
    Row {
        names: &[
            "mkfs",
            "format",
            "format-volume",
            "clear-disk",
            "initialize-disk",
        ],
        dialects: ALL,
        what: "making a file system or formatting a disk",
        check: |c| catastrophic(format!("{} makes a file system or formats a disk", c.name)),
    },
    Row {
        names: &[
            "shred",
            "wipefs",
            "fdisk",
            "sfdisk",
            "parted",
            "mkswap",
            "shutdown",
            "reboot",
            "halt",
            "poweroff",
            "diskpart",
            "bcdedit",
            "vssadmin",
            "cipher",
            "remove-partition",
            "stop-computer",
            "restart-computer",
            "set-executionpolicy",
        ],
        dialects: ALL,
        what: "destroying data, disks or the running system",
        check: |c| {
            let device = c.args.iter().find(|a| device(a));
            match device {
                Some(d) => catastrophic(format!("{} writes onto the device {d}", c.name)),
                None => dangerous(format!("{} can destroy data or stop the system", c.name)),
            }
        },
    },
    Row {
        names: &["chmod", "chown", "chgrp", "takeown", "icacls"],
        dialects: ALL,
        what: "recursive mode or owner changes (catastrophic on / or ~)",
        check: recursive_ownership,
    },
    Row {
        names: &["git"],
        dialects: ALL,
        what: "git push --force, reset --hard, clean -f, filter-branch, -c with a program-running key",
        check: git,
    },
    Row {
        names: SHELLS,
        dialects: ALL,
        what: "shells (bash -c, sh -c, ...)",
        check: |c| dangerous(format!("{} runs shell code mino cannot see", c.name)),
    },
    Row {
        names: INTERPRETERS,
        dialects: ALL,
        what: "interpreters given code (python -c, node -e, perl -e, ...)",
        check: interpreter,
    },
    Row {
        names: &["awk", "gawk", "mawk", "nawk"],
        dialects: POSIX,
        what: "awk programs that run commands or write files",
        check: |c| {
            let runs = c.args.iter().any(|a| {
                a.contains("system") || a.contains('|') || a.contains('>') || a.contains("getline")
            });
            if runs {
                dangerous("awk's program runs a command or writes a file")
            } else {
                None
            }
        },
    },
    Row {
        names: &[
            "eval",
            "source",
            ".",
            "invoke-expression",
            "iex",
            "invoke-command",
            "icm",
        ],
        dialects: ALL,
        what: "eval, source and . (code from text or a file)",
        check: |c| dangerous(format!("{} runs code from text or a file", c.name)),
    },
    Row {
        names: &[
            "export", "declare", "typeset", "readonly", "local", "set", "setx", "set-item",
        ],
        dialects: ALL,
        what: "setting a variable that makes programs run others (PAGER, GIT_*, LD_PRELOAD, ...)",
        check: |c| c.args.iter().find_map(|a| injecting_assignment(a)),
    },
    Row {
        names: &[
            "curl",
            "invoke-webrequest",
            "iwr",
            "invoke-restmethod",
            "irm",
        ],
        dialects: ALL,
        what: "curl that uploads or writes files",
        check: curl,
    },
    Row {
        names: &["wget"],
        dialects: ALL,
        what: "wget that uploads or writes files",
        check: wget,
    },
    Row {
        names: &[
            "tee",
            "cp",
            "mv",
            "ln",
            "install",
            "touch",
            "truncate",
            "rsync",
            "scp",
            "sed",
            "set-content",
            "add-content",
            "out-file",
            "copy",
            "move",
            "xcopy",
            "robocopy",
            "copy-item",
            "move-item",
        ],
        dialects: ALL,
        what: "writes into (or copies out of) protected paths",
        check: |c| {
            let protected = c.args.iter().find(|a| c.rules.names_protected(a))?;
            if c.name == "truncate" && super::targets::inside_git(protected) {
                return catastrophic(format!(
                    "truncate empties {protected}, part of the repository"
                ));
            }
            dangerous(format!("{} touches the protected path {protected}", c.name))
        },
    },
    Row {
        names: &["find"],
        dialects: POSIX,
        what: "find -delete (catastrophic from /, ~ or an ancestor)",
        check: find_delete,
    },
    Row {
        names: &["crontab"],
        dialects: POSIX,
        what: "crontab -r",
        check: |c| {
            if c.args.iter().any(|a| short_cluster_has(a, 'r')) {
                dangerous("crontab -r removes the schedule")
            } else {
                None
            }
        },
    },
    Row {
        names: &[
            "start-process",
            "saps",
            "start",
            "cmd",
            "powershell",
            "pwsh",
            "reg",
        ],
        dialects: &[Dialect::PowerShell, Dialect::Cmd],
        what: "starting processes, command interpreters, registry changes",
        check: windows_launcher,
    },
];

/// Whether `name` is an interpreter (not a shell, not another code runner).
pub fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name)
}

/// Programs besides shells and interpreters that run text as code.
const CODE_RUNNERS: &[&str] = &[
    "eval", "su", "runuser", "ssh", "xargs", "parallel", "watch", "script", "trap",
];

/// A program that may run one of its arguments, or its input, as code.
pub fn runs_code(name: &str) -> bool {
    SHELLS.contains(&name) || INTERPRETERS.contains(&name) || CODE_RUNNERS.contains(&name)
}

/// Words after which, anywhere in a command as the tokenizer read it, a
/// command may start: the bodies of functions, compound commands and
/// `case` arms.
pub const KEYWORDS: &[&str] = &[
    "{", "then", "else", "elif", "do", "!", "if", "while", "until", "function", "case", "in",
    "coproc", "time",
];

/// Programs that run the words after them as a command of their own.
pub const WRAPPERS: &[&str] = &[
    "env",
    "timeout",
    "nice",
    "nohup",
    "xargs",
    "command",
    "builtin",
    "exec",
    "stdbuf",
    "ionice",
    "setsid",
    "time",
    "watch",
    "chrt",
    "taskset",
    "unbuffer",
    "flock",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "chroot",
    "strace",
    "ltrace",
    "parallel",
    "nsenter",
    "unshare",
    "script",
    "caffeinate",
    "then",
    "else",
    "elif",
    "do",
    "!",
    "{",
    "if",
    "while",
    "until",
    "coproc",
];

/// `--rec`, `--forc`: an abbreviation git and GNU tools accept of `long`
/// (any prefix of at least one letter; an ambiguous one counts too).
pub fn long_prefix(arg: &str, long: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 2 && name.starts_with("--") && long.starts_with(name)
}

/// `-rf`, `-Rf`, `-fr`: a cluster of short options holding `flag`.
pub fn short_cluster_has(arg: &str, flag: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
}

/// Checks one command's words (program first) against the table for
/// `dialect`. Wrappers (`env`, `timeout`, `xargs`, ...) have every later
/// word checked as a program too, and `find -exec` the words after it.
pub fn scan_words(words: &[String], dialect: Dialect, rules: &Rules, found: &mut Vec<Danger>) {
    let mut i = 0;
    while dialect == Dialect::Posix && i < words.len() && is_assignment(&words[i]) {
        if let Some(d) = injecting_prefix(&words[i]) {
            found.push(d);
        }
        i += 1;
    }
    let places: Vec<bool> = words
        .iter()
        .map(|w| catastrophic_target(w, rules))
        .collect();
    for from in call_starts(words, dialect) {
        check_table(&words[from..], &places[from..], dialect, rules, found);
    }
}

/// Where in one command's words a program may start: after the assignment
/// prefixes, and from a wrapper at the start, the first keyword that opens
/// a body (`{`, `then`, `do`, a function or a `case`, wherever the
/// tokenizer left it in the command) or `find -exec`, every later word.
/// Each start is read once, so the work stays quadratic at worst in the
/// words of one command.
pub fn call_starts(words: &[String], dialect: Dialect) -> Vec<usize> {
    let mut i = 0;
    while dialect == Dialect::Posix && i < words.len() && is_assignment(&words[i]) {
        i += 1;
    }
    let Some(first) = words.get(i) else {
        return Vec::new();
    };
    let name = program_name(first);
    let from = words[i..].iter().enumerate().position(|(k, w)| {
        (k == 0 && WRAPPERS.contains(&name.as_str()))
            || KEYWORDS.contains(&w.as_str())
            || (name == "find" && matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
    });
    let mut starts = vec![i];
    if let Some(k) = from {
        starts.extend(i + k + 1..words.len());
    }
    starts
}

/// The table's verdict on `words` as one call, program first.
fn check_table(
    words: &[String],
    places: &[bool],
    dialect: Dialect,
    rules: &Rules,
    found: &mut Vec<Danger>,
) {
    let Some(first) = words.first() else {
        return;
    };
    if let Some(d) = injecting_prefix(first)
        && dialect == Dialect::Posix
        && !first.starts_with('-')
    {
        found.push(d);
    }
    let name = program_name(first);
    let call = Call {
        name: name.clone(),
        args: &words[1..],
        rules,
        places: &places[1..],
    };
    for row in TABLE {
        if row.dialects.contains(&dialect)
            && row.names.contains(&name.as_str())
            && let Some(d) = (row.check)(&call)
        {
            found.push(d);
        }
    }
    if (name.starts_with("mkfs") || name == "mke2fs")
        && let Some(d) = catastrophic(format!("{name} makes a file system"))
    {
        found.push(d);
    }
}

/// `NAME=value` (or `NAME+=value`), as an assignment prefix is written.
pub fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The program's name as the tables know it.
pub fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let lower = base.to_ascii_lowercase();
    let name = lower.strip_suffix(".exe").unwrap_or(&lower);
    // `python3.12` is `python`; `.` stays `.`.
    let unversioned = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if unversioned.is_empty() {
        name.to_string()
    } else {
        unversioned.to_string()
    }
}
