//! A command line read as a list for saved rules: the plain commands joined
//! by `&&`, `||`, `;` and newlines, each with its literal argv, or nothing
//! when any part of it is not plainly literal (a pipe, a background job, a
//! redirection, a substitution, an expansion, a subshell, a glob, a quote
//! holding `$`). Also every command the reader finds anywhere, nested ones
//! included, for the rules that deny or ask. Never expands anything.

use super::crude;
use super::lex::lex;

/// The longest line read as a list; longer lines match no rule that allows.
pub const MAX_LIST_BYTES: usize = super::MAX_INPUT_BYTES;

/// Each command of `input`'s top-level list as its exact argv, when every
/// one is a simple literal command; `None` otherwise.
pub fn literal_list(input: &str) -> Option<Vec<Vec<String>>> {
    if input.len() > MAX_LIST_BYTES {
        return None;
    }
    let pieces = split(input)?;
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let lexed = lex(piece);
        if lexed.malformed.is_some() || lexed.complex.is_some() || lexed.commands.len() != 1 {
            return None;
        }
        let command = &lexed.commands[0];
        if !command.redirects.is_empty() || command.words.iter().any(|w| !w.literal || w.expands) {
            return None;
        }
        out.push(command.words.iter().map(|w| w.text.clone()).collect());
    }
    (!out.is_empty()).then_some(out)
}

/// Splits at top-level `&&`, `||`, `;` and newlines, outside quotes. A
/// single `&` or `|`, an empty command between two separators, or an
/// unclosed quote gives `None`. A final `;` or newline is allowed.
fn split(input: &str) -> Option<Vec<&str>> {
    let bytes = input.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut single = false;
    let mut double = false;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            // An escaped character is never a separator; the lexer then
            // refuses the backslash itself.
            b'\\' if !single => i += 1,
            b'&' | b'|' if !single && !double => {
                if bytes.get(i + 1) != Some(&b) {
                    return None;
                }
                pieces.push(non_empty(&input[start..i])?);
                i += 2;
                start = i;
                continue;
            }
            b';' | b'\n' if !single && !double => {
                pieces.push(non_empty(&input[start..i])?);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if single || double {
        return None;
    }
    let rest = &input[start.min(input.len())..];
    if !rest.trim().is_empty() {
        pieces.push(rest);
    } else if input[..start.min(input.len())]
        .trim_end()
        .ends_with(['&', '|'])
    {
        // `a &&` waits for another command; bash would read more.
        return None;
    }
    Some(pieces)
}

fn non_empty(piece: &str) -> Option<&str> {
    (!piece.trim().is_empty()).then_some(piece)
}

/// Words that run the command after them: skipped before a rule's words
/// are compared, so `env git push` is `git push` to a rule that denies.
const WRAPPERS: &[&str] = &["command", "exec", "env", "nohup", "time", "builtin", "sudo"];

/// Every command the reader finds in a line, nested ones included, and its
/// crude words when the line is not a plainly literal list or names a
/// program that runs its arguments, so that code handed to a shell (`sh -c
/// 'git push'`, `eval`, `xargs`) is read too.
pub struct Commands {
    commands: Vec<Vec<String>>,
    words: Vec<String>,
}

impl Commands {
    /// Whether `prefix` starts a command: a command the reader found (with
    /// leading assignments and plain wrappers left off), or a run of the
    /// crude words. A program named by its path also counts by its file
    /// name (`/usr/bin/git` is `git`). For rules that deny or ask.
    pub fn any_starts_with(&self, prefix: &[String]) -> bool {
        let Some((first, rest)) = prefix.split_first() else {
            return true;
        };
        let same = |words: &[String]| {
            words.len() > rest.len()
                && (words[0] == *first
                    || words[0].rsplit_once('/').is_some_and(|(_, b)| b == first))
                && words[1..=rest.len()] == *rest
        };
        self.commands.iter().any(|c| same(strip(c))) || self.words.windows(prefix.len()).any(same)
    }
}

/// The commands and words of `input` for `Commands::any_starts_with`.
pub fn every_command(input: &str) -> Commands {
    let lexed = lex(input);
    let commands: Vec<Vec<String>> = lexed
        .commands
        .iter()
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect();
    let words = if literal_list(input).is_none() || hands_on(&commands) {
        crude::words(input)
    } else {
        Vec::new()
    };
    Commands { commands, words }
}

/// Programs that run their arguments as a command or as code.
const RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "xargs", "su", "sudo", "env", "nohup",
    "timeout", "watch", "script", "ssh", "exec", "command", "time", "nice", "flock", "setsid",
    "stdbuf", "parallel", "find", "busybox",
];

/// Whether a command hands its arguments to something that runs them.
fn hands_on(commands: &[Vec<String>]) -> bool {
    commands.iter().flatten().any(|w| {
        let base = w.rsplit_once('/').map_or(w.as_str(), |(_, b)| b);
        RUNNERS.contains(&base)
    })
}

fn strip(words: &[String]) -> &[String] {
    let skip = words
        .iter()
        .take_while(|w| WRAPPERS.contains(&w.as_str()) || is_assignment(w))
        .count();
    &words[skip..]
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(input: &str) -> Option<Vec<String>> {
        literal_list(input).map(|l| l.into_iter().map(|c| c.join(" ")).collect())
    }

    #[test]
    fn a_list_of_plain_commands_is_read_command_by_command() {
        assert_eq!(
            list("cargo test -p x"),
            Some(vec!["cargo test -p x".into()])
        );
        assert_eq!(
            list("cargo fmt && cargo test\ncargo build; ls || true;"),
            Some(vec![
                "cargo fmt".into(),
                "cargo test".into(),
                "cargo build".into(),
                "ls".into(),
                "true".into()
            ])
        );
        assert_eq!(
            list("echo 'a;b' \"c && d\""),
            Some(vec!["echo a;b c && d".into()])
        );
    }

    #[test]
    fn anything_not_plainly_literal_is_not_a_list() {
        for input in [
            "cargo test | sh",
            "cargo test & curl x",
            "cargo test $(id)",
            "cargo test `id`",
            "cargo test \"$HOME\"",
            "cargo test > out",
            "cargo test < in",
            "(cargo test)",
            "{ cargo test; }",
            "cargo test *",
            "cargo test ~",
            "cargo test \\; rm x",
            "cargo test 'unclosed",
            "cargo test && && ls",
            "; cargo test",
            "cargo test &&",
            "cargo test <<E\nx\nE",
            "cargo test # comment",
            "cargo tést",
            "cargo\u{a0}test",
            "cargo test\r",
            "cargo test\u{0};rm x",
            "",
        ] {
            assert_eq!(list(input), None, "{input:?}");
        }
    }

    #[test]
    fn every_command_sees_nested_wrapped_and_shell_handed_commands() {
        let words = |w: &[&str]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let all = every_command("echo $(env FOO=1 git push) && X=2 command git status");
        assert!(all.any_starts_with(&words(&["git", "push"])));
        assert!(all.any_starts_with(&words(&["git", "status"])));
        let push = |input: &str| every_command(input).any_starts_with(&words(&["git", "push"]));
        for hidden in [
            "git push 'unclosed",
            "sh -c 'git push origin'",
            "eval \"git push\"",
            "/usr/bin/git push",
            "gi''t push",
            "\\git push",
            "ls; bash -lc 'cd x && git push'",
        ] {
            assert!(push(hidden), "{hidden}");
        }
        assert!(!push("git status"));
        assert!(!push("echo git"));
        // A long line is read whole: the push at its end is still seen.
        let long = format!("{}git push", "ls -l; ".repeat(100_000));
        assert!(push(&long));
        assert_eq!(literal_list(&long), None, "too long to allow by a rule");
    }
}
