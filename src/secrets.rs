//! The secret values mino holds (the model service's key; MCP credentials
//! later), and their redaction from text that leaves mino's hands: a tool
//! result is passed through `Secrets::redact` before it is saved or sent,
//! so a command that prints a key (read from a file, from `/proc`, from
//! anywhere) never carries it to the model service, a session file or a
//! log. Redacts the exact value and its base64 (standard and URL-safe, at
//! every byte alignment, so a value inside a larger encoded blob is found),
//! base32, hex, URL-encoded and reversed forms, in one pass of one
//! automaton. Never reads the environment or a file: callers add the
//! values they hold (`HeldSecrets` runs a caller's loading on the blocking
//! pool and makes every redaction wait for it).

use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};

/// Values shorter than this are not redacted: a short value (`test`, a
/// local server's dummy key) would cut ordinary words out of every result,
/// and is no secret worth the name.
pub const MIN_SECRET_BYTES: usize = 8;

/// A longer value is held by its first this many bytes (a private key is
/// about 3 KiB): printing the value prints them, and they are removed.
pub const MAX_SECRET_BYTES: usize = 16 * 1024;

/// The encoded forms of all values together take at most this many bytes;
/// a value past it is searched in its exact form only. Each form costs
/// about twenty times its bytes in the automaton, and a hostile `.env` may
/// hold a quarter of a megabyte.
const FORM_BUDGET: usize = 512 * 1024;

/// One secret: the name it is shown as and every form it is searched in.
#[derive(Clone)]
struct Secret {
    name: String,
    /// The exact value first, then its encoded forms.
    forms: Vec<String>,
}

/// The secret values mino holds. Cloning is cheap enough to hand one to
/// each place that needs it; the values are never printed by `Debug`.
#[derive(Clone, Default)]
pub struct Secrets {
    secrets: Vec<Secret>,
    /// Every form of every secret in one automaton (leftmost-longest), and
    /// the secret each pattern belongs to: one pass over a result, whatever
    /// the number of values.
    matcher: Option<Arc<(AhoCorasick, Vec<usize>)>>,
    /// Bytes of encoded forms held (against `FORM_BUDGET`).
    form_bytes: usize,
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
        self.add_quietly(name, value);
        self.build();
    }

    /// Adds every `(name, value)`, building the automaton once.
    pub fn extend<'a>(&mut self, values: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (name, value) in values {
            self.add_quietly(name, value);
        }
        self.build();
    }

    fn add_quietly(&mut self, name: &str, value: &str) {
        let mut end = value.len().min(MAX_SECRET_BYTES);
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        let value = &value[..end];
        if value.len() < MIN_SECRET_BYTES
            || self
                .secrets
                .iter()
                .any(|s| s.forms.first().is_some_and(|f| f == value))
        {
            return;
        }
        let forms = vec![value.to_string()];
        self.secrets.push(Secret {
            name: name.to_string(),
            forms,
        });
    }

    fn build(&mut self) {
        // Encoded forms go to the shortest values first, while the budget
        // lasts: a key is never left exact-only by long values beside it.
        let mut order: Vec<usize> = (0..self.secrets.len()).collect();
        order.sort_by_key(|&i| self.secrets[i].forms.first().map_or(0, String::len));
        self.form_bytes = 0;
        for i in order {
            let secret = &mut self.secrets[i];
            secret.forms.truncate(1);
            let Some(value) = secret.forms.first().cloned() else {
                continue;
            };
            let encoded = encoded_forms(value.as_bytes());
            let cost: usize = encoded.iter().map(String::len).sum();
            if self.form_bytes + cost > FORM_BUDGET {
                continue;
            }
            self.form_bytes += cost;
            for form in encoded {
                if form.len() >= MIN_SECRET_BYTES && !secret.forms.contains(&form) {
                    secret.forms.push(form);
                }
            }
        }
        let mut patterns = Vec::new();
        let mut owners = Vec::new();
        for (i, secret) in self.secrets.iter().enumerate() {
            for form in &secret.forms {
                patterns.push(form.as_str());
                owners.push(i);
            }
        }
        // A contiguous NFA, never a DFA: a DFA's build follows failure
        // chains for every state and byte class, quadratic in a long
        // repetitive value (`kkkk…`), which a hostile `.env` can hold.
        self.matcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()
            .map(|ac| Arc::new((ac, owners)));
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Whether `bytes` hold any form of any secret.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|matcher| matcher.0.is_match(bytes))
    }

    /// `text` with every form of every secret replaced by
    /// `[redacted: NAME]`, and the names found.
    pub fn redact(&self, text: &str) -> Redacted {
        let Some(matcher) = &self.matcher else {
            return Redacted {
                text: text.to_string(),
                names: Vec::new(),
            };
        };
        let (ac, owners) = matcher.as_ref();
        let mut out = String::with_capacity(text.len());
        let mut found = vec![false; self.secrets.len()];
        let mut last = 0;
        for m in ac.find_iter(text) {
            let owner = owners[m.pattern().as_usize()];
            found[owner] = true;
            out.push_str(&text[last..m.start()]);
            out.push_str("[redacted: ");
            out.push_str(&self.secrets[owner].name);
            out.push(']');
            last = m.end();
        }
        out.push_str(&text[last..]);
        let names = self
            .secrets
            .iter()
            .zip(found)
            .filter(|(_, found)| *found)
            .map(|(s, _)| s.name.clone())
            .collect();
        Redacted { text: out, names }
    }

    /// How many bytes at the end of `text` could be the start of a secret
    /// still being printed: the longest end of `text` that begins some form
    /// of some secret without completing it. Output shown while a command
    /// runs holds these bytes back until what follows settles it, so a
    /// value printed in pieces never shows a piece. Always a character
    /// boundary of `text` (a form starts at one).
    pub fn unfinished_len(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        self.secrets
            .iter()
            .flat_map(|s| &s.forms)
            .map(|form| {
                let form = form.as_bytes();
                let tail = &bytes[bytes.len() - bytes.len().min(form.len().saturating_sub(1))..];
                prefix_at_end(form, tail)
            })
            .max()
            .unwrap_or(0)
    }

    /// How many bytes at the start of `text` could be the end of a secret
    /// whose start was cut off before it: the longest start of `text` that
    /// ends some form of some secret without being all of it. Where output
    /// was cut (bytes left out between a head and a tail), the piece on
    /// each side of the cut is left out too, since redaction cannot find a
    /// value it only sees part of. Always a character boundary of `text`.
    pub fn unstarted_len(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut longest = 0;
        for form in self.secrets.iter().flat_map(|s| &s.forms) {
            // The longest start of `text` ending `form` is, reversed, the
            // longest end of reversed `text` beginning reversed `form`.
            let most = form.len().saturating_sub(1).min(bytes.len());
            let head: Vec<u8> = bytes[..most].iter().rev().copied().collect();
            let form: Vec<u8> = form.bytes().rev().collect();
            // Rounded up to a character boundary: leaving out a byte more
            // is safe, showing one of the piece is not.
            let mut k = prefix_at_end(&form, &head);
            while k < bytes.len() && !text.is_char_boundary(k) {
                k += 1;
            }
            longest = longest.max(k);
        }
        longest
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

/// The secret values of a run, some of which may still be loading on the
/// blocking pool (the project's values come from files and git: never on
/// the path of the first frame). Every redaction waits for them: a result
/// never leaves unredacted because the values were not read yet.
#[derive(Clone)]
pub struct HeldSecrets {
    /// Set once, when every value is known.
    cell: Arc<OnceLock<Arc<Secrets>>>,
    /// Resolves once `cell` is set (for async waiters).
    loaded: Shared<BoxFuture<'static, ()>>,
}

impl Default for HeldSecrets {
    fn default() -> Self {
        Self::ready(Secrets::new())
    }
}

impl std::fmt::Debug for HeldSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cell.get() {
            Some(secrets) => secrets.fmt(f),
            None => f.write_str("[loading]"),
        }
    }
}

impl HeldSecrets {
    /// Values known now.
    pub fn ready(secrets: Secrets) -> Self {
        let cell = Arc::new(OnceLock::new());
        let _ = cell.set(Arc::new(secrets));
        Self {
            cell,
            loaded: futures_util::future::ready(()).boxed().shared(),
        }
    }

    /// `base` and the `(name, value)` pairs `load` finds, which runs on the
    /// blocking pool from now (at once, here, outside a runtime).
    pub fn loading<F>(mut base: Secrets, load: F) -> Self
    where
        F: FnOnce() -> Vec<(String, String)> + Send + 'static,
    {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            let found = load();
            base.extend(found.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            return Self::ready(base);
        };
        let cell = Arc::new(OnceLock::new());
        let filled = Arc::clone(&cell);
        let task = runtime.spawn_blocking(move || {
            // Whatever happens to the reading, the cell is set: nobody
            // waits for ever.
            let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load))
                .unwrap_or_else(|_| {
                    tracing::error!("reading the project's secret values panicked");
                    Vec::new()
                });
            base.extend(found.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            let _ = filled.set(Arc::new(base));
        });
        let loaded = async move {
            let _ = task.await;
        };
        Self {
            cell,
            loaded: loaded.boxed().shared(),
        }
    }

    /// Every value, once loaded.
    pub async fn get(&self) -> Arc<Secrets> {
        if let Some(secrets) = self.cell.get() {
            return Arc::clone(secrets);
        }
        self.loaded.clone().await;
        Arc::clone(self.cell.wait())
    }

    /// Every value, waiting on this thread while they load (for the few
    /// places that cannot wait asynchronously: an event as it is sent).
    pub fn now(&self) -> Arc<Secrets> {
        Arc::clone(self.cell.wait())
    }

    /// `Secrets::redact_result` once every value is loaded.
    pub async fn redact_result(&self, output: &str) -> String {
        self.get().await.redact_result(output)
    }

    /// `Secrets::redact`'s text once every value is loaded.
    pub async fn redact(&self, text: &str) -> String {
        self.get().await.redact(text).text
    }
}

/// The forms a command can print a value in: base64 (standard and
/// URL-safe, at each of the three byte alignments a value can have inside
/// a longer encoded text: only the characters the value alone determines),
/// base32 (at each of its five alignments, both cases), hex (both cases),
/// URL-encoded, and reversed.
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
    for skip in 0..5usize {
        let Some(rest) = value.get(skip..) else {
            continue;
        };
        let core = &rest[..rest.len() / 5 * 5];
        if core.is_empty() {
            continue;
        }
        let upper = base32(core);
        forms.push(upper.to_lowercase());
        forms.push(upper);
    }
    forms.push(hex::encode(value));
    forms.push(hex::encode_upper(value));
    forms.push(percent_encode(value, true));
    forms.push(percent_encode(value, false));
    if let Ok(text) = std::str::from_utf8(value) {
        forms.push(text.chars().rev().collect());
    }
    forms
}

/// The length of the longest end of `text` that is a start of `pattern`
/// shorter than all of it, in time linear in both (Knuth-Morris-Pratt:
/// `text` is run through the pattern's failure function).
fn prefix_at_end(pattern: &[u8], text: &[u8]) -> usize {
    let m = pattern.len();
    if m < 2 || text.is_empty() {
        return 0;
    }
    let mut fail = vec![0u32; m];
    let mut k = 0usize;
    for i in 1..m {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1] as usize;
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = u32::try_from(k).unwrap_or(0);
    }
    let mut q = 0usize;
    for &byte in text {
        while q > 0 && (q == m || pattern[q] != byte) {
            q = fail[q - 1] as usize;
        }
        if pattern[q] == byte {
            q += 1;
        }
    }
    if q == m {
        q = fail[m - 1] as usize;
    }
    q
}

/// RFC 4648 base32 of whole 5-byte groups, without padding.
fn base32(value: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(value.len() * 8 / 5);
    for group in value.chunks_exact(5) {
        let bits = group
            .iter()
            .fold(0u64, |acc, &byte| (acc << 8) | u64::from(byte));
        for i in (0..8).rev() {
            let index = usize::try_from((bits >> (i * 5)) & 31).unwrap_or(0);
            out.push(char::from(ALPHABET[index]));
        }
    }
    out
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

    /// A hostile repository's `.env` can hold long, repetitive values:
    /// holding them, redacting with them and the hold-back checks stay
    /// linear (an automaton whose build is quadratic in such a value took
    /// minutes for 4 KiB).
    #[test]
    fn long_repetitive_values_are_held_and_found_in_linear_time() {
        let mut s = Secrets::new();
        let other = "ab".repeat(3000);
        let long = format!("{}end", "k".repeat(256 * 1024));
        s.extend([("LONG", long.as_str()), ("OTHER", other.as_str())]);
        // The long value is held by its first MAX_SECRET_BYTES: printed
        // whole, nothing of that start shows.
        let printed = format!("before {long} after");
        let out = s.redact(&printed);
        assert!(out.text.starts_with("before [redacted: LONG]"));
        assert!(!out.text.contains(&"k".repeat(MAX_SECRET_BYTES)));
        assert_eq!(out.names, ["LONG"]);
        // Past the budget of encoded forms a value is held exactly only;
        // within it, every form.
        assert!(s.form_bytes <= FORM_BUDGET);
        assert!(s.holds(other.as_bytes()));
        // Hex of the value is found too.
        let hexed = format!("x{}y", hex::encode(&other));
        assert_eq!(s.redact(&hexed).text, "x[redacted: OTHER]y");
        // A start of the value at the end of the text is held back, an end
        // of it at the start of a text is left out.
        let head = "k".repeat(10_000);
        assert_eq!(s.unfinished_len(&format!("z{head}")), head.len());
        let tail = "k".repeat(500);
        assert_eq!(s.unstarted_len(&format!("{tail} more")), tail.len());
        let tail = "ab".repeat(400);
        assert_eq!(s.unstarted_len(&format!("{tail}b more")), tail.len());
        assert_eq!(s.unstarted_len(&format!("b{tail} more")), tail.len() + 1);
        assert_eq!(s.unfinished_len("nothing here"), 0);
    }

    fn secrets() -> Secrets {
        let mut s = Secrets::new();
        s.add("OPENAI_API_KEY", KEY);
        s
    }

    #[test]
    fn an_unfinished_value_at_the_end_is_measured_in_any_of_its_forms() {
        let s = secrets();
        assert_eq!(s.unfinished_len("output\nsk-pro"), "sk-pro".len());
        assert_eq!(
            s.unfinished_len(&format!("x {}", &KEY[..KEY.len() - 1])),
            KEY.len() - 1
        );
        // A line's end is no secret's start. (A last character can be the
        // first of some encoded form, and is held back until more comes.)
        assert_eq!(s.unfinished_len(&format!("x {KEY}\n")), 0);
        assert_eq!(s.unfinished_len("nothing like it\n"), 0);
        let first = |form: &str| form.chars().next().unwrap();
        assert_eq!(s.unfinished_len(&format!("ends in {}", first(KEY))), 1);
        assert_eq!(s.unfinished_len(""), 0);
        let reversed: String = KEY.chars().rev().collect();
        assert_eq!(s.unfinished_len(&format!("a {}", &reversed[..5])), 5);
        let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
        assert_eq!(s.unfinished_len(&format!("a {}", &hex[..9])), 9);
        assert_eq!(Secrets::new().unfinished_len("sk-pro"), 0);
        // The cut is a character boundary whatever precedes it.
        let text = "é日sk-proj/A";
        assert!(text.is_char_boundary(text.len() - s.unfinished_len(text)));
    }

    #[test]
    fn a_value_cut_off_at_the_start_is_measured_in_any_of_its_forms() {
        let s = secrets();
        assert_eq!(s.unstarted_len("0123456789\nrest"), "0123456789".len());
        assert_eq!(s.unstarted_len(&KEY[1..]), KEY.len() - 1);
        assert_eq!(s.unstarted_len("\nnothing"), 0);
        assert_eq!(s.unstarted_len(""), 0);
        let reversed: String = KEY.chars().rev().collect();
        assert_eq!(s.unstarted_len(&reversed[20..]), reversed.len() - 20);
        assert_eq!(Secrets::new().unstarted_len("6789"), 0);
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

    #[test]
    fn hex_base32_and_reversed_forms_are_found() {
        let mut s = Secrets::new();
        let value = "sk-live-abcdef1234567890";
        s.add("KEY", value);
        for form in [
            hex::encode(value),
            hex::encode_upper(value),
            value.chars().rev().collect::<String>(),
            format!("XX{}YY", base32(&value.as_bytes()[..20])),
            base32(&value.as_bytes()[1..21]).to_lowercase(),
        ] {
            let out = s.redact(&format!("before {form} after"));
            assert!(!out.text.contains(&form), "{form}: {}", out.text);
            assert_eq!(out.names, vec!["KEY"], "{form}");
        }
        // RFC 4648's own example.
        assert_eq!(base32(b"fooba"), "MZXW6YTB");
    }
}
