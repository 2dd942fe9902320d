//! A server's question (MCP elicitation in form mode, `elicitation/create`,
//! or the same request inside a 2026-07-28 `input_required` result, which
//! `rounds.rs` hands to the same handler): the fields its schema asks for, read
//! into what a dialog shows, and the typed answers checked against it and
//! turned into the JSON the server gets. Never shows anything (the front
//! ends ask) and never decides whether to ask (`server.rs` declines for a
//! server marked `ask` and where nobody can answer). What a person types
//! goes to that server only: never to the model, the session record or a
//! log, so no `Debug` here prints it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Map, Number, Value};
use tokio::sync::oneshot;

/// Most fields one question may ask for; a schema with more is declined.
pub const MAX_FIELDS: usize = 32;
/// Longest message, title or description shown (characters).
const MAX_TEXT: usize = 2000;
/// Longest answer one field takes (characters).
pub const MAX_ANSWER: usize = 4096;

/// One question of a server, with where the answer goes.
pub struct ServerQuestion {
    /// The server's name in the user's settings.
    pub server: String,
    /// What the server says it needs (its words, one paragraph).
    pub message: String,
    pub fields: Vec<AskedField>,
    /// Dropping it declines.
    pub reply: oneshot::Sender<QuestionAnswer>,
}

impl std::fmt::Debug for ServerQuestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerQuestion")
            .field("server", &self.server)
            .field("fields", &self.fields.len())
            .finish_non_exhaustive()
    }
}

/// What the person chose.
pub enum QuestionAnswer {
    /// The answers, checked by `answers`.
    Accept(Map<String, Value>),
    /// No answer, and the server may go on.
    Decline,
    /// Dismissed: the server's whole operation is called off.
    Cancel,
}

impl std::fmt::Debug for QuestionAnswer {
    /// The answers are the person's: only their number is printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuestionAnswer::Accept(map) => write!(f, "Accept(<{} fields>)", map.len()),
            QuestionAnswer::Decline => f.write_str("Decline"),
            QuestionAnswer::Cancel => f.write_str("Cancel"),
        }
    }
}

/// One field a server asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedField {
    /// The property's name in the schema (the answer's key).
    pub name: String,
    /// Its title, else its name.
    pub title: String,
    pub description: Option<String>,
    pub kind: AskedKind,
    pub required: bool,
    /// The schema's default, as the text the input starts with.
    pub default: Option<String>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum AskedKind {
    /// A string; `format` is the schema's (`email`, `uri`, `date`, ...).
    Text {
        format: Option<String>,
    },
    Number,
    Integer,
    Boolean,
    /// One of `values` (or several, comma-separated, when `many`).
    Choice {
        values: Vec<String>,
        many: bool,
    },
}

impl AskedKind {
    /// What the dialog says the field takes.
    pub fn hint(&self) -> String {
        match self {
            AskedKind::Text { format: Some(f) } => format!("text ({f})"),
            AskedKind::Text { format: None } => "text".into(),
            AskedKind::Number => "a number".into(),
            AskedKind::Integer => "a whole number".into(),
            AskedKind::Boolean => "y or n".into(),
            AskedKind::Choice {
                values,
                many: false,
            } => format!("one of: {}", values.join(", ")),
            AskedKind::Choice { values, many: true } => {
                format!("any of, comma-separated: {}", values.join(", "))
            }
        }
    }
}

/// Why a schema cannot be asked, or an answer is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuestionError {
    #[error("the schema asks for more than {MAX_FIELDS} fields")]
    TooManyFields,
    #[error("the field {0} has a type mino cannot ask for")]
    UnknownType(String),
    #[error("{field}: {problem}")]
    Answer { field: String, problem: String },
}

/// Most answers remembered per server for redaction (the oldest go first).
const MAX_REMEMBERED: usize = 256;

/// What people typed into one server's questions this run, so a result
/// that echoes it reaches the model as a marker: a server may do as it
/// likes with an answer, but the model never reads one. The OAuth tokens
/// of this run are hidden with them (a server may echo its own token).
/// Cloning shares it.
#[derive(Clone, Default)]
pub struct TypedAnswers(
    Arc<std::sync::Mutex<Vec<String>>>,
    super::oauth::TokenValues,
);

impl TypedAnswers {
    /// Answers hidden from one server's results, with the run's tokens.
    pub fn with_tokens(tokens: super::oauth::TokenValues) -> Self {
        Self(Arc::default(), tokens)
    }

    /// Remembers the free-text answers of `content` (two characters or
    /// more: a choice, a number or a yes is the server's own word).
    pub fn remember(&self, fields: &[AskedField], content: &Map<String, Value>) {
        let mut typed = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for field in fields
            .iter()
            .filter(|f| matches!(f.kind, AskedKind::Text { .. }))
        {
            if let Some(Value::String(text)) = content.get(&field.name)
                && text.chars().count() >= 2
                && !typed.contains(text)
            {
                typed.push(text.clone());
            }
        }
        let over = typed.len().saturating_sub(MAX_REMEMBERED);
        typed.drain(..over);
    }

    /// `text` with every remembered answer replaced, longest first, as
    /// typed and as JSON writes it inside a string (a server's structured
    /// output, an error that quotes it).
    pub fn hide(&self, text: &str) -> String {
        let text = self.1.hide(text);
        let text = text.as_str();
        let typed = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut forms: Vec<String> = typed
            .iter()
            .flat_map(|answer| {
                let quoted = serde_json::to_string(answer).unwrap_or_default();
                let escaped = quoted
                    .strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .unwrap_or_default()
                    .to_string();
                [answer.clone(), escaped]
            })
            .filter(|form| !form.is_empty())
            .collect();
        forms.sort_by_key(|t| std::cmp::Reverse(t.len()));
        forms.dedup();
        forms.iter().fold(text.to_string(), |out, answer| {
            out.replace(
                answer.as_str(),
                "[an answer typed for this server, not shown]",
            )
        })
    }
}

/// When a server may ask: only while mino waits for one of its calls (a
/// question out of the blue, between turns, is declined: it could pose
/// as mino's own), and one question at a time (a flood is declined).
/// Cloning shares it.
#[derive(Clone, Default)]
pub struct AskWindow {
    calls: Arc<AtomicUsize>,
    open: Arc<AtomicBool>,
}

/// Held while a call runs.
pub struct Calling(Arc<AtomicUsize>);

impl Drop for Calling {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Held while a question is open.
pub struct Asking(Arc<AtomicBool>);

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl AskWindow {
    /// A call to the server begins; it ends when the guard drops.
    pub fn calling(&self) -> Calling {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Calling(self.calls.clone())
    }

    /// A question may open now: a call runs and no other question is open.
    pub fn open(&self) -> Option<Asking> {
        if self.calls.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.open
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .ok()
            .map(|_| Asking(self.open.clone()))
    }
}

/// Text from a server, one line without control characters, bounded.
pub fn one_line(text: &str) -> String {
    let line = crate::controls::one_line(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    line.chars().take(MAX_TEXT).collect()
}

/// The fields of `schema` (the request's `requestedSchema` as JSON), in
/// the order `order` gives (the wire order) or the schema's.
pub fn fields(schema: &Value, order: Option<&[String]>) -> Result<Vec<AskedField>, QuestionError> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if properties.len() > MAX_FIELDS {
        return Err(QuestionError::TooManyFields);
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = match order {
        Some(order) if order.len() == properties.len() => order.to_vec(),
        _ => properties.keys().cloned().collect(),
    };
    names
        .iter()
        .filter_map(|name| properties.get(name).map(|p| (name, p)))
        .map(|(name, property)| field(name, property, required.contains(&name.as_str())))
        .collect()
}

fn field(name: &str, property: &Value, required: bool) -> Result<AskedField, QuestionError> {
    let text = |key: &str| property.get(key).and_then(Value::as_str).map(one_line);
    let kind = kind(name, property)?;
    let default = property.get("default").map(|d| match d {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "y".into(),
        Value::Bool(false) => "n".into(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    });
    Ok(AskedField {
        name: name.to_string(),
        title: text("title").unwrap_or_else(|| one_line(name)),
        description: text("description"),
        kind,
        required,
        default,
    })
}

/// The values of an `enum` array or of a `oneOf`/`anyOf` list of `const`s.
fn choices(schema: &Value) -> Option<Vec<String>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(one_line)
                .collect(),
        );
    }
    let listed = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        listed
            .iter()
            .filter_map(|v| v.get("const").and_then(Value::as_str))
            .map(one_line)
            .collect(),
    )
}

fn kind(name: &str, property: &Value) -> Result<AskedKind, QuestionError> {
    let unknown = || QuestionError::UnknownType(one_line(name));
    match property.get("type").and_then(Value::as_str) {
        Some("string") | None if choices(property).is_some() => Ok(AskedKind::Choice {
            values: choices(property).unwrap_or_default(),
            many: false,
        }),
        Some("string") => Ok(AskedKind::Text {
            format: property.get("format").and_then(Value::as_str).map(one_line),
        }),
        Some("number") => Ok(AskedKind::Number),
        Some("integer") => Ok(AskedKind::Integer),
        Some("boolean") => Ok(AskedKind::Boolean),
        Some("array") => {
            let values = property
                .get("items")
                .and_then(choices)
                .ok_or_else(unknown)?;
            Ok(AskedKind::Choice { values, many: true })
        }
        _ => Err(unknown()),
    }
}

/// The typed `texts` (one per field, in order) checked and turned into
/// the content the server gets. An empty optional field is left out.
pub fn answers(
    fields: &[AskedField],
    texts: &[String],
) -> Result<Map<String, Value>, QuestionError> {
    let mut content = Map::new();
    for (field, text) in fields.iter().zip(texts) {
        let problem = |problem: String| QuestionError::Answer {
            field: field.title.clone(),
            problem,
        };
        let text = text.trim();
        if text.chars().count() > MAX_ANSWER {
            return Err(problem(format!("longer than {MAX_ANSWER} characters")));
        }
        if text.is_empty() {
            if field.required {
                return Err(problem("required".into()));
            }
            continue;
        }
        let value = match &field.kind {
            AskedKind::Text { .. } => Value::String(text.to_string()),
            AskedKind::Number => text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| problem(format!("{text:?} is not a number")))?,
            AskedKind::Integer => text
                .parse::<i64>()
                .map(|n| Value::Number(n.into()))
                .map_err(|_| problem(format!("{text:?} is not a whole number")))?,
            AskedKind::Boolean => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Value::Bool(true),
                "n" | "no" | "false" => Value::Bool(false),
                _ => return Err(problem(format!("{text:?}: accepted y or n"))),
            },
            AskedKind::Choice { values, many } => {
                let picked: Vec<&str> = if *many {
                    text.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .collect()
                } else {
                    vec![text]
                };
                if let Some(bad) = picked.iter().find(|p| !values.iter().any(|v| v == *p)) {
                    return Err(problem(format!(
                        "{bad:?} is not one of {}",
                        values.join(", ")
                    )));
                }
                if *many {
                    Value::Array(
                        picked
                            .into_iter()
                            .map(|p| Value::String(p.into()))
                            .collect(),
                    )
                } else {
                    Value::String(text.to_string())
                }
            }
        };
        content.insert(field.name.clone(), value);
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your\nname"},
                "check": {"type": "boolean", "title": "Agree"},
                "n": {"type": "integer"},
                "x": {"type": "number", "default": 1.5},
                "color": {"type": "string", "enum": ["red", "green"]},
                "pets": {"type": "array", "items": {"anyOf": [{"const": "cat"}, {"const": "dog"}]}}
            },
            "required": ["name"]
        })
    }

    #[test]
    fn a_schema_becomes_fields_in_order() {
        let fields = fields(&schema(), None).unwrap();
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["name", "check", "n", "x", "color", "pets"]);
        assert_eq!(fields[0].title, "Name");
        assert_eq!(fields[0].description.as_deref(), Some("Your name"));
        assert!(fields[0].required && !fields[1].required);
        assert_eq!(fields[2].title, "n");
        assert_eq!(fields[3].default.as_deref(), Some("1.5"));
        assert_eq!(
            fields[5].kind,
            AskedKind::Choice {
                values: vec!["cat".into(), "dog".into()],
                many: true
            }
        );
    }

    #[test]
    fn answers_are_checked_and_typed() {
        let fields = fields(&schema(), None).unwrap();
        let texts = |t: [&str; 6]| t.map(String::from).to_vec();
        let content = answers(&fields, &texts(["Ada", "y", "7", "", "green", "dog, cat"])).unwrap();
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "check": true, "n": 7, "color": "green", "pets": ["dog", "cat"]})
        );
        for (bad, field) in [
            (["", "", "", "", "", ""], "Name"),
            (["a", "maybe", "", "", "", ""], "Agree"),
            (["a", "", "7.5", "", "", ""], "n"),
            (["a", "", "", "x", "", ""], "x"),
            (["a", "", "", "", "blue", ""], "color"),
            (["a", "", "", "", "", "cat, cow"], "pets"),
        ] {
            match answers(&fields, &texts(bad)) {
                Err(QuestionError::Answer { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let long = "z".repeat(MAX_ANSWER + 1);
        assert!(answers(&fields, &[long]).is_err());
    }

    #[test]
    fn hostile_schemas_are_bounded_and_shown_without_controls() {
        let mut properties = Map::new();
        for i in 0..=MAX_FIELDS {
            properties.insert(format!("f{i}"), json!({"type": "string"}));
        }
        let many = json!({"type": "object", "properties": properties});
        assert_eq!(fields(&many, None), Err(QuestionError::TooManyFields));
        let nested = json!({"properties": {"o": {"type": "object"}}});
        assert!(matches!(
            fields(&nested, None),
            Err(QuestionError::UnknownType(_))
        ));
        let escapes =
            json!({"properties": {"a": {"type": "string", "title": "\u{1b}[2Jx\u{202e}y"}}});
        let title = &fields(&escapes, None).unwrap()[0].title;
        assert!(
            !title.contains('\u{1b}') && !title.contains('\u{202e}'),
            "{title:?}"
        );
    }

    #[test]
    fn typed_answers_are_hidden_from_what_the_server_says_back() {
        let fields = fields(&schema(), None).unwrap();
        let typed = TypedAnswers::default();
        let content = answers(
            &fields,
            &["Ada Lovelace", "y", "42", "", "red", ""].map(String::from),
        )
        .unwrap();
        typed.remember(&fields, &content);
        assert_eq!(
            typed.hide("- Name: Ada Lovelace\n- Agreed: true\n- n: 42\n- red"),
            "- Name: [an answer typed for this server, not shown]\n- Agreed: true\n- n: 42\n- red"
        );
    }

    #[test]
    fn an_answer_written_back_as_json_is_hidden_too() {
        let fields = fields(&schema(), None).unwrap();
        let typed = TypedAnswers::default();
        let content = answers(
            &fields,
            &[r#"p"ss\w"#, "y", "42", "", "red", ""].map(String::from),
        )
        .unwrap();
        typed.remember(&fields, &content);
        let echoed = json!({"name": r#"p"ss\w"#}).to_string();
        let hidden = typed.hide(&echoed);
        assert!(!hidden.contains("ss\\"), "{hidden}");
        assert!(hidden.contains("[an answer typed for this server, not shown]"));
        let error = typed.hide(r#"failed: bad password p"ss\w"#);
        assert!(!error.contains("p\"ss"), "{error}");
    }

    #[test]
    fn a_server_asks_only_during_a_call_and_once_at_a_time() {
        let window = AskWindow::default();
        assert!(window.open().is_none(), "no call runs");
        let call = window.calling();
        let asking = window.open();
        assert!(asking.is_some());
        assert!(window.open().is_none(), "one at a time");
        drop(asking);
        assert!(window.open().is_some());
        drop(call);
        assert!(window.open().is_none());
    }

    #[test]
    fn debug_never_prints_an_answer() {
        let mut map = Map::new();
        map.insert("pin".into(), json!("4711-secret"));
        let text = format!("{:?}", QuestionAnswer::Accept(map));
        assert!(!text.contains("4711"), "{text}");
    }
}
