//! What every reconcile shares: the client, plugins, stores, metrics and options of the
//! operator, and the bookkeeping across releases (drift schedule, release claims).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::events::Recorder;

use kube::Client;

use crate::api::HelmRelease;
use crate::capabilities::Grants;
use crate::capabilities::kube::{DiscoveryCache, KubeGrant};
use crate::capabilities::release_context::ReleaseContextGrant;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::types::ReleaseId;
use crate::sources::artifacts::ArtifactStore;

use super::metrics::ReleaseMetrics;
use super::sourcing::Artifacts;

/// Timing and parallelism of the operator.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Period of the full reconcile of a release that is in line (drift check by digest).
    pub resync: Duration,
    /// Period of the source loop.
    pub source_tick: Duration,
    /// Releases reconciled at once.
    pub concurrency: u16,
    /// Whether a HelmRelease may point at objects in other namespaces ([`refs`]).
    pub allow_cross_namespace_refs: bool,
    /// How long after deletion a failing uninstall is retried before the finalizer is
    /// removed anyway; `None`: forever.
    pub uninstall_deadline: Option<Duration>,
    /// Only HelmReleases matching this label selector are handled (one shard of several).
    pub watch_label_selector: Option<String>,
}

/// What every reconcile shares.
pub struct Context {
    /// Kubernetes client of the operator.
    pub client: Client,
    /// The backends in force (replaced when the configuration is reloaded).
    pub backends: Arc<super::backends::Backends>,
    /// Artifacts published by the source loop.
    pub artifacts: Arc<Artifacts>,
    /// The content-addressed chart archives.
    pub artifact_store: Arc<ArtifactStore>,
    /// Kubernetes Events for HelmReleases.
    pub recorder: Recorder,
    /// Release-loop metrics.
    pub metrics: Arc<ReleaseMetrics>,
    /// API discovery shared by every grant.
    pub discovery: Arc<DiscoveryCache>,
    /// Cluster-scoped kinds backends may touch.
    pub cluster_kinds: Vec<String>,
    /// Timing.
    pub options: ControllerOptions,
    /// Which HelmRelease manages which Helm release.
    pub claims: ReleaseClaims,
    /// The identities releases act as.
    pub identities: super::identity::Identities,
    /// `spec.dependsOn` checks, over the release loop's store.
    pub dependencies: Arc<super::dependencies::Dependencies>,
    /// Connections to the clusters named by `spec.kubeConfig`.
    pub remotes: super::remote::RemoteClusters,
    /// What `valuesFrom[].externalSourceRef` URLs may reach (the sources' egress rules).
    pub values_egress: Arc<crate::capabilities::egress::EgressPolicy>,
    /// When each release was last checked for drift.
    pub drift_schedule: DriftSchedule,
}

/// When each release was last compared with the cluster (drift detection), so that a
/// release is compared at most once per resync interval whatever triggers its reconciles.
#[derive(Default)]
pub struct DriftSchedule {
    checked: std::sync::Mutex<BTreeMap<(String, String), std::time::Instant>>,
}

impl DriftSchedule {
    /// Whether the HelmRelease `namespace/name` is due a drift check (and if so, note it as
    /// checked now): never checked, or last checked at least `interval` ago (less a tenth,
    /// so a resync that comes a little early still checks).
    pub fn due(&self, namespace: &str, name: &str, interval: Duration) -> bool {
        let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
        let key = (namespace.to_owned(), name.to_owned());
        let now = std::time::Instant::now();
        let due = checked
            .get(&key)
            .is_none_or(|last| now.duration_since(*last) >= interval - interval / 10);
        if due {
            checked.insert(key, now);
        }
        due
    }
}

/// Which HelmRelease manages each Helm release (`namespace/name`): the first one to
/// reconcile it. A second HelmRelease naming the same release is refused, so two
/// operations on one release never run at once (each HelmRelease is reconciled by one
/// worker at a time) and two specs never fight over one release.
#[derive(Default)]
pub struct ReleaseClaims {
    owners: std::sync::Mutex<BTreeMap<(String, String, String), crate::sources::ReleaseKey>>,
}

impl ReleaseClaims {
    /// Claim `release` of `cluster` (`""` for the operator's own, else the remote
    /// cluster's id) for `owner`; the current owner when another HelmRelease has it.
    pub fn claim(
        &self,
        cluster: &str,
        release: &ReleaseId,
        owner: &crate::sources::ReleaseKey,
    ) -> Result<(), crate::sources::ReleaseKey> {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        let key = (
            cluster.to_owned(),
            release.namespace.clone(),
            release.name.clone(),
        );
        match owners.get(&key) {
            Some(current) if current != owner => Err(current.clone()),
            _ => {
                // A HelmRelease that now names another release gives up its old claim.
                owners.retain(|_, o| o != owner);
                owners.insert(key, owner.clone());
                Ok(())
            }
        }
    }

    /// Forget what `owner` claimed (it was deleted).
    pub fn release(&self, owner: &crate::sources::ReleaseKey) {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        owners.retain(|_, o| o != owner);
    }
}

impl Context {
    /// The backend serving `hr`: `spec.backend`, else the one configured for
    /// `spec.helmVersion`, else the default backend.
    pub fn backend_for(&self, hr: &HelmRelease) -> Result<(String, Arc<BackendPlugin>), String> {
        use crate::api::HelmVersion;
        let set = self.backends.current();
        let (field, name) = if let Some(name) = hr.spec.backend.as_ref().filter(|b| !b.is_empty()) {
            ("spec.backend", Some(name.clone()))
        } else {
            match hr.spec.helm_version {
                Some(HelmVersion::V2) => (
                    "spec.helmVersion v2 (backends.v2)",
                    set.selection.v2.clone(),
                ),
                Some(HelmVersion::V3) => (
                    "spec.helmVersion v3 (backends.v3)",
                    set.selection.v3.clone(),
                ),
                None => ("backends.default", set.selection.default.clone()),
            }
        };
        let Some(name) = name else {
            return Err(format!(
                "{field}: the operator configuration selects no backend"
            ));
        };
        match set.plugins.get(&name) {
            Some(backend) => Ok((name, Arc::clone(backend))),
            None => Err(format!(
                "{field} names `{name}`, which is not a loaded backend plugin (loaded: {})",
                set.plugins.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The client impersonating `hr`'s service account in its target cluster; `None` when
    /// it runs as the operator (or as the remote kubeconfig's own identity).
    pub fn acting_client(
        &self,
        hr: &HelmRelease,
        remote: Option<&super::remote::RemoteCluster>,
    ) -> Result<Option<Client>, String> {
        match remote {
            Some(cluster) => self
                .identities
                .account_of(hr)
                .map(|account| {
                    cluster.client_as(&super::identity::service_account_user(
                        &hr.namespace_or_default(),
                        account,
                    ))
                })
                .transpose(),
            None => Ok(self.identities.client_for(hr)?.map(|(_, client)| client)),
        }
    }

    /// The client `hr`'s own calls of the host use in its target cluster (as
    /// [`Context::acting_client`], else the connection's own identity).
    pub fn client_in_target(
        &self,
        hr: &HelmRelease,
        remote: Option<&super::remote::RemoteCluster>,
    ) -> Result<Client, String> {
        Ok(match self.acting_client(hr, remote)? {
            Some(client) => client,
            None => remote.map_or_else(|| self.client.clone(), |c| c.client.clone()),
        })
    }

    /// Kubernetes access for one backend call on `hr`'s `release`: its namespace and the
    /// configured cluster-scoped kinds, as the release's service account when it has one
    /// ([`identity`]).
    /// In a remote cluster (`spec.kubeConfig`, [`remote`]) everything, the account included,
    /// is that cluster's.
    pub fn grants_for(
        &self,
        hr: &HelmRelease,
        release: &ReleaseId,
        remote: Option<&super::remote::RemoteCluster>,
    ) -> Result<Grants, String> {
        let (client, discovery) = match remote {
            Some(cluster) => (cluster.client.clone(), Arc::clone(&cluster.discovery)),
            None => (self.client.clone(), Arc::clone(&self.discovery)),
        };
        let mut kube = KubeGrant::new(
            client,
            discovery,
            [release.namespace.clone()],
            self.cluster_kinds.iter().cloned(),
        );
        if let Some(client) = self.acting_client(hr, remote)? {
            kube = kube.acting_as(client);
        }
        let storage_namespace = storage_namespace(hr, release);
        if let Some(namespace) = &storage_namespace {
            kube = kube.with_namespaces(std::slice::from_ref(namespace));
        }
        Ok(Grants {
            kube: Some(kube),
            release_context: storage_namespace.map(|namespace| ReleaseContextGrant {
                storage_namespace: Some(namespace),
                ..ReleaseContextGrant::default()
            }),
            ..Grants::default()
        })
    }
}

/// The namespace `hr`'s records live in when it is not the release namespace.
pub fn storage_namespace(hr: &HelmRelease, release: &ReleaseId) -> Option<String> {
    hr.spec
        .storage_namespace
        .clone()
        .filter(|n| !n.is_empty() && *n != release.namespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::ReleaseKey;

    fn key(name: &str) -> ReleaseKey {
        ReleaseKey {
            namespace: "n".into(),
            name: name.into(),
        }
    }

    fn release(name: &str) -> ReleaseId {
        ReleaseId {
            namespace: "n".into(),
            name: name.into(),
        }
    }

    #[test]
    fn a_release_is_due_a_drift_check_once_per_interval() {
        let schedule = DriftSchedule::default();
        let hour = Duration::from_secs(3600);
        assert!(schedule.due("n", "a", hour));
        assert!(!schedule.due("n", "a", hour), "checked a moment ago");
        assert!(schedule.due("n", "b", hour), "each release on its own");
        assert!(schedule.due("n", "a", Duration::ZERO));
    }

    #[test]
    fn one_helmrelease_per_release() {
        let claims = ReleaseClaims::default();
        assert!(claims.claim("", &release("web"), &key("a")).is_ok());
        assert!(claims.claim("", &release("web"), &key("a")).is_ok());
        assert_eq!(claims.claim("", &release("web"), &key("b")), Err(key("a")));
        // `a` renames its release: `web` is free for `b`.
        assert!(claims.claim("", &release("web2"), &key("a")).is_ok());
        assert!(claims.claim("", &release("web"), &key("b")).is_ok());
        claims.release(&key("b"));
        assert!(claims.claim("", &release("web"), &key("c")).is_ok());
        // The same release name in another cluster is another release.
        assert!(
            claims
                .claim("sha256:far", &release("web"), &key("d"))
                .is_ok()
        );
    }
}
