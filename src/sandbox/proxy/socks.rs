//! The proxy's SOCKS5 side (RFC 1928): no authentication, the CONNECT
//! command, destinations given as a domain, an IPv4 or an IPv6 address.
//! A refused destination gets reply 0x02, "connection not allowed by
//! ruleset"; other commands 0x07, other address types 0x08.

use std::net::{Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, copy_bidirectional};
use tokio::net::UnixStream;

use super::{Failure, connect};

pub(super) const VERSION: u8 = 5;
const NO_AUTHENTICATION: u8 = 0;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CONNECT: u8 = 1;

const SUCCEEDED: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const HOST_UNREACHABLE: u8 = 4;
const CONNECTION_REFUSED: u8 = 5;
const COMMAND_NOT_SUPPORTED: u8 = 7;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 8;

pub(super) async fn serve(
    mut client: BufReader<UnixStream>,
    rules: &super::Gate,
) -> std::io::Result<()> {
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&NO_AUTHENTICATION) {
        client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return client.shutdown().await;
    }
    client.write_all(&[VERSION, NO_AUTHENTICATION]).await?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    let [version, command, _, kind] = request;
    if version != VERSION || command != CONNECT {
        return reply(&mut client, COMMAND_NOT_SUPPORTED).await;
    }
    let host = match kind {
        1 => {
            let mut octets = [0u8; 4];
            client.read_exact(&mut octets).await?;
            Ipv4Addr::from(octets).to_string()
        }
        3 => {
            let len = client.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            client.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(name) if !name.is_empty() => name.to_ascii_lowercase(),
                _ => return reply(&mut client, HOST_UNREACHABLE).await,
            }
        }
        4 => {
            let mut octets = [0u8; 16];
            client.read_exact(&mut octets).await?;
            format!("[{}]", Ipv6Addr::from(octets))
        }
        _ => return reply(&mut client, ADDRESS_TYPE_NOT_SUPPORTED).await,
    };
    let port = client.read_u16().await?;
    match connect(rules, client.get_ref(), &host, port).await {
        Ok(mut upstream) => {
            reply_only(&mut client, SUCCEEDED).await?;
            copy_bidirectional(&mut client, &mut upstream)
                .await
                .map(|_| ())
        }
        Err(failure) => {
            let code = match failure {
                Failure::Refused { .. } => NOT_ALLOWED,
                Failure::Unresolved(_) => HOST_UNREACHABLE,
                Failure::Unreachable(_) => CONNECTION_REFUSED,
            };
            reply(&mut client, code).await
        }
    }
}

/// A reply with an unspecified bound address.
async fn reply_only(client: &mut BufReader<UnixStream>, code: u8) -> std::io::Result<()> {
    client
        .write_all(&[VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0])
        .await
}

/// A reply that ends the connection.
async fn reply(client: &mut BufReader<UnixStream>, code: u8) -> std::io::Result<()> {
    reply_only(client, code).await?;
    client.shutdown().await
}
