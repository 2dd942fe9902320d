//! The browser's part of an authorization: opening the authorization URL
//! (`$BROWSER`, else `xdg-open` when it is there; the URL is always said
//! too, for a terminal on another machine), and the loopback listener on
//! 127.0.0.1 at a port the system picks that catches the redirect back.
//! Never decides and never shows anything itself.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long mino waits for the redirect.
pub const WAIT: Duration = Duration::from_secs(300);

/// The longest request line read from the browser.
const REQUEST_LIMIT: usize = 8192;

/// The redirect path of the listener.
pub const CALLBACK_PATH: &str = "/callback";

/// Opens `url` in the system's browser, if one is set up; whether a
/// program was started. Its output is not read and it is not waited for.
pub fn open(url: &str) -> bool {
    let program = std::env::var("BROWSER")
        .ok()
        .and_then(|b| b.split(':').next().map(str::to_string))
        .filter(|b| !b.trim().is_empty())
        .or_else(|| {
            which::which("xdg-open")
                .ok()
                .map(|p| p.display().to_string())
        });
    let Some(program) = program else {
        return false;
    };
    let mut words = program.split_whitespace();
    let Some(command) = words.next() else {
        return false;
    };
    let started = tokio::process::Command::new(command)
        .args(words)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            true
        }
        Err(_) => false,
    }
}

/// Waits for the browser's request to `CALLBACK_PATH` and answers it; the
/// whole redirect URL. Other requests (an icon) get a 404 and the wait goes on.
pub async fn redirect(listener: &TcpListener) -> std::io::Result<String> {
    let port = listener.local_addr()?.port();
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut buf = vec![0u8; REQUEST_LIMIT];
        let mut read = 0;
        while read < buf.len() && !buf[..read].windows(2).any(|w| w == b"\r\n") {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf[read..])).await
            {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                Ok(Ok(n)) => read += n,
            }
        }
        let head = String::from_utf8_lossy(&buf[..read]);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default()
            .to_string();
        let ours = target == CALLBACK_PATH || target.starts_with(&format!("{CALLBACK_PATH}?"));
        let (status, body) = if ours {
            (
                "200 OK",
                "mino received the authorization. You can close this page.",
            )
        } else {
            ("404 Not Found", "Not found.")
        };
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        if ours {
            return Ok(format!("http://127.0.0.1:{port}{target}"));
        }
    }
}
