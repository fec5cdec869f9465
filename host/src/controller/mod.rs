//! The HelmRelease operator: two loops over one store (DESIGN.md, "Two loops, one store").
//! The source loop ([`sourcing`]) decides which chart artifact each release runs; the
//! release loop (a kube-runtime `Controller`, [`reconcile`]) makes the cluster match through
//! the backend chosen by `spec.backend` / `spec.helmVersion`. Changes of referenced
//! ConfigMaps and Secrets, and new artifacts, wake the releases concerned.

pub mod backends;
pub mod contract;
pub mod decision;
pub mod dependencies;
pub mod drift;
pub mod helm_tests;
pub mod identity;
pub mod leader;
pub mod metrics;
pub mod options;
pub mod queue;
pub mod reconcile;
pub mod refs;
pub mod reload;
pub mod remediation;
pub mod remote;
pub mod sourcing;
pub mod values;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Predicate, PredicateConfig, WatchStreamExt, predicates, watcher};
use kube::{Api, Client, ResourceExt};

use crate::api::HelmRelease;
use crate::capabilities::Grants;
use crate::capabilities::kube::{DiscoveryCache, KubeGrant};
use crate::capabilities::release_context::ReleaseContextGrant;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::types::ReleaseId;
use crate::sources::artifacts::ArtifactStore;
use crate::sources::sync::SourceSync;

use self::metrics::ReleaseMetrics;
use self::sourcing::{Artifacts, SourceLoopOptions};

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
    pub backends: Arc<backends::Backends>,
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
    pub identities: identity::Identities,
    /// `spec.dependsOn` checks, over the release loop's store.
    pub dependencies: Arc<dependencies::Dependencies>,
    /// Connections to the clusters named by `spec.kubeConfig`.
    pub remotes: remote::RemoteClusters,
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
        remote: Option<&remote::RemoteCluster>,
    ) -> Result<Option<Client>, String> {
        match remote {
            Some(cluster) => self
                .identities
                .account_of(hr)
                .map(|account| {
                    cluster.client_as(&identity::service_account_user(
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
        remote: Option<&remote::RemoteCluster>,
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
        remote: Option<&remote::RemoteCluster>,
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

/// Why the operator cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The HelmRelease CRD is not installed (or not readable).
    #[error(
        "cannot list HelmReleases ({0}); is the CRD installed? `capstan crd | kubectl apply -f -`"
    )]
    Crd(kube::Error),
    /// `--watch-label-selector` is not a valid label selector.
    #[error("--watch-label-selector {0:?} is refused by the API server: {1}")]
    Selector(String, kube::Error),
}

fn references(hr: &HelmRelease, kind: &str, namespace: &str, name: &str) -> bool {
    let kube_config = hr.spec.kube_config.as_ref().is_some_and(|k| {
        kind == "Secret" && k.secret_ref.name == name && hr.namespace_or_default() == namespace
    });
    kube_config
        || values::referenced_objects(hr)
            .iter()
            .any(|(k, ns, n)| *k == kind && ns == namespace && n == name)
}

fn referencing(
    store: &Store<HelmRelease>,
    kind: &'static str,
    namespace: Option<String>,
    name: String,
) -> Vec<ObjectRef<HelmRelease>> {
    let namespace = namespace.unwrap_or_default();
    store
        .state()
        .iter()
        .filter(|hr| references(hr, kind, &namespace, &name))
        .map(|hr| ObjectRef::from_obj(hr.as_ref()))
        .collect()
}

/// Run both loops until `stop` is set; in-flight reconciles finish first.
pub async fn run(
    ctx: Context,
    source_sync: Arc<SourceSync>,
    mut reloads: tokio::sync::mpsc::UnboundedReceiver<()>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), StartError> {
    let client = ctx.client.clone();
    let helm_releases: Api<HelmRelease> = Api::all(client.clone());
    let mut listing = kube::api::ListParams::default().limit(1);
    let mut watching = watcher::Config::default().any_semantic();
    if let Some(selector) = &ctx.options.watch_label_selector {
        listing = listing.labels(selector);
        watching = watching.labels(selector);
    }
    helm_releases.list(&listing).await.map_err(|e| {
        match (&ctx.options.watch_label_selector, &e) {
            (Some(selector), kube::Error::Api(response)) if response.code == 400 => {
                StartError::Selector(selector.clone(), e)
            }
            _ => StartError::Crd(e),
        }
    })?;
    if let Some(selector) = &ctx.options.watch_label_selector {
        tracing::info!(
            selector,
            "handling only the HelmReleases this selector matches"
        );
    }
    // Status writes (this operator's own) must not trigger reconciles, or a failing release
    // would retry at once instead of after its backoff: only spec (generation), annotation
    // (reconcile-at, force-at) and finalizer changes do.
    let (store, store_writer) = kube::runtime::reflector::store();
    // A HelmRelease whose readiness changed wakes the ones that depend on it: seen here,
    // before status changes are filtered out.
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel();
    let tracker = dependencies::ReadyTracker::default();
    let graph = Arc::clone(&ctx.dependencies);
    let dependency_queue = Arc::clone(&ctx.metrics.queue);
    let changes = watcher(helm_releases, watching)
        .default_backoff()
        .reflect(store_writer)
        .applied_objects()
        .inspect(move |seen| {
            if let Ok(hr) = seen
                && tracker.changed(hr)
            {
                for dependent in graph.dependents_of(hr) {
                    dependency_queue.triggered(dependent.clone());
                    let _ = ready_tx.send(dependent);
                }
            }
        })
        .predicate_filter(
            predicates::generation
                .combine(predicates::annotations)
                .combine(predicates::finalizers),
            PredicateConfig::default(),
        );
    ctx.metrics.queue.attach(store.clone());
    ctx.dependencies.attach(store.clone());
    let queue = Arc::clone(&ctx.metrics.queue);
    let changes = changes.inspect(move |change| {
        if let Ok(hr) = change {
            queue.triggered(ObjectRef::from_obj(hr));
        }
    });
    let dependency_wakes = futures::stream::poll_fn(move |cx| ready_rx.poll_recv(cx));
    let controller = Controller::for_stream(changes, store.clone());
    let (changed_tx, mut changed_rx) = tokio::sync::mpsc::unbounded_channel();
    // Joined rather than spawned: a source pass borrows across awaits in ways that are not
    // `Send` for every lifetime, and both loops are meant to stop together anyway.
    let source_loop = sourcing::run(
        client.clone(),
        store.clone(),
        source_sync,
        Arc::clone(&ctx.artifacts),
        changed_tx,
        SourceLoopOptions {
            tick: ctx.options.source_tick,
            allow_cross_namespace_refs: ctx.options.allow_cross_namespace_refs,
        },
        stop.clone(),
    );
    let queue = Arc::clone(&ctx.metrics.queue);
    let artifact_changes = futures::stream::poll_fn(move |cx| changed_rx.poll_recv(cx))
        .inspect(move |hr: &ObjectRef<HelmRelease>| queue.triggered(hr.clone()));
    // A reloaded configuration may serve releases from other backends: reconcile them all.
    let reload_store = store.clone();
    let reload_queue = Arc::clone(&ctx.metrics.queue);
    let reloaded = futures::stream::poll_fn(move |cx| reloads.poll_recv(cx)).flat_map(move |()| {
        let all: Vec<ObjectRef<HelmRelease>> = reload_store
            .state()
            .iter()
            .map(|hr| ObjectRef::from_obj(hr.as_ref()))
            .collect();
        all.iter().for_each(|hr| reload_queue.triggered(hr.clone()));
        futures::stream::iter(all)
    });
    let artifact_changes = futures::stream::select(
        futures::stream::select(artifact_changes, reloaded),
        dependency_wakes,
    );
    let config_maps = watcher(
        Api::<PartialObjectMeta<ConfigMap>>::all(client.clone()),
        watcher::Config::default(),
    )
    .touched_objects();
    let secrets = watcher(
        Api::<PartialObjectMeta<Secret>>::all(client.clone()),
        watcher::Config::default(),
    )
    .touched_objects();
    let (cm_store, secret_store) = (store.clone(), store.clone());
    let (cm_queue, secret_queue) = (
        Arc::clone(&ctx.metrics.queue),
        Arc::clone(&ctx.metrics.queue),
    );
    let mut shutdown = stop.clone();
    let concurrency = ctx.options.concurrency;
    let release_loop = controller
        .with_config(ControllerConfig::default().concurrency(concurrency))
        .watches_stream(config_maps, move |cm| {
            let woken = referencing(&cm_store, "ConfigMap", cm.namespace(), cm.name_any());
            woken.iter().for_each(|hr| cm_queue.triggered(hr.clone()));
            woken
        })
        .watches_stream(secrets, move |secret| {
            let woken = referencing(
                &secret_store,
                "Secret",
                secret.namespace(),
                secret.name_any(),
            );
            woken
                .iter()
                .for_each(|hr| secret_queue.triggered(hr.clone()));
            woken
        })
        .reconcile_on(artifact_changes)
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .run(reconcile::reconcile, reconcile::error_policy, Arc::new(ctx))
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "controller");
            }
        });
    futures::future::join(release_loop, source_loop).await;
    Ok(())
}

/// The reporter of Events written by this operator.
pub fn reporter() -> Reporter {
    Reporter {
        controller: "capstan".into(),
        instance: std::env::var("POD_NAME").ok(),
    }
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
