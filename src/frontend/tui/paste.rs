//! Large pastes in the input box: a paste of more than `PASTE_INLINE_LINES`
//! lines or `PASTE_INLINE_MAX` bytes stands in the text area as a
//! placeholder (`[pasted 120 lines]`) unlike any other text there, and
//! sending puts each paste back at its placeholder's place. State only; it
//! never draws and never reads keys.

use super::app::App;

/// Pastes larger than this many bytes stand in the input as a placeholder.
pub const PASTE_INLINE_MAX: usize = 64 * 1024;
/// Pastes of more lines than this stand in the input as a placeholder.
pub const PASTE_INLINE_LINES: usize = 20;

impl App {
    /// Inserts `text` at the cursor; a text of more than
    /// `PASTE_INLINE_LINES` lines or `PASTE_INLINE_MAX` bytes goes in as a
    /// placeholder (`[pasted 120 lines]`), so the input stays readable and
    /// responsive; sending puts the text back.
    pub fn insert_text(&mut self, text: &str) {
        let lines = text.lines().count();
        if text.len() <= PASTE_INLINE_MAX && lines <= PASTE_INLINE_LINES {
            self.input.insert_str(text);
            return;
        }
        let what = if lines > PASTE_INLINE_LINES {
            format!("{lines} lines")
        } else {
            format!("{} characters", text.chars().count())
        };
        // Unlike any placeholder held and any text in the input, so each
        // one stands for its own paste only.
        let current = self.input_text();
        let mut label = format!("[pasted {what}]");
        let mut n = 1;
        while current.contains(&label) || self.pastes.iter().any(|(l, _)| l.contains(&label)) {
            n += 1;
            label = format!("[pasted {what} #{n}]");
        }
        self.input.insert_str(&label);
        self.pastes.push((label, text.to_string()));
    }

    /// The input's text with every placeholder still in it replaced by its
    /// paste: each at its first place, read left to right in what was
    /// typed, never inside a paste put back (a paste may hold any text).
    pub fn input_expanded(&self) -> String {
        let text = self.input_text();
        let mut used = vec![false; self.pastes.len()];
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        loop {
            let next = self
                .pastes
                .iter()
                .enumerate()
                .filter(|(i, _)| !used[*i])
                .filter_map(|(i, (label, _))| rest.find(label.as_str()).map(|at| (at, i)))
                .min();
            let Some((at, i)) = next else {
                out.push_str(rest);
                return out;
            };
            let (label, paste) = &self.pastes[i];
            out.push_str(&rest[..at]);
            out.push_str(paste);
            rest = &rest[at + label.len()..];
            used[i] = true;
        }
    }
}
