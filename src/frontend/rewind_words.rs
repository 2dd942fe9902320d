//! The words of `/rewind`, written once for every front end: the three
//! choices (their ids, labels, and what each would do for one offer), a
//! prompt's row in a list, and the plain-text list and offer the line front
//! end prints. Reads what the agent sent; decides nothing.

use crate::checkpoint::changes;
use crate::checkpoint::rewind::{Listed, Offer, What};

/// One choice of a rewind offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub what: What,
    /// A stable id (ACP's option id).
    pub id: &'static str,
    pub label: &'static str,
}

/// The choices, in the order they are offered.
pub const CHOICES: [Choice; 3] = [
    Choice {
        what: What::Both,
        id: "both",
        label: "Restore code and conversation",
    },
    Choice {
        what: What::Conversation,
        id: "conversation",
        label: "Restore conversation only",
    },
    Choice {
        what: What::Code,
        id: "code",
        label: "Restore code only",
    },
];

fn names(paths: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut out = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        out.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    out
}

/// What restoring the code would do, in one line.
pub fn code_effect(offer: &Offer) -> String {
    let code = &offer.code;
    if code.restored.is_empty() && code.deleted.is_empty() {
        return "files: nothing to change".into();
    }
    let mut parts = Vec::new();
    if !code.restored.is_empty() {
        parts.push(format!(
            "restore {} file(s): {}",
            code.restored.len(),
            names(&code.restored)
        ));
    }
    if !code.deleted.is_empty() {
        parts.push(format!(
            "delete {} file(s): {}",
            code.deleted.len(),
            names(&code.deleted)
        ));
    }
    format!(
        "{} (+{} -{} lines)",
        parts.join("; "),
        offer.added,
        offer.removed
    )
}

/// What going back in the conversation would do, in one line.
pub fn conversation_effect(offer: &Offer) -> String {
    format!(
        "conversation: back to before prompt {}, leaving out {} prompt(s); the prompt goes back in the input",
        offer.n, offer.prompts_dropped
    )
}

/// What `choice` would do for `offer`.
pub fn effect(choice: &Choice, offer: &Offer) -> String {
    match choice.what {
        What::Both => format!("{}; {}", code_effect(offer), conversation_effect(offer)),
        What::Conversation => format!("{}; files are left as they are", conversation_effect(offer)),
        What::Code => format!("{}; the conversation is left as it is", code_effect(offer)),
    }
}

/// The paths restoring the code keeps unless the person confirms each, in
/// one line; `None` when there are none.
pub fn kept(offer: &Offer) -> Option<String> {
    let kept = &offer.code.kept;
    (!kept.is_empty()).then(|| {
        format!(
            "changed since by something other than mino, kept unless you confirm each: {}",
            names(kept)
        )
    })
}

/// A prompt's first line, at most `width` characters.
pub fn short(prompt: &str, width: usize) -> String {
    let first = prompt.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(width).collect();
    if first.chars().count() > width || prompt.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

/// What a prompt's row says after its text: what its turn changed.
pub fn prompt_detail(listed: &Listed) -> String {
    if listed.pruned {
        "checkpoint pruned: cannot be rewound".into()
    } else if listed.files.is_empty() {
        "no files changed".into()
    } else {
        format!(
            "{} file(s): {}",
            listed.files.len(),
            changes::line(&listed.files)
        )
    }
}

/// The prompts as a plain list, newest first.
pub fn prompts_text(prompts: &[Listed]) -> String {
    if prompts.is_empty() {
        return "No prompt of this session has a checkpoint yet: nothing to rewind.".into();
    }
    let mut out = String::from(
        "Prompts of this session, newest first (/rewind N offers what going back to before prompt N would do):",
    );
    for listed in prompts.iter().rev() {
        out.push_str(&format!(
            "\n  {:>3}  {}  — {}",
            listed.n,
            short(&listed.prompt, 60),
            prompt_detail(listed)
        ));
    }
    out
}

/// The offer as plain text.
pub fn offer_text(offer: &Offer) -> String {
    let mut out = format!(
        "Rewind to before prompt {}: {}",
        offer.n,
        short(&offer.prompt, 60)
    );
    for choice in &CHOICES {
        out.push_str(&format!("\n  {}: {}", choice.label, effect(choice, offer)));
    }
    if let Some(kept) = kept(offer) {
        out.push_str(&format!("\n  {kept}"));
    }
    out
}
