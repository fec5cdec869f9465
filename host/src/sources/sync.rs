//! One source-sync pass: recompute the registry from the current release specs, collect
//! what nothing references, fetch the mirrors that are due (each shared mirror once per
//! interval, however many releases use it), resolve each distinct source once through the
//! source plugin, package only when the chart folder's content changed, and report which
//! releases now have a different artifact.
//!
//! Helm repository sources go the same way with an index cache in place of a mirror: one
//! cache per (repository URL, credentials) shared by every release on it, revalidated once
//! per interval (and at once when a release's source changes), collected after the grace
//! period when nothing references it; each distinct (repository, chart, version) is
//! resolved once per pass and downloaded only when the index points at new bytes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;

use super::artifacts::{ArtifactError, ArtifactStore};
use super::mirrors::{GitCredentials, MirrorError, MirrorStore};
use super::registry::SourceRegistry;
use super::{
    ChartSource, GitChartSource, GitReference, HelmRepositorySource, MirrorKey, ReleaseKey,
    SecretRef,
};
use crate::capabilities::Grants;
use crate::capabilities::git::GitGrant;
use crate::capabilities::http::{
    BasicAuth, CachedUrl, CustomCa, DEFAULT_INDEX_CAP, DEFAULT_RESPONSE_CAP, DEFAULT_TIMEOUT,
    HostPattern, HttpGrant, ResponseCache,
};
use crate::plugins::SourcePlugin;
use crate::plugins::bindings::source::exports::capstan::plugin::source::{
    GitRef, GitSource, HelmRepositorySource as WitHelmRepositorySource, Revision, SourceRequest,
    SourceSpec,
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

/// Limits and grants of Helm repository sources.
#[derive(Debug, Clone)]
pub struct HelmRepositoryOptions {
    /// Hosts a call may reach besides the repository's own origin (e.g. a CDN the index
    /// points chart URLs at). Credentials are never sent to them.
    pub extra_hosts: Vec<HostPattern>,
    /// Largest `index.yaml` accepted.
    pub max_index_bytes: u64,
    /// Largest chart archive accepted.
    pub max_chart_bytes: u64,
    /// Per-request timeout (connect, first byte, between bytes).
    pub timeout: Duration,
}

impl HelmRepositoryOptions {
    /// From the configuration file's `sources.helmRepository` (validated on load; a host
    /// that does not parse is skipped with a warning).
    pub fn from_config(config: &crate::config::HelmRepositoryConfig) -> Self {
        let extra_hosts = config
            .allow_hosts
            .iter()
            .filter_map(|host| match HostPattern::parse(host) {
                Ok(pattern) => Some(pattern),
                Err(error) => {
                    tracing::warn!(%error, "ignoring an allowed host");
                    None
                }
            })
            .collect();
        HelmRepositoryOptions {
            extra_hosts,
            max_index_bytes: config.max_index_mib << 20,
            max_chart_bytes: config.max_chart_mib << 20,
            timeout: Duration::from_millis(config.timeout_ms),
        }
    }
}

impl Default for HelmRepositoryOptions {
    fn default() -> Self {
        HelmRepositoryOptions {
            extra_hosts: Vec::new(),
            max_index_bytes: DEFAULT_INDEX_CAP,
            max_chart_bytes: DEFAULT_RESPONSE_CAP,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Reads the credentials a source's Secret holds.
pub trait CredentialsLookup: Send + Sync {
    /// The git credentials in `secret`, or why they cannot be had.
    fn git(&self, secret: &SecretRef) -> Result<GitCredentials, String>;

    /// A PEM CA bundle in `secret` to trust for a Helm repository over HTTPS, if any.
    fn ca_bundle(&self, _secret: &SecretRef) -> Option<Vec<u8>> {
        None
    }
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
    /// Commit the chart was packaged from (git), or the chart version (Helm repository).
    pub revision: String,
    /// Chart name.
    pub chart: String,
    /// Chart version.
    pub version: String,
}

/// What kind of source an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A git repository.
    Git,
    /// A Helm HTTP repository.
    HelmRepository,
}

/// Why a release has no artifact this pass. Always names the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_error(self))]
pub struct SourceError {
    /// Git repository or Helm repository.
    pub kind: SourceKind,
    /// Repository URL (without user information).
    pub url: String,
    /// Reference followed (git) or version asked for (Helm repository), as text.
    pub reference: String,
    /// Chart folder (git) or chart name (Helm repository).
    pub path: String,
    /// What went wrong.
    pub cause: String,
}

fn describe_error(error: &SourceError) -> String {
    match error.kind {
        SourceKind::Git => format!(
            "git source {} ({}, path `{}`): {}",
            error.url, error.reference, error.path, error.cause
        ),
        SourceKind::HelmRepository => format!(
            "Helm repository {} (chart `{}`, {}): {}",
            error.url, error.path, error.reference, error.cause
        ),
    }
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
    /// Helm repository index caches removed because nothing referenced them for the grace
    /// period.
    pub collected_repositories: Vec<MirrorKey>,
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
    sources: BTreeMap<ReleaseKey, ChartSource>,
    /// The digest each release had last pass.
    digests: BTreeMap<ReleaseKey, String>,
    /// Helm repositories referenced now or within their grace period.
    repository_registry: Option<SourceRegistry>,
    /// Index cache of each tracked Helm repository.
    repositories: HashMap<MirrorKey, RepositoryState>,
    /// Downloaded charts by (repository, chart name, content id from the index).
    charts: HashMap<(MirrorKey, String, String), ArtifactRef>,
}

#[derive(Debug)]
struct RepositoryState {
    index: Arc<ResponseCache>,
    next_refresh: Instant,
}

/// The Helm repository plugin and its limits.
struct HelmRepositories {
    plugin: SourcePlugin,
    options: HelmRepositoryOptions,
}

/// Source sync for git and Helm repository chart sources.
pub struct SourceSync {
    options: SourceSyncOptions,
    mirrors: Arc<MirrorStore>,
    artifacts: Arc<ArtifactStore>,
    plugin: SourcePlugin,
    helm: Option<HelmRepositories>,
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
        kind: SourceKind::Git,
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

/// A URL without its user information (for errors).
fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    }
}

fn repository_error(source: &HelmRepositorySource, cause: impl Into<String>) -> SourceError {
    SourceError {
        kind: SourceKind::HelmRepository,
        url: without_userinfo(&source.url),
        reference: if source.version.trim().is_empty() {
            "latest stable version".to_owned()
        } else {
            format!("version `{}`", source.version.trim())
        },
        path: source.chart.clone(),
        cause: cause.into(),
    }
}

fn repository_request(source: &HelmRepositorySource) -> SourceRequest {
    SourceRequest {
        spec: SourceSpec::HelmRepository(WitHelmRepositorySource {
            url: source.url.trim().to_owned(),
            chart: source.chart.clone(),
            version: source.version.trim().to_owned(),
        }),
    }
}

/// `<repository>/index.yaml`, query kept (where the plugin reads the index).
fn index_url(repository: &str) -> String {
    let repository = repository.trim();
    let (base, query) = match repository.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (repository, None),
    };
    let mut url = format!("{}/index.yaml", base.trim_end_matches('/'));
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
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
            helm: None,
            metrics,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// Also serve Helm repository sources, through `plugin` (the `source-helm-repo`
    /// component), within `options`. Without it such releases get an error saying so.
    pub fn with_helm_repositories(
        mut self,
        plugin: SourcePlugin,
        options: HelmRepositoryOptions,
    ) -> Self {
        self.helm = Some(HelmRepositories { plugin, options });
        self
    }

    /// Number of Helm repository index caches currently tracked (referenced or within
    /// their grace period).
    pub async fn live_repositories(&self) -> usize {
        self.state
            .lock()
            .await
            .repository_registry
            .as_ref()
            .map_or(0, SourceRegistry::len)
    }

    /// Requests sent so far for the index of `repository` (cache revalidations included);
    /// none when the repository is not tracked.
    pub async fn index_requests(&self, repository: &MirrorKey) -> Option<u64> {
        self.state
            .lock()
            .await
            .repositories
            .get(repository)
            .map(|r| r.index.requests())
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

    /// Run one pass over the complete current set of release specs: a map of
    /// [`ChartSource`] (git and Helm repository), or of [`GitChartSource`] alone.
    pub async fn pass<S>(
        &self,
        specs: &BTreeMap<ReleaseKey, S>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
    ) -> PassReport
    where
        S: Clone + Into<ChartSource>,
    {
        let specs: BTreeMap<ReleaseKey, ChartSource> = specs
            .iter()
            .map(|(release, source)| (release.clone(), source.clone().into()))
            .collect();
        let specs = &specs;
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let mut report = PassReport::default();
        let mut git = BTreeMap::new();
        let mut helm = BTreeMap::new();
        for (release, source) in specs {
            match source {
                ChartSource::Git(source) => {
                    git.insert(release.clone(), source.clone());
                }
                ChartSource::HelmRepository(source) => {
                    helm.insert(release.clone(), source.clone());
                }
            }
        }
        self.git_pass(state, &git, credentials, now, &mut report)
            .await;
        self.helm_pass(state, &helm, credentials, now, &mut report)
            .await;

        for release in specs.keys() {
            if let Some(Ok(artifact)) = report.releases.get(release)
                && state.digests.get(release) != Some(&artifact.digest)
            {
                state
                    .digests
                    .insert(release.clone(), artifact.digest.clone());
                report.changed.push(release.clone());
            }
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
        state
            .charts
            .retain(|_, artifact| self.artifacts.contains(&artifact.digest));
        if let Some(metrics) = &self.metrics
            && let Some(registry) = &state.registry
        {
            metrics.live_mirrors.set(registry.len() as i64);
        }
        report
    }

    /// The git part of a pass: mirrors, then one resolve per distinct source.
    async fn git_pass(
        &self,
        state: &mut State,
        specs: &BTreeMap<ReleaseKey, GitChartSource>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
        report: &mut PassReport,
    ) {
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
            if state
                .sources
                .get(release)
                .is_some_and(|old| *old != ChartSource::Git(source.clone()))
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
            report.releases.insert(release.clone(), result);
        }
    }

    /// The Helm repository part of a pass: index caches, then one resolve per distinct
    /// source (the index is fetched once per repository and interval; later calls in the
    /// interval are served from the cache).
    async fn helm_pass(
        &self,
        state: &mut State,
        specs: &BTreeMap<ReleaseKey, HelmRepositorySource>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
        report: &mut PassReport,
    ) {
        let keys: Vec<(ReleaseKey, MirrorKey)> = specs
            .iter()
            .map(|(r, s)| (r.clone(), s.repository_key()))
            .collect();
        let registry = state
            .repository_registry
            .get_or_insert_with(|| SourceRegistry::new(self.options.grace));
        let changes = registry.observe(keys.iter().map(|(r, k)| (r, k)), now);
        for key in &changes.collected {
            state.repositories.remove(key);
            state.charts.retain(|(k, _, _), _| k != key);
        }
        report.collected_repositories = changes.collected;

        // Revalidate each repository's index once per interval, and at once for a
        // repository whose releases changed source.
        let mut changed: BTreeSet<MirrorKey> = BTreeSet::new();
        for (release, source) in specs {
            if state
                .sources
                .get(release)
                .is_some_and(|old| *old != ChartSource::HelmRepository(source.clone()))
            {
                changed.insert(source.repository_key());
            }
        }
        for key in registry.referenced() {
            let entry = state
                .repositories
                .entry(key.clone())
                .or_insert_with(|| RepositoryState {
                    index: ResponseCache::new(),
                    next_refresh: now,
                });
            if now >= entry.next_refresh || changed.contains(key) {
                entry.index.mark_stale().await;
                entry.next_refresh = now + self.options.interval;
            }
        }

        // Resolve each distinct source once (the index is read from the shared cache).
        let distinct: BTreeSet<&HelmRepositorySource> = specs.values().collect();
        let resolved = futures::stream::iter(distinct.into_iter().map(|source| {
            let index = state
                .repositories
                .get(&source.repository_key())
                .map(|r| Arc::clone(&r.index));
            async move {
                let result = match index {
                    Some(index) => self.resolve_repository(source, index, credentials).await,
                    None => Err(repository_error(source, "the repository is not tracked")),
                };
                (source, result)
            }
        }))
        .buffer_unordered(self.options.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;

        // Download each chart the index points at new bytes for, once, however many
        // sources resolved to it.
        type ChartKey = (MirrorKey, String, String);
        let mut wanted: BTreeMap<ChartKey, (&HelmRepositorySource, &Revision, &HttpGrant)> =
            BTreeMap::new();
        for (source, result) in &resolved {
            if let Ok((revision, grant)) = result {
                let key = (
                    source.repository_key(),
                    source.chart.clone(),
                    revision.content_id.clone(),
                );
                let known = state.charts.get(&key).is_some_and(|artifact| {
                    artifact.revision == revision.id && self.artifacts.contains(&artifact.digest)
                });
                if !known {
                    wanted.entry(key).or_insert((*source, revision, grant));
                }
            }
        }
        let fetched = futures::stream::iter(wanted.into_iter().map(
            |(key, (source, revision, grant))| async move {
                (key, self.fetch_repository(source, revision, grant).await)
            },
        ))
        .buffer_unordered(self.options.parallelism.max(1))
        .collect::<Vec<_>>()
        .await;
        let mut failed_fetches: HashMap<ChartKey, SourceError> = HashMap::new();
        for (key, result) in fetched {
            match result {
                Ok(artifact) => {
                    state.charts.insert(key, artifact);
                }
                Err(error) => {
                    failed_fetches.insert(key, error);
                }
            }
        }

        let mut by_source: HashMap<&HelmRepositorySource, Result<ArtifactRef, SourceError>> =
            HashMap::new();
        for (source, result) in &resolved {
            let outcome = match result {
                Err(error) => Err(error.clone()),
                Ok((revision, _)) => {
                    let key = (
                        source.repository_key(),
                        source.chart.clone(),
                        revision.content_id.clone(),
                    );
                    match (state.charts.get(&key), failed_fetches.get(&key)) {
                        (_, Some(error)) => Err(SourceError {
                            reference: repository_error(source, "").reference,
                            ..error.clone()
                        }),
                        (Some(artifact), None) => Ok(artifact.clone()),
                        (None, None) => Err(repository_error(source, "not fetched in this pass")),
                    }
                }
            };
            by_source.insert(*source, outcome);
        }
        for (release, source) in specs {
            let result = by_source
                .get(source)
                .cloned()
                .unwrap_or_else(|| Err(repository_error(source, "not resolved in this pass")));
            report.releases.insert(release.clone(), result);
        }
    }

    /// What a call about `source` may reach: its repository's origin (with its
    /// credentials), the configured hosts, and the shared index cache.
    fn repository_grant(
        &self,
        helm: &HelmRepositories,
        source: &HelmRepositorySource,
        index: Arc<ResponseCache>,
        credentials: &dyn CredentialsLookup,
    ) -> Result<HttpGrant, SourceError> {
        let ca_bundle = source
            .credentials
            .as_ref()
            .and_then(|secret| credentials.ca_bundle(secret));
        let ca = match (&source.credentials, &ca_bundle) {
            (Some(secret), Some(pem)) => Some(CustomCa::from_pem(pem).map_err(|e| {
                repository_error(
                    source,
                    format!(
                        "credentials secret {}/{}: {e}",
                        secret.namespace, secret.name
                    ),
                )
            })?),
            _ => None,
        };
        let auth = match &source.credentials {
            None => None,
            Some(secret) => match credentials.git(secret) {
                Ok(GitCredentials::Basic { username, password }) => {
                    Some(BasicAuth { username, password })
                }
                Ok(GitCredentials::SshKey { .. }) => {
                    return Err(repository_error(
                        source,
                        format!(
                            "credentials secret {}/{}: needs keys `username` and `password` for a Helm repository",
                            secret.namespace, secret.name
                        ),
                    ));
                }
                // A Secret holding only a CA bundle: no basic auth.
                Err(_) if ca.is_some() => None,
                Err(message) => {
                    return Err(repository_error(
                        source,
                        format!(
                            "credentials secret {}/{}: {message}",
                            secret.namespace, secret.name
                        ),
                    ));
                }
            },
        };
        let options = &helm.options;
        let grant = HttpGrant::new(source.url.trim())
            .ok_or_else(|| repository_error(source, "the repository URL is not an http(s) URL"))?;
        Ok(grant
            .with_hosts(options.extra_hosts.iter().cloned())
            .with_credentials(auth)
            .with_ca(ca)
            .with_max_response_bytes(options.max_chart_bytes)
            .with_timeout(options.timeout)
            .with_cached(CachedUrl {
                url: index_url(&source.url),
                cache: index,
                max_bytes: options.max_index_bytes,
            }))
    }

    /// Resolve one Helm repository source to a chart version (and the grant to fetch it
    /// with).
    async fn resolve_repository(
        &self,
        source: &HelmRepositorySource,
        index: Arc<ResponseCache>,
        credentials: &dyn CredentialsLookup,
    ) -> Result<(Revision, HttpGrant), SourceError> {
        let helm = self.helm.as_ref().ok_or_else(|| {
            repository_error(
                source,
                "no Helm repository source plugin is configured (source-helm-repo)",
            )
        })?;
        let grant = self.repository_grant(helm, source, index, credentials)?;
        let grants = Grants {
            kube: None,
            git: None,
            http: Some(grant.clone()),
        };
        let revision = helm
            .plugin
            .resolve(&repository_request(source), grants)
            .await
            .map_err(|e| repository_error(source, plugin_cause(e)))?;
        Ok((revision, grant))
    }

    /// Download the chart at `revision` and store it.
    async fn fetch_repository(
        &self,
        source: &HelmRepositorySource,
        revision: &Revision,
        grant: &HttpGrant,
    ) -> Result<ArtifactRef, SourceError> {
        let helm = self.helm.as_ref().ok_or_else(|| {
            repository_error(source, "no Helm repository source plugin is configured")
        })?;
        let grants = Grants {
            kube: None,
            git: None,
            http: Some(grant.clone()),
        };
        let chart = helm
            .plugin
            .fetch(&repository_request(source), revision, grants)
            .await
            .map_err(|e| repository_error(source, plugin_cause(e)))?;
        let digest = self
            .artifacts
            .put(&chart.archive, &chart.digest)
            .map_err(|e: ArtifactError| repository_error(source, e.to_string()))?;
        Ok(ArtifactRef {
            digest,
            revision: revision.id.clone(),
            chart: chart.metadata.name,
            version: chart.metadata.version,
        })
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
            http: None,
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
    fn index_url_and_errors_hide_nothing_they_should_not() {
        assert_eq!(
            index_url("http://h:1/charts/"),
            "http://h:1/charts/index.yaml"
        );
        assert_eq!(index_url("https://h/c?t=1"), "https://h/c/index.yaml?t=1");
        let source = HelmRepositorySource {
            url: "https://user:secret@h/charts".into(),
            chart: "demo".into(),
            version: String::new(),
            credentials: None,
        };
        let error = repository_error(&source, "boom").to_string();
        assert_eq!(
            error,
            "Helm repository https://h/charts (chart `demo`, latest stable version): boom"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_interval() {
        let interval = Duration::from_secs(60);
        let delays: Vec<u64> = (1..=8).map(|f| backoff(f, interval).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
