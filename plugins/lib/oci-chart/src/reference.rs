//! `oci://` chart URLs: `oci://REGISTRY[:PORT]/REPOSITORY/.../CHART`, as Helm writes them
//! (`helm push chart.tgz oci://registry/charts` stores chart `hello` at
//! `oci://registry/charts/hello`).

use std::fmt;

/// A chart repository in a registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// `host` or `host:port`, as in the URL.
    pub registry: String,
    /// Repository path inside the registry, e.g. `charts/hello`.
    pub repository: String,
}

impl Reference {
    /// The chart name: the last segment of the repository path.
    pub fn chart(&self) -> &str {
        self.repository
            .rsplit('/')
            .next()
            .unwrap_or(&self.repository)
    }

    /// `http(s)://registry` for API calls.
    pub fn base(&self, insecure: bool) -> String {
        let scheme = if insecure { "http" } else { "https" };
        format!("{scheme}://{}", self.registry)
    }

    /// The registry's host without the port (brackets of IPv6 literals kept).
    pub fn host(&self) -> &str {
        if self.registry.starts_with('[') {
            match self.registry.find(']') {
                Some(end) => &self.registry[..=end],
                None => &self.registry,
            }
        } else {
            self.registry.split(':').next().unwrap_or(&self.registry)
        }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)
    }
}

/// One path component as the OCI distribution spec allows it:
/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn valid_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        // A separator run: `.`, `_`, `__` or one or more `-`.
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn valid_registry(authority: &str) -> bool {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, tail)) => {
                if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
                    return false;
                }
                match tail {
                    "" => return true,
                    tail => match tail.strip_prefix(':') {
                        Some(port) => ("ip", Some(port)),
                        None => return false,
                    },
                }
            }
            None => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u16>().is_ok_and(|n| n > 0)
    });
    host_ok && port_ok
}

/// Parses `oci://REGISTRY/REPOSITORY` (a trailing `/` is ignored). Tags, digests, user
/// information, queries and fragments are refused with a message saying where they go.
pub fn parse(url: &str) -> Result<Reference, String> {
    let url = url.trim();
    let rest = url.strip_prefix("oci://").ok_or_else(|| {
        format!("`{url}` is not an oci:// URL (expected oci://REGISTRY/REPOSITORY/CHART)")
    })?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (registry, repository) = rest.split_once('/').ok_or_else(|| {
        format!("`{url}` names no repository (expected oci://REGISTRY/REPOSITORY/CHART)")
    })?;
    if registry.contains('@') {
        return Err(format!(
            "`{url}` holds user information; put credentials in the release's credentials Secret (`username`, `password` or `token`)"
        ));
    }
    if url.contains(['?', '#']) {
        return Err(format!("`{url}` must not have a query or fragment"));
    }
    if repository.contains('@') {
        return Err(format!(
            "`{url}` holds a digest; put it in the `digest` field and keep the URL to oci://REGISTRY/REPOSITORY/CHART"
        ));
    }
    if let Some(last) = repository.rsplit('/').next()
        && last.contains(':')
    {
        return Err(format!(
            "`{url}` holds a tag; put the chart version in the `version` field and keep the URL to oci://REGISTRY/REPOSITORY/CHART"
        ));
    }
    if !valid_registry(registry) {
        return Err(format!(
            "`{url}`: `{registry}` is not a valid registry host[:port]"
        ));
    }
    if let Some(bad) = repository.split('/').find(|c| !valid_component(c)) {
        return Err(format!(
            "`{url}`: repository path component `{bad}` is not valid (lowercase letters, digits and single `.`, `_`, `__` or `-` runs between them)"
        ));
    }
    Ok(Reference {
        registry: registry.to_owned(),
        repository: repository.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chart_urls() {
        let r = parse("oci://registry.example.com/charts/podinfo").unwrap();
        assert_eq!(r.registry, "registry.example.com");
        assert_eq!(r.repository, "charts/podinfo");
        assert_eq!(r.chart(), "podinfo");
        assert_eq!(r.host(), "registry.example.com");
        assert_eq!(r.base(false), "https://registry.example.com");
        assert_eq!(r.to_string(), "oci://registry.example.com/charts/podinfo");

        let r = parse(" oci://127.0.0.1:5000/hello/ ").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "hello");
        assert_eq!(r.chart(), "hello");
        assert_eq!(r.host(), "127.0.0.1");
        assert_eq!(r.base(true), "http://127.0.0.1:5000");

        let r = parse("oci://[::1]:5000/a/b-c/d__e.f").unwrap();
        assert_eq!(r.registry, "[::1]:5000");
        assert_eq!(r.host(), "[::1]");
        assert_eq!(r.chart(), "d__e.f");
        assert!(parse("oci://localhost/a/b").is_ok());
    }

    #[test]
    fn refuses_what_is_not_a_chart_url() {
        let cases = [
            ("https://registry.example.com/charts/x", "not an oci://"),
            ("oci://registry.example.com", "names no repository"),
            ("oci://registry.example.com/", "names no repository"),
            ("oci://registry.example.com/charts/x:1.0.0", "version"),
            ("oci://registry.example.com/charts/x@sha256:00", "digest"),
            (
                "oci://user:pass@registry.example.com/charts/x",
                "credentials",
            ),
            ("oci://registry.example.com/charts/X", "component `X`"),
            ("oci://registry.example.com/charts//x", "component ``"),
            ("oci://registry.example.com/charts/x?y=1", "query"),
            ("oci://reg istry/x", "registry host"),
            ("oci://registry:99999/x", "registry host"),
            ("oci://registry:/x", "registry host"),
            ("oci://registry.example.com/a..b", "component"),
            ("oci://registry.example.com/a___b", "component"),
            ("oci://registry.example.com/-a", "component"),
        ];
        for (url, needle) in cases {
            let err = parse(url).expect_err(url);
            assert!(err.contains(needle), "{url}: {err}");
        }
        assert!(parse("oci://registry.example.com/a--b").is_ok());
        assert!(parse("oci://registry.example.com/a:5000/b").is_err());
    }
}
