//! A command read into words for whichever shell: every command found
//! (nested ones included), the targets written to, the text a shell may
//! run as code, why it is malformed, and the one simple literal command if
//! it is one. It reads; it never judges.

use super::{Dialect, Shell, danger, lex, opaque, other};

/// A command read into words, for whichever shell.
pub(super) struct Read {
    /// Words of each command found (outer and nested), after quote removal.
    pub(super) commands: Vec<Vec<String>>,
    /// Redirection targets written to, for the protected-path rule.
    pub(super) written: Vec<String>,
    /// Redirection targets truncated (`>`, not `>>`).
    pub(super) truncated: Vec<String>,
    pub(super) malformed: Option<&'static str>,
    /// The words of the one simple literal command, or why it is not one.
    pub(super) simple: Result<Vec<String>, &'static str>,
    /// Text a shell may run as code that the tokenizer did not read as
    /// commands: here-documents, here-strings, and, when a shell or an
    /// interpreter is among the words, each command's words. Only the
    /// bypass guard's crude scan reads it.
    pub(super) code: Vec<String>,
    /// What the bypass guard cannot read completely (bash and sh).
    pub(super) opaque: Vec<opaque::Opaque>,
}

pub(super) fn read(shell: Shell, command: &str) -> Read {
    match shell.dialect() {
        Dialect::Posix => {
            let lexed = lex::lex(command);
            let simple = match (&lexed.complex, lexed.commands.as_slice()) {
                (Some(why), _) => Err(*why),
                (None, [one]) if one.redirects.is_empty() => {
                    if one.words.iter().all(|w| w.literal) {
                        Ok(one.words.iter().map(|w| w.text.clone()).collect())
                    } else {
                        Err("a word that is not plainly literal")
                    }
                }
                (None, [_]) => Err("a redirection"),
                (None, _) => Err("more than one command"),
            };
            let runner = lexed
                .commands
                .iter()
                .flat_map(|c| &c.words)
                .any(|w| danger::runs_code(&danger::program_name(&w.text)));
            let mut code = lexed.bodies.clone();
            for command in &lexed.commands {
                code.extend(
                    command
                        .redirects
                        .iter()
                        .filter(|r| r.op == "<<<")
                        .map(|r| r.target.text.clone()),
                );
                if runner {
                    let words: Vec<&str> = command.words.iter().map(|w| w.text.as_str()).collect();
                    code.push(words.join(" "));
                }
            }
            Read {
                truncated: lexed
                    .commands
                    .iter()
                    .flat_map(|c| &c.redirects)
                    .filter(|r| r.op.contains('>') && !r.op.contains(">>"))
                    .map(|r| r.target.text.clone())
                    .collect(),
                code,
                opaque: opaque::find(&lexed, command),
                written: lexed
                    .commands
                    .iter()
                    .flat_map(|c| &c.redirects)
                    .filter(|r| r.op.contains('>'))
                    .map(|r| r.target.text.clone())
                    .collect(),
                commands: lexed
                    .commands
                    .into_iter()
                    .map(|c| c.words.into_iter().map(|w| w.text).collect())
                    .collect(),
                malformed: lexed.malformed,
                simple,
            }
        }
        dialect => other::read(dialect, command),
    }
}
