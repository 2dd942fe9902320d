//! Finding where a key is written: from a dotted key to its line, and from a
//! byte offset (a serde or syntax error's span) back to the key that holds
//! it. Reads the toml_edit document's spans; never judges a value.

use std::ops::Range;

use toml_edit::{Document, Item, Table, Value};

use super::error::{KeyPath, Segment};

/// The 1-based line and column of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |last| last.chars().count() + 1);
    (line, column)
}

/// The 1-based line where `path` (or, when it is not written, its deepest
/// written parent) appears; line 1 when nothing of it is written.
pub fn line_of(doc: &Document<String>, path: &KeyPath) -> usize {
    span_of(doc, path).map_or(1, |span| line_column(doc.raw(), span.start).0)
}

enum Node<'a> {
    Item(&'a Item),
    Value(&'a Value),
    /// An entry of an array of tables, which has no `Item` of its own.
    Table(&'a Table),
}

impl<'a> Node<'a> {
    /// The child under `key` and the span of the key itself.
    fn key(&self, key: &str) -> Option<(Node<'a>, Option<Range<usize>>)> {
        match self {
            Node::Item(Item::Table(table)) | &Node::Table(table) => {
                let (k, item) = table.get_key_value(key)?;
                Some((Node::Item(item), k.span().or_else(|| item.span())))
            }
            Node::Item(Item::Value(Value::InlineTable(table)))
            | Node::Value(Value::InlineTable(table)) => {
                let (k, item) = table.get_key_value(key)?;
                Some((Node::Item(item), k.span().or_else(|| item.span())))
            }
            _ => None,
        }
    }

    fn index(&self, index: usize) -> Option<(Node<'a>, Option<Range<usize>>)> {
        match self {
            Node::Item(Item::ArrayOfTables(array)) => {
                let table = array.get(index)?;
                Some((Node::Table(table), table.span()))
            }
            Node::Item(Item::Value(Value::Array(array))) | Node::Value(Value::Array(array)) => {
                let value = array.get(index)?;
                Some((Node::Value(value), value.span()))
            }
            _ => None,
        }
    }
}

fn span_of(doc: &Document<String>, path: &KeyPath) -> Option<Range<usize>> {
    let mut node = Node::Item(doc.as_item());
    let mut best = None;
    for segment in &path.0 {
        let step = match segment {
            Segment::Key(key) => node.key(key),
            Segment::Index(index) => node.index(*index),
        };
        let Some((child, span)) = step else { break };
        best = span.or(best);
        node = child;
    }
    best
}

/// The key whose written key or value most narrowly contains `offset`: the
/// key a serde error's span belongs to. The top level when none does.
pub fn key_at(doc: &Document<String>, offset: usize) -> KeyPath {
    let mut best: Option<(usize, KeyPath)> = None;
    visit_table(doc.as_table(), &KeyPath::default(), offset, &mut best);
    best.map(|(_, path)| path).unwrap_or_default()
}

fn consider(
    span: Option<Range<usize>>,
    path: &KeyPath,
    offset: usize,
    best: &mut Option<(usize, KeyPath)>,
) {
    let Some(span) = span else { return };
    let inside = span.contains(&offset) || (span.is_empty() && span.start == offset);
    if !inside {
        return;
    }
    let length = span.len();
    if best.as_ref().is_none_or(|(l, _)| length <= *l) {
        *best = Some((length, path.clone()));
    }
}

fn visit_table(table: &Table, path: &KeyPath, offset: usize, best: &mut Option<(usize, KeyPath)>) {
    for (key, item) in table.iter() {
        let child = path.key(key);
        consider(table.key(key).and_then(|k| k.span()), &child, offset, best);
        consider(item.span(), &child, offset, best);
        visit_item(item, &child, offset, best);
    }
}

fn visit_item(item: &Item, path: &KeyPath, offset: usize, best: &mut Option<(usize, KeyPath)>) {
    match item {
        Item::Table(table) => visit_table(table, path, offset, best),
        Item::ArrayOfTables(array) => {
            for (index, table) in array.iter().enumerate() {
                let child = path.index(index);
                consider(table.span(), &child, offset, best);
                visit_table(table, &child, offset, best);
            }
        }
        Item::Value(value) => visit_value(value, path, offset, best),
        Item::None => {}
    }
}

fn visit_value(value: &Value, path: &KeyPath, offset: usize, best: &mut Option<(usize, KeyPath)>) {
    match value {
        Value::Array(array) => {
            for (index, element) in array.iter().enumerate() {
                let child = path.index(index);
                consider(element.span(), &child, offset, best);
                visit_value(element, &child, offset, best);
            }
        }
        Value::InlineTable(table) => {
            for (key, element) in table.iter() {
                let child = path.key(key);
                consider(table.key(key).and_then(|k| k.span()), &child, offset, best);
                consider(element.span(), &child, offset, best);
                visit_value(element, &child, offset, best);
            }
        }
        _ => {}
    }
}

/// For a file that does not parse: the key on the line where the parser
/// stopped, under the last table header before it. A best effort read of
/// the text, since there is no document to consult.
pub fn key_near(text: &str, line: usize) -> KeyPath {
    let mut table: Vec<String> = Vec::new();
    let mut key: Vec<String> = Vec::new();
    for (number, raw) in text.lines().enumerate().take(line) {
        let trimmed = raw.trim_start();
        let is_error_line = number + 1 == line;
        if let Some(header) = trimmed.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let end = header.find(']').unwrap_or(header.len());
            table = split_dotted(&header[..end]);
            if is_error_line {
                key.clear();
            }
        } else if is_error_line && let Some((left, _)) = trimmed.split_once('=') {
            key = split_dotted(left);
        }
    }
    KeyPath(table.into_iter().chain(key).map(Segment::Key).collect())
}

fn split_dotted(text: &str) -> Vec<String> {
    text.split('.')
        .map(|part| {
            part.trim()
                .trim_matches(|c| c == '"' || c == '\'')
                .to_string()
        })
        .filter(|part| !part.is_empty() && !part.starts_with('#'))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document<String> {
        Document::parse(text.to_string()).unwrap()
    }

    #[test]
    fn lines_and_columns_are_one_based() {
        assert_eq!(line_column("a\nbc\n", 0), (1, 1));
        assert_eq!(line_column("a\nbc\n", 3), (2, 2));
        assert_eq!(line_column("a\nbc\n", 99), (3, 1));
    }

    #[test]
    fn key_paths_find_their_lines() {
        let d = doc(
            "yolo = false\n\n[model]\nprovider = \"x\"\n\n[protected]\npatterns = [\n  \"a\",\n  \"b\",\n]\n[[shell_gate.trusted_executables]]\npath = \"/bin/ls\"\n",
        );
        assert_eq!(line_of(&d, &KeyPath::of(&["yolo"])), 1);
        assert_eq!(line_of(&d, &KeyPath::of(&["model", "provider"])), 4);
        assert_eq!(line_of(&d, &KeyPath::of(&["model", "script"])), 3);
        assert_eq!(
            line_of(&d, &KeyPath::of(&["protected", "patterns"]).index(1)),
            9
        );
        assert_eq!(
            line_of(
                &d,
                &KeyPath::of(&["shell_gate", "trusted_executables"])
                    .index(0)
                    .key("path")
            ),
            12
        );
        assert_eq!(line_of(&d, &KeyPath::of(&["hooks"])), 1);
    }

    #[test]
    fn offsets_map_back_to_the_narrowest_key() {
        let text = "[model]\nextra_body = { a = { b = 1 } }\n";
        let d = doc(text);
        let offset = text.find("1 }").unwrap();
        assert_eq!(key_at(&d, offset).to_string(), "model.extra_body.a.b");
    }

    #[test]
    fn syntax_errors_name_the_nearest_key() {
        let text = "yolo = true\n[model]\nprovider = \"open\n";
        assert_eq!(key_near(text, 3).to_string(), "model.provider");
        assert_eq!(key_near("[model\n", 1).to_string(), "model");
    }
}
