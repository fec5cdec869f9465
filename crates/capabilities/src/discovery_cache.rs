//! What a cluster's API discovery answered, kept per cluster: the resource of each kind
//! (for `kube`) and the served versions (for `discovery`).

use std::collections::HashMap;
use std::time::Instant;

use kube::discovery::ApiResource;
use tokio::sync::RwLock;

/// One discovery answer of the `discovery` interface.
#[derive(Clone)]
pub(crate) struct Served {
    /// When it was read.
    pub(crate) read_at: Instant,
    /// The API server's version.
    pub(crate) version: String,
    /// Every served `group/version` and `group/version/Kind`, sorted.
    pub(crate) api_versions: Vec<String>,
}

/// Remembers API discovery results, shared by every grant made from one [`DiscoveryCache`].
#[derive(Default)]
pub struct DiscoveryCache {
    kinds: RwLock<HashMap<(String, String), (ApiResource, bool)>>,
    /// The server version and API versions, with when they were read (`discovery`).
    pub(crate) served: RwLock<Option<Served>>,
}

impl DiscoveryCache {
    /// The resource of `(apiVersion, kind)` and whether it is namespaced, if known.
    pub(crate) async fn kind(&self, key: &(String, String)) -> Option<(ApiResource, bool)> {
        self.kinds.read().await.get(key).cloned()
    }

    /// Remember the resource of `(apiVersion, kind)`.
    pub(crate) async fn remember_kind(&self, key: (String, String), found: (ApiResource, bool)) {
        self.kinds.write().await.insert(key, found);
    }
}
