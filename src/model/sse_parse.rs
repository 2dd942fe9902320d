//! The event stream format (server-sent events) read in one pass: bytes in
//! any chunks become whole events, each byte looked at a bounded number of
//! times however the body is cut, so a long event sent in tiny chunks, or
//! thousands of events in one large chunk, costs time in proportion to its
//! size. Follows the WHATWG parsing rules: lines end in LF, CR or CRLF (also
//! across chunks), a leading byte order mark is dropped, `:` starts a
//! comment, `data` lines are joined by LF, `event` names the event, an
//! empty line dispatches (nothing when no data came), and what is pending
//! when the body ends is dropped. `id` and `retry` are read past: mino never
//! reconnects. Pure: no I/O.

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event` field; empty when none came (the format's `message`).
    pub event: String,
    /// The `data` lines, joined by LF.
    pub data: String,
}

/// A line that is not UTF-8: what the stream is refused with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the event stream is not valid UTF-8: {0}")]
pub struct NotUtf8(String);

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct Parser {
    /// The bytes of the line being read.
    line: Vec<u8>,
    /// The event being built.
    event: String,
    data: String,
    has_data: bool,
    /// The first bytes (and a byte order mark) are behind.
    started: bool,
    /// The last chunk ended in CR: an LF first in the next one belongs to it.
    after_cr: bool,
}

impl Parser {
    /// Reads `chunk`, appending every event it completes to `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Event>) -> Result<(), NotUtf8> {
        if !self.started && !chunk.is_empty() {
            // The byte order mark may arrive split; it is three bytes.
            let bom = b"\xEF\xBB\xBF";
            let have = self.line.len() + chunk.len();
            if have < bom.len() && bom.starts_with(&[self.line.as_slice(), chunk].concat()) {
                self.line.extend_from_slice(chunk);
                return Ok(());
            }
            let mut joined = std::mem::take(&mut self.line);
            joined.extend_from_slice(chunk);
            self.started = true;
            let rest = joined.strip_prefix(bom).unwrap_or(&joined).to_vec();
            return self.feed(&rest, out);
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(at) = memchr2(chunk) {
            self.line.extend_from_slice(&chunk[..at]);
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, out)?;
            let crlf = chunk[at] == b'\r';
            chunk = &chunk[at + 1..];
            if crlf {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    fn take_line(&mut self, line: &[u8], out: &mut Vec<Event>) -> Result<(), NotUtf8> {
        if line.is_empty() {
            if self.has_data {
                self.data.pop();
                out.push(Event {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|e| NotUtf8(e.to_string()))?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            _ => {}
        }
        Ok(())
    }
}

/// The first CR or LF in `bytes`.
fn memchr2(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n' || *b == b'\r')
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse_in(body: &[u8], chunk: usize) -> Vec<Event> {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for piece in body.chunks(chunk.max(1)) {
            parser.feed(piece, &mut out).unwrap();
        }
        out
    }

    fn event(name: &str, data: &str) -> Event {
        Event {
            event: name.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_are_the_same_however_the_body_is_cut() {
        let body = "\u{feff}: a comment\r\nevent: delta\r\ndata: {\"a\":1}\r\n\r\ndata:two\rdata: lines\r\rid: 7\nretry: 10\ndata\n\nevent: ignored\n\ndata: é and ü\n\ndata: never dispatched";
        let want = vec![
            event("delta", "{\"a\":1}"),
            event("", "two\nlines"),
            event("", ""),
            event("", "é and ü"),
        ];
        for chunk in 1..=body.len() {
            assert_eq!(parse_in(body.as_bytes(), chunk), want, "chunks of {chunk}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_only_at_the_start() {
        assert_eq!(
            parse_in("\u{feff}data: x\n\n".as_bytes(), 1),
            vec![event("", "x")]
        );
        assert_eq!(
            parse_in("data: \u{feff}x\n\n".as_bytes(), 2),
            vec![event("", "\u{feff}x")]
        );
        assert_eq!(parse_in(b"\xEF\xBB", 1), Vec::<Event>::new());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused() {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        assert!(parser.feed(b"data: \xff\n", &mut out).is_err());
    }

    /// Each byte is looked at a bounded number of times: a 4 MiB event in
    /// 16-byte chunks, and 100,000 events in one chunk, parse whole (the
    /// crate this replaces took minutes for the first). Counted, not timed:
    /// the line buffer never holds more than the event's bytes.
    #[test]
    fn long_events_in_tiny_chunks_and_many_in_one_chunk_are_read_once() {
        let mut body = b"data: ".to_vec();
        body.extend(std::iter::repeat_n(b'x', 4 << 20));
        body.extend(b"\n\n");
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for piece in body.chunks(16) {
            parser.feed(piece, &mut out).unwrap();
            assert!(parser.line.len() <= body.len());
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 4 << 20);
        let many: String = (0..100_000).map(|i| format!("data: {i}\n\n")).collect();
        let mut out = Vec::new();
        Parser::default().feed(many.as_bytes(), &mut out).unwrap();
        assert_eq!(out.len(), 100_000);
        assert_eq!(out[99_999].data, "99999");
    }
}
