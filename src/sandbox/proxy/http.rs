//! The proxy's HTTP side: `CONNECT host:port` (a tunnel, for https and
//! anything else) and a plain request with an absolute `http://` URI
//! (forwarded in origin form, `Connection: close`). A refusal is a 403
//! whose JSON body and `X-Mino-Proxy-Refusal` header give the reason.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, copy_bidirectional};
use tokio::net::UnixStream;

use super::{Failure, connect};

/// The longest request head read (request line and headers).
const MAX_HEAD: u64 = 64 * 1024;

/// The header a refusal carries its reason in.
pub const REFUSAL_HEADER: &str = "X-Mino-Proxy-Refusal";

/// Headers meant for the proxy, not forwarded.
const HOP_BY_HOP: [&str; 5] = [
    "proxy-connection",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "te",
];

pub(super) async fn serve(
    mut client: BufReader<UnixStream>,
    rules: &super::Gate,
) -> std::io::Result<()> {
    let Some(head) = read_head(&mut client).await? else {
        return answer(
            &mut client,
            400,
            "Bad Request",
            "bad-request",
            "",
            "the request head is malformed or longer than 64 KiB",
        )
        .await;
    };
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut words = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next())
    else {
        return answer(
            &mut client,
            400,
            "Bad Request",
            "bad-request",
            "",
            "the request line is malformed",
        )
        .await;
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = host_port(target, None) else {
            return answer(
                &mut client,
                400,
                "Bad Request",
                "bad-request",
                target,
                "CONNECT needs host:port",
            )
            .await;
        };
        let destination = format!("{host}:{port}");
        return match connect(rules, client.get_ref(), &host, port).await {
            Ok(mut upstream) => {
                client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await?;
                copy_bidirectional(&mut client, &mut upstream)
                    .await
                    .map(|_| ())
            }
            Err(failure) => refuse(&mut client, &failure, &destination).await,
        };
    }
    let Some(rest) = strip_prefix_ignore_case(target, "http://") else {
        return answer(
            &mut client,
            400,
            "Bad Request",
            "bad-request",
            target,
            "the sandbox's proxy forwards http:// absolute URIs; use CONNECT for anything else",
        )
        .await;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let Some((host, port)) = host_port(authority, Some(80)) else {
        return answer(
            &mut client,
            400,
            "Bad Request",
            "bad-request",
            authority,
            "the URI has no host",
        )
        .await;
    };
    let destination = format!("{host}:{port}");
    let mut upstream = match connect(rules, client.get_ref(), &host, port).await {
        Ok(upstream) => upstream,
        Err(failure) => return refuse(&mut client, &failure, &destination).await,
    };
    let path = if path.is_empty() || path.starts_with(['?', '#']) {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let path = path.split('#').next().unwrap_or("/");
    let mut forwarded = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if !HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            forwarded.push_str(line);
            forwarded.push_str("\r\n");
        }
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    upstream.write_all(forwarded.as_bytes()).await?;
    copy_bidirectional(&mut client, &mut upstream)
        .await
        .map(|_| ())
}

/// The request head up to its empty line, without the line ends; `None`
/// when it is not text or too long.
async fn read_head(client: &mut BufReader<UnixStream>) -> std::io::Result<Option<String>> {
    let mut raw = Vec::new();
    let mut limited = AsyncReadExt::take(&mut *client, MAX_HEAD);
    loop {
        let before = raw.len();
        let got = limited.read_until(b'\n', &mut raw).await?;
        if got == 0 {
            return Ok(None);
        }
        let line = &raw[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        if !line.ends_with(b"\n") {
            return Ok(None);
        }
    }
    Ok(String::from_utf8(raw)
        .ok()
        .map(|text| text.replace("\r\n", "\n")))
}

/// `host:port` or `[v6]:port` (the port may be left out where a default
/// is given); the host in lower case, an IPv6 one in brackets.
fn host_port(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default?,
            None => return None,
        };
        (format!("[{inner}]"), port)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host.to_string(), port.parse().ok()?),
            None => (text.to_string(), default?),
        }
    };
    if host.is_empty() || host.contains([' ', '/', '\\']) {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

async fn refuse(
    client: &mut BufReader<UnixStream>,
    failure: &Failure,
    destination: &str,
) -> std::io::Result<()> {
    let (status, text) = match failure {
        Failure::Refused { .. } => (403, "Forbidden"),
        Failure::Unresolved(_) | Failure::Unreachable(_) => (502, "Bad Gateway"),
    };
    let body = failure.body(destination).to_string();
    respond(client, status, text, failure.reason(), &body).await
}

async fn answer(
    client: &mut BufReader<UnixStream>,
    status: u16,
    text: &str,
    reason: &str,
    destination: &str,
    message: &str,
) -> std::io::Result<()> {
    let body = serde_json::json!({
        "error": "mino-proxy",
        "reason": reason,
        "destination": destination,
        "message": message,
    })
    .to_string();
    respond(client, status, text, reason, &body).await
}

async fn respond(
    client: &mut BufReader<UnixStream>,
    status: u16,
    text: &str,
    reason: &str,
    body: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: application/json\r\n{REFUSAL_HEADER}: \
         {reason}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}\n",
        body.len() + 1
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_are_read_like_a_client_writes_them() {
        assert_eq!(
            host_port("Example.COM:443", None),
            Some(("example.com".into(), 443))
        );
        assert_eq!(
            host_port("example.com", Some(80)),
            Some(("example.com".into(), 80))
        );
        assert_eq!(host_port("example.com", None), None);
        assert_eq!(host_port("[::1]:8080", None), Some(("[::1]".into(), 8080)));
        assert_eq!(host_port("[::1]", Some(80)), Some(("[::1]".into(), 80)));
        assert_eq!(host_port("[::1]x", Some(80)), None);
        assert_eq!(host_port(":80", None), None);
        assert_eq!(host_port("a b:80", None), None);
        assert_eq!(host_port("host:99999", None), None);
    }
}
