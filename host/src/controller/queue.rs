//! How many HelmReleases wait for a reconcile worker (`capstan_reconcile_queue_depth`).
//!
//! kube-runtime's scheduler does not expose its queue, so the operator keeps its own
//! account beside it: every trigger (a HelmRelease change, a referenced ConfigMap or Secret,
//! a new artifact) marks its HelmRelease due now, every finished reconcile marks it due when
//! its requeue fires, and a starting reconcile clears it. The depth is the number of
//! HelmReleases that still exist and are due: triggered or timed-out, waiting for a worker
//! (concurrency is bounded) or for their own running reconcile to end.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::backoff::{doubling, jittered};

use kube::runtime::reflector::{ObjectRef, Store};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;

use crate::api::HelmRelease;

/// What the release loop does next with one HelmRelease, as decided by its reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing until something changes.
    AwaitChange,
    /// Reconcile again after this long (resync, or a backoff after a failure).
    Requeue(Duration),
}

impl From<Next> for kube::runtime::controller::Action {
    fn from(next: Next) -> Self {
        match next {
            Next::AwaitChange => Self::await_change(),
            Next::Requeue(after) => Self::requeue(after),
        }
    }
}

/// When each HelmRelease is next due for a reconcile.
#[derive(Default)]
pub struct ReconcileQueue {
    due: Mutex<HashMap<ObjectRef<HelmRelease>, Instant>>,
    /// The controller's cache: deleted HelmReleases are never reconciled again, so they
    /// do not count.
    store: OnceLock<Store<HelmRelease>>,
}

impl std::fmt::Debug for ReconcileQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconcileQueue").finish_non_exhaustive()
    }
}

impl ReconcileQueue {
    fn mark(&self, key: ObjectRef<HelmRelease>, at: Instant) {
        let mut due = self.due.lock().unwrap_or_else(|e| e.into_inner());
        due.entry(key)
            .and_modify(|current| *current = (*current).min(at))
            .or_insert(at);
    }

    /// Count only HelmReleases present in `store` from now on.
    pub fn attach(&self, store: Store<HelmRelease>) {
        let _ = self.store.set(store);
    }

    /// Something changed that concerns `key`: it is due now.
    pub fn triggered(&self, key: ObjectRef<HelmRelease>) {
        self.mark(key, Instant::now());
    }

    /// A reconcile of `key` starts: it no longer waits.
    pub fn started(&self, key: &ObjectRef<HelmRelease>) {
        let mut due = self.due.lock().unwrap_or_else(|e| e.into_inner());
        due.remove(key);
    }

    /// A reconcile of `key` ended with `next`; a trigger that arrived meanwhile stays due.
    pub fn finished(&self, key: ObjectRef<HelmRelease>, next: Next) {
        if let Next::Requeue(after) = next {
            self.mark(key, Instant::now() + after);
        }
    }

    /// HelmReleases due at `now` that have not started yet.
    pub fn depth_at(&self, now: Instant) -> usize {
        let mut due = self.due.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(store) = self.store.get() {
            due.retain(|key, _| store.get(key).is_some());
        }
        due.values().filter(|at| **at <= now).count()
    }
}

impl Collector for ReconcileQueue {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let gauge = ConstGauge::new(self.depth_at(Instant::now()) as i64);
        let metric = encoder.encode_descriptor(
            "capstan_reconcile_queue_depth",
            "HelmReleases due for a reconcile (triggered or requeued) that have not started",
            None,
            gauge.metric_type(),
        )?;
        gauge.encode(metric)
    }
}

/// Delay before retry `failures` of one release: 5 s doubling up to 5 min, with up to 20 %
/// jitter so failing releases do not retry in lockstep.
pub fn backoff(failures: i64) -> Duration {
    let failures = u32::try_from(failures.max(1)).unwrap_or(u32::MAX);
    jittered(doubling(
        failures,
        Duration::from_secs(5),
        Duration::from_secs(300),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_five_minutes_with_bounded_jitter() {
        for failures in 1..=12 {
            let delay = backoff(failures).as_secs_f64();
            let base = (5.0 * 2f64.powi(failures.min(7) as i32 - 1)).min(300.0);
            assert!(
                delay >= base && delay < base * 1.2 + 0.001,
                "{failures}: {delay}"
            );
        }
    }

    fn key(name: &str) -> ObjectRef<HelmRelease> {
        ObjectRef::new(name).within("apps")
    }

    #[test]
    fn triggers_count_until_the_reconcile_starts() {
        let queue = ReconcileQueue::default();
        queue.triggered(key("a"));
        queue.triggered(key("a"));
        queue.triggered(key("b"));
        assert_eq!(queue.depth_at(Instant::now()), 2);
        queue.started(&key("a"));
        assert_eq!(queue.depth_at(Instant::now()), 1);
    }

    #[test]
    fn requeues_count_once_due() {
        let queue = ReconcileQueue::default();
        queue.finished(key("a"), Next::Requeue(Duration::from_secs(60)));
        queue.finished(key("b"), Next::AwaitChange);
        let now = Instant::now();
        assert_eq!(queue.depth_at(now), 0);
        assert_eq!(queue.depth_at(now + Duration::from_secs(61)), 1);
    }

    #[test]
    fn a_trigger_during_a_reconcile_keeps_it_due() {
        let queue = ReconcileQueue::default();
        queue.started(&key("a"));
        queue.triggered(key("a"));
        queue.finished(key("a"), Next::Requeue(Duration::from_secs(300)));
        assert_eq!(queue.depth_at(Instant::now()), 1);
    }

    #[test]
    fn deleted_helmreleases_do_not_count() {
        let queue = ReconcileQueue::default();
        let (store, _writer) = kube::runtime::reflector::store::<HelmRelease>();
        queue.triggered(key("gone"));
        queue.attach(store);
        assert_eq!(queue.depth_at(Instant::now()), 0);
    }
}
