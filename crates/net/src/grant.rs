//! What one call may reach over HTTP ([`HttpGrant`]): origins, configured hosts,
//! credentials, CA, caps, timeouts, and URLs served from a shared cache.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::HeaderValue;

use crate::auth::BasicAuth;
use crate::egress::EgressPolicy;
use crate::origin::{HostPattern, Origin};
use crate::tls::CustomCa;

/// Default cap on a cached response (a repository index).
pub const DEFAULT_INDEX_CAP: u64 = 32 << 20;
/// Default cap on any other response (a chart archive).
pub const DEFAULT_RESPONSE_CAP: u64 = 100 << 20;
/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// One cached response.
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) body: Bytes,
    pub(crate) etag: Option<HeaderValue>,
    pub(crate) last_modified: Option<HeaderValue>,
}

/// The response of one cached URL, and whether it is fresh.
#[derive(Debug, Default)]
pub(crate) struct CacheSlot {
    pub(crate) entry: Option<Cached>,
    pub(crate) fresh: bool,
}

/// The last good response for one URL, shared by every call about the same source (e.g.
/// one per repository URL and credentials). The host says when it is stale.
#[derive(Debug, Default)]
pub struct ResponseCache {
    pub(crate) slot: tokio::sync::Mutex<CacheSlot>,
    pub(crate) requests: std::sync::atomic::AtomicU64,
    /// Set by [`ResponseCache::mark_stale`] without waiting for the slot (a request to a
    /// stalled server may hold it until its timeout); the next request takes it.
    pub(crate) stale: std::sync::atomic::AtomicBool,
}

impl ResponseCache {
    /// An empty cache.
    pub fn new() -> Arc<ResponseCache> {
        Arc::new(ResponseCache::default())
    }

    /// Make the next request revalidate (conditionally) with the server.
    pub async fn mark_stale(&self) {
        self.stale.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Requests actually sent to the server for this URL (including revalidations).
    pub fn requests(&self) -> u64 {
        self.requests.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A URL whose GET responses are served from a [`ResponseCache`].
#[derive(Debug, Clone)]
pub struct CachedUrl {
    /// The URL (as the plugin requests it).
    pub url: String,
    /// Where its response is kept.
    pub cache: Arc<ResponseCache>,
    /// Size cap of that response.
    pub max_bytes: u64,
}

/// What one plugin call may reach over HTTP.
#[derive(Debug, Clone)]
pub struct HttpGrant {
    /// Origins derived from the source's own spec fields.
    pub(crate) sources: Vec<Origin>,
    /// The subset of `sources` the host sends the source's credentials to.
    pub(crate) credentialed: Vec<Origin>,
    /// Hosts granted in the configuration (never sent credentials).
    pub(crate) extra_hosts: Vec<HostPattern>,
    /// Basic auth for the credentialed origins.
    pub(crate) credentials: Option<BasicAuth>,
    /// A CA bundle to trust for HTTPS to the source origins.
    pub(crate) ca: Option<CustomCa>,
    /// Cap on response bodies (other than cached URLs).
    pub(crate) max_response_bytes: u64,
    /// Per-request timeout.
    pub(crate) timeout: Duration,
    /// URLs served from a shared cache.
    pub(crate) cached: Vec<CachedUrl>,
    /// Which addresses requests may reach.
    pub(crate) egress: Arc<EgressPolicy>,
}

impl HttpGrant {
    /// A grant for the origin of `source_url` (an http(s) URL), which also receives the
    /// credentials; none if the URL is not http(s).
    pub fn new(source_url: &str) -> Option<HttpGrant> {
        let origin = Origin::of(source_url)?;
        Some(HttpGrant::empty().with_origin(origin, true))
    }

    /// A grant that reaches nothing yet.
    pub fn empty() -> HttpGrant {
        HttpGrant {
            sources: Vec::new(),
            credentialed: Vec::new(),
            extra_hosts: Vec::new(),
            credentials: None,
            ca: None,
            max_response_bytes: DEFAULT_RESPONSE_CAP,
            timeout: DEFAULT_TIMEOUT,
            cached: Vec::new(),
            egress: Arc::new(EgressPolicy::public_only()),
        }
    }

    /// Which addresses requests may reach (default: public addresses only).
    pub fn with_egress(mut self, egress: Arc<EgressPolicy>) -> Self {
        self.egress = egress;
        self
    }

    /// Also allow `origin`; with `credentialed`, the host adds the credentials to requests
    /// sent there.
    pub fn with_origin(mut self, origin: Origin, credentialed: bool) -> Self {
        if credentialed && !self.credentialed.contains(&origin) {
            self.credentialed.push(origin.clone());
        }
        if !self.sources.contains(&origin) {
            self.sources.push(origin);
        }
        self
    }

    /// Also allow these configured hosts (never sent credentials).
    pub fn with_hosts(mut self, hosts: impl IntoIterator<Item = HostPattern>) -> Self {
        self.extra_hosts.extend(hosts);
        self
    }

    /// Basic auth to add to requests to the credentialed origins.
    pub fn with_credentials(mut self, credentials: Option<BasicAuth>) -> Self {
        self.credentials = credentials;
        self
    }

    /// A CA bundle to trust for HTTPS to the source origins.
    pub fn with_ca(mut self, ca: Option<CustomCa>) -> Self {
        self.ca = ca;
        self
    }

    /// Cap on response bodies (other than cached URLs).
    pub fn with_max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serve GETs of one URL from a shared cache.
    pub fn with_cached(mut self, cached: CachedUrl) -> Self {
        self.cached.push(cached);
        self
    }

    /// The source origins, for messages.
    pub fn origins(&self) -> String {
        let shown: Vec<String> = self.sources.iter().map(Origin::to_string).collect();
        shown.join(", ")
    }

    /// Whether requests may reach `origin`.
    pub(crate) fn allows(&self, origin: &Origin) -> bool {
        self.sources.contains(origin) || self.extra_hosts.iter().any(|p| p.matches(origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_allows_the_source_origin_and_granted_hosts_only() {
        let grant = HttpGrant::new("http://127.0.0.1:8080/charts")
            .unwrap()
            .with_hosts([HostPattern::parse("cdn.example.com").unwrap()]);
        assert!(grant.allows(&Origin::of("http://127.0.0.1:8080/other").unwrap()));
        assert!(!grant.allows(&Origin::of("http://127.0.0.1:8081/charts").unwrap()));
        assert!(!grant.allows(&Origin::of("https://127.0.0.1:8080/charts").unwrap()));
        assert!(grant.allows(&Origin::of("https://cdn.example.com/x.tgz").unwrap()));
    }

    #[test]
    fn credentials_are_never_printed() {
        let auth = BasicAuth {
            username: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{auth:?}").contains("hunter2"));
        let grant = HttpGrant::new("http://h/")
            .unwrap()
            .with_credentials(Some(auth));
        assert!(!format!("{grant:?}").contains("hunter2"));
    }
}
