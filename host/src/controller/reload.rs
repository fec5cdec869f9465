//! Configuration reload without a restart. The operator polls its configuration file
//! (mounted from a ConfigMap in `deploy/`); when its bytes change it is parsed and checked,
//! every new or changed backend plugin is loaded, and only when all of that succeeds does
//! the new [`BackendSet`] replace the running one and every HelmRelease get reconciled.
//! Calls in flight finish on the component they started with. A broken configuration
//! (unparsable, unknown plugin, missing or wrong-world component, bad limits) is refused
//! with a log line and an Event naming the problem, and the running configuration stays.
//!
//! Backends, their selection, source plugins and `sources.kinds` are reloaded (a source
//! pass in progress keeps the catalog it started with); changes to `sources.http` and
//! `cacheDir` are reported as taking effect at the next restart.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::backends::{BackendSet, Backends};
use crate::config::{Config, PluginWorld};
use crate::plugins::PluginRuntime;
use crate::sources::sync::SourceSync;

/// What one check of the configuration file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The file did not change.
    Unchanged,
    /// The new configuration is in force; a summary.
    Applied(String),
    /// The new configuration was refused; why. The running one stays.
    Refused(String),
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// `capstan_config_reloads_total{outcome="applied"|"refused"}`.
pub struct ReloadMetrics {
    reloads: Family<OutcomeLabels, Counter>,
}

impl ReloadMetrics {
    /// Register the metrics in `registry`.
    pub fn register(registry: &mut Registry) -> Arc<Self> {
        let metrics = ReloadMetrics {
            reloads: Family::default(),
        };
        registry.register(
            "capstan_config_reloads",
            "Configuration changes applied or refused without a restart",
            metrics.reloads.clone(),
        );
        Arc::new(metrics)
    }
}

/// Watches one configuration file and applies it.
pub struct Reloader {
    path: PathBuf,
    runtime: Arc<Mutex<PluginRuntime>>,
    backends: Arc<Backends>,
    applied: Config,
    seen: Vec<u8>,
    wake: tokio::sync::mpsc::UnboundedSender<()>,
    events: Option<(Recorder, ObjectReference)>,
    metrics: Option<Arc<ReloadMetrics>>,
    sources: Option<Arc<SourceSync>>,
}

impl Reloader {
    /// A reloader of `path`, whose contents `applied` is in force now.
    pub fn new(
        path: PathBuf,
        applied: Config,
        runtime: Arc<Mutex<PluginRuntime>>,
        backends: Arc<Backends>,
        wake: tokio::sync::mpsc::UnboundedSender<()>,
    ) -> Reloader {
        let seen = std::fs::read(&path).unwrap_or_default();
        Reloader {
            path,
            runtime,
            backends,
            applied,
            seen,
            wake,
            events: None,
            metrics: None,
            sources: None,
        }
    }

    /// Also reload the source plugins served by `sources`.
    pub fn with_sources(mut self, sources: Arc<SourceSync>) -> Self {
        self.sources = Some(sources);
        self
    }

    /// Also publish Events about reloads on `object` (the operator's Pod).
    pub fn with_events(mut self, recorder: Recorder, object: ObjectReference) -> Self {
        self.events = Some((recorder, object));
        self
    }

    /// Also count reloads.
    pub fn with_metrics(mut self, metrics: Arc<ReloadMetrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Check the file once and apply it when it changed and is sound.
    pub fn check(&mut self) -> ReloadOutcome {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(error) => {
                return self.refuse_once(
                    Vec::new(),
                    format!("cannot read {}: {error}", self.path.display()),
                );
            }
        };
        if bytes == self.seen {
            return ReloadOutcome::Unchanged;
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let base = self
            .path
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        let config = match Config::parse(&text, &self.path, &base) {
            Ok(config) => config,
            Err(error) => return self.refuse_once(bytes, error.to_string()),
        };
        match self.apply(&config) {
            Ok(summary) => {
                self.applied = config;
                self.seen = bytes;
                let _ = self.wake.send(());
                ReloadOutcome::Applied(summary)
            }
            Err(why) => self.refuse_once(bytes, why),
        }
    }

    /// Refuse the contents `bytes` (reported once per distinct contents).
    fn refuse_once(&mut self, bytes: Vec<u8>, why: String) -> ReloadOutcome {
        self.seen = bytes;
        ReloadOutcome::Refused(why)
    }

    /// Load the plugins of `config` and put its backends (and, with [`Reloader::with_sources`],
    /// its source kinds) in force, or say why not. Nothing changes unless all of it loads.
    fn apply(&self, config: &Config) -> Result<String, String> {
        let mut runtime = self
            .runtime
            .lock()
            .map_err(|_| "the plugin runtime is unavailable".to_owned())?;
        // Every plugin of the new configuration: the loaded one when its entry is the
        // same, else freshly prepared (not yet installed).
        let mut prepared = Vec::new();
        let mut changed = Vec::new();
        for entry in &config.plugins {
            match runtime.plugin(&entry.name) {
                Some(loaded) if loaded.config() == entry => prepared.push(Arc::clone(loaded)),
                _ => {
                    let plugin = runtime.prepare(entry).map_err(|e| e.to_string())?;
                    changed.push(entry.name.clone());
                    prepared.push(plugin);
                }
            }
        }
        let mut plugins = std::collections::BTreeMap::new();
        let mut post_renderers = std::collections::BTreeMap::new();
        let mut source_handles = Vec::new();
        for plugin in &prepared {
            match plugin.world() {
                PluginWorld::Backend => {
                    let backend = runtime.backend_of(plugin).map_err(|e| e.to_string())?;
                    plugins.insert(plugin.name().to_owned(), Arc::new(backend));
                }
                PluginWorld::PostRenderer => {
                    let renderer = runtime
                        .post_renderer_of(plugin)
                        .map_err(|e| e.to_string())?;
                    post_renderers.insert(plugin.name().to_owned(), Arc::new(renderer));
                }
                PluginWorld::Source => {
                    source_handles.push(runtime.source_of(plugin).map_err(|e| e.to_string())?);
                }
            }
        }
        let sources_changed = self.source_plugins_changed(config);
        let catalog = match (&self.sources, sources_changed) {
            (Some(_), true) => {
                let routes = config.sources.kinds.clone();
                let (catalog, failures) = tokio::runtime::Handle::current().block_on(
                    crate::sources::catalog::describe_all(source_handles, &routes),
                );
                if let Some(failure) = failures.first() {
                    return Err(failure.clone());
                }
                Some(Arc::new(catalog.map_err(|e| e.to_string())?))
            }
            _ => None,
        };
        let restart_needed = self.needs_restart(config);
        for plugin in prepared {
            runtime.install(plugin);
        }
        let kinds = catalog.as_ref().map(|c| {
            c.kinds()
                .map(|k| k.declared.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        });
        if let (Some(sources), Some(catalog)) = (&self.sources, catalog) {
            sources.replace_catalog(catalog);
        }
        let selection = config.backends.clone();
        let summary = format!(
            "backends {} (default {}, v2 {}, v3 {}){}; loaded: {}{}",
            plugins.keys().cloned().collect::<Vec<_>>().join(", "),
            selection.default.as_deref().unwrap_or("none"),
            selection.v2.as_deref().unwrap_or("none"),
            selection.v3.as_deref().unwrap_or("none"),
            kinds
                .map(|k| format!("; source kinds {k}"))
                .unwrap_or_default(),
            if changed.is_empty() {
                "none".to_owned()
            } else {
                changed.join(", ")
            },
            restart_needed
                .map(|what| format!("; {what} changed and take effect at the next restart"))
                .unwrap_or_default()
        );
        self.backends.replace(BackendSet {
            plugins,
            selection,
            post_renderers,
        });
        Ok(summary)
    }

    /// Whether the source plugins or their routing differ from the configuration in force.
    fn source_plugins_changed(&self, config: &Config) -> bool {
        let sources = |c: &Config| -> Vec<crate::config::PluginConfig> {
            c.plugins
                .iter()
                .filter(|p| p.world == PluginWorld::Source)
                .cloned()
                .collect()
        };
        sources(config) != sources(&self.applied)
            || config.sources.kinds != self.applied.sources.kinds
    }

    /// What of `config` a reload does not apply, if it changed.
    fn needs_restart(&self, config: &Config) -> Option<String> {
        let mut what = Vec::new();
        if self.sources.is_none() && self.source_plugins_changed(config) {
            what.push("source plugins");
        }
        if config.sources.http != self.applied.sources.http {
            what.push("`sources.http`");
        }
        if config.sources.egress != self.applied.sources.egress {
            what.push("`sources.egress`");
        }
        if config.plugin_memory_budget_mib != self.applied.plugin_memory_budget_mib {
            what.push("`pluginMemoryBudgetMib`");
        }
        if config.cache_dir != self.applied.cache_dir {
            what.push("`cacheDir`");
        }
        if config.allow_cross_namespace_refs != self.applied.allow_cross_namespace_refs {
            what.push("`allowCrossNamespaceRefs`");
        }
        if config.default_service_account != self.applied.default_service_account {
            what.push("`defaultServiceAccount`");
        }
        (!what.is_empty()).then(|| what.join(" and "))
    }

    async fn report(&self, outcome: &ReloadOutcome) {
        let (kind, reason, note) = match outcome {
            ReloadOutcome::Unchanged => return,
            ReloadOutcome::Applied(summary) => {
                tracing::info!(config = %self.path.display(), "configuration reloaded: {summary}");
                (EventType::Normal, "ConfigurationReloaded", summary.clone())
            }
            ReloadOutcome::Refused(why) => {
                tracing::error!(config = %self.path.display(), "configuration refused, the running one stays: {why}");
                (
                    EventType::Warning,
                    "ConfigurationRefused",
                    format!(
                        "{}: {why}; the running configuration stays",
                        self.path.display()
                    ),
                )
            }
        };
        if let Some(metrics) = &self.metrics {
            let outcome = if kind == EventType::Normal {
                "applied"
            } else {
                "refused"
            };
            metrics
                .reloads
                .get_or_create(&OutcomeLabels { outcome })
                .inc();
        }
        if let Some((recorder, object)) = &self.events {
            let event = KubeEvent {
                type_: kind,
                reason: reason.to_owned(),
                note: Some(note.chars().take(1000).collect()),
                action: "Reload".to_owned(),
                secondary: None,
            };
            if let Err(error) = recorder.publish(&event, object).await {
                tracing::debug!(%error, "cannot publish an event");
            }
        }
    }

    /// Check every `interval` until `stop` is set.
    pub async fn run(mut self, interval: Duration, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            // Loading a component may compile it: off the async workers.
            let outcome = tokio::task::block_in_place(|| self.check());
            self.report(&outcome).await;
        }
    }
}
