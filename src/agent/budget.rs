//! The context budget: how many tokens a request will take (system prompt,
//! tool schemas and history all counted), calibrated from the service's own
//! count of the last request, and how much of a tool result fits in what is
//! left. A cut keeps the head and the tail and says what it cut. Pure: never
//! does I/O, never asks the model, never decides a call.

use crate::model::{Item, ToolSpec};

/// Tokens counted for each history item on top of its text (role markers,
/// call ids, the template's separators).
const ITEM_OVERHEAD: u64 = 8;
/// The calibration margin: the service's last count is multiplied by this,
/// so content unlike the last request's still fits.
const MARGIN: f64 = 1.1;
/// The scale is never below this: the estimate is meant to count high
/// already, and a service that reports no or tiny counts cannot talk it down.
const MIN_SCALE: f64 = 1.0;
/// Nor above this (a service reporting nonsense cannot empty the window).
const MAX_SCALE: f64 = 8.0;
/// A tool result is never cut below this many tokens of its text: the model
/// must see something of it; compaction makes room for the rest.
pub const MIN_RESULT_TOKENS: u64 = 96;
/// Under the small profile, one tool result keeps at most this share (in
/// percent) of the prompt's room.
pub const SMALL_RESULT_PERCENT: u64 = 20;
/// Earlier history is summarised when a request would take more than this
/// share (in percent) of the prompt's room.
pub const TARGET_PERCENT: u64 = 85;
/// At most this many tokens are kept free, past a tool result, for the
/// model's next message (a tenth of the prompt's room when that is less).
const ALLOWANCE: u64 = 256;
/// Of a cut result's text, this share (in percent) is kept from the head;
/// the rest from the tail, where a failing test or an error usually is.
const HEAD_PERCENT: u64 = 40;

/// A conservative token count of `text` without the model's tokenizer: a
/// run of ASCII letters counts one token per four letters (rounded up); a
/// digit, a punctuation mark, a line break and any other character (non-ASCII
/// included) count one each; spaces and tabs are free. Real tokenizers give
/// prose about 4 characters a token and number-heavy output about 1.6; this
/// counts at or above both.
pub fn tokens(text: &str) -> u64 {
    // Bytes, not chars: a character outside ASCII counts once, at its
    // first byte (continuation bytes are `10xxxxxx`). A long resumed
    // history is counted at start, so this loop is on that path.
    let mut count = 0u64;
    let mut letters = 0u64;
    for &b in text.as_bytes() {
        if b.is_ascii_alphabetic() {
            letters += 1;
            continue;
        }
        count += letters.div_ceil(4);
        letters = 0;
        if b != b' ' && b != b'\t' && b & 0xC0 != 0x80 {
            count += 1;
        }
    }
    count + letters.div_ceil(4)
}

/// The estimated tokens of one history item.
pub fn item_tokens(item: &Item) -> u64 {
    ITEM_OVERHEAD
        + match item {
            Item::User { text } | Item::Summary { text } | Item::Reminder { text } => tokens(text),
            Item::Assistant { text, tool_calls } => {
                tokens(text)
                    + tool_calls
                        .iter()
                        .map(|c| ITEM_OVERHEAD + tokens(&c.name) + tokens(&c.arguments))
                        .sum::<u64>()
            }
            Item::ToolResult { output, .. } => tokens(output),
        }
}

/// The estimated tokens of what every request carries besides history.
pub fn fixed_tokens(system: &str, tools: &[ToolSpec]) -> u64 {
    let schemas = serde_json::to_string(tools).unwrap_or_default();
    tokens(system) + tokens(&schemas) + ITEM_OVERHEAD
}

/// What a session learnt from the service's counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Service tokens per estimated token (with its margin); never below 1.
    pub scale: f64,
    /// The last request's estimate and the service's count of it: a longer
    /// history is that count plus the scaled estimate of what was added.
    pub anchor: Option<(u64, u64)>,
    /// The window the service said it has, when smaller than the setting.
    pub window: Option<u64>,
}

impl Default for Calibration {
    fn default() -> Self {
        Self {
            scale: MIN_SCALE,
            anchor: None,
            window: None,
        }
    }
}

/// The window and the calibration, for one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// `[model] context_window`.
    pub window: u64,
    /// Tokens kept free for the answer (the output cap the requests carry).
    pub reserve: u64,
    pub calibration: Calibration,
}

impl Budget {
    pub fn new(window: u64, reserve: u64) -> Self {
        Self {
            window,
            reserve: reserve.min(window / 2),
            calibration: Calibration::default(),
        }
    }

    /// The same budget with what was learnt before.
    pub fn with(mut self, calibration: Calibration) -> Self {
        if let Some(window) = calibration.window
            && window < self.window
        {
            self.window = window;
            self.reserve = self.reserve.min(window / 2);
        }
        self.calibration = calibration;
        self
    }

    /// The most a request's prompt may take: the window less the answer's
    /// room.
    pub fn limit(&self) -> u64 {
        self.window.saturating_sub(self.reserve)
    }

    /// Where summarising earlier history starts, in service tokens.
    pub fn target(&self) -> u64 {
        self.limit() * TARGET_PERCENT / 100
    }

    /// Room kept, past a tool result, for the model's next message.
    fn allowance(&self) -> u64 {
        (self.limit() / 10).min(ALLOWANCE)
    }

    pub fn scale(&self) -> f64 {
        self.calibration.scale
    }

    /// The service tokens a request estimated at `estimate` will take.
    pub fn scaled(&self, estimate: u64) -> u64 {
        let scale = self.calibration.scale;
        // Estimates are far below 2^52; the casts keep them exact.
        match self.calibration.anchor {
            Some((at, counted)) if estimate >= at => {
                counted + ((estimate - at) as f64 * scale).ceil() as u64
            }
            _ => (estimate as f64 * scale).ceil() as u64,
        }
    }

    /// Learns from the service's count: a request estimated at `estimate`
    /// tokens was `counted` tokens. A count of 0 (the service gave none)
    /// teaches nothing.
    pub fn calibrate(&mut self, estimate: u64, counted: u64) {
        if estimate == 0 || counted == 0 {
            return;
        }
        let observed = counted as f64 / estimate as f64 * MARGIN;
        self.calibration.scale = observed.clamp(MIN_SCALE, MAX_SCALE);
        self.calibration.anchor = Some((estimate, counted));
    }

    /// Forgets the anchor: history was rewritten (compaction).
    pub fn rewritten(&mut self) {
        self.calibration.anchor = None;
    }

    /// Learns from a service that refused a request as too large: it was
    /// at least `counted` tokens (when the service said), and more than the
    /// window in any case. Never lowers the scale.
    /// A window the service states (`window`) smaller than the setting is
    /// used from then on.
    pub fn exceeded(&mut self, estimate: u64, counted: Option<u64>, window: Option<u64>) {
        if let Some(window) = window.filter(|w| *w > 0 && *w < self.window) {
            self.calibration.window = Some(window);
            *self = Budget::new(window, self.reserve).with(self.calibration);
        }
        if estimate == 0 {
            return;
        }
        let counted = counted.unwrap_or(self.window + 1).max(self.window + 1);
        let observed = counted as f64 / estimate as f64 * MARGIN;
        self.calibration.scale = self
            .calibration
            .scale
            .max(observed)
            .clamp(MIN_SCALE, MAX_SCALE);
        self.calibration.anchor = Some((estimate, counted));
    }

    /// Whether a request of `estimate` estimated tokens is past the point
    /// where earlier history is summarised.
    pub fn over_target(&self, estimate: u64) -> bool {
        self.scaled(estimate) > self.target()
    }

    /// Whether a request of `estimate` estimated tokens leaves too little
    /// room for the model's next message.
    pub fn over(&self, estimate: u64) -> bool {
        self.scaled(estimate) + self.allowance() > self.limit()
    }

    /// How many estimated tokens must go for a request of `estimate` to
    /// leave room for the model's next message.
    pub fn excess(&self, estimate: u64) -> u64 {
        let over = (self.scaled(estimate) + self.allowance()).saturating_sub(self.limit());
        (over as f64 / self.calibration.scale).ceil() as u64
    }

    /// The most of one tool result the small profile keeps, in estimated
    /// tokens: a share of the prompt's room (`SMALL_RESULT_PERCENT`), at
    /// least `MIN_RESULT_TOKENS`, whatever room is left.
    pub fn small_result_room(&self) -> u64 {
        let share = self.limit() * SMALL_RESULT_PERCENT / 100;
        ((share as f64 / self.calibration.scale).floor() as u64).max(MIN_RESULT_TOKENS)
    }

    /// How many estimated tokens of a new tool result fit when the rest
    /// of the request is estimated at `others`: at least
    /// `MIN_RESULT_TOKENS`.
    pub fn room_for_result(&self, others: u64) -> u64 {
        let used = self.scaled(others + ITEM_OVERHEAD) + self.allowance();
        let left = self.limit().saturating_sub(used);
        // Back from service tokens to estimated ones.
        let left = (left as f64 / self.calibration.scale).floor() as u64;
        left.max(MIN_RESULT_TOKENS)
    }
}

/// `text` cut to at most `max_tokens` estimated tokens: its head and its
/// tail, with a line between them saying how much was cut and `why`.
/// Text that fits is returned as it is.
pub fn cut(text: &str, max_tokens: u64, why: &str) -> String {
    if tokens(text) <= max_tokens {
        return text.to_string();
    }
    let lines = text.lines().count();
    // The note itself takes room; leave it some.
    let keep = max_tokens.saturating_sub(64);
    let head_budget = keep * HEAD_PERCENT / 100;
    let tail_budget = keep - head_budget;
    let head_end = prefix_within(text, head_budget);
    let tail_start = suffix_within(&text[head_end..], tail_budget) + head_end;
    let (head, middle, tail) = (
        &text[..head_end],
        &text[head_end..tail_start],
        &text[tail_start..],
    );
    let cut_lines = middle.lines().count();
    format!(
        "{head}\n[... {} of {} characters ({cut_lines} of {lines} lines) cut from the middle {why} ...]\n{tail}",
        middle.len(),
        text.len(),
    )
}

/// Counts tokens the way `tokens` does, one character at a time.
#[derive(Default)]
struct Counter {
    count: u64,
    letters: u64,
}

impl Counter {
    fn push(&mut self, c: char) -> u64 {
        if c.is_ascii_alphabetic() {
            self.letters += 1;
        } else {
            self.count += self.letters.div_ceil(4);
            self.letters = 0;
            if c != ' ' && c != '\t' {
                self.count += 1;
            }
        }
        self.count + self.letters.div_ceil(4)
    }
}

/// The longest prefix of `text` within `budget` estimated tokens, ending
/// at a line break when one is near.
fn prefix_within(text: &str, budget: u64) -> usize {
    let mut counter = Counter::default();
    let mut end = 0;
    let mut last_line = 0;
    for (i, c) in text.char_indices() {
        if counter.push(c) > budget {
            break;
        }
        end = i + c.len_utf8();
        if c == '\n' {
            last_line = end;
        }
    }
    if last_line * 2 > end { last_line } else { end }
}

/// Where the longest suffix of `text` within `budget` estimated tokens
/// starts, at a line start when one is near.
fn suffix_within(text: &str, budget: u64) -> usize {
    let mut counter = Counter::default();
    let mut start = text.len();
    let mut first_line = text.len();
    for (i, c) in text.char_indices().rev() {
        if counter.push(c) > budget {
            break;
        }
        start = i;
        if c == '\n' && i + 1 < text.len() {
            first_line = i + 1;
        }
    }
    let kept = text.len() - start;
    if first_line < text.len() && (text.len() - first_line) * 2 > kept {
        first_line
    } else {
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_profile_keeps_a_fifth_of_the_room_for_one_result() {
        let budget = Budget::new(4096, 1024);
        assert_eq!(budget.small_result_room(), 3072 / 5);
        // An empty history leaves far more room than the small cap.
        assert!(budget.room_for_result(500) > budget.small_result_room());
        let tiny = Budget::new(256, 128);
        assert_eq!(tiny.small_result_room(), MIN_RESULT_TOKENS);
    }

    #[test]
    fn digits_and_marks_count_one_each_words_a_token_per_four_letters() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("hello world"), 4);
        assert_eq!(tokens("12345"), 5);
        assert_eq!(tokens("a.b\n"), 4);
        // A character outside ASCII counts once, however many bytes it
        // takes, and ends a run of letters.
        assert_eq!(tokens("é"), 1);
        assert_eq!(tokens("日本語"), 3);
        assert_eq!(tokens("abcdé fgh🦀"), 4);
        // Number-heavy test output counts well above characters/4.
        let noisy = "test_ops.py::test_add_17 PASSED [ 12%]\n".repeat(10);
        assert!(tokens(&noisy) * 2 > noisy.len() as u64);
    }

    #[test]
    fn calibration_follows_the_service_with_a_margin_and_never_below_one() {
        let mut b = Budget::new(4096, 1024);
        assert_eq!(b.limit(), 3072);
        b.calibrate(1000, 1500);
        assert!((b.scale() - 1.65).abs() < 1e-9);
        // What was counted is known; what was added is scaled.
        assert_eq!(b.scaled(1100), 1500 + 165);
        b.calibrate(1000, 100);
        assert_eq!(b.scale(), 1.0);
        b.calibrate(1000, 0);
        assert_eq!(b.scale(), 1.0);
        b.exceeded(2000, Some(9884), None);
        assert_eq!(b.scaled(2000), 9884);
        b.rewritten();
        assert!(b.scaled(2000) > 9884);
        // A smaller window the service states is used from then on.
        let mut b = Budget::new(16384, 512);
        b.exceeded(2000, Some(15249), Some(4096));
        assert_eq!(b.limit(), 4096 - 512);
        assert_eq!(
            Budget::new(16384, 512).with(b.calibration).limit(),
            4096 - 512
        );
    }

    #[test]
    fn a_cut_keeps_head_and_tail_within_its_budget_and_says_so() {
        let text: String = (0..400)
            .map(|i| format!("line {i}: value {}\n", i * 37))
            .collect();
        let out = cut(&text, 300, "to fit the context window");
        assert!(tokens(&out) <= 300, "{}", tokens(&out));
        assert!(out.starts_with("line 0: value 0\n"));
        assert!(out.trim_end().ends_with("line 399: value 14763"));
        assert!(out.contains("cut from the middle to fit the context window"));
        assert!(out.contains(&format!("of {} characters", text.len())));
        assert_eq!(cut("short", 300, "x"), "short");
    }

    #[test]
    fn room_for_a_result_is_what_the_window_leaves_at_least_a_minimum() {
        let b = Budget::new(4096, 1024);
        assert_eq!(b.room_for_result(1000), 3072 - 1008 - 256);
        assert_eq!(b.room_for_result(5000), MIN_RESULT_TOKENS);
        assert!(!b.over(2000));
        assert!(b.over(3000));
        assert_eq!(b.excess(3000), 3000 + 256 - 3072);
    }
}
