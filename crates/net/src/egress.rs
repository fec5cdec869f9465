//! The network egress guard: which addresses a source may make the operator reach.
//!
//! A HelmRelease's chart URL is tenant input. Without a guard it turns the operator into a
//! proxy into its own network: the cloud metadata service (`169.254.169.254`), the
//! kube-apiserver and kubelets on private addresses, services on the node's loopback. So a
//! host name is resolved first and every address it resolves to is checked; the
//! connection is then made to a checked address (never resolved a second time, so a DNS
//! answer cannot change between check and connect). Every request is checked on its own,
//! so a redirect a plugin follows is checked like the first request.
//!
//! Refused unless the configuration allows them (`sources.egress.allowNetworks`, CIDR
//! notation): loopback, link-local (which holds the metadata service), private (RFC 1918,
//! IPv6 unique-local), carrier-grade NAT, unspecified, multicast and broadcast addresses,
//! also when written as IPv4-mapped IPv6. Local paths (`file://` git URLs, which would let
//! a release read any repository on the operator's disk, other tenants' mirrors included)
//! are refused unless `allowLocalPaths` is set.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;

/// An IP network in CIDR notation (`10.0.0.0/8`, `::1/128`; a bare address is one host),
/// parsed and matched by `ipnet`; this type keeps the configuration's error messages and
/// the rule that an IPv4-mapped IPv6 address is the IPv4 address it maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network(IpNet);

impl Network {
    /// Parse `text`; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Network, String> {
        let text = text.trim();
        let address = text.split_once('/').map_or(text, |(address, _)| address);
        let parsed: IpAddr = address
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR network"))?;
        if !text.contains('/') {
            return Ok(Network(IpNet::from(parsed)));
        }
        let max = if parsed.is_ipv4() { 32 } else { 128 };
        text.parse::<IpNet>()
            .map(Network)
            .map_err(|_| format!("`{text}`: the prefix length must be 0 to {max}"))
    }

    /// Whether `ip` is inside this network (IPv4-mapped IPv6 addresses count as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&canonical(ip))
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.0.addr(), self.0.prefix_len())
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// Why an address is not public, or `None` for a public one.
pub fn restricted_class(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_link_local() {
        Some("a link-local address (where cloud metadata services live)")
    } else if ip.is_private() {
        Some("a private address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else {
        None
    }
}

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address (where cloud metadata services live)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique-local) address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

/// A refusal of the guard, naming the destination and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// Every address the host resolves to is restricted.
    #[error(
        "egress to {host} refused: it resolves to {address}, {class}; allow it in the configuration's sources.egress.allowNetworks"
    )]
    Restricted {
        /// Host as written in the URL.
        host: String,
        /// The first refused address.
        address: IpAddr,
        /// Why it is restricted.
        class: &'static str,
    },
    /// The host name does not resolve.
    #[error("egress to {host} failed: cannot resolve the host name: {cause}")]
    Unresolved {
        /// Host as written in the URL.
        host: String,
        /// Resolver error.
        cause: String,
    },
    /// A local path where only network URLs are allowed.
    #[error(
        "{url} is a path on the operator's own disk; allow local paths in the configuration's sources.egress.allowLocalPaths"
    )]
    LocalPath {
        /// The URL or path.
        url: String,
    },
}

/// What sources may reach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EgressPolicy {
    allowed: Vec<Network>,
    allow_local_paths: bool,
    unrestricted: bool,
}

impl EgressPolicy {
    /// Public addresses only, no local paths (the default).
    pub fn public_only() -> EgressPolicy {
        EgressPolicy::default()
    }

    /// Public addresses and `networks`; local paths when `local_paths`.
    pub fn allowing(networks: Vec<Network>, local_paths: bool) -> EgressPolicy {
        EgressPolicy {
            allowed: networks,
            allow_local_paths: local_paths,
            unrestricted: false,
        }
    }

    /// No restriction: for commands a user runs on their own machine with their own
    /// network rights (`capstan plugin run`), never for the operator.
    pub fn unrestricted() -> EgressPolicy {
        EgressPolicy {
            allowed: Vec::new(),
            allow_local_paths: true,
            unrestricted: true,
        }
    }

    /// Whether `ip` may be reached; `Err` says why not.
    pub fn check_address(&self, ip: IpAddr) -> Result<(), &'static str> {
        if self.unrestricted || self.allowed.iter().any(|n| n.contains(ip)) {
            return Ok(());
        }
        restricted_class(ip).map_or(Ok(()), Err)
    }

    /// The addresses of `candidates` that may be reached, in order; `Err` when there are
    /// none, naming the first refused one.
    pub fn filter(
        &self,
        host: &str,
        candidates: impl IntoIterator<Item = SocketAddr>,
    ) -> Result<Vec<SocketAddr>, EgressError> {
        let mut refused = None;
        let mut permitted = Vec::new();
        for candidate in candidates {
            match self.check_address(candidate.ip()) {
                Ok(()) => permitted.push(candidate),
                Err(class) => {
                    refused.get_or_insert((candidate.ip(), class));
                }
            }
        }
        match (permitted.is_empty(), refused) {
            (false, _) => Ok(permitted),
            (true, Some((address, class))) => Err(EgressError::Restricted {
                host: host.to_owned(),
                address,
                class,
            }),
            (true, None) => Err(EgressError::Unresolved {
                host: host.to_owned(),
                cause: "no address".into(),
            }),
        }
    }

    /// Resolve `host:port` and keep the addresses that may be reached.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, EgressError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let found =
            tokio::net::lookup_host((bare, port))
                .await
                .map_err(|e| EgressError::Unresolved {
                    host: host.to_owned(),
                    cause: e.to_string(),
                })?;
        self.filter(host, found)
    }

    /// Check a git remote URL before the host fetches it (blocking resolution: called on
    /// the fetch's blocking thread). `file://` URLs and plain paths are local paths;
    /// `https://`, `http://`, `ssh://`, `git://` and scp-like `user@host:path` URLs are
    /// resolved and checked.
    pub fn check_git_url(&self, url: &str) -> Result<(), EgressError> {
        self.pin_git_url(url).map(|_| ())
    }

    /// Like [`EgressPolicy::check_git_url`], and the checked addresses the fetch must use
    /// ([`crate::git_route`] keeps libgit2 on them): `None` for a local path, and when the
    /// policy is unrestricted.
    pub fn pin_git_url(
        &self,
        url: &str,
    ) -> Result<Option<crate::git_route::PinnedRemote>, EgressError> {
        if self.unrestricted {
            return Ok(None);
        }
        let Some((host, port)) = git_host(url) else {
            return if self.allow_local_paths {
                Ok(None)
            } else {
                Err(EgressError::LocalPath {
                    url: url.to_owned(),
                })
            };
        };
        use std::net::ToSocketAddrs;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let found = (bare, port)
            .to_socket_addrs()
            .map_err(|e| EgressError::Unresolved {
                host: host.clone(),
                cause: e.to_string(),
            })?;
        let addresses = self.filter(&host, found)?;
        Ok(Some(crate::git_route::PinnedRemote {
            host,
            port,
            addresses,
        }))
    }
}

/// Host and port of a network git URL, or `None` for a local path.
pub fn git_host(url: &str) -> Option<(String, u16)> {
    let url = url.trim();
    if let Some((scheme, rest)) = url.split_once("://") {
        let default_port = match scheme.to_ascii_lowercase().as_str() {
            "https" => 443,
            "http" => 80,
            "ssh" | "git+ssh" | "ssh+git" => 22,
            "git" => 9418,
            _ => return None,
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        return Some(split_host_port(host_port, default_port));
    }
    // scp-like `[user@]host:path` (a colon before any slash), as git reads it.
    let colon = url.find(':')?;
    if url[..colon].contains('/') || colon == 0 {
        return None;
    }
    let host = url[..colon]
        .rsplit_once('@')
        .map_or(&url[..colon], |(_, h)| h);
    Some((host.to_ascii_lowercase(), 22))
}

fn split_host_port(authority: &str, default_port: u16) -> (String, u16) {
    if let Some(end) = authority.find(']') {
        let host = &authority[..=end];
        let port = authority[end + 1..]
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(default_port);
        return (host.to_ascii_lowercase(), port);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) && !port.is_empty() => (
            host.to_ascii_lowercase(),
            port.parse().unwrap_or(default_port),
        ),
        _ => (authority.to_ascii_lowercase(), default_port),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn restricted_addresses_are_named_and_public_ones_pass() {
        let strict = EgressPolicy::public_only();
        for (address, class) in [
            ("127.0.0.2", "loopback"),
            ("169.254.169.254", "link-local"),
            ("10.1.2.3", "private"),
            ("172.20.0.1", "private"),
            ("192.168.1.1", "private"),
            ("100.100.0.1", "carrier-grade NAT"),
            ("0.0.0.0", "unspecified"),
            ("255.255.255.255", "broadcast"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("fd00::1", "unique-local"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
        ] {
            let refused = strict.check_address(ip(address)).unwrap_err();
            assert!(refused.contains(class), "{address}: {refused}");
        }
        for public in ["8.8.8.8", "140.82.112.3", "2606:4700::1111", "172.32.0.1"] {
            assert_eq!(strict.check_address(ip(public)), Ok(()), "{public}");
        }
    }

    #[test]
    fn allowed_networks_open_exactly_their_range() {
        let policy = EgressPolicy::allowing(
            vec![
                Network::parse("127.0.0.1").unwrap(),
                Network::parse("10.0.0.0/8").unwrap(),
            ],
            false,
        );
        assert_eq!(policy.check_address(ip("127.0.0.1")), Ok(()));
        assert_eq!(policy.check_address(ip("::ffff:127.0.0.1")), Ok(()));
        assert!(policy.check_address(ip("127.0.0.2")).is_err());
        assert_eq!(policy.check_address(ip("10.255.0.1")), Ok(()));
        assert!(policy.check_address(ip("169.254.169.254")).is_err());
        assert!(
            Network::parse("10.0.0.0/33")
                .unwrap_err()
                .contains("0 to 32")
        );
        assert!(
            Network::parse("not-an-ip")
                .unwrap_err()
                .contains("not an IP")
        );
        assert!(Network::parse("::/0").unwrap().contains(ip("fe80::1")));
    }

    #[test]
    fn a_host_is_refused_only_when_no_address_may_be_reached() {
        let strict = EgressPolicy::public_only();
        let addr = |s: &str| -> SocketAddr { s.parse().unwrap() };
        let error = strict
            .filter("metadata.internal", [addr("169.254.169.254:80")])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "egress to metadata.internal refused: it resolves to 169.254.169.254, a link-local address (where cloud metadata services live); allow it in the configuration's sources.egress.allowNetworks"
        );
        let mixed = strict
            .filter("dual", [addr("127.0.0.1:443"), addr("93.184.216.34:443")])
            .unwrap();
        assert_eq!(mixed, vec![addr("93.184.216.34:443")]);
    }

    #[test]
    fn git_urls_are_split_into_host_and_port_or_seen_as_local_paths() {
        assert_eq!(
            git_host("https://user:pw@Git.Example:8443/org/r.git"),
            Some(("git.example".into(), 8443))
        );
        assert_eq!(
            git_host("http://127.0.0.2/r"),
            Some(("127.0.0.2".into(), 80))
        );
        assert_eq!(
            git_host("ssh://git@[::1]:2222/r"),
            Some(("[::1]".into(), 2222))
        );
        assert_eq!(
            git_host("git@github.com:org/r.git"),
            Some(("github.com".into(), 22))
        );
        assert_eq!(git_host("file:///srv/git/r"), None);
        assert_eq!(git_host("/srv/git/r"), None);
        assert_eq!(git_host("./relative/dir:x"), None);
    }

    #[test]
    fn git_remotes_are_checked_after_resolution() {
        let strict = EgressPolicy::public_only();
        let error = strict
            .check_git_url("http://127.0.0.2:9/r.git")
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("resolves to 127.0.0.2, a loopback"),
            "{error}"
        );
        let error = strict.check_git_url("https://localhost/r.git").unwrap_err();
        assert!(
            matches!(error, EgressError::Restricted { ref host, .. } if host == "localhost"),
            "{error}"
        );
        let error = strict
            .check_git_url("file:///var/cache/capstan/mirrors/x")
            .unwrap_err();
        assert!(error.to_string().contains("allowLocalPaths"), "{error}");
        let open = EgressPolicy::allowing(vec![Network::parse("127.0.0.0/8").unwrap()], true);
        assert_eq!(open.check_git_url("http://127.0.0.2:9/r.git"), Ok(()));
        assert_eq!(open.check_git_url("file:///srv/r"), Ok(()));
        assert_eq!(EgressPolicy::unrestricted().check_git_url("/srv/r"), Ok(()));
    }
}
