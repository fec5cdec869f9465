//! Prometheus metrics of plugin calls and loading ([`PluginMetrics`]), told of each call by
//! the runtime.

use std::sync::Arc;
use std::time::Duration;

use capstan_wasm_runtime::call::CallObserver;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of one plugin call.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// Configured plugin name.
    pub plugin: String,
    /// Exported function.
    pub function: String,
    /// `ok`, `error` (returned), `deadline`, `memory` or `trap`.
    pub outcome: String,
}

/// Metrics of plugin calls and loading.
pub struct PluginMetrics {
    calls: Family<CallLabels, Histogram>,
    loaded: Gauge,
    load_failures: Counter,
}

impl PluginMetrics {
    /// Create the metrics and register them in `registry`.
    pub fn register(registry: &mut Registry) -> Arc<Self> {
        let calls = Family::<CallLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_05, 4.0, 12))
        });
        let metrics = PluginMetrics {
            calls,
            loaded: Gauge::default(),
            load_failures: Counter::default(),
        };
        registry.register(
            "capstan_plugin_call_duration_seconds",
            "Duration of plugin calls, fresh instance included",
            metrics.calls.clone(),
        );
        registry.register(
            "capstan_plugins_loaded",
            "Plugins currently loaded",
            metrics.loaded.clone(),
        );
        registry.register(
            "capstan_plugin_load_failures",
            "Plugins that failed to load",
            metrics.load_failures.clone(),
        );
        Arc::new(metrics)
    }

    /// Record one call.
    pub fn observe(&self, plugin: &str, function: &str, outcome: &str, elapsed: Duration) {
        self.calls
            .get_or_create(&CallLabels {
                plugin: plugin.into(),
                function: function.into(),
                outcome: outcome.into(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Record the result of loading the configuration.
    pub fn set_loaded(&self, loaded: usize, failed: usize) {
        self.loaded.set(loaded as i64);
        self.load_failures.inc_by(failed as u64);
    }
}

impl CallObserver for PluginMetrics {
    fn observe(&self, plugin: &str, function: &str, outcome: &str, elapsed: Duration) {
        PluginMetrics::observe(self, plugin, function, outcome, elapsed);
    }
}
