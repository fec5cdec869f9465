//! Where a request goes: the origin of a URL ([`Origin`]), host patterns a configuration
//! grants ([`HostPattern`]), and URLs as messages may show them ([`redacted_url`]).

use std::fmt;

use http::Uri;

/// Scheme, host and port of a URL (default ports filled in).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// Host name or address, lower case.
    pub host: String,
    /// Port.
    pub port: u16,
}

impl Origin {
    /// The origin of `url`, if it is an absolute http(s) URL.
    pub fn of(url: &str) -> Option<Origin> {
        let uri: Uri = url.trim().parse().ok()?;
        Origin::of_uri(&uri)
    }

    pub(crate) fn of_uri(uri: &Uri) -> Option<Origin> {
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = uri.authority()?;
        Some(Origin {
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16().unwrap_or(default_port),
            scheme,
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// A host granted in the configuration: `name` (any port) or `name:port`. The name may be
/// a glob (`*` any run of characters, `?` one), as Helm 4 plugins' `allowedHosts` are:
/// `*.example.com`, or `*` for any host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: String,
    port: Option<u16>,
}

impl HostPattern {
    /// Parse `host` or `host:port`; `host` may hold `*` and `?` wildcards.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let text = text.trim().to_ascii_lowercase();
        if text.contains('@') {
            return Err(format!("`{text}` must not contain user information"));
        }
        if text.contains(['*', '?']) {
            let (host, port) = match text.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => {
                    let port = port
                        .parse::<u16>()
                        .map_err(|e| format!("`{text}`: port `{port}`: {e}"))?;
                    (host, Some(port))
                }
                _ => (text.as_str(), None),
            };
            let valid = !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*' | '?'));
            if !valid {
                return Err(format!("`{text}` is not a host name pattern"));
            }
            return Ok(HostPattern {
                host: host.to_owned(),
                port,
            });
        }
        let authority: http::uri::Authority = text
            .parse()
            .map_err(|e| format!("`{text}` is not a host or host:port: {e}"))?;
        Ok(HostPattern {
            host: authority.host().to_owned(),
            port: authority.port_u16(),
        })
    }

    pub(crate) fn matches(&self, origin: &Origin) -> bool {
        glob_matches(&self.host, &origin.host) && self.port.is_none_or(|p| p == origin.port)
    }
}

/// Whether `text` matches `pattern` (`*`: any run of characters, `?`: one character).
fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Greedy match with one backtrack point: the last `*` seen and where it resumed.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((star_p, star_t)) = star {
            pi = star_p + 1;
            ti = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// `url` without user information or query (which may hold secrets), for messages.
pub fn redacted_url(url: &str) -> String {
    match url.parse::<::http::Uri>() {
        Ok(uri) => format!(
            "{}://{}{}",
            uri.scheme_str().unwrap_or(""),
            uri.authority()
                .map_or("", |a| a.as_str().rsplit('@').next().unwrap_or("")),
            uri.path()
        ),
        Err(_) => "(an invalid URL)".into(),
    }
}

/// Whether `uri` is `url` (same origin, path and query).
pub(crate) fn same_url(uri: &Uri, url: &str) -> bool {
    let Ok(other) = url.parse::<Uri>() else {
        return false;
    };
    Origin::of_uri(uri) == Origin::of_uri(&other)
        && uri.path_and_query().map(|p| p.as_str()) == other.path_and_query().map(|p| p.as_str())
}

/// Strip scheme and authority for logs: path only (queries may hold tokens).
pub(crate) fn path_of(uri: &Uri) -> &str {
    uri.path()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_fill_default_ports_and_patterns_match_hosts() {
        let origin = Origin::of("https://Charts.Example.com/stable").unwrap();
        assert_eq!(origin.to_string(), "https://charts.example.com:443");
        assert!(Origin::of("oci://registry/x").is_none());
        let any_port = HostPattern::parse("charts.example.com").unwrap();
        let one_port = HostPattern::parse("charts.example.com:8443").unwrap();
        assert!(any_port.matches(&origin));
        assert!(!one_port.matches(&origin));
        assert!(HostPattern::parse("user:pw@host").is_err());
    }

    #[test]
    fn glob_patterns_match_host_names_like_helm_allowed_hosts() {
        let origin = |url: &str| Origin::of(url).unwrap();
        let wildcard = HostPattern::parse("*.Example.com").unwrap();
        assert!(wildcard.matches(&origin("https://charts.example.com/x")));
        assert!(wildcard.matches(&origin("http://a.b.example.com:8080/x")));
        assert!(!wildcard.matches(&origin("https://example.com/x")));
        assert!(!wildcard.matches(&origin("https://example.com.evil.io/x")));
        assert!(
            HostPattern::parse("*")
                .unwrap()
                .matches(&origin("http://10.0.0.1/"))
        );
        let one = HostPattern::parse("host-?.internal:8443").unwrap();
        assert!(one.matches(&origin("https://host-a.internal:8443/")));
        assert!(!one.matches(&origin("https://host-ab.internal:8443/")));
        assert!(!one.matches(&origin("https://host-a.internal/")));
        assert!(HostPattern::parse("*/x").is_err());
        assert_eq!(wildcard.to_string(), "*.example.com");
    }
}
