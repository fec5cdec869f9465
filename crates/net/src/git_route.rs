//! Where a git fetch connects: for SSH and git:// remotes, the address the egress guard
//! checked, and no other.
//!
//! libgit2 resolves a remote's host name again when it connects, after the guard resolved
//! and checked it, so a name whose answer changes in between (DNS rebinding) could reach an
//! address the guard never saw. An `ssh://`, scp-like or `git://` remote is therefore
//! fetched from the checked address written into the URL ([`with_pinned_host`]); its host
//! key is still matched against the name the user wrote. HTTP(S) remotes go through the
//! host's own HTTP client instead ([`crate::git_http`]), which checks and pins every
//! request.

use std::net::SocketAddr;

/// A remote that resolved to addresses the egress guard allows: the fetch may reach only
/// these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedRemote {
    /// Host as written in the URL (lowercase; IPv6 in brackets).
    pub host: String,
    /// Port, explicit or the scheme's default.
    pub port: u16,
    /// The checked addresses, in the resolver's order.
    pub addresses: Vec<SocketAddr>,
}

/// Whether `url` is fetched over HTTP or HTTPS (through [`crate::git_http`]).
pub fn is_http(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// `url` (an `ssh://`, `git://` or scp-like remote) with its host replaced by `address`'s
/// IP, keeping user, port and path; `None` when the host cannot be found in it.
pub fn with_pinned_host(url: &str, remote: &PinnedRemote, address: SocketAddr) -> Option<String> {
    let ip = match address {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    };
    let (prefix, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    // The authority (scheme form) or everything before the first `:` (scp-like form); the
    // user part ends at its last `@`.
    let end = if prefix.is_empty() {
        if rest.starts_with('[')
            || rest
                .rsplit_once('@')
                .is_some_and(|(_, h)| h.starts_with('['))
        {
            rest.find("]:").map(|i| i + 1)?
        } else {
            rest.find(':')?
        }
    } else {
        rest.find(['/', '?', '#']).unwrap_or(rest.len())
    };
    let authority = &rest[..end];
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((user, host_port)) => (format!("{user}@"), host_port),
        None => (String::new(), authority),
    };
    let host_len = if host_port.starts_with('[') {
        host_port.find(']')? + 1
    } else {
        host_port.rfind(':').unwrap_or(host_port.len())
    };
    if !host_port[..host_len].eq_ignore_ascii_case(&remote.host) {
        return None;
    }
    Some(format!(
        "{prefix}{user}{ip}{}{}",
        &host_port[host_len..],
        &rest[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(host: &str, port: u16, addresses: &[SocketAddr]) -> PinnedRemote {
        PinnedRemote {
            host: host.into(),
            port,
            addresses: addresses.to_vec(),
        }
    }

    #[test]
    fn ssh_and_git_urls_are_rewritten_to_the_checked_address() {
        let pinned = remote("git.example.com", 22, &[]);
        let v4: SocketAddr = "203.0.113.7:22".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::7]:22".parse().unwrap();
        assert_eq!(
            with_pinned_host("ssh://git@Git.Example.com:2222/org/r.git", &pinned, v4).as_deref(),
            Some("ssh://git@203.0.113.7:2222/org/r.git")
        );
        assert_eq!(
            with_pinned_host("git@git.example.com:org/r.git", &pinned, v4).as_deref(),
            Some("git@203.0.113.7:org/r.git")
        );
        assert_eq!(
            with_pinned_host("git@git.example.com:org/r.git", &pinned, v6).as_deref(),
            Some("git@[2001:db8::7]:org/r.git")
        );
        assert_eq!(
            with_pinned_host("git://git.example.com/r.git", &pinned, v6).as_deref(),
            Some("git://[2001:db8::7]/r.git")
        );
        let bracketed = remote("[::1]", 22, &[]);
        assert_eq!(
            with_pinned_host("ssh://git@[::1]:2222/r", &bracketed, v4).as_deref(),
            Some("ssh://git@203.0.113.7:2222/r")
        );
        assert_eq!(
            with_pinned_host("ssh://git@other.example.com/r", &pinned, v4),
            None
        );
    }
}
