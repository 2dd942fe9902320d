//! The chat pane's text as styled logical lines: the assistant's markdown
//! (possibly a half-streamed prefix) and plain tool output. It owns the look
//! of each element; it never wraps to a width (see `wrap`), never does I/O,
//! and never lets a control character or an escape sequence through to the
//! terminal: they become visible placeholders.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::controls::{needs_escape, push_escaped};

mod table;

use table::Table;

const OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);
const TAB_STOP: usize = 4;
/// A rule has a fixed width here; `wrap` clips it to narrower panes.
const RULE_WIDTH: usize = 40;
/// Bullets by nesting depth, repeating for deeper lists.
const BULLETS: [char; 3] = ['•', '◦', '▪'];

const HEADING: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
const INLINE_CODE: Style = Style::new().fg(Color::Yellow);
const CODE_BLOCK: Style = Style::new().fg(Color::Yellow);
const FRAME: Style = Style::new().fg(Color::DarkGray);
const LINK: Style = Style::new().add_modifier(Modifier::UNDERLINED);
const URL: Style = Style::new().add_modifier(Modifier::DIM);
const TABLE_HEAD: Style = Style::new().add_modifier(Modifier::BOLD);

/// Renders markdown into styled lines, one per logical line (unwrapped).
/// Any prefix of a document renders without panicking: an unclosed fence
/// is a code block up to the end, a half-written `**bold` is shown as typed.
/// A soft line break starts a new line, as the author typed it.
pub fn render(text: &str) -> Vec<Line<'static>> {
    let mut renderer = Renderer::default();
    for event in Parser::new_ext(text, OPTIONS) {
        renderer.event(event);
    }
    renderer.finish()
}

/// Where a top-level block starts, after others that drew lines: its byte
/// offset, how many lines came before it, and whether a blank line is due
/// before its own lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockStart {
    pub offset: usize,
    pub lines: usize,
    pub blank: bool,
}

/// A document's lines, with what a caller needs to lay them out and to
/// keep the lines of blocks that are finished.
#[derive(Debug)]
pub struct Marked {
    pub lines: Vec<Line<'static>>,
    /// For each line, whether it is a code block's outside any quote or
    /// list: shown as is, so that what is selected on screen is the code.
    pub code: Vec<bool>,
    /// Where each top-level block after the first starts.
    pub starts: Vec<BlockStart>,
}

/// `render`, also marking code lines and where top-level blocks start.
pub fn render_marked(text: &str) -> Marked {
    let mut renderer = Renderer::default();
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, OPTIONS).into_offset_iter() {
        let opens = matches!(event, Event::Start(_) | Event::Rule);
        if depth == 0 && opens && renderer.current.is_none() && !renderer.lines.is_empty() {
            starts.push(BlockStart {
                offset: range.start,
                lines: renderer.lines.len(),
                blank: renderer.blank_pending,
            });
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        renderer.event(event);
    }
    let (lines, code) = renderer.finish_marked();
    Marked {
        lines,
        code,
        starts,
    }
}

/// Non-markdown text (tool output), one line per input line, unstyled, with
/// control characters made visible and tabs expanded to 4-column stops.
pub fn plain(text: &str) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| {
            let shown = visible(line, 0);
            if shown.is_empty() {
                Line::default()
            } else {
                Line::from(shown)
            }
        })
        .collect()
}

/// `text` with control characters escaped (`crate::controls`) and tabs
/// expanded to the next stop, counting from display column `column`.
fn visible(text: &str, column: usize) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut column = column;
    for c in text.chars() {
        column += match c {
            '\t' => {
                let spaces = TAB_STOP - column % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', spaces));
                spaces
            }
            c if needs_escape(c) => push_escaped(&mut out, c),
            c => {
                out.push(c);
                c.width().unwrap_or(0)
            }
        };
    }
    out
}

/// What encloses the current line and so shapes its start.
enum Container {
    /// A block quote; `started` once it has a line, so a blank line before
    /// its first line does not show its bar.
    Quote { started: bool },
    /// A list item; its marker shows on its first line only, later lines get
    /// as many spaces instead.
    Item { marker: String, pending: bool },
}

struct LinkState {
    url: String,
    text: String,
    image: bool,
}

#[derive(Default)]
struct Renderer {
    lines: Vec<Line<'static>>,
    /// The line being built, with its prefix already in it.
    current: Option<Vec<Span<'static>>>,
    /// Display width of the current line's text after its prefix, for tabs.
    column: usize,
    containers: Vec<Container>,
    /// One entry per open list: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    styles: Vec<Style>,
    links: Vec<LinkState>,
    table: Option<Table>,
    in_code_block: bool,
    /// For each line, whether it belongs to a code block outside any quote
    /// or list (its header or its code).
    code_lines: Vec<bool>,
    /// The fenced code block being collected: its language and text, drawn
    /// (highlighted) when it ends, or at the end of a streamed prefix.
    code: Option<(String, String)>,
    /// A blank line goes before the next line, if anything follows.
    blank_pending: bool,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => self.text(&text),
            Event::Code(code) => self.push(&code, self.style().patch(INLINE_CODE)),
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                self.push(&math, self.style().patch(INLINE_CODE));
            }
            Event::FootnoteReference(label) => self.push(&format!("[^{label}]"), self.style()),
            Event::SoftBreak | Event::HardBreak => self.line_break(),
            Event::Rule => {
                self.finish_line();
                self.push(&"─".repeat(RULE_WIDTH), FRAME);
                self.finish_line();
                self.blank_pending = true;
            }
            Event::TaskListMarker(done) => {
                self.push(if done { "[x] " } else { "[ ] " }, self.style());
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph
            | Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => self.finish_line(),
            Tag::Heading { level, .. } => {
                self.finish_line();
                self.styles.push(heading_style(level));
            }
            Tag::BlockQuote(_) => {
                self.finish_line();
                self.containers.push(Container::Quote { started: false });
            }
            Tag::CodeBlock(kind) => {
                self.finish_line();
                let language = match &kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .next()
                        .unwrap_or(""),
                    CodeBlockKind::Indented => "",
                };
                let header = if language.is_empty() {
                    "───".to_owned()
                } else {
                    format!("─ {language} ─")
                };
                self.in_code_block = true;
                self.push(&header, FRAME);
                self.finish_line();
                self.code = Some((language.to_owned(), String::new()));
            }
            Tag::MetadataBlock(_) => {
                self.finish_line();
                self.in_code_block = true;
            }
            Tag::List(start) => {
                self.finish_line();
                self.lists.push(start);
            }
            Tag::Item => {
                self.finish_line();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number = number.saturating_add(1);
                        marker
                    }
                    _ => format!("{} ", BULLETS[depth % BULLETS.len()]),
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::FootnoteDefinition(label) => {
                self.finish_line();
                self.push(&format!("[^{label}]: "), self.style());
            }
            Tag::Table(alignments) => {
                self.finish_line();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    head_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
                if matches!(tag, Tag::TableHead) {
                    self.styles.push(TABLE_HEAD);
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    match table.rows.last_mut() {
                        Some(row) => row.push(Vec::new()),
                        None => table.rows.push(vec![Vec::new()]),
                    }
                }
            }
            Tag::Emphasis => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::new()),
            Tag::Link { dest_url, .. } => {
                self.styles.push(LINK);
                self.links.push(LinkState {
                    url: dest_url.into_string(),
                    text: String::new(),
                    image: false,
                });
            }
            Tag::Image { dest_url, .. } => {
                self.push("[image: ", self.style());
                self.styles.push(LINK);
                self.links.push(LinkState {
                    url: dest_url.into_string(),
                    text: String::new(),
                    image: true,
                });
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList => {
                self.finish_line();
                self.blank_pending = true;
            }
            TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => self.finish_line(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.finish_line();
                self.blank_pending = true;
            }
            TagEnd::BlockQuote(_) => {
                self.finish_line();
                self.containers.pop();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock | TagEnd::MetadataBlock(_) => {
                self.flush_code();
                self.finish_line();
                self.in_code_block = false;
                self.blank_pending = true;
            }
            TagEnd::List(_) => {
                self.finish_line();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank_pending = true;
                }
            }
            TagEnd::Item => {
                // An item with nothing in it yet (`- ` while streaming) still shows its marker.
                if let Some(Container::Item { pending: true, .. }) = self.containers.last() {
                    self.ensure_line();
                }
                self.finish_line();
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.draw_table(table);
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead => {
                self.styles.pop();
                if let Some(table) = &mut self.table {
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::TableRow | TagEnd::TableCell => {}
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some(link) = self.links.pop() {
                    if link.image {
                        self.push("]", self.style());
                    }
                    if !link.url.is_empty() && link.url != link.text {
                        self.push(&format!(" ({})", link.url), self.style().patch(URL));
                    }
                }
            }
        }
    }

    fn finish(self) -> Vec<Line<'static>> {
        self.finish_marked().0
    }

    fn finish_marked(mut self) -> (Vec<Line<'static>>, Vec<bool>) {
        // A fence still open (a streamed prefix) shows what it has so far.
        self.flush_code();
        if let Some(table) = self.table.take() {
            self.draw_table(table);
        }
        self.finish_line();
        (self.lines, self.code_lines)
    }

    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::new(), |style, next| style.patch(*next))
    }

    /// Text that may span lines (code blocks, HTML blocks): each newline
    /// ends a line, and an empty code line is still a line.
    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        let style = if self.in_code_block {
            CODE_BLOCK
        } else {
            self.style()
        };
        for part in text.split_inclusive('\n') {
            match part.strip_suffix('\n') {
                Some(content) => {
                    let content = content.strip_suffix('\r').unwrap_or(content);
                    if self.table.is_some() {
                        self.push(content, style);
                        self.push(" ", style);
                    } else {
                        self.push(content, style);
                        self.finish_line();
                    }
                }
                None => self.push(part, style),
            }
        }
    }

    /// Draws the collected code block, one line per line, highlighted when
    /// its language is known (else in the plain code colour).
    fn flush_code(&mut self) {
        let Some((language, code)) = self.code.take() else {
            return;
        };
        let body = code.strip_suffix('\n').unwrap_or(&code);
        if code.is_empty() {
            return;
        }
        let lines: Vec<&str> = body
            .split('\n')
            .map(|line| line.strip_suffix('\r').unwrap_or(line))
            .collect();
        // A last line with no newline after it is still being written (the
        // answer streams): it shows plain until it is whole, so each line
        // is highlighted once, not again in every frame while it grows.
        let whole = if code.ends_with('\n') {
            lines.len()
        } else {
            lines.len() - 1
        };
        let styled = super::highlight::code_block(&language, &lines[..whole], CODE_BLOCK);
        for (i, line) in lines.iter().enumerate() {
            self.ensure_line();
            match styled.as_ref().and_then(|styled| styled.get(i)) {
                Some(pieces) => {
                    for (style, piece) in pieces {
                        self.push(piece, *style);
                    }
                }
                None => self.push(line, CODE_BLOCK),
            }
            self.finish_line();
        }
    }

    fn line_break(&mut self) {
        if self.table.is_some() {
            self.push(" ", self.style());
        } else {
            self.ensure_line();
            self.finish_line();
        }
    }

    /// Appends text to the current line (or table cell), made visible first.
    fn push(&mut self, content: &str, style: Style) {
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(content);
        }
        if let Some(table) = &mut self.table {
            if let Some(cell) = table.cell() {
                append(cell, Span::styled(visible(content, 0), style));
            }
            return;
        }
        self.ensure_line();
        if content.is_empty() {
            return;
        }
        let shown = visible(content, self.column);
        self.column += shown.width();
        if let Some(spans) = &mut self.current {
            append(spans, Span::styled(shown, style));
        }
    }

    /// Starts a line if none is open: a blank line first when one is due,
    /// then the prefix of every enclosing quote and list item.
    fn ensure_line(&mut self) {
        if self.current.is_some() {
            return;
        }
        if std::mem::take(&mut self.blank_pending) && !self.lines.is_empty() {
            let blank = self.blank_line();
            self.lines.push(blank);
            self.code_lines.push(false);
        }
        let mut spans = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::Quote { started } => {
                    *started = true;
                    append(&mut spans, Span::styled("│ ", FRAME));
                }
                Container::Item { marker, pending } => {
                    let text = if std::mem::take(pending) {
                        marker.clone()
                    } else {
                        " ".repeat(marker.width())
                    };
                    append(&mut spans, Span::raw(text));
                }
            }
        }
        self.current = Some(spans);
        self.column = 0;
    }

    /// A blank line keeps the bars of enclosing quotes and nothing else.
    fn blank_line(&self) -> Line<'static> {
        let Some(last_quote) = self
            .containers
            .iter()
            .rposition(|c| matches!(c, Container::Quote { started: true }))
        else {
            return Line::default();
        };
        let mut spans = Vec::new();
        for (index, container) in self.containers.iter().enumerate().take(last_quote + 1) {
            match container {
                Container::Quote { .. } if index == last_quote => {
                    append(&mut spans, Span::styled("│", FRAME));
                }
                Container::Quote { .. } => append(&mut spans, Span::styled("│ ", FRAME)),
                Container::Item { marker, .. } => {
                    append(&mut spans, Span::raw(" ".repeat(marker.width())));
                }
            }
        }
        Line::from(spans)
    }

    fn finish_line(&mut self) {
        if let Some(spans) = self.current.take() {
            self.lines.push(Line::from(spans));
            self.code_lines
                .push(self.in_code_block && self.containers.is_empty());
        }
    }
}

fn heading_style(level: HeadingLevel) -> Style {
    match level {
        HeadingLevel::H1 => HEADING.add_modifier(Modifier::UNDERLINED),
        HeadingLevel::H2 => HEADING,
        _ => HEADING.fg(Color::Blue),
    }
}

/// Adds a span, merged into the last one when they share a style.
fn append(spans: &mut Vec<Span<'static>>, span: Span<'static>) {
    if span.content.is_empty() {
        return;
    }
    match spans.last_mut() {
        Some(last) if last.style == span.style => last.content.to_mut().push_str(&span.content),
        _ => spans.push(span),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Lines as text, each styled span written `[bold fg=cyan]text[/]` and
    /// each line closed by `|`, so a snapshot catches a lost style or a
    /// trailing space.
    pub(in crate::frontend::tui) fn styled(lines: &[Line<'_>]) -> String {
        let mut out = String::new();
        for line in lines {
            for span in &line.spans {
                let description = describe(span.style.patch(line.style));
                if description.is_empty() {
                    out.push_str(&span.content);
                } else {
                    out.push_str(&format!("[{description}]{}[/]", span.content));
                }
            }
            out.push_str("|\n");
        }
        out
    }

    fn describe(style: Style) -> String {
        let mut parts: Vec<String> = style
            .add_modifier
            .iter_names()
            .map(|(name, _)| name.to_lowercase())
            .collect();
        if let Some(color) = style.fg {
            parts.push(format!("fg={}", format!("{color:?}").to_lowercase()));
        }
        if let Some(color) = style.bg {
            parts.push(format!("bg={}", format!("{color:?}").to_lowercase()));
        }
        parts.join(" ")
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn heading_drops_its_markers_and_is_bold() {
        let lines = render("# Title");
        assert_eq!(texts(&lines), ["Title"]);
        assert!(lines[0].spans[0].style.has_modifier(Modifier::BOLD));
        assert_eq!(lines[0].spans[0].style.fg, Some(Color::Cyan));
    }

    #[test]
    fn paragraphs_are_separated_by_one_blank_line() {
        assert_eq!(texts(&render("one\n\n\n\ntwo")), ["one", "", "two"]);
    }

    #[test]
    fn soft_breaks_keep_the_authors_lines() {
        assert_eq!(texts(&render("one\ntwo")), ["one", "two"]);
    }

    #[test]
    fn nested_lists_indent_and_number() {
        let lines = render("- a\n  - b\n    more\n- c\n\n1. x\n2. y");
        assert_eq!(
            texts(&lines),
            ["• a", "  ◦ b", "    more", "• c", "", "1. x", "2. y"]
        );
    }

    #[test]
    fn ordered_lists_start_at_their_first_number() {
        assert_eq!(texts(&render("7. a\n8. b")), ["7. a", "8. b"]);
    }

    #[test]
    fn an_empty_item_still_shows_its_marker() {
        assert_eq!(texts(&render("- a\n-")), ["• a", "• "]);
    }

    #[test]
    fn code_blocks_have_a_language_header_and_keep_blank_lines() {
        let lines = render("```rust\nfn a() {}\n\n\tx\n```");
        assert_eq!(texts(&lines), ["─ rust ─", "fn a() {}", "", "    x"]);
        // A known language is highlighted; an unknown one keeps the code colour.
        assert_ne!(lines[1].spans[0].style, CODE_BLOCK);
        let lines = render("```nosuchlang\nfn a() {}\n```");
        assert_eq!(texts(&lines), ["─ nosuchlang ─", "fn a() {}"]);
        assert_eq!(lines[1].spans[0].style, CODE_BLOCK);
    }

    #[test]
    fn a_code_line_still_being_written_shows_plain_until_its_newline() {
        let growing = render("```rust\nfn a() {}\nlet x = 1;");
        assert_eq!(texts(&growing), ["─ rust ─", "fn a() {}", "let x = 1;"]);
        assert_ne!(growing[1].spans[0].style, CODE_BLOCK);
        assert!(growing[2].spans.iter().all(|span| span.style == CODE_BLOCK));
        let whole = render("```rust\nfn a() {}\nlet x = 1;\n");
        assert_ne!(whole[2].spans[0].style, CODE_BLOCK);
        assert_eq!(whole[1], growing[1]);
    }

    #[test]
    fn indented_code_has_a_plain_header() {
        assert_eq!(texts(&render("    let x;")), ["───", "let x;"]);
    }

    #[test]
    fn quotes_keep_their_bar_on_blank_lines() {
        assert_eq!(
            texts(&render("before\n\n> one\n>\n> two\n\nafter")),
            ["before", "", "│ one", "│", "│ two", "", "after"]
        );
        assert_eq!(
            texts(&render("> a\n>\n> > b\n> >\n> > c")),
            ["│ a", "│", "│ │ b", "│ │", "│ │ c"]
        );
    }

    #[test]
    fn links_show_the_url_dimmed_unless_it_is_the_text() {
        let lines = render("[site](https://a.example) <https://b.example>");
        assert_eq!(
            texts(&lines),
            ["site (https://a.example) https://b.example"]
        );
        let url = lines[0]
            .spans
            .iter()
            .find(|s| s.content.contains("a.example"));
        assert!(url.is_some_and(|s| s.style.has_modifier(Modifier::DIM)));
    }

    #[test]
    fn images_show_alt_text_and_url() {
        assert_eq!(
            texts(&render("![a cat](cat.png)")),
            ["[image: a cat] (cat.png)"]
        );
    }

    #[test]
    fn tables_pad_columns_and_rule_the_header() {
        let lines = render("| a | bb |\n|---|---:|\n| ccc | d |");
        assert_eq!(texts(&lines), ["a   │ bb", "────┼───", "ccc │  d"]);
    }

    #[test]
    fn a_rule_is_a_line_of_box_drawing() {
        assert_eq!(
            texts(&render("a\n\n---\n\nb")),
            ["a", "", &"─".repeat(40), "", "b"]
        );
    }

    #[test]
    fn control_characters_and_escapes_are_made_visible() {
        let lines = render("red \u{1b}[31mtext\u{7}\u{9b} \u{202e}x");
        let text = texts(&lines).join("\n");
        assert_eq!(text, "red ␛[31mtext␇\\u{9b} \\u{202e}x");
        let code = render("```\n\u{1b}]0;title\u{7}\n```");
        assert_eq!(texts(&code)[1], "␛]0;title␇");
        assert!(!styled(&code).contains('\u{1b}'));
    }

    #[test]
    fn plain_keeps_lines_and_expands_tabs() {
        let lines = plain("a\tb\r\n\n\tc\u{1b}[0m\rz");
        assert_eq!(texts(&lines), ["a   b", "", "    c␛[0m␍z"]);
        assert!(
            lines
                .iter()
                .all(|l| l.spans.iter().all(|s| s.style == Style::new()))
        );
        assert!(plain("").is_empty());
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        assert_eq!(visible("ab\tc", 0), "ab  c");
        assert_eq!(visible("\t", 3), " ");
        assert_eq!(visible("日\tx", 0), "日  x");
    }

    #[test]
    fn every_prefix_of_a_document_renders() {
        let document = "# Head\n\nSome **bold _and_ `code`** ~~x~~ [l](u)\n\n\
            > quote\n> - item\n\n1. one\n   - two\n\n```py\nprint(1)\n```\n\n\
            | a | b |\n|---|---|\n| 1 | 2 |\n\n---\n<div>x</div>\n![i](p) 日本\u{1b}";
        for (end, _) in document.char_indices() {
            let _ = render(&document[..end]);
        }
    }

    #[test]
    fn a_half_written_bold_shows_as_typed() {
        assert_eq!(texts(&render("some **bol")), ["some **bol"]);
    }

    #[test]
    fn snapshot_heading() {
        insta::assert_snapshot!(styled(&render(
            "# Title\n\n## Section\n\n### Detail\n\ntext"
        )));
    }

    #[test]
    fn snapshot_lists() {
        insta::assert_snapshot!(styled(&render(
            "- first\n- second **bold**\n  - nested\n    - deeper\n- third\n\n\
             3. three\n4. four\n   continued\n\n- loose\n\n- items"
        )));
    }

    #[test]
    fn snapshot_code_block_with_language() {
        insta::assert_snapshot!(styled(&render(
            "Before:\n\n```rust\nfn main() {\n\tprintln!(\"hi\");\n}\n```\n\nAfter."
        )));
    }

    #[test]
    fn snapshot_inline_code_and_emphasis() {
        insta::assert_snapshot!(styled(&render(
            "Use `cargo test` to *check* **all** of ~~it~~ ***this*** and \
             **bold `code`**, see [docs](https://docs.example/x)."
        )));
    }

    #[test]
    fn snapshot_streamed_prefix_with_unclosed_fence() {
        insta::assert_snapshot!(styled(&render(
            "Here is the fix:\n\n```python\ndef f(x):\n    return **x"
        )));
    }

    #[test]
    fn snapshot_ansi_escapes_in_text() {
        insta::assert_snapshot!(styled(&render(
            "Output was \u{1b}[1;31mred\u{1b}[0m and a bell\u{7}.\n\n\
             ```\n\u{1b}[2J\u{1b}[H cleared\n```"
        )));
    }

    #[test]
    fn snapshot_quote_table_and_rule() {
        insta::assert_snapshot!(styled(&render(
            "> quoted *text*\n> - in a list\n\n| Name | Size |\n|:---|---:|\n| `a.rs` | 10 |\n| b | 2000 |\n\n***"
        )));
    }
}
