//! PowerShell and CMD, read strictly: the allowance accepts only a line of
//! plain words (no quotes, variables, operators or escapes at all); the
//! dangerous scan splits the line at every operator, bracket and newline
//! and reads each piece's words with their quotes and escapes removed.

use super::Dialect;
use super::read::Read;

/// Characters a plain word may hold in these shells.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/\\:=+,-".contains(c)
}

pub(super) fn read(dialect: Dialect, command: &str) -> Read {
    let separators: &[char] = match dialect {
        Dialect::Cmd => &['&', '|', '\n', '(', ')', '<', '>'],
        _ => &[';', '&', '|', '\n', '(', ')', '{', '}', '<', '>'],
    };
    let escape = if dialect == Dialect::Cmd { '^' } else { '`' };
    let commands: Vec<Vec<String>> = command
        .split(|c| separators.contains(&c))
        .map(|piece| {
            piece
                .split_whitespace()
                .map(|w| {
                    w.chars()
                        .filter(|&c| c != '\'' && c != '"' && c != escape)
                        .collect::<String>()
                })
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect();
    let quotes_balanced = command.matches('"').count().is_multiple_of(2)
        && (dialect == Dialect::Cmd || command.matches('\'').count().is_multiple_of(2));
    let parens = command.matches('(').count() == command.matches(')').count();
    let malformed = if !quotes_balanced {
        Some("an unclosed quote")
    } else if !parens {
        Some("unbalanced parentheses")
    } else {
        None
    };
    let simple = if command.contains('\n') {
        Err("more than one line")
    } else if !command.chars().all(|c| c == ' ' || plain(c)) {
        Err("a character that is not plainly literal (a quote, variable, operator or escape)")
    } else if command.contains("--%") {
        Err("PowerShell's stop-parsing token")
    } else {
        Ok(command.split_whitespace().map(str::to_string).collect())
    };
    Read {
        opaque: Vec::new(),
        code: Vec::new(),
        commands,
        written: Vec::new(),
        truncated: Vec::new(),
        malformed,
        simple,
    }
}
