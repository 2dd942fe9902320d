//! Where `fetch_content` may connect and what it may follow. A private
//! destination (loopback, link-local such as the cloud metadata address
//! 169.254.169.254, unique-local, a private network, any of them written
//! as an IPv4-mapped or NAT64 IPv6 address, or a name that resolves to one) is its own kind of call: a URL whose host says so is
//! known at `prepare`; a name is checked on the addresses actually
//! connected to, through reqwest's resolver hook, so a name that resolves
//! to a private address is refused unless the call was for one. Redirects
//! are followed only on the same origin (scheme, host, port); any other
//! ends the call, naming the new URL. Never decides.

use std::error::Error;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;
use std::time::Duration;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;

/// The most same-origin redirects followed.
pub const MAX_REDIRECTS: usize = 10;

/// Whether `ip` is a private destination (policy's one classification,
/// the same the sandbox's proxy refuses by).
pub fn is_private(ip: IpAddr) -> bool {
    crate::policy::destination::classify(ip).is_some()
}

/// Why `url` is a private destination by its host alone (an address
/// literal, or `localhost`), if it is.
pub fn private_host(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return is_private(ip).then(|| ip.to_string());
    }
    let name = bare.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost")).then_some(name)
}

/// A name resolved to a private address, and the call was not for one.
#[derive(Debug)]
pub struct PrivateAddress {
    pub host: String,
    pub address: IpAddr,
}

impl fmt::Display for PrivateAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolves to the private address {}",
            self.host, self.address
        )
    }
}

impl Error for PrivateAddress {}

/// The resolver every fetch uses: the system's, through tokio, with every
/// address checked before reqwest may connect to it.
struct CheckedResolver {
    allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private && let Some(private) = addrs.iter().find(|a| is_private(a.ip())) {
                return Err(Box::new(PrivateAddress {
                    host,
                    address: private.ip(),
                }) as Box<dyn Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The HTTP clients the fetches of a run share, so a connection to a
/// server is kept and reused: one that refuses private addresses and one
/// for the calls made for a private destination. Each is built on first
/// use; a request's own timeout is set on the request.
#[derive(Debug, Default)]
pub struct FetchClients {
    public: OnceLock<reqwest::Client>,
    private: OnceLock<reqwest::Client>,
}

impl FetchClients {
    /// The client for a call that may (`allow_private`) or may not reach a
    /// private address.
    pub fn get(&self, allow_private: bool) -> reqwest::Result<reqwest::Client> {
        let cell = if allow_private {
            &self.private
        } else {
            &self.public
        };
        if let Some(client) = cell.get() {
            return Ok(client.clone());
        }
        let built = client(allow_private)?;
        Ok(cell.get_or_init(|| built).clone())
    }
}

/// A client that follows same-origin redirects only (the origin is the
/// first URL of the chain) and checks every resolved address (private
/// ones pass only when `allow_private`).
fn client(allow_private: bool) -> reqwest::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("mino/", env!("CARGO_PKG_VERSION")))
        .no_proxy()
        .dns_resolver(CheckedResolver { allow_private })
        .redirect(Policy::custom(|attempt| {
            let origin = attempt.previous().first().map(Url::origin);
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if origin.is_some_and(|origin| attempt.url().origin() == origin) {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
}

/// The private address in `error`'s chain, if that is why it failed.
pub fn private_address<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a PrivateAddress> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<PrivateAddress>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_of_every_kind() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::127.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2001:db8::1",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    /// A name the URL does not show as private (`localhost` is caught
    /// earlier by name; here the resolver alone judges it) is refused by
    /// the public client's resolver and passed by the private one.
    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_loopback() {
        use std::str::FromStr;
        let name = || Name::from_str("localhost").unwrap();
        let refused = match (CheckedResolver {
            allow_private: false,
        })
        .resolve(name())
        .await
        {
            Ok(_) => panic!("localhost resolved for a public call"),
            Err(e) => e,
        };
        let private = private_address(refused.as_ref()).unwrap();
        assert!(is_private(private.address), "{private}");
        let allowed = CheckedResolver {
            allow_private: true,
        }
        .resolve(name())
        .await
        .unwrap();
        assert!(allowed.into_iter().all(|a| is_private(a.ip())));
    }

    #[test]
    fn private_hosts_are_known_from_the_url() {
        let host = |u: &str| private_host(&Url::parse(u).unwrap());
        assert_eq!(
            host("http://127.0.0.1:8080/.env").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(host("http://[::1]:9/").as_deref(), Some("::1"));
        assert_eq!(
            host("http://169.254.169.254/latest/meta-data/").as_deref(),
            Some("169.254.169.254")
        );
        assert_eq!(host("http://LocalHost./").as_deref(), Some("localhost"));
        assert_eq!(
            host("http://app.localhost/").as_deref(),
            Some("app.localhost")
        );
        assert_eq!(host("http://0x7f000001/").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("https://example.com/"), None);
        assert_eq!(host("http://8.8.8.8/"), None);
    }
}
