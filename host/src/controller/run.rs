//! Starting the operator's loops: the source loop and the release controller, with the
//! watches that wake releases when what they reference changes.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::events::Reporter;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Predicate, PredicateConfig, WatchStreamExt, predicates, watcher};
use kube::{Api, ResourceExt};

use crate::api::HelmRelease;
use crate::sources::sync::SourceSync;

use super::context::Context;
use super::sourcing::SourceLoopOptions;

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
        || super::values::referenced_objects(hr)
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
    let tracker = super::dependencies::ReadyTracker::default();
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
    let source_loop = super::sourcing::run(
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
        .run(
            super::reconcile::reconcile,
            super::reconcile::error_policy,
            Arc::new(ctx),
        )
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
