//! The dangerous table: commands and options that are denied wherever they
//! appear in the input, without any evidence, and the catastrophic part of
//! it that the bypass guard stops even in bypass mode. It reads words only;
//! it never runs, resolves or expands anything.

use super::{Dialect, Rules};

/// A dangerous command found in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Danger {
    /// Part of the bypass guard's subset.
    pub catastrophic: bool,
    pub reason: String,
}

fn dangerous(reason: impl Into<String>) -> Option<Danger> {
    Some(Danger {
        catastrophic: false,
        reason: reason.into(),
    })
}

fn catastrophic(reason: impl Into<String>) -> Option<Danger> {
    Some(Danger {
        catastrophic: true,
        reason: reason.into(),
    })
}

/// The words a dangerous check sees: the program's name (lowercase, no
/// directory, no `.exe`) and its arguments as written after quote removal.
pub struct Call<'a> {
    pub name: String,
    pub args: &'a [String],
    pub rules: &'a Rules,
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

/// Variables that make a harmless program run another one.
const INJECTING_VARIABLES: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PATH",
    "IFS",
    "SHELLOPTS",
    "PS4",
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
                .any(|a| a.starts_with("of=/dev/") && !harmless_device(&a[3..]))
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
        check: |c| dangerous(format!("{} can destroy data or stop the system", c.name)),
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
            c.args
                .iter()
                .find(|a| c.rules.names_protected(a))
                .and_then(|a| dangerous(format!("{} touches the protected path {a}", c.name)))
        },
    },
    Row {
        names: &["find"],
        dialects: POSIX,
        what: "find -delete",
        check: |c| {
            if c.args.iter().any(|a| a == "-delete") {
                dangerous("find -delete removes files")
            } else {
                None
            }
        },
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

fn harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}

/// `-rf`, `-Rf`, `-fr`: a cluster of short options holding `flag`.
pub fn short_cluster_has(arg: &str, flag: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
}

fn option_word(arg: &str) -> bool {
    arg.starts_with('-') || (arg.starts_with('/') && arg.len() == 2)
}

/// Names the whole file system, the home directory, the project or `.git`.
pub fn catastrophic_target(arg: &str, rules: &Rules) -> bool {
    let lower = arg.to_ascii_lowercase().replace('\\', "/");
    let mut t = lower.as_str();
    loop {
        let before = t;
        t = t.strip_suffix("/*").unwrap_or(t);
        if t.len() > 1 {
            t = t.strip_suffix('/').unwrap_or(t);
        }
        t = t.strip_suffix("/.").unwrap_or(t);
        if t == before {
            break;
        }
    }
    let t = t.strip_prefix("./").unwrap_or(t);
    if matches!(
        t,
        "" | "/"
            | "*"
            | "."
            | ".."
            | "~"
            | "$home"
            | "${home}"
            | ".git"
            | "c:"
            | "c:/"
            | "%userprofile%"
            | "$env:userprofile"
            | "%systemdrive%"
    ) || t.ends_with("/.git")
    {
        return true;
    }
    // A directory right under the root (`/usr`, `/home`, `/etc`).
    if let Some(rest) = t.strip_prefix('/')
        && !rest.contains('/')
    {
        return true;
    }
    let same = |p: &Option<String>| {
        p.as_ref()
            .is_some_and(|p| p.to_ascii_lowercase().trim_end_matches('/') == t)
    };
    same(&rules.home) || same(&rules.project_root)
}

fn removal(c: &Call<'_>) -> Option<Danger> {
    let posix_name = matches!(c.name.as_str(), "rm" | "rmdir");
    let flags = |f: char| c.args.iter().any(|a| short_cluster_has(a, f));
    let windows_s = c
        .args
        .iter()
        .any(|a| a.starts_with('/') && a[1..].split('/').any(|f| f.eq_ignore_ascii_case("s")));
    let recurse_ps = c.args.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        a.len() >= 3 && "-recurse".starts_with(a.as_str())
    });
    let recursive = flags('r')
        || flags('R')
        || c.args.iter().any(|a| a == "--recursive")
        || recurse_ps
        || windows_s;
    let forced = posix_name && (flags('f') || c.args.iter().any(|a| a == "--force"));
    if !recursive && !forced {
        return None;
    }
    let targets = c.args.iter().filter(|a| !option_word(a));
    if c.args.iter().any(|a| a == "--no-preserve-root")
        || recursive && targets.clone().any(|a| catastrophic_target(a, c.rules))
    {
        return catastrophic(format!(
            "{} removes {} recursively",
            c.name,
            targets
                .clone()
                .find(|a| catastrophic_target(a, c.rules))
                .map_or("/", String::as_str)
        ));
    }
    dangerous(format!(
        "{} removes files recursively or without asking",
        c.name
    ))
}

fn recursive_ownership(c: &Call<'_>) -> Option<Danger> {
    let recursive = c.args.iter().any(|a| {
        short_cluster_has(a, 'R')
            || a == "--recursive"
            || a.eq_ignore_ascii_case("/r")
            || a.eq_ignore_ascii_case("/t")
    });
    if !recursive {
        return None;
    }
    let on_root = c
        .args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .any(|a| catastrophic_target(a, c.rules) && !a.starts_with('.') && a != "*");
    if on_root && matches!(c.name.as_str(), "chmod" | "chown" | "chgrp") {
        return catastrophic(format!("{} -R changes / or the home directory", c.name));
    }
    dangerous(format!("{} changes modes or owners recursively", c.name))
}

/// Keys of `git -c` that make git run a program.
fn program_running_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.starts_with("alias.")
        || key.starts_with("filter.")
        || key.starts_with("credential")
        || key.ends_with(".textconv")
        || key.ends_with(".command")
        || key.ends_with(".cmd")
        || key.ends_with(".tool")
        || [
            "core.pager",
            "core.editor",
            "core.sshcommand",
            "core.fsmonitor",
            "core.hookspath",
            "core.askpass",
            "core.gitproxy",
            "diff.external",
            "sequence.editor",
            "gpg.program",
            "uploadpack.packobjectshook",
            "protocol.allow",
        ]
        .iter()
        .any(|k| key.starts_with(k))
}

/// Splits git's global options from the subcommand and its arguments.
pub fn git_subcommand(args: &[String]) -> (Vec<&str>, Option<(&str, &[String])>) {
    let mut globals = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') {
            return (globals, Some((a, &args[i + 1..])));
        }
        globals.push(a);
        if matches!(
            a,
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
        ) && let Some(value) = args.get(i + 1)
        {
            globals.push(value);
            i += 1;
        }
        i += 1;
    }
    (globals, None)
}

fn git(c: &Call<'_>) -> Option<Danger> {
    let (globals, sub) = git_subcommand(c.args);
    for pair in globals.windows(2) {
        if (pair[0] == "-c" || pair[0] == "--config-env")
            && program_running_key(pair[1].split('=').next().unwrap_or(""))
        {
            return dangerous(format!("git -c {} makes git run a program", pair[1]));
        }
    }
    for g in &globals {
        if let Some(v) = g.strip_prefix("--config-env=")
            && program_running_key(v.split('=').next().unwrap_or(""))
        {
            return dangerous(format!("git {g} makes git run a program"));
        }
    }
    let (sub, args) = sub?;
    let has = |s: &str| args.iter().any(|a| a == s);
    match sub {
        "push" => {
            let force = args.iter().any(|a| {
                a == "--force"
                    || a.starts_with("--force-with-lease")
                    || a == "--mirror"
                    || short_cluster_has(a, 'f')
                    || a.starts_with('+')
            });
            if !force {
                return has("--delete").then(|| Danger {
                    catastrophic: false,
                    reason: "git push --delete removes a remote branch".into(),
                });
            }
            let refs: Vec<&String> = args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .collect();
            let default_branch = |r: &str| {
                let target = r.trim_start_matches('+');
                let target = target.rsplit(':').next().unwrap_or(target);
                let target = target.trim_start_matches("refs/heads/");
                matches!(target, "main" | "master" | "trunk" | "HEAD" | "develop")
            };
            if refs.is_empty() || refs.iter().any(|r| default_branch(r)) || has("--mirror") {
                catastrophic("git push --force rewrites a remote's default branch")
            } else {
                dangerous("git push --force rewrites remote history")
            }
        }
        "reset" if has("--hard") || has("--merge") => dangerous("git reset --hard discards work"),
        "clean"
            if args
                .iter()
                .any(|a| a == "--force" || short_cluster_has(a, 'f')) =>
        {
            dangerous("git clean -f removes untracked files")
        }
        "checkout" | "restore" | "switch" if has("-f") || has("--force") => {
            dangerous("git checkout --force discards work")
        }
        "filter-branch" | "filter-repo" => dangerous("git filter-branch rewrites history"),
        "branch" if has("-D") => dangerous("git branch -D drops a branch"),
        "stash" if args.first().is_some_and(|a| a == "clear" || a == "drop") => {
            dangerous("git stash clear drops saved work")
        }
        _ => None,
    }
}

fn interpreter(c: &Call<'_>) -> Option<Danger> {
    let code = [
        "-c",
        "-e",
        "-E",
        "--eval",
        "-r",
        "-p",
        "--print",
        "-x",
        "-i",
        "-",
        "--command",
    ];
    let gives_code = c.args.is_empty()
        || c.args.iter().any(|a| {
            code.contains(&a.as_str())
                || a.starts_with("--eval=")
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && (a.contains('e') || a.contains('c')))
        });
    gives_code.then(|| Danger {
        catastrophic: false,
        reason: format!("{} is given code to run", c.name),
    })
}

fn injecting_assignment(arg: &str) -> Option<Danger> {
    let name = arg.split('=').next().unwrap_or(arg);
    let name = name.trim_start_matches("env:").to_ascii_uppercase();
    (INJECTING_VARIABLES.contains(&name.as_str()) || name.starts_with("GIT_CONFIG")).then(|| {
        Danger {
            catastrophic: false,
            reason: format!("setting {name} can make a program run another"),
        }
    })
}

/// An assignment prefix (`NAME=value`) that sets an injecting variable.
pub fn injecting_prefix(word: &str) -> Option<Danger> {
    word.contains('=')
        .then(|| injecting_assignment(word))
        .flatten()
}

fn curl(c: &Call<'_>) -> Option<Danger> {
    let long = [
        "--data",
        "--form",
        "--upload-file",
        "--output",
        "--remote-name",
        "--config",
        "--json",
        "--request",
        "--output-dir",
        "--create-dirs",
        "-outfile",
        "-infile",
        "-body",
        "-method",
    ];
    let writes = c.args.iter().any(|a| {
        let lower = a.to_ascii_lowercase();
        long.iter().any(|l| lower.starts_with(l))
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].chars().any(|f| "dFTOoKX".contains(f))
                && c.name == "curl")
    });
    writes.then(|| Danger {
        catastrophic: false,
        reason: format!("{} uploads data or writes a file", c.name),
    })
}

fn wget(c: &Call<'_>) -> Option<Danger> {
    let to_stdout = c
        .args
        .windows(2)
        .any(|w| w[0].ends_with('O') && w[1] == "-")
        || c.args.iter().any(|a| {
            a == "--spider"
                || a == "--output-document=-"
                || (a.starts_with('-') && a.ends_with("O-"))
        });
    let uploads = c
        .args
        .iter()
        .any(|a| a.starts_with("--post") || a.starts_with("--body") || a.starts_with("--method"));
    (uploads || !to_stdout).then(|| Danger {
        catastrophic: false,
        reason: "wget uploads data or writes a file".into(),
    })
}

fn windows_launcher(c: &Call<'_>) -> Option<Danger> {
    let lower: Vec<String> = c.args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let any = |opts: &[&str]| lower.iter().any(|a| opts.contains(&a.as_str()));
    match c.name.as_str() {
        "cmd" if any(&["/c", "/k", "/r"]) => dangerous("cmd /c runs a command line"),
        "powershell" | "pwsh"
            if any(&[
                "-c",
                "-command",
                "-e",
                "-ec",
                "-enc",
                "-encodedcommand",
                "-f",
                "-file",
            ]) || lower.is_empty() =>
        {
            dangerous("PowerShell is given code to run")
        }
        "reg" if any(&["delete", "add", "import", "restore"]) => {
            dangerous("reg changes the registry")
        }
        "start-process" | "saps" | "start" => dangerous("starts a process mino cannot see"),
        _ => None,
    }
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
    let Some(first) = words.get(i) else {
        return;
    };
    let name = program_name(first);
    let args = &words[i + 1..];
    check_table(&words[i..], dialect, rules, found);
    // Every later word of a wrapper may be the program it runs; each is
    // checked against the table once (no recursion, so the work stays
    // quadratic at worst in the words of one command).
    if WRAPPERS.contains(&name.as_str()) {
        for k in 1..=args.len() {
            check_table(&words[i + k..], dialect, rules, found);
        }
    }
    if name == "find" {
        for (k, a) in args.iter().enumerate() {
            if matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                for m in k + 1..args.len() {
                    check_table(&args[m..], dialect, rules, found);
                }
            }
        }
    }
}

/// The table's verdict on `words` as one call, program first.
fn check_table(words: &[String], dialect: Dialect, rules: &Rules, found: &mut Vec<Danger>) {
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
    };
    for row in TABLE {
        if row.dialects.contains(&dialect)
            && row.names.contains(&name.as_str())
            && let Some(d) = (row.check)(&call)
        {
            found.push(d);
        }
    }
    if name.starts_with("mkfs")
        && let Some(d) = catastrophic("mkfs makes a file system")
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
