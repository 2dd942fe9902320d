//! Syntax highlighting for fenced code blocks and diffs, with `syntect`'s
//! default syntaxes and theme on its Oniguruma regex engine. Nothing of it
//! is loaded before a code block or a diff needs it: then the syntaxes'
//! index and the theme load once (about 1.5 ms, 1.5 MiB), and only the
//! language asked for has its rules unpacked and its patterns compiled, each
//! pattern on first use (a first Rust block about 7 ms, 1.3 MiB; the pure-Rust
//! engine took about 35 ms and 10 MiB for the same block, which is why it is
//! not used). A block being streamed is
//! highlighted incrementally: the parser's state after each line is kept,
//! so a new line costs one line, not the whole block. Returns styled text
//! only; never draws, wraps or does I/O.

use std::cell::RefCell;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// The theme, from syntect's defaults.
const THEME: &str = "base16-ocean.dark";
/// Blocks remembered (a long answer has many, and laying it out again at
/// another width, or whole when it ends, meets them all again).
const MEMO_BLOCKS: usize = 256;
/// Lines longer than this are not highlighted (a minified file would cost
/// the regex engine dearly): they keep the plain code style.
const MAX_LINE_BYTES: usize = 2000;

/// One highlighted line: its pieces and their styles.
pub type StyledLine = Vec<(Style, String)>;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();

fn assets() -> &'static Assets {
    ASSETS.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults();
        let theme = themes.themes.remove(THEME).unwrap_or_default();
        Assets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            theme,
        }
    })
}

/// The syntax for a fence's language word (`rust`, `py`, `sh`, ...).
fn syntax_for(assets: &'static Assets, language: &str) -> Option<&'static SyntaxReference> {
    if language.is_empty() {
        return None;
    }
    assets
        .syntaxes
        .find_syntax_by_token(language)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(language))
}

/// The parser's and highlighter's state between two lines.
#[derive(Clone)]
struct State {
    parse: ParseState,
    highlight: HighlightState,
}

/// A block highlighted earlier: its lines, the state after each, and the
/// styled result.
struct Memo {
    language: String,
    lines: Vec<String>,
    after: Vec<State>,
    styled: Vec<StyledLine>,
}

thread_local! {
    static MEMOS: RefCell<Vec<Memo>> = const { RefCell::new(Vec::new()) };
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// Highlights one line (without its newline) from `state`, which it moves
/// past the line. `plain` is the style of a line that cannot be parsed.
fn line(assets: &Assets, state: &mut State, text: &str, plain: Style) -> StyledLine {
    if text.len() > MAX_LINE_BYTES {
        return vec![(plain, text.to_string())];
    }
    let with_newline = format!("{text}\n");
    let Ok(ops) = state.parse.parse_line(&with_newline, &assets.syntaxes) else {
        return vec![(plain, text.to_string())];
    };
    let highlighter = Highlighter::new(&assets.theme);
    let mut out: StyledLine = Vec::new();
    for (style, piece) in
        HighlightIterator::new(&mut state.highlight, &ops, &with_newline, &highlighter)
    {
        let piece = piece.strip_suffix('\n').unwrap_or(piece);
        if piece.is_empty() {
            continue;
        }
        let style = convert(style);
        match out.last_mut() {
            Some((last, text)) if *last == style => text.push_str(piece),
            _ => out.push((style, piece.to_string())),
        }
    }
    out
}

fn start(assets: &Assets, syntax: &SyntaxReference) -> State {
    let highlighter = Highlighter::new(&assets.theme);
    State {
        parse: ParseState::new(syntax),
        highlight: HighlightState::new(&highlighter, ScopeStack::new()),
    }
}

/// `code`'s lines highlighted as `language`, or `None` when no syntax
/// knows the language. Lines a remembered block already had (the same
/// language, the same lines before them) are not highlighted again.
pub fn code_block(language: &str, lines: &[&str], plain: Style) -> Option<Vec<StyledLine>> {
    let assets = assets();
    let syntax = syntax_for(assets, language)?;
    MEMOS.with(|memos| {
        let mut memos = memos.borrow_mut();
        // The remembered block sharing the most leading lines with this one.
        let best = memos
            .iter()
            .enumerate()
            .filter(|(_, memo)| memo.language == language)
            .map(|(i, memo)| {
                let shared = memo
                    .lines
                    .iter()
                    .zip(lines)
                    .take_while(|(a, b)| a.as_str() == **b)
                    .count();
                (i, shared)
            })
            .max_by_key(|&(_, shared)| shared)
            .filter(|&(_, shared)| shared > 0);
        let mut memo = match best {
            Some((i, shared)) => {
                let mut memo = memos.remove(i);
                memo.lines.truncate(shared);
                memo.after.truncate(shared);
                memo.styled.truncate(shared);
                memo
            }
            None => Memo {
                language: language.to_string(),
                lines: Vec::new(),
                after: Vec::new(),
                styled: Vec::new(),
            },
        };
        let mut state = memo
            .after
            .last()
            .cloned()
            .unwrap_or_else(|| start(assets, syntax));
        for text in &lines[memo.lines.len()..] {
            memo.styled.push(line(assets, &mut state, text, plain));
            memo.lines.push((*text).to_string());
            memo.after.push(state.clone());
        }
        let styled = memo.styled.clone();
        memos.push(memo);
        if memos.len() > MEMO_BLOCKS {
            memos.remove(0);
        }
        Some(styled)
    })
}

/// A unified diff's body lines highlighted as the file `path`'s language:
/// the sign keeps its own style (`sign_style` gives it per line), the code
/// after it is highlighted, the old side (`-`) and the new side (context
/// and `+`) each in order. `None` when no syntax knows the file.
pub fn diff(
    path: &str,
    lines: &[&str],
    sign_style: impl Fn(&str) -> Style,
) -> Option<Vec<StyledLine>> {
    let assets = assets();
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map_or(name, |(_, ext)| ext);
    let syntax = assets
        .syntaxes
        .find_syntax_by_extension(extension)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(name))?;
    let mut old = start(assets, syntax);
    let mut new = start(assets, syntax);
    let plain = Style::new();
    let mut out = Vec::with_capacity(lines.len());
    for text in lines {
        let sign = sign_style(text);
        let header = text.starts_with("+++ ") || text.starts_with("--- ");
        let styled = match text.chars().next() {
            _ if header => vec![(sign, (*text).to_string())],
            Some('@') | None => vec![(sign, (*text).to_string())],
            Some(c @ ('+' | '-' | ' ')) => {
                let code = &text[1..];
                let state = if c == '-' { &mut old } else { &mut new };
                let mut pieces = vec![(sign, c.to_string())];
                pieces.extend(line(assets, state, code, plain));
                if c == ' ' {
                    // Context is on both sides.
                    line(assets, &mut old, code, plain);
                }
                pieces
            }
            Some(_) => vec![(sign, (*text).to_string())],
        };
        out.push(styled);
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn styles_of(line: &StyledLine, piece: &str) -> Style {
        line.iter()
            .find(|(_, text)| text.contains(piece))
            .map(|(style, _)| *style)
            .unwrap()
    }

    #[test]
    fn keywords_and_strings_get_their_own_colours() {
        let plain = Style::new().fg(Color::Yellow);
        let lines =
            code_block("rust", &["fn main() {", "    let s = \"hi\";", "}"], plain).unwrap();
        assert_eq!(lines.len(), 3);
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
            .collect();
        assert_eq!(joined, ["fn main() {", "    let s = \"hi\";", "}"]);
        assert_ne!(styles_of(&lines[0], "fn"), styles_of(&lines[0], "main"));
        assert_ne!(styles_of(&lines[1], "let"), styles_of(&lines[1], "hi"));
        assert!(code_block("no-such-language", &["x"], plain).is_none());
    }

    #[test]
    fn a_growing_block_highlights_like_a_whole_one() {
        let plain = Style::new();
        let all = [
            "def f(x):",
            "    \"\"\"a docstring",
            "    that goes on\"\"\"",
            "    return x",
        ];
        let mut streamed = Vec::new();
        for n in 1..=all.len() {
            streamed = code_block("python", &all[..n], plain).unwrap();
        }
        MEMOS.with(|memos| memos.borrow_mut().clear());
        let whole = code_block("python", &all, plain).unwrap();
        assert_eq!(streamed, whole);
        // The docstring's second line is a string, not code.
        assert_eq!(
            styles_of(&whole[2], "that goes on"),
            styles_of(&whole[1], "a docstring")
        );
    }

    #[test]
    fn a_diff_keeps_its_signs_and_highlights_the_code() {
        let sign = |line: &str| {
            if line.starts_with('+') {
                Style::new().fg(Color::Green)
            } else {
                Style::new()
            }
        };
        let lines = diff(
            "src/a.rs",
            &["@@ -1 +1 @@", "-let a = 1;", "+let a = 2;"],
            sign,
        )
        .unwrap();
        assert_eq!(lines[0], vec![(Style::new(), "@@ -1 +1 @@".to_string())]);
        assert_eq!(
            lines[2][0],
            (Style::new().fg(Color::Green), "+".to_string())
        );
        assert_ne!(styles_of(&lines[2], "let"), styles_of(&lines[2], "2"));
        assert!(diff("notes.unknownext", &["+x"], sign).is_none());
    }
}
