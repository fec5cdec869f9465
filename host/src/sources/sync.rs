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

use super::artifacts::{ArtifactError, ArtifactStore};
use super::catalog::{KindEntry, RouteError, SourceCatalog, flag_at, text_at, urls_at};
use super::mirrors::{GitAccess, MirrorError, MirrorStore};
use super::registry::SourceRegistry;
use super::{MirrorKey, ReleaseKey, SecretRef, SourceSpec, redact_userinfo};
use crate::capabilities::Grants;
use crate::capabilities::credentials::CredentialsGrant;
use crate::capabilities::egress::EgressPolicy;
use crate::capabilities::git::GitGrant;
use crate::capabilities::http::{
    BasicAuth, CachedUrl, CustomCa, DEFAULT_INDEX_CAP, DEFAULT_RESPONSE_CAP, DEFAULT_TIMEOUT,
    HostPattern, HttpGrant, Origin, ResponseCache,
};
use crate::plugins::bindings::source::exports::capstan::plugin::source::{Revision, SourceRequest};
use crate::plugins::call::CallError;
use crate::telemetry::SourceMetrics;

/// Timing of source sync.
#[derive(Debug, Clone, Copy)]
pub struct SourceSyncOptions {
    /// How often each mirror is fetched and each shared document revalidated.
    pub interval: Duration,
    /// How long an unreferenced mirror or document is kept before it is removed.
    pub grace: Duration,
    /// Most mirror fetches and plugin calls in flight at once.
    pub parallelism: usize,
}

/// Limits and grants of HTTP for source plugins.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Hosts a call may reach besides the origins of its spec (e.g. a CDN an index points
    /// chart URLs at). Credentials are never sent to them.
    pub extra_hosts: Vec<HostPattern>,
    /// Largest shared document (e.g. `index.yaml`) accepted.
    pub max_document_bytes: u64,
    /// Largest other response (e.g. a chart archive) accepted.
    pub max_response_bytes: u64,
    /// Per-request timeout (connect, first byte, between bytes).
    pub timeout: Duration,
    /// Which addresses source URLs may reach (HTTP requests and git remotes).
    pub egress: Arc<EgressPolicy>,
}

impl HttpOptions {
    /// From the configuration file's `sources.http` and `sources.egress` (validated on
    /// load; a host that does not parse is skipped with a warning).
    pub fn from_config(sources: &crate::config::SourcesConfig) -> Self {
        let config = &sources.http;
        let egress = sources.egress.policy().unwrap_or_else(|error| {
            tracing::warn!(%error, "ignoring the egress exceptions");
            EgressPolicy::public_only()
        });
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
        HttpOptions {
            extra_hosts,
            max_document_bytes: config.max_index_mib << 20,
            max_response_bytes: config.max_chart_mib << 20,
            timeout: Duration::from_millis(config.timeout_ms),
            egress: Arc::new(egress),
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            extra_hosts: Vec::new(),
            max_document_bytes: DEFAULT_INDEX_CAP,
            max_response_bytes: DEFAULT_RESPONSE_CAP,
            timeout: DEFAULT_TIMEOUT,
            egress: Arc::new(EgressPolicy::public_only()),
        }
    }
}

/// Reads the data of a source's credentials Secret.
pub trait CredentialsLookup: Send + Sync {
    /// The Secret's data, or why it cannot be had.
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String>;

    /// How to reach a git remote with `secret` (credentials, known hosts, CA), or why it
    /// cannot be had.
    fn git(&self, secret: &SecretRef) -> Result<GitAccess, String> {
        super::spec::git_access(&self.data(secret)?)
    }

    /// A PEM CA bundle in `secret` to trust for HTTPS, if any.
    fn ca_bundle(&self, secret: &SecretRef) -> Option<Vec<u8>> {
        self.data(secret)
            .ok()
            .and_then(|d| super::spec::ca_bundle(&d))
    }
}

/// No credentials available anywhere (every lookup fails).
pub struct NoCredentials;

impl CredentialsLookup for NoCredentials {
    fn data(&self, secret: &SecretRef) -> Result<BTreeMap<String, Vec<u8>>, String> {
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

/// Retry delay after `failures` consecutive failed fetches: doubling from 1 s, never
/// longer than the interval.
fn backoff(failures: u32, interval: Duration) -> Duration {
    Duration::from_secs(1u64 << failures.min(16).saturating_sub(1)).min(interval)
}

/// [`backoff`] plus up to 20 % jitter, so that sources failing together (one server down
/// for many releases) are not retried in lockstep.
fn backoff_with_jitter(failures: u32, interval: Duration) -> Duration {
    let base = backoff(failures, interval);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let fifth = base.as_millis() as u64 / 5;
    base + Duration::from_millis(u64::from(nanos) % fifth.max(1))
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

    /// Route `source` and derive what it needs.
    fn needs<'c>(
        &self,
        catalog: &'c SourceCatalog,
        source: &SourceSpec,
    ) -> Result<Needs<'c>, SourceError> {
        let spec: serde_json::Value = serde_json::from_str(&source.spec)
            .map_err(|e| source_error(source, None, format!("spec is not JSON: {e}")))?;
        let entry = catalog.route(&source.kind, &spec).map_err(|error| {
            let entry = catalog.kind(&source.kind).ok();
            SourceError {
                invalid_spec: matches!(
                    error,
                    RouteError::Invalid(_) | RouteError::UnknownKind { .. }
                ),
                ..source_error(source, entry, error.to_string())
            }
        })?;
        let capabilities = &entry.declared.capabilities;
        let mirror = match &capabilities.git_url_field {
            None => None,
            Some(pointer) => {
                let url = text_at(&spec, pointer).ok_or_else(|| {
                    source_error(
                        source,
                        Some(entry),
                        format!("spec field {pointer} (the git repository URL) is missing or not a string"),
                    )
                })?;
                // The git capability's rule: a credentials Secret goes to a plain `http://`
                // remote only when the spec's top-level `insecure` is true.
                if let Some(secret) = &source.credentials
                    && url.trim().to_ascii_lowercase().starts_with("http://")
                    && !flag_at(&spec, Some("/insecure"))
                {
                    return Err(source_error(
                        source,
                        Some(entry),
                        format!(
                            "credentials secret {}/{} would be sent over plain HTTP to {}: use an https:// URL, or set `insecure: true` in the source spec",
                            secret.namespace,
                            secret.name,
                            redact_userinfo(url.trim())
                        ),
                    ));
                }
                Some(MirrorKey {
                    url: url.trim().to_owned(),
                    credentials: source.credentials.clone(),
                })
            }
        };
        let mut documents = Vec::new();
        for access in &capabilities.http {
            let (Some(document), Some(urls)) =
                (&access.shared_document, urls_at(&spec, &access.url_field))
            else {
                continue;
            };
            for url in urls {
                documents.push(MirrorKey {
                    url: document_url(url, document),
                    credentials: source.credentials.clone(),
                });
            }
        }
        Ok(Needs {
            entry,
            spec,
            mirror,
            documents,
        })
    }

    /// The grants of a call about `source`.
    fn grants(
        &self,
        source: &SourceSpec,
        needs: &Needs<'_>,
        documents: &HashMap<MirrorKey, DocumentState>,
        credentials: &dyn CredentialsLookup,
    ) -> Result<Grants, SourceError> {
        let fail = |cause: String| source_error(source, Some(needs.entry), cause);
        let capabilities = &needs.entry.declared.capabilities;
        let secret_data = match &source.credentials {
            None => None,
            Some(secret) => Some(credentials.data(secret).map_err(|message| {
                fail(format!(
                    "credentials secret {}/{}: {message}",
                    secret.namespace, secret.name
                ))
            })?),
        };
        let git = needs
            .mirror
            .as_ref()
            .map(|key| GitGrant::new(key.url.clone(), self.mirrors.path_of(key)));
        let http = if capabilities.http.is_empty() {
            None
        } else {
            let mut grant = HttpGrant::empty()
                .with_egress(Arc::clone(&self.http.egress))
                .with_hosts(self.http.extra_hosts.iter().cloned())
                .with_max_response_bytes(self.http.max_response_bytes)
                .with_timeout(self.http.timeout);
            let mut wants_credentials = false;
            // A credentialed URL over plain HTTP the spec did not mark `insecure`.
            let mut plain_http: Option<String> = None;
            for access in &capabilities.http {
                let Some(urls) = urls_at(&needs.spec, &access.url_field) else {
                    return Err(fail(format!(
                        "spec field {} (URLs the kind reaches) is neither a string nor a list of strings",
                        access.url_field
                    )));
                };
                for url in urls {
                    let insecure = flag_at(&needs.spec, access.insecure_field.as_deref());
                    let origins = origins_of(url, insecure).ok_or_else(|| {
                        fail(format!(
                            "spec field {}: `{}` is not a URL with a host",
                            access.url_field,
                            redact_userinfo(url)
                        ))
                    })?;
                    for origin in origins {
                        grant = grant.with_origin(origin, access.send_credentials);
                    }
                    wants_credentials |= access.send_credentials;
                    if access.send_credentials
                        && !insecure
                        && url.trim().to_ascii_lowercase().starts_with("http://")
                    {
                        plain_http.get_or_insert_with(|| redact_userinfo(url));
                    }
                    if let Some(document) = &access.shared_document {
                        let key = MirrorKey {
                            url: document_url(url, document),
                            credentials: source.credentials.clone(),
                        };
                        if let Some(state) = documents.get(&key) {
                            grant = grant.with_cached(CachedUrl {
                                url: key.url.clone(),
                                cache: Arc::clone(&state.cache),
                                max_bytes: self.http.max_document_bytes,
                            });
                        }
                    }
                }
            }
            if let (Some(data), Some(secret)) = (&secret_data, &source.credentials) {
                if let Some(pem) = super::spec::ca_bundle(data) {
                    let ca = CustomCa::from_pem(&pem).map_err(|e| {
                        fail(format!(
                            "credentials secret {}/{}: {e}",
                            secret.namespace, secret.name
                        ))
                    })?;
                    grant = grant.with_ca(Some(ca));
                }
                if wants_credentials {
                    let text = |key: &str| {
                        data.get(key)
                            .map(|v| String::from_utf8_lossy(v).into_owned())
                    };
                    if let (Some(username), Some(password)) = (text("username"), text("password")) {
                        // Credentials never cross the network in clear unless the spec
                        // says so.
                        if let Some(url) = plain_http {
                            let insecure = capabilities
                                .http
                                .iter()
                                .find_map(|a| a.insecure_field.as_deref())
                                .map(|field| {
                                    format!(
                                        "set `{}: true` in the source spec",
                                        field.trim_start_matches('/')
                                    )
                                })
                                .unwrap_or_else(|| {
                                    "this source kind cannot be told to allow it".to_owned()
                                });
                            return Err(fail(format!(
                                "credentials secret {}/{} would be sent over plain HTTP to {url}: use an https:// URL, or {insecure}",
                                secret.namespace, secret.name
                            )));
                        }
                        grant = grant.with_credentials(Some(BasicAuth { username, password }));
                    }
                }
            }
            Some(grant)
        };
        let credentials_grant = (!capabilities.secret_keys.is_empty()).then(|| {
            CredentialsGrant::new(
                capabilities.secret_keys.iter().cloned(),
                secret_data.as_ref(),
            )
        });
        Ok(Grants {
            kube: None,
            git,
            http,
            credentials: credentials_grant,
            post_render: None,
            release_context: None,
            folder_files: None,
        })
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

    /// Mirrors: recompute references, collect, fetch the due ones (each once).
    async fn sync_mirrors(
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

    /// Shared documents: recompute references, collect, and mark stale once per interval
    /// (and at once for a document whose releases changed source).
    async fn refresh_documents(
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
    async fn fetch_one(
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
