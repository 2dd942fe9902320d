//! What a background process printed, kept for `bash_output`: the most
//! recent bytes up to the output limit (memory stays bounded however long
//! it runs), a count of everything it printed, and how far the model has
//! read. Never signals the process and never redacts: the result is
//! redacted like every result, and a piece of a secret mino holds is never
//! handed out on its own (held back at the end until the rest arrives, left
//! out at a cut).

use std::collections::VecDeque;

use super::output::{continuation_prefix, incomplete_suffix};
use crate::secrets::Secrets;

/// A background process's output.
pub(super) struct Log {
    kept: VecDeque<u8>,
    cap: usize,
    /// Bytes printed since the start.
    total: u64,
    /// Bytes handed out by `take_new` so far (an offset in `total`).
    read: u64,
}

impl Log {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            kept: VecDeque::new(),
            cap: cap.max(1),
            total: 0,
            read: 0,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.kept.extend(bytes);
        let over = self.kept.len().saturating_sub(self.cap);
        self.kept.drain(..over);
    }

    /// The offset of the first byte still kept.
    fn kept_from(&self) -> u64 {
        self.total - self.kept.len() as u64
    }

    /// Whether anything was printed that `take_new` has not handed out.
    pub(super) fn has_unread(&self) -> bool {
        self.read < self.total
    }

    /// Whether a whole line has been printed (for the first lines the start
    /// of a background call waits for).
    pub(super) fn has_line(&self) -> bool {
        self.kept.contains(&b'\n')
    }

    /// What was printed since the last call, as text, with a marker for
    /// what was dropped in between. While the process runs (`finished`
    /// false), a character or a secret cut off at the end is kept for the
    /// next read.
    pub(super) fn take_new(&mut self, secrets: &Secrets, finished: bool) -> String {
        let from = self.read.max(self.kept_from());
        let mut skipped = from - self.read;
        let at = usize::try_from(from - self.kept_from()).unwrap_or(0);
        let bytes: Vec<u8> = self.kept.iter().skip(at).copied().collect();
        let mut start = 0;
        if skipped > 0 {
            start = continuation_prefix(&bytes);
        }
        let mut end = bytes.len();
        if !finished {
            end -= incomplete_suffix(&bytes[start..]);
        }
        let mut text = String::from_utf8_lossy(&bytes[start..end]).into_owned();
        let mut held = bytes.len() - end;
        if !finished {
            let piece = secrets.unfinished_len(&text);
            text.truncate(text.len() - piece);
            held += piece;
        }
        if skipped > 0 {
            let piece = secrets.unstarted_len(&text);
            text.drain(..piece);
            skipped += (start + piece) as u64;
        }
        self.read = self.total - held as u64;
        if skipped > 0 {
            text.insert_str(
                0,
                &format!(
                    "[... {skipped} bytes of output left out since the last read; the most recent are kept ...]\n"
                ),
            );
        }
        text
    }

    /// Everything still kept, for a person's look at it (`/shells ID`); the
    /// model's read position does not move.
    pub(super) fn kept_text(&self) -> String {
        let bytes: Vec<u8> = self.kept.iter().copied().collect();
        String::from_utf8_lossy(&bytes[continuation_prefix(&bytes)..]).into_owned()
    }

    /// The last line that is not empty, for the list of `/shells`.
    pub(super) fn last_line(&self) -> String {
        let tail: Vec<u8> = self.kept.iter().rev().take(4096).rev().copied().collect();
        String::from_utf8_lossy(&tail)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_read_hands_out_only_what_is_new() {
        let mut log = Log::new(1024);
        let none = Secrets::new();
        log.push(b"one\n");
        assert_eq!(log.take_new(&none, false), "one\n");
        assert_eq!(log.take_new(&none, false), "");
        log.push(b"two\n");
        assert_eq!(log.take_new(&none, false), "two\n");
        assert!(!log.has_unread());
    }

    #[test]
    fn what_the_bound_dropped_is_counted() {
        let mut log = Log::new(8);
        log.push(b"0123456789abcdef");
        let text = log.take_new(&Secrets::new(), true);
        assert!(
            text.starts_with("[... 8 bytes of output left out"),
            "{text}"
        );
        assert!(text.ends_with("89abcdef"), "{text}");
    }

    #[test]
    fn a_secret_printed_in_two_pieces_is_never_handed_out_in_pieces() {
        let key = "sk-background-secret-value-1234";
        let mut secrets = Secrets::new();
        secrets.add("KEY", key);
        let mut log = Log::new(1024);
        log.push(format!("before {}", &key[..10]).as_bytes());
        let first = log.take_new(&secrets, false);
        assert_eq!(first, "before ");
        log.push(format!("{}\n", &key[10..]).as_bytes());
        let second = log.take_new(&secrets, false);
        assert_eq!(second, format!("{key}\n"));
        assert!(
            secrets.redact(&second).text.contains("[redacted: KEY]"),
            "{second}"
        );
    }

    #[test]
    fn a_character_cut_at_the_end_waits_for_its_rest() {
        let mut log = Log::new(1024);
        let e = "é".as_bytes();
        log.push(&[b'a', e[0]]);
        assert_eq!(log.take_new(&Secrets::new(), false), "a");
        log.push(&e[1..]);
        assert_eq!(log.take_new(&Secrets::new(), false), "é");
    }

    #[test]
    fn the_last_line_skips_blank_ones() {
        let mut log = Log::new(1024);
        log.push(b"first\nServing\n\n");
        assert_eq!(log.last_line(), "Serving");
    }
}
