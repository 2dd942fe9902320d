//! A careful hand tokenizer for bash and sh. It finds every command in the
//! input, those inside pipelines, lists, subshells, command and process
//! substitutions and backticks included, with their words and redirections,
//! and says why the input is not one simple literal command or why it is
//! malformed. It never expands, never resolves and never guesses: anything it
//! does not understand makes the input ambiguous. Its work is one pass over
//! the input, and its nesting is capped.

/// How deep substitutions and subshells may nest before the input is
/// called malformed.
pub const MAX_NESTING: usize = 32;

/// One word as the shell would see it after quote removal, as far as that
/// can be known without expanding anything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// Nothing in it is expanded, globbed or escaped: its text is exactly
    /// the argument the program receives.
    pub literal: bool,
    /// The shell expands something in it (a variable, a parameter, a
    /// command or process substitution): its text is not what runs.
    pub expands: bool,
}

/// A redirection and the word it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub op: String,
    pub target: Word,
}

/// One command: its words (assignment prefixes and keywords included) and
/// its redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// What the tokenizer found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lexed {
    /// Every command, outer ones and nested ones, in the order they end.
    pub commands: Vec<Command>,
    /// Why the input cannot be read as shell syntax, if it cannot.
    pub malformed: Option<&'static str>,
    /// The first reason the input is not one simple literal command.
    pub complex: Option<&'static str>,
    /// The text of every here-document, which a shell may run as code.
    pub bodies: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closer {
    End,
    Paren,
    Backtick,
}

#[derive(Debug)]
struct Frame {
    closer: Closer,
    command: Command,
    word: Option<Word>,
    redirect: Option<String>,
    in_double_quotes: bool,
}

impl Frame {
    fn new(closer: Closer) -> Self {
        Self {
            closer,
            command: Command::default(),
            word: None,
            redirect: None,
            in_double_quotes: false,
        }
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(|| Word {
            text: String::new(),
            literal: true,
            expands: false,
        })
    }
}

/// Characters a literal unquoted word may hold.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._/,:@%+=^-".contains(c)
}

struct Lexer {
    out: Lexed,
    stack: Vec<Frame>,
    heredocs: Vec<(String, bool)>,
    expect_heredoc_word: Option<bool>,
}

impl Lexer {
    fn complex(&mut self, why: &'static str) {
        if self.out.complex.is_none() {
            self.out.complex = Some(why);
        }
    }

    fn malformed(&mut self, why: &'static str) {
        if self.out.malformed.is_none() {
            self.out.malformed = Some(why);
        }
    }

    fn top(&mut self) -> &mut Frame {
        if self.stack.is_empty() {
            self.stack.push(Frame::new(Closer::End));
        }
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn non_literal(&mut self, why: &'static str) {
        self.top().word().literal = false;
        self.complex(why);
    }

    /// A word the shell expands: non-literal, and its text is not what runs.
    fn expansion(&mut self, why: &'static str) {
        self.top().word().expands = true;
        self.non_literal(why);
    }

    fn end_word(&mut self) {
        let heredoc = self.expect_heredoc_word.take();
        let Some(word) = self.top().word.take() else {
            if heredoc.is_some() {
                self.expect_heredoc_word = heredoc;
            }
            return;
        };
        if let Some(strip_tabs) = heredoc {
            self.heredocs.push((word.text.clone(), strip_tabs));
            return;
        }
        let frame = self.top();
        match frame.redirect.take() {
            Some(op) => frame.command.redirects.push(Redirect { op, target: word }),
            None => frame.command.words.push(word),
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        let frame = self.top();
        if frame.redirect.take().is_some() {
            self.malformed("a redirection without a target");
        }
        let command = std::mem::take(&mut self.top().command);
        if !command.words.is_empty() || !command.redirects.is_empty() {
            self.out.commands.push(command);
        }
    }

    fn open(&mut self, closer: Closer) {
        if self.stack.len() >= MAX_NESTING {
            self.malformed("substitutions or subshells nested too deeply");
            return;
        }
        self.stack.push(Frame::new(closer));
    }

    fn close(&mut self, closer: Closer) {
        if self.top().closer != closer || self.stack.len() < 2 {
            self.malformed("a closing parenthesis or backtick without its opening");
            return;
        }
        if self.top().in_double_quotes {
            self.malformed("an unclosed double quote");
        }
        self.end_command();
        self.stack.pop();
    }

    fn push_char(&mut self, c: char) {
        // A tilde expands only at the start of a word or after `=` or `:`.
        let tilde_inside = c == '~'
            && self
                .top()
                .word
                .as_ref()
                .is_some_and(|w| !w.text.is_empty() && !w.text.ends_with(['=', ':']));
        if !plain(c) && !tilde_inside {
            let why = if c.is_ascii() {
                match c {
                    '*' | '?' | '[' | ']' => "a glob",
                    '~' => "a tilde",
                    '{' | '}' => "a brace",
                    '!' => "a history or negation mark",
                    _ => "a character that is not plainly literal",
                }
            } else {
                "a character outside printable ASCII"
            };
            self.non_literal(why);
        }
        self.top().word().text.push(c);
    }
}

/// Reads `input` as bash or sh.
pub fn lex(input: &str) -> Lexed {
    let chars: Vec<char> = input.chars().collect();
    let mut lx = Lexer {
        out: Lexed::default(),
        stack: vec![Frame::new(Closer::End)],
        heredocs: Vec::new(),
        expect_heredoc_word: None,
    };
    let mut i = 0;
    while i < chars.len() && lx.out.malformed.is_none() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if lx.top().in_double_quotes {
            i = double_quoted(&mut lx, &chars, i);
            continue;
        }
        match c {
            ' ' | '\t' => lx.end_word(),
            '\n' => {
                lx.end_command();
                if lx.stack.len() == 1 {
                    lx.complex("more than one line");
                } else {
                    lx.complex("a list of commands");
                }
                if !lx.heredocs.is_empty() {
                    i = heredoc_bodies(&mut lx, &chars, i + 1);
                    continue;
                }
            }
            '#' if lx.top().word.is_none() => {
                lx.complex("a comment");
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' => {
                lx.top().word();
                let Some(end) = chars[i + 1..].iter().position(|&c| c == '\'') else {
                    lx.malformed("an unclosed single quote");
                    break;
                };
                for &q in &chars[i + 1..i + 1 + end] {
                    if !q.is_ascii() {
                        lx.non_literal("a character outside printable ASCII");
                    }
                    lx.top().word().text.push(q);
                }
                i += end + 2;
                continue;
            }
            '"' => {
                lx.top().word();
                lx.top().in_double_quotes = true;
            }
            '\\' => {
                lx.non_literal("a backslash escape");
                match next {
                    None => lx.malformed("a backslash at the end of the input"),
                    Some('\n') => {}
                    Some(n) => lx.top().word().text.push(n),
                }
                i += 2;
                continue;
            }
            '$' => {
                i = dollar(&mut lx, &chars, i);
                continue;
            }
            '`' => {
                lx.expansion("a backtick substitution");
                if lx.top().closer == Closer::Backtick {
                    lx.close(Closer::Backtick);
                } else {
                    lx.open(Closer::Backtick);
                }
            }
            '(' => {
                lx.end_word();
                lx.complex("a subshell");
                lx.open(Closer::Paren);
            }
            ')' => {
                lx.close(Closer::Paren);
                lx.complex("a subshell");
            }
            ';' | '|' => {
                lx.end_command();
                lx.complex("an operator");
            }
            '&' if next == Some('>') => {
                i = redirect(&mut lx, &chars, i);
                continue;
            }
            '&' => {
                lx.end_command();
                lx.complex("an operator");
            }
            '<' | '>' if next == Some('(') => {
                lx.end_word();
                lx.complex("a process substitution");
                lx.open(Closer::Paren);
                i += 2;
                continue;
            }
            '<' | '>' => {
                i = redirect(&mut lx, &chars, i);
                continue;
            }
            c if c.is_control() => lx.malformed("a control character"),
            c => lx.push_char(c),
        }
        i += 1;
    }
    if lx.out.malformed.is_none() {
        if lx.top().in_double_quotes {
            lx.malformed("an unclosed double quote");
        } else if lx.stack.len() > 1 {
            lx.malformed("an unclosed substitution or subshell");
        }
    }
    lx.end_command();
    if lx.out.malformed.is_none() && (!lx.heredocs.is_empty() || lx.expect_heredoc_word.is_some()) {
        lx.malformed("a here-document without its end");
    }
    lx.out
}

/// Inside double quotes: literal text except `$`, backticks and escapes.
fn double_quoted(lx: &mut Lexer, chars: &[char], i: usize) -> usize {
    match chars[i] {
        '"' => {
            lx.top().in_double_quotes = false;
            i + 1
        }
        '\\' => {
            lx.non_literal("a backslash escape");
            match chars.get(i + 1) {
                Some(&n) => lx.top().word().text.push(n),
                None => lx.malformed("an unclosed double quote"),
            }
            i + 2
        }
        '$' => dollar(lx, chars, i),
        '`' => {
            lx.expansion("a backtick substitution");
            lx.open(Closer::Backtick);
            i + 1
        }
        c if c.is_control() && c != '\n' && c != '\t' => {
            lx.malformed("a control character");
            i + 1
        }
        c => {
            if !c.is_ascii() {
                lx.non_literal("a character outside printable ASCII");
            } else if c == '\n' {
                lx.non_literal("a newline inside quotes");
            }
            lx.top().word().text.push(c);
            i + 1
        }
    }
}

/// `$(`, `$((`, `${`, `$'`, `$"` and `$NAME`.
fn dollar(lx: &mut Lexer, chars: &[char], i: usize) -> usize {
    match chars.get(i + 1) {
        Some('(') => {
            lx.expansion("a command substitution");
            lx.open(Closer::Paren);
            i + 2
        }
        Some('{') => {
            lx.expansion("a parameter expansion");
            match chars[i + 2..].iter().position(|&c| c == '}') {
                Some(end) => {
                    let text: String = chars[i..i + 3 + end].iter().collect();
                    lx.top().word().text.push_str(&text);
                    i + 3 + end
                }
                None => {
                    lx.malformed("an unclosed parameter expansion");
                    chars.len()
                }
            }
        }
        Some('\'') => {
            lx.non_literal("an ANSI-C quoted string");
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            if j >= chars.len() {
                lx.malformed("an unclosed single quote");
                return chars.len();
            }
            let text: String = chars[i + 2..j].iter().collect();
            lx.top().word().text.push_str(&text);
            j + 1
        }
        Some('"') => {
            lx.non_literal("a locale string");
            lx.top().in_double_quotes = true;
            i + 2
        }
        _ => {
            lx.expansion("a variable expansion");
            lx.top().word().text.push('$');
            i + 1
        }
    }
}

/// A redirection operator with its optional file-descriptor prefix.
fn redirect(lx: &mut Lexer, chars: &[char], i: usize) -> usize {
    lx.complex("a redirection");
    // A word of digits right before the operator is its descriptor.
    let fd = matches!(&lx.top().word, Some(w) if !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_digit()));
    if fd {
        lx.top().word = None;
    } else {
        lx.end_word();
    }
    let mut j = i;
    let mut op = String::new();
    while j < chars.len() && op.len() < 3 && "<>&|-".contains(chars[j]) {
        // `>&-` and `<&-` close a descriptor; `<<-` is a tab-stripping heredoc.
        if chars[j] == '-' && !op.ends_with('&') && op != "<<" {
            break;
        }
        if chars[j] == '|' && op != ">" {
            break;
        }
        op.push(chars[j]);
        j += 1;
    }
    if op.starts_with("<<") && op != "<<<" {
        lx.complex("a here-document");
        lx.expect_heredoc_word = Some(op.ends_with('-'));
        return j;
    }
    if op.ends_with('&') && chars.get(j).is_some_and(|c| c.is_ascii_digit()) {
        // `2>&1`: a descriptor, not a file.
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        return j;
    }
    if op.ends_with('-') {
        return j;
    }
    if lx.top().redirect.is_some() {
        lx.malformed("a redirection without a target");
    }
    lx.top().redirect = Some(op);
    j
}

/// Skips the bodies of the pending here-documents, starting at `i`.
fn heredoc_bodies(lx: &mut Lexer, chars: &[char], mut i: usize) -> usize {
    let pending = std::mem::take(&mut lx.heredocs);
    for (delimiter, strip_tabs) in pending {
        let mut body = String::new();
        loop {
            if i >= chars.len() {
                lx.malformed("a here-document without its end");
                return chars.len();
            }
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            let line: String = chars[i..end].iter().collect();
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            i = end + 1;
            if line == delimiter {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        lx.out.bodies.push(body);
    }
    i
}
