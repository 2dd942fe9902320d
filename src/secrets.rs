//! The secret values mino holds (the model service's key; MCP credentials
//! later), and their redaction from text that leaves mino's hands: a tool
//! result is passed through `Secrets::redact` before it is saved or sent,
//! so a command that prints a key (read from a file, from `/proc`, from
//! anywhere) never carries it to the model service, a session file or a
//! log. Redacts the exact value and its base64 (standard and URL-safe, at
//! every byte alignment, so a value inside a larger encoded blob is found)
//! and URL-encoded forms. Never reads the environment or a file: callers
//! add the values they hold.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

/// Values shorter than this are not redacted: a short value (`test`, a
/// local server's dummy key) would cut ordinary words out of every result,
/// and is no secret worth the name.
pub const MIN_SECRET_BYTES: usize = 8;

/// One secret: the name it is shown as and every form it is searched in.
#[derive(Clone)]
struct Secret {
    name: String,
    /// The exact value first, then its encoded forms; longest first.
    forms: Vec<String>,
}

/// The secret values mino holds. Cloning is cheap enough to hand one to
/// each place that needs it; the values are never printed by `Debug`.
#[derive(Clone, Default)]
pub struct Secrets {
    secrets: Vec<Secret>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.secrets.iter().map(|s| &s.name))
            .finish()
    }
}

/// What `redact` removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    /// The names of the secrets found, in the order they were first added.
    pub names: Vec<String>,
}

impl Secrets {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value` under `name` (a variable name such as `OPENAI_API_KEY`).
    /// A value shorter than `MIN_SECRET_BYTES` is ignored.
    pub fn add(&mut self, name: &str, value: &str) {
        if value.len() < MIN_SECRET_BYTES {
            return;
        }
        let mut forms = vec![value.to_string()];
        for form in encoded_forms(value.as_bytes()) {
            if form.len() >= MIN_SECRET_BYTES && !forms.contains(&form) {
                forms.push(form);
            }
        }
        forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        self.secrets.push(Secret {
            name: name.to_string(),
            forms,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every form of every secret replaced by
    /// `[redacted: NAME]`, and the names found.
    pub fn redact(&self, text: &str) -> Redacted {
        let mut text = text.to_string();
        let mut names = Vec::new();
        for secret in &self.secrets {
            let marker = format!("[redacted: {}]", secret.name);
            let mut found = false;
            for form in &secret.forms {
                if text.contains(form.as_str()) {
                    text = text.replace(form.as_str(), &marker);
                    found = true;
                }
            }
            if found {
                names.push(secret.name.clone());
            }
        }
        Redacted { text, names }
    }

    /// A tool result with every secret removed and, when one was, a note
    /// at its end saying so.
    pub fn redact_result(&self, output: &str) -> String {
        if self.secrets.is_empty() {
            return output.to_string();
        }
        let Redacted { mut text, names } = self.redact(output);
        if !names.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[mino removed the value of {} from this result: it is a secret mino holds, and it never reaches the model.]",
                names.join(", ")
            ));
        }
        text
    }
}

/// The base64 forms (standard and URL-safe, at each of the three byte
/// alignments a value can have inside a longer encoded text: only the
/// characters the value alone determines) and the URL-encoded forms.
fn encoded_forms(value: &[u8]) -> Vec<String> {
    let mut forms = Vec::new();
    for skip in 0..3usize {
        let Some(rest) = value.get(skip..) else {
            continue;
        };
        let whole = rest.len() / 3 * 3;
        let core = &rest[..whole];
        if core.is_empty() {
            continue;
        }
        forms.push(STANDARD_NO_PAD.encode(core));
        forms.push(URL_SAFE_NO_PAD.encode(core));
    }
    forms.push(percent_encode(value, true));
    forms.push(percent_encode(value, false));
    forms
}

/// Every byte outside the unreserved set of RFC 3986 as `%XX`.
fn percent_encode(value: &[u8], upper: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for &byte in value {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else if upper {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push_str(&format!("%{byte:02x}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const KEY: &str = "sk-proj/Ab+c=9xYz_0123456789";

    fn secrets() -> Secrets {
        let mut s = Secrets::new();
        s.add("OPENAI_API_KEY", KEY);
        s
    }

    #[test]
    fn the_exact_value_is_replaced_and_named() {
        let got = secrets().redact(&format!("OPENAI_API_KEY={KEY}\nPATH=/bin\n{KEY}"));
        assert_eq!(
            got.text,
            "OPENAI_API_KEY=[redacted: OPENAI_API_KEY]\nPATH=/bin\n[redacted: OPENAI_API_KEY]"
        );
        assert_eq!(got.names, ["OPENAI_API_KEY"]);
    }

    #[test]
    fn base64_forms_are_found_at_every_alignment_and_in_both_alphabets() {
        let s = secrets();
        for prefix in ["", "a", "ab", "abc", "HOME=/root\0OPENAI_API_KEY="] {
            let blob = format!("{prefix}{KEY}\0TERM=xterm");
            for encoded in [
                base64::engine::general_purpose::STANDARD.encode(&blob),
                base64::engine::general_purpose::URL_SAFE.encode(&blob),
            ] {
                let got = s.redact(&format!("out: {encoded}\n"));
                assert_eq!(got.names, ["OPENAI_API_KEY"], "{prefix:?}: {encoded}");
                assert!(got.text.contains("[redacted: OPENAI_API_KEY]"));
            }
        }
    }

    #[test]
    fn url_encoded_forms_are_found() {
        let s = secrets();
        for form in [
            "sk-proj%2FAb%2Bc%3D9xYz_0123456789",
            "sk-proj%2fAb%2bc%3d9xYz_0123456789",
        ] {
            let got = s.redact(&format!("GET /?key={form} HTTP/1.1"));
            assert_eq!(got.text, "GET /?key=[redacted: OPENAI_API_KEY] HTTP/1.1");
        }
    }

    #[test]
    fn a_result_gets_a_note_only_when_something_was_removed() {
        let s = secrets();
        let out = s.redact_result(&format!("Exit code: 0\n{KEY}\n"));
        assert!(!out.contains(KEY));
        assert!(out.ends_with("it never reaches the model.]"), "{out}");
        assert!(out.contains("the value of OPENAI_API_KEY"));
        assert_eq!(s.redact_result("Exit code: 0\n"), "Exit code: 0\n");
    }

    #[test]
    fn short_values_are_not_secrets_and_debug_never_shows_a_value() {
        let mut s = Secrets::new();
        s.add("OPENAI_API_KEY", "test");
        assert!(s.is_empty());
        assert_eq!(s.redact_result("a test result"), "a test result");
        let s = secrets();
        assert_eq!(format!("{s:?}"), "[\"OPENAI_API_KEY\"]");
    }
}
