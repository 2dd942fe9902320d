//! The one way mino shows control characters in text that came from outside
//! (the model, a tool's output, a file name, a server): C0 controls and DEL
//! as Unicode control pictures (ESC shows as `␛`), C1 controls and the
//! bidirectional overrides written out as `\u{..}`. Text so shown cannot
//! drive a terminal or reorder what a line says. Pure: it never lays text
//! out (tab stops are the views') and never decides anything.

/// Whether `c` is shown escaped: a control character, or a mark that
/// reorders the text around it.
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends `c` to `out`, escaped when it needs to be; returns how many
/// characters were appended for an escape (each one column wide), or 0
/// when `c` went in as itself.
pub fn push_escaped(out: &mut String, c: char) -> usize {
    match c {
        '\u{0}'..='\u{1f}' => {
            out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}'));
            1
        }
        '\u{7f}' => {
            out.push('\u{2421}');
            1
        }
        c if needs_escape(c) => {
            let escaped = c.escape_unicode();
            let width = escaped.len();
            out.extend(escaped);
            width
        }
        c => {
            out.push(c);
            0
        }
    }
}

/// `text` with every control character escaped but newlines and tabs: for
/// text shown on several lines.
pub fn visible(text: &str) -> String {
    escaped(text, |c| matches!(c, '\n' | '\t'))
}

/// `text` with newlines and tabs escaped too, so it stays one line: for
/// names and paths in a list.
pub fn one_line(text: &str) -> String {
    escaped(text, |_| false)
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if keep(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_pictures_and_c1_and_bidi_are_written_out() {
        assert_eq!(visible("a\u{1b}[2Jb\n"), "a␛[2Jb\n");
        assert_eq!(visible("bell\u{7} del\u{7f}"), "bell␇ del␡");
        assert_eq!(visible("\u{9b}31m \u{202e}txt"), "\\u{9b}31m \\u{202e}txt");
        assert_eq!(visible("tab\tand\nnewline"), "tab\tand\nnewline");
        assert_eq!(visible("plain 日本 text"), "plain 日本 text");
    }

    #[test]
    fn one_line_escapes_newlines_and_tabs_too() {
        assert_eq!(one_line("a\nb\tc\rd"), "a␊b␉c␍d");
        assert_eq!(one_line("name.txt"), "name.txt");
    }

    #[test]
    fn an_escape_reports_its_width() {
        let mut out = String::new();
        assert_eq!(push_escaped(&mut out, '\u{1b}'), 1);
        assert_eq!(push_escaped(&mut out, '\u{202e}'), 8);
        assert_eq!(push_escaped(&mut out, 'x'), 0);
        assert_eq!(out, "␛\\u{202e}x");
    }
}
