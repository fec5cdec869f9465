//! One source-sync pass: recompute the registry from the current release specs, collect
//! what nothing references, fetch the mirrors that are due (each shared mirror once per
//! interval, however many releases use it), resolve each distinct source once through the
//! source plugin, package only when the chart folder's content changed, and report which
//! releases now have a different artifact.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;

use super::artifacts::{ArtifactError, ArtifactStore};
use super::mirrors::{GitCredentials, MirrorError, MirrorStore};
use super::registry::SourceRegistry;
use super::{GitChartSource, GitReference, MirrorKey, ReleaseKey, SecretRef};
use crate::capabilities::Grants;
use crate::capabilities::git::GitGrant;
use crate::plugins::SourcePlugin;
use crate::plugins::bindings::source::exports::capstan::plugin::source::{
    GitRef, GitSource, Revision, SourceRequest, SourceSpec,
};
use crate::plugins::call::CallError;
use crate::telemetry::SourceMetrics;

/// Timing of source sync.
#[derive(Debug, Clone, Copy)]
pub struct SourceSyncOptions {
    /// How often each mirror is fetched.
    pub interval: Duration,
    /// How long an unreferenced mirror is kept before it is removed.
    pub grace: Duration,
    /// Most mirror fetches and plugin calls in flight at once.
    pub parallelism: usize,
}

/// Reads the credentials a source's Secret holds.
pub trait CredentialsLookup: Send + Sync {
    /// The git credentials in `secret`, or why they cannot be had.
    fn git(&self, secret: &SecretRef) -> Result<GitCredentials, String>;
}

/// No credentials available anywhere (every lookup fails).
pub struct NoCredentials;

impl CredentialsLookup for NoCredentials {
    fn git(&self, secret: &SecretRef) -> Result<GitCredentials, String> {
        Err(format!(
            "secret {}/{} is not available",
            secret.namespace, secret.name
        ))
    }
}

/// The artifact a release should run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRef {
    /// `sha256:` digest of the chart archive in the artifact store.
    pub digest: String,
    /// Commit the chart was packaged from.
    pub revision: String,
    /// Chart name.
    pub chart: String,
    /// Chart version.
    pub version: String,
}

/// Why a release has no artifact this pass. Always names the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git source {url} ({reference}, path `{path}`): {cause}")]
pub struct SourceError {
    /// Repository URL.
    pub url: String,
    /// Reference followed, as text.
    pub reference: String,
    /// Chart folder.
    pub path: String,
    /// What went wrong.
    pub cause: String,
}

/// What one pass did.
#[derive(Debug, Default)]
pub struct PassReport {
    /// Each current release's artifact, or why it has none.
    pub releases: BTreeMap<ReleaseKey, Result<ArtifactRef, SourceError>>,
    /// Releases whose artifact digest differs from the previous pass (the release loop
    /// is told about these only).
    pub changed: Vec<ReleaseKey>,
    /// Mirrors fetched successfully.
    pub fetched: Vec<MirrorKey>,
    /// Mirrors whose fetch failed.
    pub fetch_failures: Vec<MirrorError>,
    /// Mirrors removed because nothing referenced them for the grace period.
    pub collected: Vec<MirrorKey>,
}

#[derive(Debug)]
struct MirrorState {
    fetched_once: bool,
    next_attempt: Instant,
    failures: u32,
    last_error: Option<MirrorError>,
}

#[derive(Default)]
struct State {
    registry: Option<SourceRegistry>,
    mirrors: HashMap<MirrorKey, MirrorState>,
    /// Packaged artifacts by (mirror, chart path, content id of the chart folder).
    packaged: HashMap<(MirrorKey, String, String), ArtifactRef>,
    /// The source each release had last pass.
    sources: BTreeMap<ReleaseKey, GitChartSource>,
    /// The digest each release had last pass.
    digests: BTreeMap<ReleaseKey, String>,
}

/// Source sync for git chart sources.
pub struct SourceSync {
    options: SourceSyncOptions,
    mirrors: Arc<MirrorStore>,
    artifacts: Arc<ArtifactStore>,
    plugin: SourcePlugin,
    metrics: Option<Arc<SourceMetrics>>,
    state: tokio::sync::Mutex<State>,
}

fn describe(reference: &GitReference) -> String {
    match reference {
        GitReference::Branch(b) => format!("branch {b}"),
        GitReference::Tag(t) => format!("tag {t}"),
        GitReference::Commit(c) => format!("commit {c}"),
        GitReference::Semver(r) => format!("semver {r}"),
    }
}

fn source_error(source: &GitChartSource, cause: impl Into<String>) -> SourceError {
    SourceError {
        url: source.url.clone(),
        reference: describe(&source.reference),
        path: source.path.clone(),
        cause: cause.into(),
    }
}

fn request(source: &GitChartSource) -> SourceRequest {
    let reference = match &source.reference {
        GitReference::Branch(b) => GitRef::Branch(b.clone()),
        GitReference::Tag(t) => GitRef::Tag(t.clone()),
        GitReference::Commit(c) => GitRef::Commit(c.clone()),
        GitReference::Semver(r) => GitRef::Semver(r.clone()),
    };
    SourceRequest {
        spec: SourceSpec::Git(GitSource {
            url: source.url.clone(),
            reference,
            path: source.path.clone(),
        }),
    }
}

fn plugin_cause(error: CallError) -> String {
    match error.cause {
        crate::plugins::call::CallFailure::Returned { message, .. } => message,
        _ => error.to_string(),
    }
}

/// Retry delay after `failures` consecutive failed fetches: doubling from 1 s, never
/// longer than the interval.
fn backoff(failures: u32, interval: Duration) -> Duration {
    Duration::from_secs(1u64 << failures.min(16).saturating_sub(1)).min(interval)
}

impl SourceSync {
    /// Source sync over `mirrors` and `artifacts`, resolving and packaging with `plugin`.
    pub fn new(
        options: SourceSyncOptions,
        mirrors: Arc<MirrorStore>,
        artifacts: Arc<ArtifactStore>,
        plugin: SourcePlugin,
        metrics: Option<Arc<SourceMetrics>>,
    ) -> Self {
        SourceSync {
            options,
            mirrors,
            artifacts,
            plugin,
            metrics,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The mirror store.
    pub fn mirrors(&self) -> &Arc<MirrorStore> {
        &self.mirrors
    }

    /// Number of mirrors currently tracked (referenced or within their grace period).
    pub async fn live_mirrors(&self) -> usize {
        self.state
            .lock()
            .await
            .registry
            .as_ref()
            .map_or(0, SourceRegistry::len)
    }

    /// Run one pass over the complete current set of release specs.
    pub async fn pass(
        &self,
        specs: &BTreeMap<ReleaseKey, GitChartSource>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
    ) -> PassReport {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let mut report = PassReport::default();
        let keys: Vec<(ReleaseKey, MirrorKey)> = specs
            .iter()
            .map(|(r, s)| (r.clone(), s.mirror_key()))
            .collect();
        let registry = state
            .registry
            .get_or_insert_with(|| SourceRegistry::new(self.options.grace));
        let changes = registry.observe(keys.iter().map(|(r, k)| (r, k)), now);

        for key in &changes.collected {
            if let Err(error) = self.mirrors.remove(key) {
                tracing::warn!(mirror = %key.url, %error, "cannot remove a collected mirror");
            }
            state.mirrors.remove(key);
            state.packaged.retain(|(k, _, _), _| k != key);
            if let Some(metrics) = &self.metrics {
                metrics.mirrors_collected.inc();
            }
        }
        report.collected = changes.collected;

        // A release whose source changed gets its mirror fetched now, not at the next interval.
        for (release, source) in specs {
            if state.sources.get(release).is_some_and(|old| old != source)
                && let Some(mirror) = state.mirrors.get_mut(&source.mirror_key())
            {
                mirror.next_attempt = now;
            }
        }

        // Fetch every referenced mirror that is due, each once.
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
                        .fetch(&key, Some(credentials))
                        .await
                        .map(|_| ()),
                    None => self.mirrors.fetch(&key, None).await.map(|_| ()),
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
                    entry.next_attempt = now + backoff(entry.failures, self.options.interval);
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

        // Resolve (and package when needed) each distinct source once.
        let distinct: BTreeSet<&GitChartSource> = specs.values().collect();
        let resolved = futures::stream::iter(distinct.into_iter().map(|source| {
            let mirror = state.mirrors.get(&source.mirror_key());
            let ready = match mirror {
                Some(m) if m.fetched_once => Ok(()),
                Some(MirrorState {
                    last_error: Some(error),
                    ..
                }) => Err(source_error(source, error.message.clone())),
                _ => Err(source_error(
                    source,
                    "the repository has not been fetched yet",
                )),
            };
            let packaged = &state.packaged;
            async move {
                let result = match ready {
                    Ok(()) => self.resolve_one(source, packaged).await,
                    Err(error) => Err(error),
                };
                (source.clone(), result)
            }
        }))
        .buffer_unordered(self.options.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;
        let mut by_source: HashMap<GitChartSource, Result<ArtifactRef, SourceError>> =
            HashMap::new();
        for (source, result) in resolved {
            if let Ok((artifact, content_id)) = &result {
                state.packaged.insert(
                    (source.mirror_key(), source.path.clone(), content_id.clone()),
                    artifact.clone(),
                );
            }
            by_source.insert(source, result.map(|(artifact, _)| artifact));
        }

        for (release, source) in specs {
            let result = by_source
                .get(source)
                .cloned()
                .unwrap_or_else(|| Err(source_error(source, "not resolved in this pass")));
            if let Ok(artifact) = &result
                && state.digests.get(release) != Some(&artifact.digest)
            {
                state
                    .digests
                    .insert(release.clone(), artifact.digest.clone());
                report.changed.push(release.clone());
            }
            report.releases.insert(release.clone(), result);
        }
        state
            .digests
            .retain(|release, _| specs.contains_key(release));
        state.sources = specs.clone();

        // Evict artifacts nothing uses any more (only while over the store's cap).
        let referenced: BTreeSet<String> = state.digests.values().cloned().collect();
        if let Err(error) = self.artifacts.evict(&referenced) {
            tracing::warn!(%error, "artifact eviction failed");
        }
        state
            .packaged
            .retain(|_, artifact| self.artifacts.contains(&artifact.digest));
        if let Some(metrics) = &self.metrics {
            metrics.live_mirrors.set(registry.len() as i64);
        }
        report
    }

    async fn resolve_one(
        &self,
        source: &GitChartSource,
        packaged: &HashMap<(MirrorKey, String, String), ArtifactRef>,
    ) -> Result<(ArtifactRef, String), SourceError> {
        let key = source.mirror_key();
        let grants = || Grants {
            kube: None,
            git: Some(GitGrant::new(
                source.url.clone(),
                self.mirrors.path_of(&key),
            )),
        };
        let request = request(source);
        let revision: Revision = self
            .plugin
            .resolve(&request, grants())
            .await
            .map_err(|e| source_error(source, plugin_cause(e)))?;
        let cache_key = (
            key.clone(),
            source.path.clone(),
            revision.content_id.clone(),
        );
        if let Some(artifact) = packaged.get(&cache_key)
            && self.artifacts.contains(&artifact.digest)
        {
            // Same chart folder content: keep the artifact (and its revision) unchanged.
            return Ok((artifact.clone(), revision.content_id));
        }
        let chart = self
            .plugin
            .fetch(&request, &revision, grants())
            .await
            .map_err(|e| source_error(source, plugin_cause(e)))?;
        let digest = self
            .artifacts
            .put(&chart.archive, &chart.digest)
            .map_err(|e: ArtifactError| source_error(source, e.to_string()))?;
        let artifact = ArtifactRef {
            digest,
            revision: revision.id,
            chart: chart.metadata.name,
            version: chart.metadata.version,
        };
        Ok((artifact, revision.content_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_interval() {
        let interval = Duration::from_secs(60);
        let delays: Vec<u64> = (1..=8).map(|f| backoff(f, interval).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
