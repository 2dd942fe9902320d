//! Which unresolved requests a judge may consider: a closed read-only
//! request (status, diff, log, show) to the configured exact git path, and
//! the enums it may be told about it (shell, operation, option risk,
//! argument kinds), never a value.

use super::danger;
use super::{ArgumentKind, JudgeRequest, OptionRisk, Rules, Shell, readonly};

/// A closed read-only request to the configured git: what a judge may be
/// told about it.
pub(super) fn eligible(
    shell: Shell,
    program: &str,
    args: &[String],
    rules: &Rules,
) -> Option<JudgeRequest> {
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
