//! Prometheus metrics of the release loop: how long syncing one HelmRelease takes (by action
//! and outcome), the Ready condition of each release, how many reconciles are running and
//! how many wait ([`ReconcileQueue`]).

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::queue::ReconcileQueue;

/// Labels of one reconcile outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileLabels {
    /// `install`, `upgrade`, `none` (unchanged), `uninstall`.
    pub action: String,
    /// `success` or `failure`.
    pub outcome: String,
}

/// Labels of a release's condition gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConditionLabels {
    /// HelmRelease namespace.
    pub namespace: String,
    /// HelmRelease name.
    pub name: String,
    /// Condition type (`Ready`, `Stalled`).
    pub condition: String,
}

/// Metrics of the release loop.
pub struct ReleaseMetrics {
    durations: Family<ReconcileLabels, Histogram>,
    conditions: Family<ConditionLabels, Gauge>,
    /// Reconciles running now.
    pub in_flight: Gauge,
    /// Backend actions that changed the cluster or failed (install, upgrade, uninstall):
    /// what this replica did.
    pub actions: Counter,
    /// HelmReleases waiting for a reconcile (exported as `capstan_reconcile_queue_depth`).
    pub queue: Arc<ReconcileQueue>,
}

impl ReleaseMetrics {
    /// Register the metrics in `registry`.
    pub fn register(registry: &mut Registry) -> Arc<Self> {
        let durations = Family::<ReconcileLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.01, 2.5, 12))
        });
        let metrics = ReleaseMetrics {
            durations,
            conditions: Family::default(),
            in_flight: Gauge::default(),
            actions: Counter::default(),
            queue: Arc::new(ReconcileQueue::default()),
        };
        registry.register_collector(Box::new(Arc::clone(&metrics.queue)));
        registry.register(
            "capstan_helmrelease_sync_duration_seconds",
            "Time to sync one HelmRelease, by action and outcome",
            metrics.durations.clone(),
        );
        registry.register(
            "capstan_helmrelease_condition",
            "1 when the HelmRelease's condition is True, 0 otherwise",
            metrics.conditions.clone(),
        );
        registry.register(
            "capstan_reconciles_in_flight",
            "HelmRelease reconciles running now",
            metrics.in_flight.clone(),
        );
        registry.register(
            "capstan_release_actions",
            "Installs, upgrades and uninstalls this replica ran (no-op syncs not counted)",
            metrics.actions.clone(),
        );
        Arc::new(metrics)
    }

    /// Record one reconcile.
    pub fn observe(&self, action: &str, success: bool, elapsed: Duration) {
        self.durations
            .get_or_create(&ReconcileLabels {
                action: action.to_owned(),
                outcome: if success { "success" } else { "failure" }.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Set a release's condition gauge.
    pub fn set_condition(&self, namespace: &str, name: &str, type_: &str, value: bool) {
        self.conditions
            .get_or_create(&ConditionLabels {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                condition: type_.to_owned(),
            })
            .set(i64::from(value));
    }

    /// Forget a deleted release's gauges.
    pub fn forget(&self, namespace: &str, name: &str) {
        for type_ in ["Ready", "Stalled"] {
            self.conditions.remove(&ConditionLabels {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                condition: type_.to_owned(),
            });
        }
    }
}
