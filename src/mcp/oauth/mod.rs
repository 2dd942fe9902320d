//! OAuth for remote MCP servers (streamable HTTP), through `rmcp`'s `auth`
//! feature: discovery (the server's protected-resource metadata, then its
//! authorization server's), a client ID metadata document or dynamic
//! registration (`rmcp` picks what the server offers), PKCE through the
//! system browser with a loopback redirect (`browser.rs`), the code
//! exchanged for tokens kept per issuer in mino's home (`store.rs`), and
//! a token refreshed by `rmcp`'s `AuthClient` when it expires or the
//! server rejects it. Never shows a token, and never decides.

mod browser;
pub mod store;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, OAuthState,
};
use tokio::net::TcpListener;

pub use store::{ResourceStore, TokenDir, TokenValues};

/// Why an authorization did not complete.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0}")]
    Auth(#[from] AuthError),
    #[error("the loopback listener for the redirect could not be opened: {0}")]
    Listen(std::io::Error),
    #[error("no redirect came back within {} minutes", browser::WAIT.as_secs() / 60)]
    TimedOut,
}

/// The TLS of `rmcp`'s OAuth requests: mino's rustls with ring, as the
/// model client and the MCP transport use (a second call does nothing).
fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client that sends `store`'s token for `url`, refreshing it, when
/// a token is stored for it; `None` when none is.
pub async fn stored_client(
    url: &str,
    client: reqwest::Client,
    store: ResourceStore,
) -> Result<Option<AuthClient<reqwest::Client>>, AuthError> {
    if store.dir.load(url).is_none() {
        return Ok(None);
    }
    install_crypto();
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store);
    if !manager.initialize_from_store().await? {
        return Ok(None);
    }
    Ok(Some(AuthClient::new(client, manager)))
}

/// The browser flow for the server at `url`: `tell` hears the URL to open
/// (always said, whether a browser was started or not); the tokens end in
/// `store`.
pub async fn authorize(
    url: &str,
    store: ResourceStore,
    tell: impl Fn(String),
) -> Result<(), OAuthError> {
    install_crypto();
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(OAuthError::Listen)?;
    let port = listener.local_addr().map_err(OAuthError::Listen)?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}{}", browser::CALLBACK_PATH);
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store);
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(AuthorizationRequest::new(redirect_uri).with_client_name("mino"))
        .await?;
    let address = state.get_authorization_url().await?;
    let opened = browser::open(&address);
    tell(format!(
        "{} {address}",
        if opened {
            "A browser was opened to authorize it; if it did not show, open:"
        } else {
            "To authorize it, open in a browser:"
        }
    ));
    let back = tokio::time::timeout(browser::WAIT, browser::redirect(&listener))
        .await
        .map_err(|_| OAuthError::TimedOut)?
        .map_err(OAuthError::Listen)?;
    state.handle_callback_url(&back).await?;
    Ok(())
}
