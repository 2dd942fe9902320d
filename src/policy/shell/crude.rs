//! The bypass guard's over-approximation: a word-level scan for the
//! catastrophic part of the dangerous table in text no tokenizer vouched
//! for (input the tokenizer calls malformed or oversized, here-document
//! bodies and here-strings, code handed to a shell or an interpreter). It
//! errs toward "catastrophic": quotes and escapes are dropped, every shell
//! operator splits words, and every word is read as if it could start a
//! command whose arguments run to the end of the text. One pass from the
//! end, linear in the text. It never decides an outcome: it only says
//! whether the guard must hear about the text, and why.

use super::Rules;
use super::danger::{self, Danger, program_name, push, short_cluster_has};
use super::targets::catastrophic_target;

/// Text longer than this is taken as catastrophic without being read.
pub const MAX_SCAN_BYTES: usize = 1024 * 1024;

/// What the words after a position hold, for the program at it.
#[derive(Debug, Clone, Default)]
struct Later {
    recursive: bool,
    recursive_upper: bool,
    /// The nearest word naming a catastrophic place.
    target: Option<String>,
    /// The nearest such word that is not relative (`.`, `*`): for modes
    /// and owners, and for where `find` starts.
    wide_target: Option<String>,
    no_preserve_root: bool,
    dd_device: bool,
    device: bool,
    push: bool,
    force: bool,
    deletes: bool,
}

impl Later {
    fn add(&mut self, word: &str, rules: &Rules) {
        let lower = word.to_ascii_lowercase();
        let windows_s =
            word.starts_with('/') && word[1..].split('/').any(|f| f.eq_ignore_ascii_case("s"));
        let recurse_ps = lower.len() >= 3 && "-recurse".starts_with(lower.as_str());
        self.recursive |= short_cluster_has(word, 'r')
            || short_cluster_has(word, 'R')
            || danger::long_prefix(word, "--recursive")
            || recurse_ps
            || windows_s;
        self.recursive_upper |=
            short_cluster_has(word, 'R') || danger::long_prefix(word, "--recursive");
        // `/s` may be a Windows option or a directory: it counts as a place.
        if !word.starts_with('-') && catastrophic_target(word, rules) {
            self.target = Some(word.to_string());
            if !word.starts_with('.') && !word.starts_with('*') {
                self.wide_target = Some(word.to_string());
            }
        }
        self.no_preserve_root |= word.len() > 5 && danger::long_prefix(word, "--no-preserve-root");
        self.dd_device |= word.strip_prefix("of=").is_some_and(danger::device);
        self.device |= danger::device(word);
        // `alias.p=push`, `send-pack`, `http-push`: anything that names a push.
        self.push |= lower.contains("push") || lower.contains("send-pack");
        self.force |= push::risky_word(word);
        self.deletes |= matches!(word, "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir");
    }
}

/// Splits `text` into words the crude way: whitespace, control characters
/// and the operators `; | & ( ) < >` and backtick end a word; quotes and
/// backslashes vanish (with a `$` right before a quote).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() || ";|&()<>`".contains(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        } else if c == '\'' || c == '"' || c == '\\' {
            if c != '\\' && word.ends_with('$') {
                word.pop();
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The crude scan of `text`.
pub fn scan_text(text: &str, rules: &Rules) -> Option<Danger> {
    if text.len() > MAX_SCAN_BYTES {
        return Some(Danger {
            catastrophic: true,
            unseen: false,
            reason: format!(
                "{} bytes are too many to read for a catastrophic command (at most {MAX_SCAN_BYTES})",
                text.len()
            ),
        });
    }
    scan_words(&words(text), rules)
}

/// One command's words as the tokenizer read them (quotes removed), every
/// word a possible program. A program that is catastrophic whatever its
/// arguments (`mkfs`, `format`) counts only where the precise scan looks
/// for it, so `grep -rn format src` stays quiet.
pub fn scan_command(words: &[String], rules: &Rules) -> Option<Danger> {
    scan(words, rules, false)
}

/// Every word read as a program whose arguments are all the words after
/// it: the first catastrophic call found, reading from the start.
pub fn scan_words(words: &[String], rules: &Rules) -> Option<Danger> {
    scan(words, rules, true)
}

fn scan(words: &[String], rules: &Rules, unconditional: bool) -> Option<Danger> {
    let mut later = Later::default();
    let mut found = None;
    for word in words.iter().rev() {
        let name = program_name(word);
        if let Some(reason) = catastrophic_call(&name, &later, unconditional) {
            found = Some(reason);
        }
        later.add(word, rules);
    }
    found.map(|reason| Danger {
        catastrophic: true,
        unseen: false,
        reason,
    })
}

fn catastrophic_call(name: &str, later: &Later, unconditional: bool) -> Option<String> {
    match name {
        "rm" | "rmdir" | "remove-item" | "ri" | "del" | "erase" | "rd" => {
            if later.no_preserve_root {
                Some(format!("{name} --no-preserve-root removes /"))
            } else if later.recursive {
                later
                    .target
                    .as_ref()
                    .map(|t| format!("{name} removes {t} recursively"))
            } else {
                None
            }
        }
        "dd" if later.dd_device => Some("dd writes onto a device".into()),
        "chmod" | "chown" | "chgrp" if later.recursive_upper => later
            .wide_target
            .as_ref()
            .map(|t| format!("{name} -R changes {t}")),
        "git" if later.push && later.force => {
            Some("git push may force, delete or mirror remote refs".into())
        }
        "find" if later.deletes => later
            .wide_target
            .as_ref()
            .map(|t| format!("find removes or runs a command on everything under {t}")),
        "wipefs" | "shred" | "blkdiscard" | "fdisk" | "sfdisk" | "cfdisk" | "sgdisk" | "parted"
        | "mkswap"
            if later.device =>
        {
            Some(format!("{name} writes onto a device"))
        }
        "format" | "format-volume" | "clear-disk" | "initialize-disk" if unconditional => {
            Some(format!("{name} formats a disk"))
        }
        n if unconditional && (n.starts_with("mkfs") || n == "mke2fs") => {
            Some(format!("{n} makes a file system"))
        }
        _ => None,
    }
}
