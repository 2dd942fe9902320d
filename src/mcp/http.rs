//! The streamable-HTTP transport of a server given by `url`: one reqwest
//! client on mino's rustls (the same crypto provider as the model client,
//! no second TLS stack), the server's `headers` on every request, marked
//! sensitive, and no redirects, so a header never follows a server to
//! another address. Never decides, never shows a header's value.

use std::collections::HashMap;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::server::StartError;

/// The HTTP client and the transport's settings for `url`, sending
/// `headers` (name, resolved value).
pub fn parts(
    url: &str,
    headers: &[(String, String)],
) -> Result<(reqwest::Client, StreamableHttpClientTransportConfig), StartError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| StartError::Header { name: name.clone() })?;
        // The error never quotes the value: it is a credential.
        let mut value =
            HeaderValue::from_str(value).map_err(|_| StartError::Header { name: name.clone() })?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .user_agent(concat!("mino/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| StartError::Client(e.to_string()))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok((client, config))
}

/// The transport over `client` (plain, or sending a stored OAuth token).
pub fn transport<C>(
    client: C,
    config: StreamableHttpClientTransportConfig,
) -> StreamableHttpClientTransport<C>
where
    C: rmcp::transport::streamable_http_client::StreamableHttpClient + Send + Sync + 'static,
{
    StreamableHttpClientTransport::with_client(client, config)
}
