//! Where a sandboxed command's traffic may go: the class of an address the
//! sandbox's proxy is about to connect to, and the decision for one
//! destination under the user's `[sandbox] allow_private` and
//! `allowed_domains`. Pure: no I/O, no resolving, no clock. The proxy
//! resolves a name itself and asks here about every address before it
//! connects to it, so what is checked is what is reached.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Why an address is not a public destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Loopback,
    Unspecified,
    LinkLocal,
    /// RFC 1918 and the IPv6 unique-local fc00::/7 (and the old site-local).
    Private,
    /// The shared address space of carrier-grade NAT, 100.64.0.0/10.
    SharedNat,
    Multicast,
    Broadcast,
    /// "This network" 0.0.0.0/8, the reserved 240.0.0.0/4, the IETF's
    /// 192.0.0.0/24, and the NAT64 local-use prefix.
    Reserved,
}

impl AddressClass {
    pub fn name(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Unspecified => "unspecified",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Private => "private",
            AddressClass::SharedNat => "shared-nat",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Reserved => "reserved",
        }
    }
}

/// The class of `ip` when it is not a public destination; `None` for a
/// public one. An IPv6 address that carries an IPv4 address (mapped,
/// compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by it.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(v4: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = v4.octets();
    if v4.is_unspecified() {
        Some(AddressClass::Unspecified)
    } else if v4.is_loopback() {
        Some(AddressClass::Loopback)
    } else if v4.is_private() {
        Some(AddressClass::Private)
    } else if v4.is_link_local() {
        Some(AddressClass::LinkLocal)
    } else if a == 100 && (64..128).contains(&b) {
        Some(AddressClass::SharedNat)
    } else if v4.is_broadcast() {
        Some(AddressClass::Broadcast)
    } else if v4.is_multicast() {
        Some(AddressClass::Multicast)
    } else if a == 0 || a >= 240 || (a == 192 && b == 0 && c == 0) {
        Some(AddressClass::Reserved)
    } else {
        None
    }
}

fn classify_v6(v6: Ipv6Addr) -> Option<AddressClass> {
    if v6.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if v6.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    if let Some(v4) = embedded_v4(v6) {
        return classify_v4(v4);
    }
    let s = v6.segments();
    if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        Some(AddressClass::Private)
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if s[0] & 0xff00 == 0xff00 {
        Some(AddressClass::Multicast)
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        // 64:ff9b:1::/48: local-use NAT64, whose mapping is the network's own.
        Some(AddressClass::Reserved)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 one leads to: mapped `::ffff:a.b.c.d`,
/// compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let [.., a, b, c, d] = v6.octets();
    let last = Ipv4Addr::new(a, b, c, d);
    if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        return Some(last);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(last);
    }
    if s[0] == 0x2002 {
        let [_, _, a, b, c, d, ..] = v6.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

/// Why the proxy refuses a destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The address connected to is not public and `allow_private` does
    /// not name the destination.
    PrivateAddress(AddressClass),
    /// `allowed_domains` is set and the host is outside it.
    NotAllowedDomain,
}

impl Refusal {
    /// The machine-readable reason the proxy answers with.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::PrivateAddress(_) => "private-address",
            Refusal::NotAllowedDomain => "not-allowed-domain",
        }
    }

    /// A sentence for a person (and the model).
    pub fn explain(&self) -> String {
        match self {
            Refusal::PrivateAddress(class) => format!(
                "the sandbox's proxy does not connect to {} addresses; [sandbox] allow_private \
                 in the user settings can name an exact host:port",
                class.name()
            ),
            Refusal::NotAllowedDomain => "the host is not in [sandbox] allowed_domains of the \
                                          user settings"
                .to_string(),
        }
    }
}

/// What a host outside `allowed_domains` gets when a command asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostVerdict {
    Allow,
    Ask,
    Deny,
}

/// The verdict on a host outside `allowed_domains`: what the person
/// answered for it before in this session ("allow for session", "never"),
/// else a question where someone can answer, else a refusal.
pub fn host_verdict(
    remembered: Option<super::ConsentAnswer>,
    can_ask: super::CanAsk,
) -> HostVerdict {
    use super::ConsentAnswer;
    match (remembered, can_ask) {
        (Some(ConsentAnswer::AllowForSession), _) => HostVerdict::Allow,
        (Some(ConsentAnswer::NeverThisRun), _) => HostVerdict::Deny,
        (_, super::CanAsk::Yes) => HostVerdict::Ask,
        (_, super::CanAsk::No) => HostVerdict::Deny,
    }
}

/// The user's rules for the network of sandboxed commands.
#[derive(Debug, Clone, Default)]
pub struct NetworkRules {
    /// Exact `host:port` entries (lower case; an IPv6 host in brackets).
    allow_private: Vec<String>,
    /// When set, only hosts matching one of these patterns are reached.
    allowed_domains: Option<GlobSet>,
}

/// A pattern of `allowed_domains` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadPattern(pub String);

impl NetworkRules {
    /// The rules from validated settings: `allow_private` entries are
    /// `host:port`; `allowed_domains` patterns (`*` any run of characters)
    /// are matched without regard to case; an empty list allows nothing.
    pub fn new(
        allow_private: &[String],
        allowed_domains: Option<&[String]>,
    ) -> Result<Self, BadPattern> {
        let allowed_domains = match allowed_domains {
            None => None,
            Some(patterns) => {
                let mut set = GlobSetBuilder::new();
                for pattern in patterns {
                    let glob = GlobBuilder::new(pattern.trim_end_matches('.'))
                        .case_insensitive(true)
                        .literal_separator(false)
                        .build()
                        .map_err(|e| BadPattern(e.to_string()))?;
                    set.add(glob);
                }
                Some(set.build().map_err(|e| BadPattern(e.to_string()))?)
            }
        };
        Ok(Self {
            allow_private: allow_private
                .iter()
                .map(|e| e.to_ascii_lowercase())
                .collect(),
            allowed_domains,
        })
    }

    /// Rules that reach nothing.
    pub fn nothing() -> Self {
        Self {
            allow_private: Vec::new(),
            allowed_domains: Some(GlobSet::empty()),
        }
    }

    /// Whether an allow-list is in force.
    pub fn has_allow_list(&self) -> bool {
        self.allowed_domains.is_some()
    }

    /// Before resolving: whether `host` (a name or an address literal, as
    /// the client gave it) may be reached at all.
    pub fn check_host(&self, host: &str) -> Result<(), Refusal> {
        match &self.allowed_domains {
            Some(set) if !set.is_match(normal_host(host)) => Err(Refusal::NotAllowedDomain),
            _ => Ok(()),
        }
    }

    /// Before connecting to `ip` (one of `host`'s addresses) at `port`.
    pub fn check_address(&self, host: &str, ip: IpAddr, port: u16) -> Result<(), Refusal> {
        let Some(class) = classify(ip) else {
            return Ok(());
        };
        let named = format!("{}:{port}", host_for_port(&normal_host(host)));
        let literal = format!("{}:{port}", host_for_port(&ip.to_string()));
        if self
            .allow_private
            .iter()
            .any(|entry| *entry == named || *entry == literal)
        {
            Ok(())
        } else {
            Err(Refusal::PrivateAddress(class))
        }
    }
}

/// A host as compared: lower case, no trailing dot, no brackets.
fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// A host as written before `:port`: an IPv6 address in brackets.
fn host_for_port(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// Whether `entry` is a well-formed `allow_private` entry: `host:port`
/// with a name or IPv4 address, or `[v6]:port`, and a port 1-65535.
pub fn valid_host_port(entry: &str) -> bool {
    let Some((host, port)) = entry.rsplit_once(':') else {
        return false;
    };
    if !port.parse::<u16>().is_ok_and(|p| p > 0) || port.starts_with('0') {
        return false;
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().is_ok();
    }
    valid_domain(host)
}

/// Whether `pattern` is a well-formed `allowed_domains` entry: labels of
/// letters, digits, `-` and `_`, where a label may be or contain `*`.
pub fn valid_domain_pattern(pattern: &str) -> bool {
    let labels: Vec<&str> = pattern.trim_end_matches('.').split('.').collect();
    !pattern.is_empty()
        && labels.iter().all(|label| {
            !label.is_empty()
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '*')
        })
}

fn valid_domain(host: &str) -> bool {
    !host.is_empty() && !host.contains('*') && valid_domain_pattern(host)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn class(ip: &str) -> Option<AddressClass> {
        classify(ip.parse().unwrap())
    }

    #[test]
    fn a_host_outside_the_list_asks_once_and_is_then_remembered() {
        use crate::policy::{CanAsk, ConsentAnswer};
        assert_eq!(host_verdict(None, CanAsk::Yes), HostVerdict::Ask);
        assert_eq!(host_verdict(None, CanAsk::No), HostVerdict::Deny);
        let session = Some(ConsentAnswer::AllowForSession);
        assert_eq!(host_verdict(session, CanAsk::No), HostVerdict::Allow);
        let never = Some(ConsentAnswer::NeverThisRun);
        assert_eq!(host_verdict(never, CanAsk::Yes), HostVerdict::Deny);
        // "Once" and a refusal are not remembered: the next connection asks.
        for once in [ConsentAnswer::AllowOnce, ConsentAnswer::Reject] {
            assert_eq!(host_verdict(Some(once), CanAsk::Yes), HostVerdict::Ask);
        }
    }

    #[test]
    fn every_kind_of_non_public_address_is_classified() {
        use AddressClass::*;
        for (ip, expected) in [
            ("127.0.0.1", Loopback),
            ("127.8.9.10", Loopback),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Reserved),
            ("10.1.2.3", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("169.254.169.254", LinkLocal),
            ("100.64.0.1", SharedNat),
            ("100.127.255.255", SharedNat),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("255.255.255.255", Broadcast),
            ("240.0.0.1", Reserved),
            ("192.0.0.8", Reserved),
            ("::1", Loopback),
            ("::", Unspecified),
            ("fd00::1", Private),
            ("fc00::1", Private),
            ("fec0::1", Private),
            ("fe80::1", LinkLocal),
            ("ff02::1", Multicast),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.0.0.1", Private),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::127.0.0.1", Loopback),
            ("::192.168.0.1", Private),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::127.0.0.1", Loopback),
            ("64:ff9b::10.0.0.1", Private),
            ("64:ff9b:1::1", Reserved),
            ("2002:7f00:1::", Loopback),
            ("2002:c0a8:101::1", Private),
        ] {
            assert_eq!(class(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn public_addresses_are_not_classified() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "100.63.255.255",
            "192.0.1.1",
            "223.255.255.255",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
        ] {
            assert_eq!(class(ip), None, "{ip}");
        }
    }

    #[test]
    fn a_private_destination_passes_only_by_its_exact_host_and_port() {
        let rules = NetworkRules::new(
            &[
                "127.0.0.1:8080".into(),
                "Index.Local:3141".into(),
                "[::1]:9".into(),
            ],
            None,
        )
        .unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(rules.check_address("127.0.0.1", lo, 8080), Ok(()));
        // A name resolving to the named address and port.
        assert_eq!(rules.check_address("localhost", lo, 8080), Ok(()));
        assert_eq!(
            rules.check_address("127.0.0.1", lo, 8081),
            Err(Refusal::PrivateAddress(AddressClass::Loopback))
        );
        let private: IpAddr = "10.0.0.5".parse().unwrap();
        assert_eq!(rules.check_address("INDEX.local.", private, 3141), Ok(()));
        assert!(rules.check_address("other.local", private, 3141).is_err());
        let v6: IpAddr = "::1".parse().unwrap();
        assert_eq!(rules.check_address("[::1]", v6, 9), Ok(()));
        assert_eq!(rules.check_address("::1", v6, 9), Ok(()));
        // The mapped form is the same host to the kernel, not to the list.
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(
            rules
                .check_address("::ffff:127.0.0.1", mapped, 8080)
                .is_err()
        );
        // A public address needs no entry.
        let public: IpAddr = "8.8.8.8".parse().unwrap();
        assert_eq!(rules.check_address("dns.google", public, 443), Ok(()));
    }

    #[test]
    fn the_allow_list_matches_hosts_by_pattern_without_regard_to_case() {
        let rules = NetworkRules::new(
            &[],
            Some(&["*.crates.io".to_string(), "github.com".to_string()]),
        )
        .unwrap();
        assert!(rules.has_allow_list());
        assert_eq!(rules.check_host("static.crates.io"), Ok(()));
        assert_eq!(rules.check_host("a.b.CRATES.io."), Ok(()));
        assert_eq!(rules.check_host("GitHub.com"), Ok(()));
        for refused in [
            "crates.io",
            "evilcrates.io",
            "crates.io.evil.com",
            "api.github.com",
            "1.2.3.4",
        ] {
            assert_eq!(
                rules.check_host(refused),
                Err(Refusal::NotAllowedDomain),
                "{refused}"
            );
        }
        let none = NetworkRules::new(&[], Some(&[])).unwrap();
        assert!(none.check_host("example.com").is_err());
        let open = NetworkRules::new(&[], None).unwrap();
        assert_eq!(open.check_host("example.com"), Ok(()));
    }

    #[test]
    fn entries_are_checked_for_their_form() {
        for good in ["127.0.0.1:8080", "index.local:1", "[::1]:65535", "db:5432"] {
            assert!(valid_host_port(good), "{good}");
        }
        for bad in [
            "127.0.0.1",
            "host:0",
            "host:65536",
            "host:08",
            ":80",
            "::1:80",
            "[zz]:80",
            "*.local:80",
            "http://host:80",
            "host :80",
        ] {
            assert!(!valid_host_port(bad), "{bad}");
        }
        for good in ["*.crates.io", "crates.io", "*", "pypi.org."] {
            assert!(valid_domain_pattern(good), "{good}");
        }
        for bad in ["", "a..b", "https://x", "a/b", "[a]"] {
            assert!(!valid_domain_pattern(bad), "{bad}");
        }
    }
}
