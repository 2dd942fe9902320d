//! The parts of a bash or sh command the bypass guard cannot read
//! completely: a command whose words the shell still expands (variables,
//! parameters, substitutions), a command word that is not a literal,
//! loops and functions, and programs that run text or input as code
//! (`eval`, `xargs`, `find -exec`, shells and interpreters, here-documents
//! fed to them). It reads and collects; `reach` judges what it collects.

use super::danger::{self, KEYWORDS, WRAPPERS, is_assignment, program_name};
use super::lex::{Command, Lexed};

/// One part the guard cannot read completely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opaque {
    /// Why it cannot be read.
    pub(super) why: &'static str,
    /// The word in command position is not a literal (`$X`, `$(...)`):
    /// it may run anything.
    pub(super) unknown_program: Option<String>,
    /// The text that may reach a program: the command's own words, or for
    /// code runners, loops and functions the whole input.
    pub(super) text: String,
}

/// Programs that run their arguments or their input as code the guard
/// does not read: their part is the whole input (a pipe may feed them).
const RUNNERS: &[&str] = &["eval", "xargs", "parallel", "source", ".", "watch", "trap"];

/// Loop keywords: a body that runs with words the loop supplies.
const LOOPS: &[&str] = &["for", "while", "until", "select"];

/// The index of the word in command position: after assignments, wrappers
/// with their options and numbers, and keywords.
fn command_word(command: &Command) -> Option<usize> {
    let words = &command.words;
    let mut i = 0;
    while i < words.len() {
        let text = &words[i].text;
        let name = program_name(text);
        if is_assignment(text) || KEYWORDS.contains(&text.as_str()) {
            i += 1;
        } else if WRAPPERS.contains(&name.as_str()) {
            i += 1;
            while i < words.len()
                && (words[i].text.starts_with('-')
                    || words[i]
                        .text
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.')
                    || is_assignment(&words[i].text))
            {
                i += 1;
            }
        } else {
            return Some(i);
        }
    }
    None
}

/// Every opaque part of `input` as the tokenizer read it.
pub(super) fn find(lexed: &Lexed, input: &str) -> Vec<Opaque> {
    let mut out = Vec::new();
    let whole = |why| Opaque {
        why,
        unknown_program: None,
        text: input.to_string(),
    };
    if input.contains("()")
        || lexed
            .commands
            .iter()
            .any(|c| c.words.iter().any(|w| w.text == "function"))
    {
        out.push(whole("a function"));
    }
    for command in &lexed.commands {
        let own = command
            .words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(first) = command.words.first()
            && LOOPS.contains(&first.text.as_str())
        {
            out.push(whole("a loop"));
        }
        let Some(cw) = command_word(command) else {
            continue;
        };
        let word = &command.words[cw];
        if word.expands || (!word.literal && word.text.is_empty()) {
            out.push(Opaque {
                why: "a command word the shell expands",
                unknown_program: Some(word.text.clone()),
                text: own.clone(),
            });
            continue;
        }
        let name = program_name(&word.text);
        if name == "eval" {
            out.push(Opaque {
                why: "eval",
                unknown_program: Some(word.text.clone()),
                text: own.clone(),
            });
            continue;
        }
        // `xargs rm`, `sudo sh`: a wrapper before the command word may be
        // the one that runs code.
        let runner = command.words[..=cw].iter().any(|w| {
            let n = program_name(&w.text);
            RUNNERS.contains(&n.as_str()) || danger::runs_code(&n)
        });
        let execs = name == "find"
            && command.words.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete"
                )
            });
        if runner {
            out.push(whole("a program that runs text or its input as code"));
        } else if execs {
            out.push(Opaque {
                why: "find running a command or deleting what it finds",
                unknown_program: None,
                text: own.clone(),
            });
        }
        if command.words.iter().any(|w| w.expands) {
            out.push(Opaque {
                why: "words the shell expands",
                unknown_program: None,
                text: own,
            });
        }
    }
    out
}
