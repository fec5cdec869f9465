//! Keeping the shared git mirrors of a pass: fetched when due, retried with backoff, and
//! collected when nothing references them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;

use crate::sources::mirrors::MirrorError;
use crate::sources::registry::SourceRegistry;
use crate::sources::{MirrorKey, ReleaseKey, SourceSpec};

/// Timing of source sync.
use super::*;

impl SourceSync {
    /// Mirrors: recompute references, collect, fetch the due ones (each once).
    pub(super) async fn sync_mirrors(
        &self,
        state: &mut State,
        specs: &BTreeMap<ReleaseKey, SourceSpec>,
        routed: &BTreeMap<&SourceSpec, Needs<'_>>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
        report: &mut PassReport,
    ) {
        let keys: Vec<(&ReleaseKey, &MirrorKey)> = specs
            .iter()
            .filter_map(|(release, source)| {
                routed
                    .get(source)
                    .and_then(|n| n.mirror.as_ref())
                    .map(|key| (release, key))
            })
            .collect();
        let registry = state
            .mirror_registry
            .get_or_insert_with(|| SourceRegistry::new(self.options.grace));
        let changes = registry.observe(keys.iter().copied(), now);
        for key in &changes.collected {
            if let Err(error) = self.mirrors.remove(key) {
                tracing::warn!(mirror = %key.url, %error, "cannot remove a collected mirror");
            }
            state.mirrors.remove(key);
            if let Some(metrics) = &self.metrics {
                metrics.mirrors_collected.inc();
            }
        }
        report.collected = changes.collected;

        // A release whose source changed gets its mirror fetched now, not at the next
        // interval.
        for (release, key) in &keys {
            let changed = state
                .sources
                .get(*release)
                .is_some_and(|old| Some(old) != specs.get(*release));
            if changed && let Some(mirror) = state.mirrors.get_mut(*key) {
                mirror.next_attempt = now;
            }
        }

        let due: Vec<MirrorKey> = registry
            .referenced()
            .filter(|key| {
                state
                    .mirrors
                    .get(*key)
                    .is_none_or(|m| now >= m.next_attempt)
            })
            .cloned()
            .collect();
        let fetches = futures::stream::iter(due.into_iter().map(|key| {
            let secret = key
                .credentials
                .as_ref()
                .map(|s| credentials.git(s).map_err(|e| (s.clone(), e)));
            async move {
                let result = match secret {
                    Some(Err((secret, message))) => Err(MirrorError {
                        url: key.url.clone(),
                        message: format!(
                            "credentials secret {}/{}: {message}",
                            secret.namespace, secret.name
                        ),
                    }),
                    Some(Ok(credentials)) => self
                        .mirrors
                        .fetch(&key, Some(credentials), Arc::clone(&self.http.egress))
                        .await
                        .map(|_| ()),
                    None => self
                        .mirrors
                        .fetch(&key, None, Arc::clone(&self.http.egress))
                        .await
                        .map(|_| ()),
                };
                (key, result)
            }
        }))
        .buffer_unordered(self.options.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;
        for (key, result) in fetches {
            let entry = state.mirrors.entry(key.clone()).or_insert(MirrorState {
                fetched_once: false,
                next_attempt: now,
                failures: 0,
                last_error: None,
            });
            let outcome = match result {
                Ok(()) => {
                    entry.fetched_once = true;
                    entry.failures = 0;
                    entry.last_error = None;
                    entry.next_attempt = now + self.options.interval;
                    report.fetched.push(key);
                    "ok"
                }
                Err(error) => {
                    entry.failures += 1;
                    entry.next_attempt =
                        now + backoff_with_jitter(entry.failures, self.options.interval);
                    tracing::warn!(mirror = %key.url, failures = entry.failures, "{error}");
                    entry.last_error = Some(error.clone());
                    report.fetch_failures.push(error);
                    "error"
                }
            };
            if let Some(metrics) = &self.metrics {
                metrics.fetch(outcome);
            }
        }
    }
}
