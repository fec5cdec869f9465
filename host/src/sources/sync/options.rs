//! How a source sync pass is configured: its intervals and its HTTP client.

use std::sync::Arc;
use std::time::Duration;

use crate::capabilities::egress::EgressPolicy;
use crate::capabilities::http::{
    DEFAULT_INDEX_CAP, DEFAULT_RESPONSE_CAP, DEFAULT_TIMEOUT, HostPattern,
};

/// Timing of source sync.
/// Timing of source sync.
#[derive(Debug, Clone, Copy)]
pub struct SourceSyncOptions {
    /// How often each mirror is fetched and each shared document revalidated.
    pub interval: Duration,
    /// How long an unreferenced mirror or document is kept before it is removed.
    pub grace: Duration,
    /// Most mirror fetches and plugin calls in flight at once.
    pub parallelism: usize,
}

/// Limits and grants of HTTP for source plugins.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Hosts a call may reach besides the origins of its spec (e.g. a CDN an index points
    /// chart URLs at). Credentials are never sent to them.
    pub extra_hosts: Vec<HostPattern>,
    /// Largest shared document (e.g. `index.yaml`) accepted.
    pub max_document_bytes: u64,
    /// Largest other response (e.g. a chart archive) accepted.
    pub max_response_bytes: u64,
    /// Per-request timeout (connect, first byte, between bytes).
    pub timeout: Duration,
    /// Which addresses source URLs may reach (HTTP requests and git remotes).
    pub egress: Arc<EgressPolicy>,
}

impl HttpOptions {
    /// From the configuration file's `sources.http` and `sources.egress` (validated on
    /// load; a host that does not parse is skipped with a warning).
    pub fn from_config(sources: &crate::config::SourcesConfig) -> Self {
        let config = &sources.http;
        let egress = sources.egress.policy().unwrap_or_else(|error| {
            tracing::warn!(%error, "ignoring the egress exceptions");
            EgressPolicy::public_only()
        });
        let extra_hosts = config
            .allow_hosts
            .iter()
            .filter_map(|host| match HostPattern::parse(host) {
                Ok(pattern) => Some(pattern),
                Err(error) => {
                    tracing::warn!(%error, "ignoring an allowed host");
                    None
                }
            })
            .collect();
        HttpOptions {
            extra_hosts,
            max_document_bytes: config.max_index_mib << 20,
            max_response_bytes: config.max_chart_mib << 20,
            timeout: Duration::from_millis(config.timeout_ms),
            egress: Arc::new(egress),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            extra_hosts: Vec::new(),
            max_document_bytes: DEFAULT_INDEX_CAP,
            max_response_bytes: DEFAULT_RESPONSE_CAP,
            timeout: DEFAULT_TIMEOUT,
            egress: Arc::new(EgressPolicy::public_only()),
        }
    }
}
