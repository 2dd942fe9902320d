//! The row checks of the dangerous table: what makes a call to `rm`, `git`,
//! `curl`, an interpreter, ... dangerous or catastrophic, from its words
//! alone. They read words only; they never run, resolve or expand anything,
//! and never decide which row applies (the table in `mod.rs` does).

use super::{Call, Danger, catastrophic, dangerous, long_prefix, push, short_cluster_has};

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

/// A path under `/dev` that is a device whose writing destroys data
/// (`/dev/sda`, `//dev/vda`, `/dev/../dev/nvme0n1`), not a stream.
pub fn device(path: &str) -> bool {
    if !path.starts_with('/') {
        return false;
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let resolved = format!("/{}", parts.join("/"));
    parts.len() > 1
        && parts[0] == "dev"
        && !harmless_device(&resolved)
        && BLOCK_DEVICES.iter().any(|b| parts[1].starts_with(b))
}

/// Names under `/dev` of disks, partitions and memory: a write there
/// destroys data no checkpoint holds. Terminals, `/dev/shm` and bash's
/// `/dev/tcp` are not among them.
const BLOCK_DEVICES: &[&str] = &[
    "sd", "vd", "hd", "xvd", "nvme", "mmcblk", "loop", "dm-", "md", "mapper", "disk", "sr", "nbd",
    "zram", "ram", "mtd", "rbd", "bcache", "pmem", "root", "mem", "kmem", "port",
];

fn harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
}

/// `-x`, and for the Windows names `/s`, `/q` (never `//`, which is `/`).
fn option_word(arg: &str, windows: bool) -> bool {
    arg.starts_with('-')
        || (windows
            && arg.len() == 2
            && arg.starts_with('/')
            && arg[1..].chars().all(|c| c.is_ascii_alphabetic()))
}

pub(super) fn removal(c: &Call<'_>) -> Option<Danger> {
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
        || c.args.iter().any(|a| long_prefix(a, "--recursive"))
        || recurse_ps
        || windows_s;
    let forced = posix_name && (flags('f') || c.args.iter().any(|a| long_prefix(a, "--force")));
    if !recursive && !forced {
        return None;
    }
    let target = c
        .places()
        .find(|(a, place)| *place && !option_word(a, c.name != "rm"))
        .map(|(a, _)| a);
    if c.args
        .iter()
        .any(|a| long_prefix(a, "--no-preserve-root") && a.len() > 5)
    {
        return catastrophic(format!("{} --no-preserve-root removes /", c.name));
    }
    if recursive && let Some(target) = target {
        return catastrophic(format!("{} removes {target} recursively", c.name));
    }
    dangerous(format!(
        "{} removes files recursively or without asking",
        c.name
    ))
}

pub(super) fn find_delete(c: &Call<'_>) -> Option<Danger> {
    if !c.args.iter().any(|a| a == "-delete") {
        return None;
    }
    let start = c
        .places()
        .take_while(|(a, _)| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!"))
        .find(|(a, place)| *place && !a.starts_with('.') && !a.starts_with('*'));
    if let Some((start, _)) = start {
        return catastrophic(format!("find -delete removes everything under {start}"));
    }
    // `find . -delete`, `find -type f -delete`: no test narrows what goes,
    // and it starts at the project (no start is `.`).
    let starts: Vec<bool> = c
        .places()
        .take_while(|(a, _)| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!"))
        .map(|(_, place)| place)
        .collect();
    let narrowed = c.args.iter().any(|a| {
        a.starts_with('-') && !UNNARROWING.contains(&a.as_str()) || matches!(a.as_str(), "(" | "!")
    });
    if !narrowed && starts.iter().all(|p| *p) {
        return catastrophic("find -delete empties the project (no test narrows what it removes)");
    }
    dangerous("find -delete removes files")
}

/// Words of a `find` expression that do not narrow what `-delete` removes.
const UNNARROWING: &[&str] = &[
    "-delete",
    "-depth",
    "-xdev",
    "-mount",
    "-P",
    "-L",
    "-H",
    "-noleaf",
    "-print",
    "-print0",
    "-true",
    "-follow",
    "-daystart",
    "-ignore_readdir_race",
    "-type",
    "-mindepth",
    "-maxdepth",
];

pub(super) fn recursive_ownership(c: &Call<'_>) -> Option<Danger> {
    let recursive = c.args.iter().any(|a| {
        short_cluster_has(a, 'R')
            || long_prefix(a, "--recursive")
            || a.eq_ignore_ascii_case("/r")
            || a.eq_ignore_ascii_case("/t")
    });
    if !recursive {
        return None;
    }
    let on_root = c
        .places()
        .any(|(a, place)| place && !a.starts_with('-') && !a.starts_with('.') && a != "*");
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

pub(super) fn git(c: &Call<'_>) -> Option<Danger> {
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
        "push" => push::irreversible(args).and_then(catastrophic),
        "send-pack" | "http-push" => catastrophic(format!("git {sub} updates a remote's refs")),
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

pub(super) fn interpreter(c: &Call<'_>) -> Option<Danger> {
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
        // Code from standard input is never shown: only code on the line,
        // and never PowerShell's (`-EncodedCommand` hides it).
        unseen: !c.args.is_empty()
            && !matches!(c.name.to_ascii_lowercase().as_str(), "powershell" | "pwsh")
            && !c
                .args
                .iter()
                .any(|a| a.to_ascii_lowercase().starts_with("-enc")),
        reason: format!("{} is given code to run", c.name),
    })
}

pub(super) fn injecting_assignment(arg: &str) -> Option<Danger> {
    let name = arg.split('=').next().unwrap_or(arg);
    let name = name.trim_start_matches("env:").to_ascii_uppercase();
    (INJECTING_VARIABLES.contains(&name.as_str()) || name.starts_with("GIT_CONFIG")).then(|| {
        Danger {
            catastrophic: false,
            unseen: false,
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

pub(super) fn curl(c: &Call<'_>) -> Option<Danger> {
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
        unseen: false,
        reason: format!("{} uploads data or writes a file", c.name),
    })
}

pub(super) fn wget(c: &Call<'_>) -> Option<Danger> {
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
        unseen: false,
        reason: "wget uploads data or writes a file".into(),
    })
}

pub(super) fn windows_launcher(c: &Call<'_>) -> Option<Danger> {
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
