//! A stdio server's stdout, read with a cap on one message: MCP over stdio
//! is one JSON message a line, and a line longer than the cap ends the
//! connection with an error instead of being dropped quietly (which would
//! leave the call it answered waiting for its timeout) or held in memory
//! without bound. Records that it did, so the server can be reported as
//! stopped for that reason. Never parses the messages.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest message a stdio server may send: room for a large result
/// (the model still gets only the capped output), not for an endless one.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// `inner`, failing once a line runs past `limit` bytes.
pub struct LineLimit<R> {
    inner: R,
    limit: usize,
    /// Bytes since the last newline.
    current: usize,
    exceeded: Arc<AtomicBool>,
}

impl<R> LineLimit<R> {
    /// The reader, and the flag it sets when a line was too long.
    pub fn new(inner: R, limit: usize) -> (Self, Arc<AtomicBool>) {
        let exceeded = Arc::new(AtomicBool::new(false));
        (
            Self {
                inner,
                limit,
                current: 0,
                exceeded: exceeded.clone(),
            },
            exceeded,
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimit<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.exceeded.load(Ordering::Relaxed) {
            return Poll::Ready(Err(too_long(self.limit)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        // Up to the end of the last whole line read, if a line overflows.
        let mut whole = before;
        for (at, byte) in buf.filled()[before..].iter().enumerate() {
            if *byte == b'\n' {
                this.current = 0;
                whole = before + at + 1;
            } else {
                this.current += 1;
                if this.current > this.limit {
                    this.exceeded.store(true, Ordering::Relaxed);
                    buf.set_filled(whole);
                    // The lines before it still arrive; the next read fails.
                    return Poll::Ready(if whole > before {
                        Ok(())
                    } else {
                        Err(too_long(this.limit))
                    });
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

fn too_long(limit: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("a message longer than {} MiB", limit / (1024 * 1024)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_within_the_limit_pass_and_a_longer_one_fails() {
        let input = b"short\nexactly10\nthis line is far too long\n".to_vec();
        let (mut reader, exceeded) = LineLimit::new(&input[..], 10);
        let mut out = Vec::new();
        let err = reader.read_to_end(&mut out).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(exceeded.load(Ordering::Relaxed));
        assert_eq!(out, b"short\nexactly10\n");
        // It stays failed.
        assert!(reader.read_u8().await.is_err());
        let (mut fine, exceeded) = LineLimit::new(&b"0123456789\n0123456789\n"[..], 10);
        let mut out = Vec::new();
        fine.read_to_end(&mut out).await.unwrap();
        assert_eq!(out.len(), 22);
        assert!(!exceeded.load(Ordering::Relaxed));
    }
}
