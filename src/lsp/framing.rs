//! The language server protocol's base framing: `Content-Length` headers
//! and a JSON body, read from a server's stdout and written to its stdin.
//! Owns the size limit of one message; never interprets what a message
//! says.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The largest message mino reads from a server (a workspace's symbols or
/// a big file's diagnostics fit well below it).
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// The largest header line mino accepts.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("the server's output ended")]
    Closed,
    #[error("reading the server's output failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the server sent a malformed header: {0}")]
    Header(String),
    #[error("the server sent a message of {0} bytes; at most {MAX_MESSAGE_BYTES} are read")]
    TooLong(usize),
    #[error("the server sent a message that is not JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// `value` framed for a server's stdin.
pub fn encode(value: &Value) -> Vec<u8> {
    let body = value.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads one message; `Closed` at a clean end between messages.
pub async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Value, FrameError> {
    let mut length: Option<usize> = None;
    let mut seen_any = false;
    loop {
        let mut line = Vec::new();
        let read = (&mut *reader)
            .take(MAX_HEADER_BYTES as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if read == 0 {
            return Err(if seen_any {
                FrameError::Header("the output ended inside a header".into())
            } else {
                FrameError::Closed
            });
        }
        seen_any = true;
        if !line.ends_with(b"\n") {
            return Err(FrameError::Header("a header line is too long".into()));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::Header(format!("{text:?} has no colon")));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let parsed = value
                .trim()
                .parse::<usize>()
                .map_err(|_| FrameError::Header(format!("{text:?} is not a length")))?;
            length = Some(parsed);
        }
    }
    let Some(length) = length else {
        return Err(FrameError::Header("no Content-Length".into()));
    };
    if length > MAX_MESSAGE_BYTES {
        return Err(FrameError::TooLong(length));
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).await?;
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_message_round_trips_and_the_end_is_clean() {
        let mut bytes = encode(&json!({"id": 1, "result": "é"}));
        bytes.extend(encode(&json!({"method": "x"})));
        let mut reader = tokio::io::BufReader::new(bytes.as_slice());
        assert_eq!(
            read_message(&mut reader).await.unwrap(),
            json!({"id": 1, "result": "é"})
        );
        assert_eq!(
            read_message(&mut reader).await.unwrap(),
            json!({"method": "x"})
        );
        assert!(matches!(
            read_message(&mut reader).await,
            Err(FrameError::Closed)
        ));
    }

    #[tokio::test]
    async fn other_headers_are_skipped_and_bad_ones_refused() {
        let text = b"Content-Type: application/vscode-jsonrpc\r\ncontent-length: 2\r\n\r\n{}";
        let mut reader = tokio::io::BufReader::new(&text[..]);
        assert_eq!(read_message(&mut reader).await.unwrap(), json!({}));
        let huge = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE_BYTES + 1);
        let mut reader = tokio::io::BufReader::new(huge.as_bytes());
        assert!(matches!(
            read_message(&mut reader).await,
            Err(FrameError::TooLong(_))
        ));
        let mut reader = tokio::io::BufReader::new(&b"Nothing\r\n\r\n"[..]);
        assert!(matches!(
            read_message(&mut reader).await,
            Err(FrameError::Header(_))
        ));
    }
}
