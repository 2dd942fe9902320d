//! What a `bash` command printed: stdout and stderr read together as they
//! arrive, kept to a byte limit as a head and a tail (memory stays bounded
//! whatever the command prints), and rendered as text with a marker where
//! bytes were left out. Where bytes were left out, a piece of a secret mino
//! holds on either side of the cut is left out too (redaction, which comes
//! later, finds only whole values). The capture is shared with a
//! `LiveOutput`, through which whoever shows the running command reads what
//! it printed so far (the same capture, so the same bound). Never signals or
//! waits for the process and never enforces the command's timeout: `bash`
//! does. Never redacts: what reads a `LiveOutput` must, as for the result.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{ChildStderr, ChildStdout};
use tokio::sync::watch;
use tokio::time::timeout;

use crate::secrets::{HeldSecrets, Secrets};

/// Bytes read from a pipe at a time (the size of a Linux pipe buffer).
const READ_CHUNK: usize = 64 * 1024;

/// The command's stdout and stderr, read concurrently into one capture.
pub(super) struct Pipes {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    stdout_buf: Vec<u8>,
    stderr_buf: Vec<u8>,
}

impl Pipes {
    pub(super) fn new(stdout: Option<ChildStdout>, stderr: Option<ChildStderr>) -> Self {
        Self {
            stdout,
            stderr,
            stdout_buf: vec![0; READ_CHUNK],
            stderr_buf: vec![0; READ_CHUNK],
        }
    }

    pub(super) fn is_open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }

    /// Waits for one read from either pipe and keeps it. A pipe at its end
    /// (or failing) is closed. Cancel-safe: a finished read is kept in the
    /// same poll. Returns at once when both pipes are closed.
    pub(super) async fn pump(&mut self, capture: &impl Sink) {
        let Self {
            stdout,
            stderr,
            stdout_buf,
            stderr_buf,
        } = self;
        tokio::select! {
            read = read_some(stdout, stdout_buf), if stdout.is_some() => {
                keep(read, stdout, stdout_buf, capture);
            }
            read = read_some(stderr, stderr_buf), if stderr.is_some() => {
                keep(read, stderr, stderr_buf, capture);
            }
            else => {}
        }
    }

    /// Reads what is left until both pipes close or `grace` passes. Returns
    /// whether both closed.
    pub(super) async fn drain(&mut self, capture: &impl Sink, grace: Duration) -> bool {
        let _ = timeout(grace, async {
            while self.is_open() {
                self.pump(capture).await;
            }
        })
        .await;
        !self.is_open()
    }
}

async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

fn keep<R>(read: std::io::Result<usize>, pipe: &mut Option<R>, buf: &[u8], capture: &impl Sink) {
    match read {
        Ok(0) | Err(_) => *pipe = None,
        Ok(n) => capture.push(buf.get(..n).unwrap_or(buf)),
    }
}

/// Where the pipes' bytes go: a call's capture, or a background
/// process's log.
pub(super) trait Sink {
    fn push(&self, bytes: &[u8]);
}

impl Sink for SharedCapture {
    fn push(&self, bytes: &[u8]) {
        SharedCapture::push(self, bytes);
    }
}

/// The capture a running command writes, shared with the `LiveOutput`s
/// read from it. Every push bumps a count the readers wait on.
pub(super) struct SharedCapture {
    capture: Arc<Mutex<Capture>>,
    pushed: watch::Sender<u64>,
    /// Whose pieces are left out at a cut.
    secrets: HeldSecrets,
}

impl SharedCapture {
    pub(super) fn new(limit: usize, secrets: HeldSecrets) -> Self {
        Self {
            capture: Arc::new(Mutex::new(Capture::new(limit))),
            pushed: watch::Sender::new(0),
            secrets,
        }
    }

    fn push(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.capture
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(bytes);
        self.pushed.send_modify(|n| *n += bytes.len() as u64);
    }

    pub(super) async fn render(&self) -> String {
        let secrets = self.secrets.get().await;
        self.capture
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .render(&secrets)
    }

    /// A reader of what the command prints from now on.
    pub(super) fn reader(&self) -> LiveOutput {
        LiveOutput {
            capture: Arc::clone(&self.capture),
            pushed: self.pushed.subscribe(),
        }
    }
}

/// What a running command has printed so far, as its result would render
/// it: the same capture, bounded by the same limit. Unredacted: whoever
/// shows it redacts it first, as every result is.
#[derive(Debug)]
pub struct LiveOutput {
    capture: Arc<Mutex<Capture>>,
    pushed: watch::Receiver<u64>,
}

impl LiveOutput {
    /// Waits until the command printed more than this reader last saw;
    /// false once the command's run is over (nothing more will come).
    pub async fn changed(&mut self) -> bool {
        self.pushed.changed().await.is_ok()
    }

    /// Everything kept so far, rendered as the result is (`secrets`: the
    /// values whose pieces are left out at a cut).
    pub fn text(&self, secrets: &Secrets) -> String {
        self.capture
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .render(secrets)
    }
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("head", &self.head.len())
            .field("tail", &self.tail.len)
            .field("omitted", &self.omitted)
            .finish()
    }
}

/// The output kept: the first half of the limit, then a ring holding the
/// most recent bytes for the second half. Memory is bounded by the limit
/// whatever the command prints; everything in between is only counted.
pub(super) struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: Ring,
    omitted: u64,
}

impl Capture {
    pub(super) fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        Self {
            head: Vec::with_capacity(head_cap),
            head_cap,
            tail: Ring::new(limit - head_cap),
            omitted: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.head_cap - self.head.len();
        let (first, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(first);
        self.omitted += self.tail.push(rest) as u64;
    }

    /// The output as text (lossy for non-UTF-8), with a marker where bytes
    /// were left out; `(no output)` when there was none. A piece of one of
    /// `secrets` on either side of the cut is left out with it.
    pub(super) fn render(&self, secrets: &Secrets) -> String {
        let tail = self.tail.to_vec();
        if self.head.is_empty() && tail.is_empty() && self.omitted == 0 {
            return "(no output)".to_string();
        }
        if self.omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        // Cut at character boundaries so no replacement character is made
        // up at the seams; the bytes cut are counted as left out.
        let head_cut = incomplete_suffix(&self.head);
        let head = &self.head[..self.head.len() - head_cut];
        let tail_cut = continuation_prefix(&tail);
        let tail = &tail[tail_cut..];
        let mut text = String::from_utf8_lossy(head).into_owned();
        let mut rest = String::from_utf8_lossy(tail).into_owned();
        // A value the cut went through is found by no redaction: neither
        // of its pieces is kept.
        let head_piece = secrets.unfinished_len(&text);
        text.truncate(text.len() - head_piece);
        let tail_piece = secrets.unstarted_len(&rest);
        rest.drain(..tail_piece);
        let omitted = self.omitted + (head_cut + tail_cut + head_piece + tail_piece) as u64;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[... {omitted} bytes of output left out; the first and last bytes are kept ...]\n"
        ));
        text.push_str(&rest);
        text
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is cut off.
pub(super) fn incomplete_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 != 0x80 {
            let needed = match byte {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

/// How many bytes at the start of `bytes` continue a character cut off before it.
pub(super) fn continuation_prefix(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|b| **b & 0xC0 == 0x80)
        .count()
}

/// A fixed-size ring of the most recent bytes.
struct Ring {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Self {
            buf: vec![0; cap],
            start: 0,
            len: 0,
        }
    }

    /// Appends `bytes`, dropping the oldest beyond the capacity. Returns how
    /// many bytes were dropped.
    fn push(&mut self, bytes: &[u8]) -> usize {
        let cap = self.buf.len();
        if bytes.len() >= cap {
            let dropped = self.len + bytes.len() - cap;
            self.buf.copy_from_slice(&bytes[bytes.len() - cap..]);
            self.start = 0;
            self.len = cap;
            return dropped;
        }
        let end = (self.start + self.len) % cap;
        let first = bytes.len().min(cap - end);
        self.buf[end..end + first].copy_from_slice(&bytes[..first]);
        self.buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        let len = self.len + bytes.len();
        if len > cap {
            let dropped = len - cap;
            self.start = (self.start + dropped) % cap;
            self.len = cap;
            dropped
        } else {
            self.len = len;
            0
        }
    }

    fn to_vec(&self) -> Vec<u8> {
        let cap = self.buf.len();
        let first = self.len.min(cap - self.start);
        let mut out = Vec::with_capacity(self.len);
        out.extend_from_slice(&self.buf[self.start..self.start + first]);
        out.extend_from_slice(&self.buf[..self.len - first]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_most_recent_bytes() {
        let mut ring = Ring::new(4);
        assert_eq!(ring.push(b"ab"), 0);
        assert_eq!(ring.to_vec(), b"ab");
        assert_eq!(ring.push(b"cde"), 1);
        assert_eq!(ring.to_vec(), b"bcde");
        assert_eq!(ring.push(b"f"), 1);
        assert_eq!(ring.to_vec(), b"cdef");
        assert_eq!(ring.push(b"0123456"), 7);
        assert_eq!(ring.to_vec(), b"3456");
        assert_eq!(ring.push(b"xyz"), 3);
        assert_eq!(ring.to_vec(), b"6xyz");
    }

    #[test]
    fn ring_of_zero_drops_everything() {
        let mut ring = Ring::new(0);
        assert_eq!(ring.push(b"abc"), 3);
        assert_eq!(ring.push(b""), 0);
        assert!(ring.to_vec().is_empty());
    }

    #[test]
    fn capture_keeps_head_and_tail_and_counts_the_rest() {
        let mut capture = Capture::new(8);
        for chunk in [&b"0123"[..], b"456789", b"abcdef"] {
            capture.push(chunk);
        }
        assert_eq!(capture.omitted, 8);
        assert_eq!(
            capture.render(&Secrets::new()),
            "0123\n[... 8 bytes of output left out; the first and last bytes are kept ...]\ncdef"
        );
    }

    #[test]
    fn capture_under_the_limit_is_whole() {
        let mut capture = Capture::new(8);
        capture.push(b"abc");
        capture.push(b"defgh");
        assert_eq!(capture.render(&Secrets::new()), "abcdefgh");
        assert_eq!(Capture::new(8).render(&Secrets::new()), "(no output)");
    }

    #[test]
    fn capture_cuts_at_character_boundaries() {
        let mut capture = Capture::new(8);
        // "aé" + filler + "éb": the seams fall inside the two-byte "é"s.
        capture.push("aaaé".as_bytes());
        capture.push(b"----------");
        capture.push("éb__".as_bytes());
        let text = capture.render(&Secrets::new());
        assert!(!text.contains('\u{FFFD}'), "{text}");
        assert!(text.starts_with("aaa\n[... 14 bytes"), "{text}");
        assert!(text.ends_with("]\nb__"), "{text}");
    }

    #[test]
    fn a_secret_the_cut_goes_through_leaves_no_piece_on_either_side() {
        const SECRET: &str = "MARKER-SECRET-5b8e";
        let mut secrets = Secrets::new();
        secrets.add("TOKEN", SECRET);
        for at in 1..SECRET.len() {
            // The head ends inside the secret.
            let mut capture = Capture::new(64);
            capture.push(format!("{}{}", "a".repeat(32 - at), SECRET).as_bytes());
            capture.push(&[b'z'; 100]);
            let text = capture.render(&secrets);
            assert!(
                text.starts_with(&format!("{}\n[... ", "a".repeat(32 - at))),
                "{text}"
            );
            // The tail starts inside it.
            let mut capture = Capture::new(64);
            capture.push(&[b'a'; 100]);
            capture.push(format!("{}{}", SECRET, "z".repeat(32 - (SECRET.len() - at))).as_bytes());
            let text = capture.render(&secrets);
            assert!(
                text.ends_with(&format!("]\n{}", "z".repeat(32 - (SECRET.len() - at)))),
                "{at}: {text}"
            );
        }
        // Nothing is left out where nothing was cut.
        let mut capture = Capture::new(64);
        capture.push(format!("x{SECRET}").as_bytes());
        assert_eq!(capture.render(&secrets), format!("x{SECRET}"));
    }

    #[test]
    fn utf8_seams() {
        assert_eq!(incomplete_suffix("aé".as_bytes()), 0);
        assert_eq!(incomplete_suffix(&"aé".as_bytes()[..2]), 1);
        assert_eq!(incomplete_suffix(&"a€".as_bytes()[..3]), 2);
        assert_eq!(incomplete_suffix(b""), 0);
        assert_eq!(continuation_prefix(&"é".as_bytes()[1..]), 1);
        assert_eq!(continuation_prefix(b"abc"), 0);
    }
}
