//! Refreshing the shared documents of a pass (Helm repository indexes), each fetched once
//! for every source that reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::capabilities::Grants;
use crate::capabilities::http::ResponseCache;
use crate::plugins::bindings::source::exports::capstan::plugin::source::{Revision, SourceRequest};
use crate::sources::artifacts::ArtifactError;
use crate::sources::catalog::KindEntry;
use crate::sources::registry::SourceRegistry;
use crate::sources::{MirrorKey, ReleaseKey, SourceSpec};

/// Timing of source sync.
use super::*;

impl SourceSync {
    /// Shared documents: recompute references, collect, and mark stale once per interval
    /// (and at once for a document whose releases changed source).
    pub(super) async fn refresh_documents(
        &self,
        state: &mut State,
        specs: &BTreeMap<ReleaseKey, SourceSpec>,
        routed: &BTreeMap<&SourceSpec, Needs<'_>>,
        now: Instant,
        report: &mut PassReport,
    ) {
        let keys: Vec<(&ReleaseKey, &MirrorKey)> = specs
            .iter()
            .flat_map(|(release, source)| {
                routed
                    .get(source)
                    .map(|n| n.documents.iter())
                    .into_iter()
                    .flatten()
                    .map(move |key| (release, key))
            })
            .collect();
        let registry = state
            .document_registry
            .get_or_insert_with(|| SourceRegistry::new(self.options.grace));
        let changes = registry.observe(keys.iter().copied(), now);
        for key in &changes.collected {
            state.documents.remove(key);
        }
        report.collected_documents = changes.collected;
        let changed: BTreeSet<&MirrorKey> = keys
            .iter()
            .filter(|(release, _)| {
                state
                    .sources
                    .get(*release)
                    .is_some_and(|old| Some(old) != specs.get(*release))
            })
            .map(|(_, key)| *key)
            .collect();
        for key in registry.referenced() {
            let entry = state
                .documents
                .entry(key.clone())
                .or_insert_with(|| DocumentState {
                    cache: ResponseCache::new(),
                    next_refresh: now,
                });
            if now >= entry.next_refresh || changed.contains(key) {
                entry.cache.mark_stale().await;
                entry.next_refresh = now + self.options.interval;
            }
        }
    }

    /// Fetch the chart at `revision` and store it.
    pub(super) async fn fetch_one(
        &self,
        source: &SourceSpec,
        entry: Option<&KindEntry>,
        revision: &Revision,
        grants: &Grants,
    ) -> Result<ArtifactRef, SourceError> {
        let Some(entry) = entry else {
            return Err(source_error(source, None, "not routed"));
        };
        let request = SourceRequest {
            kind: source.kind.clone(),
            spec: source.spec.clone(),
        };
        let chart = entry
            .plugin
            .fetch(&request, revision, grants.clone())
            .await
            .map_err(|e| source_error(source, Some(entry), plugin_cause(e)))?;
        let digest = self
            .artifacts
            .put(&chart.archive, &chart.digest)
            .map_err(|e: ArtifactError| source_error(source, Some(entry), e.to_string()))?;
        Ok(ArtifactRef {
            digest,
            revision: revision.id.clone(),
            chart: chart.metadata.name,
            version: chart.metadata.version,
        })
    }
}
