//! `capstan run`: the operator — configuration, plugins, metrics and health endpoints, leader
//! election, the controller loops, and a graceful shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use capstan::config::Config;
use capstan::plugins::PluginRuntime;
use capstan::plugins::cache::{CacheOutcome, CompiledCache};
use capstan::telemetry::{Health, PluginMetrics};

use crate::cli::OperatorArgs;
use crate::source::source_catalog;

pub(crate) async fn run(
    config_path: PathBuf,
    metrics_address: SocketAddr,
    operator: OperatorArgs,
) -> anyhow::Result<()> {
    let config = Config::load(&config_path)?;
    // The operator keeps running: it keeps what it observed of a locked release's Lease
    // between attempts instead of watching it within one.
    capstan::release_lock::judge_expiry_by_observation();
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = PluginMetrics::register(&mut registry);
    let cache_dir = config
        .cache_dir
        .clone()
        .unwrap_or_else(CompiledCache::default_dir);
    let mut runtime = PluginRuntime::new(&cache_dir, Some(metrics.clone()))?;
    runtime.set_release_lock(std::sync::Arc::new(capstan::release_lock::LeaseLock));
    runtime.set_egress(std::sync::Arc::new(
        config.sources.egress.policy().map_err(anyhow::Error::msg)?,
    ));
    runtime.set_memory_budget_mib(config.plugin_memory_budget_mib);
    let report = runtime.load_all(&config.plugins);
    for plugin in &report.loaded {
        tracing::info!(
            plugin = plugin.name(),
            world = %plugin.world(),
            wit = plugin.wit_version(),
            cached = plugin.cache_outcome() == CacheOutcome::Hit,
            load_ms = plugin.load_time().as_secs_f64() * 1e3,
            path = %plugin.config().path.display(),
            "plugin loaded"
        );
    }
    for failure in &report.failed {
        tracing::error!("{failure}");
    }
    let from_cache = report
        .loaded
        .iter()
        .filter(|p| p.cache_outcome() == CacheOutcome::Hit)
        .count();
    metrics.set_loaded(report.loaded.len(), report.failed.len());
    tracing::info!(
        loaded = report.loaded.len(),
        failed = report.failed.len(),
        from_cache,
        elapsed_ms = report.elapsed.as_secs_f64() * 1e3,
        cache = %cache_dir.display(),
        "loaded {} of {} plugins in {:.1} ms ({from_cache} from the compiled cache)",
        report.loaded.len(),
        config.plugins.len(),
        report.elapsed.as_secs_f64() * 1e3,
    );
    if report.loaded.is_empty() && !config.plugins.is_empty() {
        bail!(
            "none of the {} configured plugins could be loaded",
            config.plugins.len()
        );
    }

    let kube_config = kube::Config::infer()
        .await
        .context("cannot connect to the cluster (KUBECONFIG or in-cluster config)")?;
    let client = kube::Client::try_from(kube_config.clone())
        .context("cannot connect to the cluster (KUBECONFIG or in-cluster config)")?;
    let version = client
        .apiserver_version()
        .await
        .context("cannot reach the API server")?;
    tracing::info!(server = %version.git_version, "connected to the cluster");

    let catalog = source_catalog(&config, &runtime).await?;
    let operator_parts = operator_parts(
        &config,
        &runtime,
        catalog,
        &cache_dir,
        &operator,
        &mut registry,
    )?;
    let identities = capstan::controller::identity::Identities::new(
        kube_config,
        config.default_service_account.clone(),
    );
    let health = Health::new(registry);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let server = {
        let health = health.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            health
                .serve(metrics_address, async move {
                    let _ = stop.wait_for(|stop| *stop).await;
                })
                .await
        })
    };
    health.set_ready(true);
    let (reload_tx, reload_rx) = tokio::sync::mpsc::unbounded_channel();
    if operator.config_poll_interval > 0 {
        let mut reloader = capstan::controller::reload::Reloader::new(
            config_path.clone(),
            config.clone(),
            std::sync::Arc::new(std::sync::Mutex::new(runtime)),
            std::sync::Arc::clone(&operator_parts.backends),
            reload_tx,
        )
        .with_metrics(std::sync::Arc::clone(&operator_parts.reload_metrics))
        .with_sources(std::sync::Arc::clone(&operator_parts.source_sync));
        if let (Ok(pod), Ok(namespace)) =
            (std::env::var("POD_NAME"), std::env::var("POD_NAMESPACE"))
        {
            let recorder = kube::runtime::events::Recorder::new(
                client.clone(),
                capstan::controller::run::reporter(),
            );
            reloader = reloader.with_events(
                recorder,
                k8s_openapi::api::core::v1::ObjectReference {
                    api_version: Some("v1".into()),
                    kind: Some("Pod".into()),
                    name: Some(pod),
                    namespace: Some(namespace),
                    ..Default::default()
                },
            );
        }
        let interval = std::time::Duration::from_secs(operator.config_poll_interval);
        tokio::spawn(reloader.run(interval, stop_rx.clone()));
    }
    let in_flight = operator_parts.metrics.in_flight.clone();
    let operate = operate(
        client,
        identities,
        operator_parts,
        &operator,
        reload_rx,
        stop_rx.clone(),
    );
    tokio::pin!(operate);
    let outcome = tokio::select! {
        outcome = &mut operate => outcome,
        _ = shutdown_signal() => {
            let grace = std::time::Duration::from_secs(operator.shutdown_grace);
            tracing::info!(
                grace_s = grace.as_secs(),
                "shutting down: in-flight reconciles finish first"
            );
            let _ = stop_tx.send(true);
            // Bounded: a reconcile stuck on the cluster must not keep the process alive
            // past its grace (the kubelet would SIGKILL it anyway, without these logs).
            match tokio::time::timeout(grace, operate).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    tracing::warn!(
                        in_flight = in_flight.get(),
                        "in-flight work did not finish within {} s; exiting",
                        grace.as_secs()
                    );
                    Ok(())
                }
            }
        }
    };
    health.set_ready(false);
    let _ = stop_tx.send(true);
    match tokio::time::timeout(std::time::Duration::from_secs(5), server).await {
        Ok(served) => served
            .context("metrics server task failed")?
            .context("metrics server failed")?,
        Err(_) => tracing::warn!("the metrics server did not stop within 5 s; exiting"),
    }
    outcome
}

pub(crate) async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops capstan");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// What the operator loops need, prepared before the cluster connection is used.
pub(crate) struct OperatorParts {
    backends: std::sync::Arc<capstan::controller::backends::Backends>,
    reload_metrics: std::sync::Arc<capstan::controller::reload::ReloadMetrics>,
    source_sync: std::sync::Arc<capstan::sources::sync::SourceSync>,
    artifact_store: std::sync::Arc<capstan::sources::artifacts::ArtifactStore>,
    metrics: std::sync::Arc<capstan::controller::metrics::ReleaseMetrics>,
    /// The configuration's `allowCrossNamespaceRefs`.
    allow_cross_namespace_refs: bool,
    /// The configuration's `sources.egress`, for values URLs too.
    egress: std::sync::Arc<capstan::capabilities::egress::EgressPolicy>,
}

pub(crate) fn operator_parts(
    config: &Config,
    runtime: &PluginRuntime,
    catalog: capstan::sources::catalog::SourceCatalog,
    cache_dir: &std::path::Path,
    operator: &OperatorArgs,
    registry: &mut prometheus_client::registry::Registry,
) -> anyhow::Result<OperatorParts> {
    use capstan::sources::artifacts::ArtifactStore;
    use capstan::sources::mirrors::MirrorStore;
    use capstan::sources::sync::{HttpOptions, SourceSync, SourceSyncOptions};
    use std::sync::Arc;
    use std::time::Duration;

    // The backends and post-renderers releases may name, by configured name.
    let mut plugins = std::collections::BTreeMap::new();
    let mut post_renderers = std::collections::BTreeMap::new();
    for entry in &config.plugins {
        match entry.world {
            capstan::config::PluginWorld::Backend => {
                if let Ok(backend) = runtime.backend(&entry.name) {
                    plugins.insert(entry.name.clone(), Arc::new(backend));
                }
            }
            capstan::config::PluginWorld::PostRenderer => {
                if let Ok(renderer) = runtime.post_renderer(&entry.name) {
                    post_renderers.insert(entry.name.clone(), Arc::new(renderer));
                }
            }
            capstan::config::PluginWorld::Source => {}
        }
    }
    let backends = Arc::new(capstan::controller::backends::Backends::new(
        capstan::controller::backends::BackendSet {
            plugins,
            selection: config.backends.clone(),
            post_renderers,
        },
    ));
    let data_dir = cache_dir.join("data");
    let mirrors = Arc::new(MirrorStore::new(
        data_dir.join("mirrors"),
        Duration::from_secs(120),
    ));
    let artifact_store = Arc::new(ArtifactStore::open(data_dir.join("artifacts"), 4 << 30)?);
    let source_metrics = capstan::telemetry::SourceMetrics::register(registry);
    let source_sync = SourceSync::new(
        SourceSyncOptions {
            interval: Duration::from_secs(operator.source_interval.max(1)),
            grace: Duration::from_secs(operator.source_grace),
            parallelism: 4,
        },
        mirrors,
        Arc::clone(&artifact_store),
        Arc::new(catalog),
        Some(source_metrics),
    )
    .with_http(HttpOptions::from_config(&config.sources));
    Ok(OperatorParts {
        backends,
        reload_metrics: capstan::controller::reload::ReloadMetrics::register(registry),
        source_sync: Arc::new(source_sync),
        artifact_store,
        metrics: capstan::controller::metrics::ReleaseMetrics::register(registry),
        allow_cross_namespace_refs: config.allow_cross_namespace_refs,
        egress: Arc::new(config.sources.egress.policy().map_err(anyhow::Error::msg)?),
    })
}

/// Run the HelmRelease loops (after winning the leader Lease when asked) until `stop`.
pub(crate) async fn operate(
    client: kube::Client,
    identities: capstan::controller::identity::Identities,
    parts: OperatorParts,
    operator: &OperatorArgs,
    reloads: tokio::sync::mpsc::UnboundedReceiver<()>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    use capstan::controller::context::{Context, ControllerOptions};
    use capstan::controller::leader::{LeaderElection, LeaseOptions};
    use capstan::controller::run as controller;
    use std::sync::Arc;
    use std::time::Duration;

    let election = operator.leader_election.then(|| {
        let identity =
            std::env::var("POD_NAME").unwrap_or_else(|_| format!("capstan-{}", std::process::id()));
        LeaderElection::observing(
            client.clone(),
            LeaseOptions {
                namespace: operator.lease_namespace.clone(),
                name: operator.lease_name.clone(),
                identity,
                duration: Duration::from_secs(15),
            },
        )
    });
    if let Some(election) = &election {
        tracing::info!(lease = %operator.lease_name, "waiting to become the leader");
        if !election.acquire(&mut stop).await {
            return Ok(());
        }
        tracing::info!(lease = %operator.lease_name, "became the leader");
    }
    let ctx = Context {
        recorder: kube::runtime::events::Recorder::new(client.clone(), controller::reporter()),
        client,
        backends: Arc::clone(&parts.backends),
        artifacts: Arc::new(capstan::controller::sourcing::Artifacts::default()),
        artifact_store: parts.artifact_store,
        metrics: parts.metrics,
        discovery: Arc::new(capstan::capabilities::kube::DiscoveryCache::default()),
        cluster_kinds: operator.cluster_kinds.clone(),
        claims: Default::default(),
        identities,
        dependencies: Default::default(),
        remotes: Default::default(),
        values_egress: parts.egress.clone(),
        drift_schedule: Default::default(),
        options: ControllerOptions {
            resync: Duration::from_secs(operator.resync_interval.max(1)),
            source_tick: Duration::from_secs(operator.source_interval.clamp(1, 10)),
            concurrency: operator.workers.max(1),
            allow_cross_namespace_refs: parts.allow_cross_namespace_refs,
            uninstall_deadline: (operator.uninstall_deadline > 0)
                .then(|| Duration::from_secs(operator.uninstall_deadline)),
            watch_label_selector: operator
                .watch_label_selector
                .clone()
                .filter(|s| !s.trim().is_empty()),
        },
    };
    tracing::info!(
        backends = ctx.backends.current().plugins.len(),
        "reconciling HelmReleases"
    );
    let loops = controller::run(ctx, parts.source_sync, reloads, stop.clone());
    tokio::pin!(loops);
    let Some(election) = &election else {
        return Ok(loops.await?);
    };
    let mut held = stop.clone();
    tokio::select! {
        result = &mut loops => result?,
        lost = election.hold(&mut held) => {
            if lost {
                anyhow::bail!("lost the leader Lease; exiting so that only one replica acts");
            }
            loops.await?;
        }
    }
    Ok(())
}
