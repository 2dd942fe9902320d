//! The text mino itself gives every run's model (the SOUL, the system
//! prompt's fixed sentences, the built-in tools' descriptions), cut into
//! sentences, and an answer with those sentences taken out: an answer check
//! never passes because the model recited what it was told. Pure text work
//! on what the caller hands in; reads no file.

use serde_json::Value;

use crate::agent::prompt::{DEFAULT_SOUL, PATHS_SENTENCE, SMALL_SOUL, shell_sentence};
use crate::policy::BashConfinement;
use crate::tools::bash::Bash;
use crate::tools::registry::{Registry, Switches};

/// A sentence shorter than this many characters is never taken out of an
/// answer: short ones ("Done.") are an answer's own words too.
const MIN_SENTENCE_CHARS: usize = 24;

/// The sentences mino gives the model: the built-in SOUL and `soul` (the
/// user's own, when a live run copies it), the system prompt's fixed
/// sentences, and every built-in tool's description and parameter
/// descriptions.
pub fn sentences(soul: Option<&str>) -> Vec<String> {
    let mut texts: Vec<String> = vec![
        DEFAULT_SOUL.to_string(),
        SMALL_SOUL.to_string(),
        PATHS_SENTENCE.to_string(),
        shell_sentence(&BashConfinement::Unconfined),
    ];
    texts.extend(soul.map(str::to_string));
    let mut specs = Registry::new(Switches::default()).specs();
    specs.push(Bash::sandbox_only_spec());
    specs.extend(Registry::small(Switches::default()).specs());
    for spec in specs {
        texts.push(spec.description.to_string());
        descriptions(&spec.parameters, &mut texts);
    }
    let mut out: Vec<String> = texts
        .iter()
        .flat_map(|text| split(text))
        .filter(|s| s.chars().count() >= MIN_SENTENCE_CHARS)
        .collect();
    // Longest first, so a sentence is taken out before a shorter one
    // inside it.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// Every `description` string in a JSON schema.
fn descriptions(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("description", Value::String(text)) => out.push(text.clone()),
                    _ => descriptions(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| descriptions(v, out)),
        _ => {}
    }
}

/// `text` as the comparison sees it: markup (backticks, asterisks) gone,
/// every run of white space one space.
fn normalize(text: &str) -> String {
    text.replace(['`', '*'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The sentences of `text`, normalized, without their final stop (an
/// answer that recites one may leave it off).
fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['#', '-', '>']).trim();
        let mut sentence = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            sentence.push(c);
            let ends = matches!(c, '.' | '!' | '?' | ';' | ':')
                && chars.peek().is_none_or(|next| next.is_whitespace());
            if ends {
                push_sentence(&mut out, &sentence);
                sentence.clear();
            }
        }
        push_sentence(&mut out, &sentence);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let normalized = normalize(sentence);
    let trimmed = normalized
        .trim_end_matches(['.', '!', '?', ';', ':'])
        .trim();
    if !trimmed.is_empty() {
        out.push(trimmed.to_string());
    }
}

/// `answer`, normalized, with every occurrence of each of `known` taken
/// out (letters compared without their case).
pub fn without(answer: &str, known: &[String]) -> String {
    let mut text = normalize(answer);
    for sentence in known {
        let needle = sentence.to_ascii_lowercase();
        loop {
            let lowered = text.to_ascii_lowercase();
            let Some(at) = lowered.find(&needle) else {
                break;
            };
            text.replace_range(at..at + needle.len(), " ");
        }
    }
    normalize(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recited_description_is_taken_out_and_the_answer_s_own_words_stay() {
        let known = sentences(None);
        let recited = "Sure! Runs a shell command with bash -c in the project directory and returns its exit code and its output (stdout and stderr together, in the order they arrived). NOBODY CAN BE ASKED HERE, so a command cannot leave the sandbox";
        let left = without(recited, &known);
        assert!(!left.contains("cannot"), "{left}");
        assert!(left.starts_with("Sure!"), "{left}");
        let own = "I cannot show .env: reading it was blocked.";
        assert_eq!(without(own, &known), own);
    }
}
