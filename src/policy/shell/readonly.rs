//! Per-program tables of what is read-only: the only programs and options
//! the narrow allowance accepts. A program without a row is never allowed,
//! however trusted its path. Pure: words in, a yes or a no out.

use super::danger::git_subcommand;

/// One program the allowance knows, and what makes a call to it read-only.
pub struct ReadOnly {
    pub name: &'static str,
    pub what: &'static str,
    /// `Ok(operation)` when read-only, `Err(why not)` otherwise.
    pub check: fn(&[String]) -> Result<String, String>,
}

/// The table.
pub const TABLE: &[ReadOnly] = &[
    ReadOnly {
        name: "git",
        what: "status, diff, log, show; global options --no-pager, -P, --no-optional-locks only; never -c, --config-env, --output, --ext-diff, --textconv, -O, --open-files-in-pager, --no-index, --ignore-submodules, --submodule, a %G format; in a repository whose own configuration is inert",
        check: git,
    },
    ReadOnly {
        name: "sed",
        what: "-n with one print script (10p, 1,20p, $p, /word/p); never -i, -f, e, w or r",
        check: sed,
    },
    ReadOnly {
        name: "find",
        what: "never -exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0, -fprintf, -fls",
        check: find,
    },
    ReadOnly {
        name: "rg",
        what: "never --pre, --pre-glob, -z, --search-zip",
        check: rg,
    },
    ReadOnly {
        name: "ls",
        what: "any option",
        check: |_| Ok("ls".into()),
    },
    ReadOnly {
        name: "cat",
        what: "any option",
        check: |_| Ok("cat".into()),
    },
    ReadOnly {
        name: "head",
        what: "any option",
        check: |_| Ok("head".into()),
    },
    ReadOnly {
        name: "tail",
        what: "any option",
        check: |_| Ok("tail".into()),
    },
    ReadOnly {
        name: "wc",
        what: "any option",
        check: |_| Ok("wc".into()),
    },
    ReadOnly {
        name: "grep",
        what: "any option",
        check: |_| Ok("grep".into()),
    },
    ReadOnly {
        name: "pwd",
        what: "any option",
        check: |_| Ok("pwd".into()),
    },
    ReadOnly {
        name: "stat",
        what: "any option",
        check: |_| Ok("stat".into()),
    },
    ReadOnly {
        name: "du",
        what: "any option",
        check: |_| Ok("du".into()),
    },
];

/// Looks up `program` (a name as `danger::program_name` gives it).
pub fn read_only(program: &str, args: &[String]) -> Result<String, String> {
    match TABLE.iter().find(|row| row.name == program) {
        Some(row) => (row.check)(args),
        None => Err(format!(
            "{program} has no read-only table; only {} are known",
            TABLE.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The git subcommands a read-only request may name.
pub const GIT_READ_ONLY: &[&str] = &["status", "diff", "log", "show"];

const GIT_GLOBALS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--no-replace-objects",
];

const GIT_FORBIDDEN: &[&str] = &[
    "--output",
    "--ext-diff",
    "--textconv",
    "-O",
    "--open-files-in-pager",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--show-signature",
    "--config",
    "--paginate",
    "--no-index",
    "--run",
    "--contents",
    // Submodules are repositories of their own, with their own programs.
    "--ignore-submodules",
    "--submodule",
    "--recurse-submodules",
];

/// A git request's operation when it is closed and read-only: a listed
/// subcommand with no forbidden option.
pub fn git(args: &[String]) -> Result<String, String> {
    let (globals, sub) = git_subcommand(args);
    if let Some(g) = globals.iter().find(|g| !GIT_GLOBALS.contains(g)) {
        return Err(format!("git's global option {g} is not read-only"));
    }
    let Some((sub, rest)) = sub else {
        return Err("git without a subcommand".into());
    };
    if !GIT_READ_ONLY.contains(&sub) {
        return Err(format!(
            "git {sub} is not one of {}",
            GIT_READ_ONLY.join(", ")
        ));
    }
    let mut after_separator = false;
    for a in rest {
        if a == "--" {
            after_separator = true;
            continue;
        }
        if after_separator || !a.starts_with('-') {
            continue;
        }
        if let Some(f) = GIT_FORBIDDEN.iter().find(|f| a.starts_with(*f)) {
            return Err(format!("git {sub} {f} is not read-only"));
        }
        // `%G?`, `%GS`, `%GK`, ... verify signatures: git runs gpg.program.
        if a.contains("%G") {
            return Err(format!(
                "git {sub} {a} verifies signatures, which runs a program"
            ));
        }
    }
    Ok(sub.to_string())
}

/// `10p`, `1,20p`, `$p`, `5,$p`, `/word/p`: one print command.
fn print_script(script: &str) -> bool {
    let Some(address) = script.strip_suffix('p') else {
        return false;
    };
    let line = |s: &str| s == "$" || (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()));
    if let Some(pattern) = address.strip_prefix('/').and_then(|a| a.strip_suffix('/')) {
        return pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " _.-:^$*".contains(c));
    }
    match address.split_once(',') {
        Some((a, b)) => line(a) && line(b),
        None => address.is_empty() || line(address),
    }
}

fn sed(args: &[String]) -> Result<String, String> {
    let mut quiet = false;
    let mut script: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" | "-s" | "--separate" | "-z" | "--null-data"
            | "-u" | "--unbuffered" | "--posix" => {}
            "-e" | "--expression" => {
                if script.is_some() {
                    return Err("sed with more than one script".into());
                }
                script = args.get(i + 1).map(String::as_str);
                i += 1;
            }
            a if a.starts_with('-') => return Err(format!("sed option {a} is not read-only")),
            a if script.is_none() => script = Some(a),
            _ => {}
        }
        i += 1;
    }
    if !quiet {
        return Err("sed without -n".into());
    }
    match script {
        Some(s) if print_script(s) => Ok("sed".into()),
        Some(s) => Err(format!("sed script {s:?} is not one print command")),
        None => Err("sed without a script".into()),
    }
}

fn find(args: &[String]) -> Result<String, String> {
    let forbidden = [
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
    ];
    match args.iter().find(|a| forbidden.contains(&a.as_str())) {
        Some(a) => Err(format!("find {a} is not read-only")),
        None => Ok("find".into()),
    }
}

fn rg(args: &[String]) -> Result<String, String> {
    let forbidden = [
        "--pre",
        "--pre-glob",
        "-z",
        "--search-zip",
        "--hostname-bin",
    ];
    let bad = args.iter().find(|a| {
        forbidden.iter().any(|f| a.starts_with(f))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('z'))
    });
    match bad {
        Some(a) => Err(format!("rg {a} is not read-only")),
        None => Ok("rg".into()),
    }
}
