//! The small text checks and wording the tools share: whether bytes look
//! binary, how many lines they hold, counts in the singular or plural, and
//! names kept to one line. Pure functions: no I/O, nothing decided.

/// A NUL byte within this many leading bytes marks a file as binary.
pub const BINARY_PROBE: usize = 8 * 1024;

/// Whether the start of `bytes` holds a NUL byte.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(BINARY_PROBE).any(|&b| b == 0)
}

/// Lines in `bytes`: every `\n` ends one, and a last line without one counts.
pub(crate) fn count_lines(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    match bytes.last() {
        Some(b'\n') | None => newlines,
        Some(_) => newlines + 1,
    }
}

/// `N`, followed by `unit` in the singular or plural as `N` needs.
pub(crate) fn plural(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// The noun for `n` things: `one` for exactly one, `many` otherwise.
pub(crate) fn noun<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_with_and_without_a_final_newline() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }
}
