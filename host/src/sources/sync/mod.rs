//! One source-sync pass, the same for every source kind: route each release's `(kind,
//! spec)` through the [`SourceCatalog`] (schema checked before any plugin call), derive
//! what the kind declared it needs (a git mirror, HTTP origins, shared documents,
//! credentials keys), recompute the registries of mirrors and shared documents from the
//! current release specs, collect what nothing references, fetch the mirrors that are due
//! (each shared mirror once per interval, however many releases use it), revalidate shared
//! documents once per interval, resolve each distinct source once through its plugin,
//! fetch only when the content id is new, and report which releases now have a different
//! artifact.
//!
//! Backpressure: a pass waits for resolves only briefly ([`RESOLVE_WAIT`]); a source that
//! is slower (a stalled server) keeps resolving in the background, its releases keep what
//! they had, and its result is taken by a later pass (the source loop is woken when it
//! ends). Resolves run in two lanes of `parallelism` slots each, one for sources that
//! last succeeded and one for sources that are failing, so failing sources never hold
//! the slots healthy ones need; at most half the slots go to one server (scheme, host and
//! port) and all but one to one plugin, so many sources on one stalled server, or a slow
//! plugin, cannot fill a lane; a failing source is retried after a backoff with jitter.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use http::Uri;

use super::artifacts::ArtifactStore;
use super::catalog::{KindEntry, SourceCatalog, text_at};
use super::mirrors::{MirrorError, MirrorStore};
use super::registry::SourceRegistry;
use super::{MirrorKey, ReleaseKey, SourceSpec, redact_userinfo};
use crate::backoff::{doubling, jittered};
use crate::capabilities::Grants;
use crate::capabilities::http::{Origin, ResponseCache};
use crate::plugins::bindings::source::exports::capstan::plugin::source::{Revision, SourceRequest};
use crate::plugins::call::CallError;
use crate::telemetry::SourceMetrics;

mod documents;
mod grants;
mod mirror_pass;
mod options;

pub use self::options::{HttpOptions, SourceSyncOptions};
pub use super::spec::{CredentialsLookup, NoCredentials};

/// The artifact a release should run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRef {
    /// `sha256:` digest of the chart archive in the artifact store.
    pub digest: String,
    /// The revision the chart was packaged from (a commit, a chart version, ...).
    pub revision: String,
    /// Chart name.
    pub chart: String,
    /// Chart version.
    pub version: String,
}

/// Why a release has no artifact this pass. Always names the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} source {location}: {cause}")]
pub struct SourceError {
    /// The source kind.
    pub kind: String,
    /// Where the source points (its URL field, or its spec), without user information.
    pub location: String,
    /// What went wrong.
    pub cause: String,
    /// The spec broke the kind's schema or names a kind nobody serves: retrying without a
    /// spec change cannot help.
    pub invalid_spec: bool,
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
    /// Shared document caches removed because nothing referenced them for the grace
    /// period.
    pub collected_documents: Vec<MirrorKey>,
    /// Plugin calls made (`resolve` and `fetch`).
    pub plugin_calls: usize,
}

#[derive(Debug)]
struct MirrorState {
    fetched_once: bool,
    next_attempt: Instant,
    failures: u32,
    last_error: Option<MirrorError>,
}

#[derive(Debug)]
struct DocumentState {
    cache: Arc<ResponseCache>,
    next_refresh: Instant,
}

#[derive(Default)]
struct State {
    mirror_registry: Option<SourceRegistry>,
    mirrors: HashMap<MirrorKey, MirrorState>,
    document_registry: Option<SourceRegistry>,
    documents: HashMap<MirrorKey, DocumentState>,
    /// Fetched artifacts by (kind, content id).
    artifacts: HashMap<(String, String), ArtifactRef>,
    /// The source each release had last pass.
    sources: BTreeMap<ReleaseKey, SourceSpec>,
    /// The digest each release had last pass.
    digests: BTreeMap<ReleaseKey, String>,
    /// Resolves still running, by source.
    resolving: HashMap<SourceSpec, ResolveInFlight>,
    /// Sources whose last resolve failed.
    resolve_failures: HashMap<SourceSpec, ResolveFailure>,
}

/// How long a pass waits for the resolves it started before reporting without the slow
/// ones.
pub const RESOLVE_WAIT: Duration = Duration::from_secs(2);

/// What a resolve gave: the revision and the grants it ran with, or why it failed.
type ResolveOutcome = Result<(Revision, Grants), SourceError>;

/// A resolve running in the background, with the grants it was given (the fetch that
/// follows uses the same).
struct ResolveInFlight {
    task: tokio::task::JoinHandle<Result<Revision, CallError>>,
    grants: Grants,
    /// Set when a pass ended without it: its end then wakes the source loop.
    outlived_pass: Arc<std::sync::atomic::AtomicBool>,
}

/// Consecutive failed resolves of a source and when it may be tried again.
struct ResolveFailure {
    failures: u32,
    next_attempt: Instant,
    error: SourceError,
}

/// Resolve slots: sources that last succeeded (or are new), and sources that are failing.
struct ResolveLanes {
    healthy: Arc<tokio::sync::Semaphore>,
    failing: Arc<tokio::sync::Semaphore>,
    /// Slots per server (half a lane) and per plugin (all but one), made on first use.
    per_server: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
    per_server_slots: usize,
    per_plugin_slots: usize,
}

impl ResolveLanes {
    /// The slots of the server `url` points at (`scheme://host:port`).
    fn server(&self, url: &str) -> Option<Arc<tokio::sync::Semaphore>> {
        let uri: Uri = url.parse().ok()?;
        let server = format!(
            "server {}://{}:{}",
            uri.scheme_str()?,
            uri.host()?,
            uri.port_u16().unwrap_or(0)
        );
        Some(self.slots_of(server, self.per_server_slots))
    }

    /// The slots of the plugin named `name`.
    fn plugin(&self, name: &str) -> Arc<tokio::sync::Semaphore> {
        self.slots_of(format!("plugin {name}"), self.per_plugin_slots)
    }

    fn slots_of(&self, key: String, size: usize) -> Arc<tokio::sync::Semaphore> {
        let mut slots = self.per_server.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            slots
                .entry(key)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(size))),
        )
    }
}

/// What a routed source needs from the host, derived from its kind's capabilities and its
/// spec's fields.
struct Needs<'c> {
    entry: &'c KindEntry,
    spec: serde_json::Value,
    mirror: Option<MirrorKey>,
    /// `(document URL, credentials)` of each shared document.
    documents: Vec<MirrorKey>,
}

/// Source sync over any source kind the catalog serves.
pub struct SourceSync {
    options: SourceSyncOptions,
    http: HttpOptions,
    mirrors: Arc<MirrorStore>,
    artifacts: Arc<ArtifactStore>,
    /// Replaced whole when the configuration's source plugins change; a pass keeps the
    /// catalog it started with.
    catalog: std::sync::RwLock<Arc<SourceCatalog>>,
    metrics: Option<Arc<SourceMetrics>>,
    state: tokio::sync::Mutex<State>,
    lanes: ResolveLanes,
    /// Notified when a background resolve ends (the source loop runs a pass then).
    resolve_finished: Arc<tokio::sync::Notify>,
}

/// Where a source points, for messages: the URL its kind's capabilities name, followed by
/// the spec's other fields (`file:///r (path: chart, ref: main)`); the whole spec when no
/// URL field is known. User information is removed either way.
fn location(source: &SourceSpec, entry: Option<&KindEntry>) -> String {
    let spec = source.spec_value();
    let pointer = entry.and_then(|entry| {
        let capabilities = &entry.declared.capabilities;
        capabilities
            .git_url_field
            .iter()
            .chain(capabilities.http.iter().map(|h| &h.url_field))
            .find(|pointer| text_at(&spec, pointer).is_some())
            .cloned()
    });
    let (Some(pointer), Some(fields)) = (pointer, spec.as_object()) else {
        return redact_userinfo(&source.spec);
    };
    let url = text_at(&spec, &pointer).unwrap_or_default();
    let top_field = pointer.trim_start_matches('/');
    let others: Vec<String> = fields
        .iter()
        .filter(|(name, _)| name.as_str() != top_field)
        .map(|(name, value)| match value {
            serde_json::Value::String(text) => format!("{name}: {text}"),
            other => format!("{name}: {other}"),
        })
        .collect();
    if others.is_empty() {
        redact_userinfo(url)
    } else {
        redact_userinfo(&format!("{url} ({})", others.join(", ")))
    }
}

fn source_error(
    source: &SourceSpec,
    entry: Option<&KindEntry>,
    cause: impl Into<String>,
) -> SourceError {
    SourceError {
        kind: source.kind.clone(),
        location: location(source, entry),
        cause: cause.into(),
        invalid_spec: false,
    }
}

fn plugin_cause(error: CallError) -> String {
    match error.cause {
        crate::plugins::call::CallFailure::Returned { message, .. } => message,
        _ => error.to_string(),
    }
}

/// `relative` resolved under `base` (`<base>/<relative>`, `base`'s query kept).
fn document_url(base: &str, relative: &str) -> String {
    let base = base.trim();
    let (path, query) = match base.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (base, None),
    };
    let mut url = format!(
        "{}/{}",
        path.trim_end_matches('/'),
        relative.trim_start_matches('/')
    );
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

/// The origins a URL field grants: its own scheme for `http(s)://` URLs; `https` (and
/// plain `http` when `insecure`) for any other scheme (`oci://`, ...). `None` when the
/// text has no host.
fn origins_of(url: &str, insecure: bool) -> Option<Vec<Origin>> {
    let uri: Uri = url.trim().parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let host = authority.host().to_ascii_lowercase();
    let port = authority.port_u16();
    let origin = |scheme: &str, default_port| Origin {
        scheme: scheme.to_owned(),
        host: host.clone(),
        port: port.unwrap_or(default_port),
    };
    let mut origins = Vec::new();
    match scheme.as_str() {
        "http" => origins.push(origin("http", 80)),
        "https" => origins.push(origin("https", 443)),
        _ => origins.push(origin("https", 443)),
    }
    if insecure && scheme != "http" {
        origins.push(origin("http", 80));
    }
    Some(origins)
}

/// Delay before retry `failures` of a source: 1 s doubling, at most the pass interval.
fn backoff(failures: u32, interval: Duration) -> Duration {
    doubling(failures, Duration::from_secs(1), interval)
}

/// [`backoff`] plus up to 20 % jitter, so that sources failing together (one server down
/// for many releases) are not retried in lockstep.
fn backoff_with_jitter(failures: u32, interval: Duration) -> Duration {
    jittered(backoff(failures, interval))
}

impl SourceSync {
    /// Source sync over `mirrors` and `artifacts`, serving the kinds of `catalog`.
    pub fn new(
        options: SourceSyncOptions,
        mirrors: Arc<MirrorStore>,
        artifacts: Arc<ArtifactStore>,
        catalog: Arc<SourceCatalog>,
        metrics: Option<Arc<SourceMetrics>>,
    ) -> Self {
        SourceSync {
            options,
            http: HttpOptions::default(),
            mirrors,
            artifacts,
            catalog: std::sync::RwLock::new(catalog),
            metrics,
            state: tokio::sync::Mutex::new(State::default()),
            lanes: ResolveLanes {
                healthy: Arc::new(tokio::sync::Semaphore::new(options.parallelism.max(1))),
                failing: Arc::new(tokio::sync::Semaphore::new(options.parallelism.max(1))),
                per_server: std::sync::Mutex::new(HashMap::new()),
                per_server_slots: (options.parallelism / 2).max(1),
                per_plugin_slots: options.parallelism.saturating_sub(1).max(1),
            },
            resolve_finished: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Notified whenever a resolve that outlived its pass ends.
    pub fn resolve_finished(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.resolve_finished)
    }

    /// Sources whose resolve is still running in the background.
    pub async fn resolves_in_flight(&self) -> usize {
        self.state.lock().await.resolving.len()
    }

    /// Use these HTTP limits and extra hosts.
    pub fn with_http(mut self, http: HttpOptions) -> Self {
        self.http = http;
        self
    }

    /// The catalog of source kinds in force.
    pub fn catalog(&self) -> Arc<SourceCatalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serve the kinds of `catalog` from the next pass on (a configuration reload).
    pub fn replace_catalog(&self, catalog: Arc<SourceCatalog>) {
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = catalog;
    }

    /// Number of shared document caches currently tracked (referenced or within their
    /// grace period).
    pub async fn live_documents(&self) -> usize {
        self.state
            .lock()
            .await
            .document_registry
            .as_ref()
            .map_or(0, SourceRegistry::len)
    }

    /// Requests sent so far for the shared document `key` (revalidations included); none
    /// when it is not tracked.
    pub async fn document_requests(&self, key: &MirrorKey) -> Option<u64> {
        self.state
            .lock()
            .await
            .documents
            .get(key)
            .map(|d| d.cache.requests())
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
            .mirror_registry
            .as_ref()
            .map_or(0, SourceRegistry::len)
    }

    /// Passes until every release in `specs` has a decision (a one-shot caller, such as
    /// `capstan source fetch`, has no later pass to take a slow resolve's result).
    pub async fn pass_until_decided(
        &self,
        specs: &BTreeMap<ReleaseKey, SourceSpec>,
        credentials: &dyn CredentialsLookup,
    ) -> PassReport {
        loop {
            let report = self.pass(specs, credentials, Instant::now()).await;
            let decided = specs.keys().all(|r| report.releases.contains_key(r));
            if decided || self.resolves_in_flight().await == 0 {
                return report;
            }
        }
    }

    /// Run one pass over the complete current set of release sources.
    pub async fn pass(
        &self,
        specs: &BTreeMap<ReleaseKey, SourceSpec>,
        credentials: &dyn CredentialsLookup,
        now: Instant,
    ) -> PassReport {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let mut report = PassReport::default();
        let catalog = self.catalog();

        // Route every distinct source; a source that cannot be routed fails its releases
        // without any plugin call.
        let distinct: BTreeSet<&SourceSpec> = specs.values().collect();
        let mut routed: BTreeMap<&SourceSpec, Needs<'_>> = BTreeMap::new();
        let mut failed: HashMap<&SourceSpec, SourceError> = HashMap::new();
        for source in distinct {
            match self.needs(&catalog, source) {
                Ok(needs) => {
                    routed.insert(source, needs);
                }
                Err(error) => {
                    failed.insert(source, error);
                }
            }
        }

        self.sync_mirrors(state, specs, &routed, credentials, now, &mut report)
            .await;
        self.refresh_documents(state, specs, &routed, now, &mut report)
            .await;

        // Resolve each routed source once: start what is due, wait briefly, and take what
        // has ended; a slow source's releases keep what they had until it ends.
        let documents = &state.documents;
        let mirrors = &state.mirrors;
        let resolving = &mut state.resolving;
        let resolve_failures = &mut state.resolve_failures;
        resolving.retain(|source, in_flight| {
            let wanted = routed.contains_key(source);
            if !wanted {
                in_flight.task.abort();
            }
            wanted
        });
        resolve_failures.retain(|source, _| routed.contains_key(source));
        self.lanes
            .per_server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, slots| Arc::strong_count(slots) > 1);
        let mut decided: Vec<(&SourceSpec, ResolveOutcome)> = Vec::new();
        let mut waiting: Vec<&SourceSpec> = Vec::new();
        for (source, needs) in &routed {
            let ready = match &needs.mirror {
                None => Ok(()),
                Some(key) => match mirrors.get(key) {
                    Some(m) if m.fetched_once => Ok(()),
                    Some(MirrorState {
                        last_error: Some(error),
                        ..
                    }) => Err(source_error(
                        source,
                        Some(needs.entry),
                        error.message.clone(),
                    )),
                    _ => Err(source_error(
                        source,
                        Some(needs.entry),
                        "the repository has not been fetched yet",
                    )),
                },
            };
            if let Err(error) = ready {
                decided.push((source, Err(error)));
                continue;
            }
            if !resolving.contains_key(*source) {
                if let Some(failure) = resolve_failures.get(*source)
                    && now < failure.next_attempt
                {
                    decided.push((source, Err(failure.error.clone())));
                    continue;
                }
                let grants = match self.grants(source, needs, documents, credentials) {
                    Ok(grants) => grants,
                    Err(error) => {
                        decided.push((source, Err(error)));
                        continue;
                    }
                };
                let lane = if resolve_failures.contains_key(*source) {
                    Arc::clone(&self.lanes.failing)
                } else {
                    Arc::clone(&self.lanes.healthy)
                };
                let plugin = Arc::clone(&needs.entry.plugin);
                let request = SourceRequest {
                    kind: source.kind.clone(),
                    spec: source.spec.clone(),
                };
                let call_grants = grants.clone();
                let finished = Arc::clone(&self.resolve_finished);
                let outlived_pass = Arc::new(std::sync::atomic::AtomicBool::new(false));
                let outlived = Arc::clone(&outlived_pass);
                let server = needs
                    .documents
                    .first()
                    .or(needs.mirror.as_ref())
                    .and_then(|key| self.lanes.server(&key.url));
                let plugin_slots = self.lanes.plugin(needs.entry.plugin.name());
                let task = tokio::spawn(async move {
                    // The server's and the plugin's slots first, so that waiting for them
                    // holds no lane slot. The semaphores are never closed.
                    let _server_slot = match server {
                        Some(server) => server.acquire_owned().await.ok(),
                        None => None,
                    };
                    let _plugin_slot = plugin_slots.acquire_owned().await;
                    let _slot = lane.acquire_owned().await;
                    let result = plugin.resolve(&request, call_grants).await;
                    if outlived.load(std::sync::atomic::Ordering::Acquire) {
                        finished.notify_one();
                    }
                    result
                });
                resolving.insert(
                    (*source).clone(),
                    ResolveInFlight {
                        task,
                        grants,
                        outlived_pass,
                    },
                );
                report.plugin_calls += 1;
            }
            waiting.push(source);
        }
        let wait_until = tokio::time::Instant::now() + RESOLVE_WAIT;
        while tokio::time::Instant::now() < wait_until
            && waiting.iter().any(|source| {
                resolving
                    .get(*source)
                    .is_some_and(|f| !f.task.is_finished())
            })
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut still_resolving: BTreeSet<&SourceSpec> = BTreeSet::new();
        for source in waiting {
            let finished = resolving
                .get(source)
                .is_some_and(|in_flight| in_flight.task.is_finished());
            let Some(in_flight) = finished.then(|| resolving.remove(source)).flatten() else {
                if let Some(in_flight) = resolving.get(source) {
                    in_flight
                        .outlived_pass
                        .store(true, std::sync::atomic::Ordering::Release);
                }
                still_resolving.insert(source);
                continue;
            };
            let entry = routed.get(source).map(|n| n.entry);
            let result = match in_flight.task.await {
                Ok(Ok(revision)) => Ok((revision, in_flight.grants)),
                Ok(Err(error)) => Err(source_error(source, entry, plugin_cause(error))),
                Err(error) => Err(source_error(
                    source,
                    entry,
                    format!("the resolve task ended abnormally: {error}"),
                )),
            };
            match &result {
                Ok(_) => {
                    resolve_failures.remove(source);
                }
                Err(error) => {
                    let failures = resolve_failures.get(source).map_or(0, |f| f.failures) + 1;
                    resolve_failures.insert(
                        source.clone(),
                        ResolveFailure {
                            failures,
                            next_attempt: now
                                + backoff_with_jitter(failures, self.options.interval),
                            error: error.clone(),
                        },
                    );
                }
            }
            decided.push((source, result));
        }
        let resolved = decided;

        // Fetch each new content once, however many sources resolved to it.
        type ContentKey = (String, String);
        let mut wanted: BTreeMap<ContentKey, (&SourceSpec, &Revision, &Grants)> = BTreeMap::new();
        for (source, result) in &resolved {
            if let Ok((revision, grants)) = result {
                let key = (source.kind.clone(), revision.content_id.clone());
                let known = state
                    .artifacts
                    .get(&key)
                    .is_some_and(|artifact| self.artifacts.contains(&artifact.digest));
                if !known {
                    wanted.entry(key).or_insert((*source, revision, grants));
                }
            }
        }
        report.plugin_calls += wanted.len();
        let fetched =
            futures::stream::iter(wanted.into_iter().map(|(key, (source, revision, grants))| {
                let entry = routed.get(source).map(|n| n.entry);
                async move { (key, self.fetch_one(source, entry, revision, grants).await) }
            }))
            .buffer_unordered(self.options.parallelism.max(1))
            .collect::<Vec<_>>()
            .await;
        let mut failed_fetches: HashMap<ContentKey, SourceError> = HashMap::new();
        for (key, result) in fetched {
            match result {
                Ok(artifact) => {
                    state.artifacts.insert(key, artifact);
                }
                Err(error) => {
                    failed_fetches.insert(key, error);
                }
            }
        }

        let mut by_source: HashMap<&SourceSpec, Result<ArtifactRef, SourceError>> = HashMap::new();
        for (source, result) in &resolved {
            let entry = routed.get(source).map(|n| n.entry);
            let outcome = match result {
                Err(error) => Err(error.clone()),
                Ok((revision, _)) => {
                    let key = (source.kind.clone(), revision.content_id.clone());
                    match (state.artifacts.get(&key), failed_fetches.get(&key)) {
                        (_, Some(error)) => Err(SourceError {
                            location: location(source, entry),
                            ..error.clone()
                        }),
                        (Some(artifact), None) => Ok(artifact.clone()),
                        (None, None) => {
                            Err(source_error(source, entry, "not fetched in this pass"))
                        }
                    }
                }
            };
            by_source.insert(*source, outcome);
        }
        for (source, error) in failed {
            by_source.insert(source, Err(error));
        }
        for (release, source) in specs {
            if still_resolving.contains(source) {
                continue;
            }
            let result = by_source
                .get(source)
                .cloned()
                .unwrap_or_else(|| Err(source_error(source, None, "not resolved in this pass")));
            report.releases.insert(release.clone(), result);
        }

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
            .artifacts
            .retain(|_, artifact| self.artifacts.contains(&artifact.digest));
        if let Some(metrics) = &self.metrics
            && let Some(registry) = &state.mirror_registry
        {
            metrics.live_mirrors.set(registry.len() as i64);
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls_keep_the_query() {
        assert_eq!(
            document_url("http://h:1/charts/", "index.yaml"),
            "http://h:1/charts/index.yaml"
        );
        assert_eq!(
            document_url("https://h/c?t=1", "index.yaml"),
            "https://h/c/index.yaml?t=1"
        );
    }

    #[test]
    fn url_fields_grant_their_origin_and_plain_http_only_when_insecure() {
        let shown = |url, insecure| {
            origins_of(url, insecure)
                .unwrap()
                .iter()
                .map(Origin::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(shown("https://h/x", false), ["https://h:443"]);
        assert_eq!(shown("http://h:8080/x", false), ["http://h:8080"]);
        assert_eq!(
            shown("oci://r.example/charts/a", false),
            ["https://r.example:443"]
        );
        assert_eq!(
            shown("oci://127.0.0.1:5000/charts/a", true),
            ["https://127.0.0.1:5000", "http://127.0.0.1:5000"]
        );
        assert!(origins_of("not a url", false).is_none());
    }

    #[test]
    fn errors_hide_user_information() {
        let source = SourceSpec::new(
            "helm-repository",
            &serde_json::json!({"url": "https://user:secret@h/charts", "chart": "demo"}),
            None,
        );
        let error = source_error(&source, None, "boom").to_string();
        assert!(!error.contains("secret"), "{error}");
        assert!(error.starts_with("helm-repository source {"), "{error}");
        assert!(error.ends_with(": boom"), "{error}");
    }

    #[test]
    fn backoff_doubles_up_to_the_interval() {
        let interval = Duration::from_secs(60);
        let delays: Vec<u64> = (1..=8).map(|f| backoff(f, interval).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
