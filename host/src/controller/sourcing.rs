//! The source loop of the operator: on every tick (and when the release loop asks) it runs
//! one source-sync pass over the chart sources of all HelmReleases, publishes each
//! release's artifact, and wakes the release loop only for releases whose artifact (or
//! source error) changed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client};
use tokio::sync::{Notify, RwLock, mpsc};

use crate::api::HelmRelease;
use crate::sources::spec::KnownCredentials;
use crate::sources::sync::{ArtifactRef, SourceSync};
use crate::sources::{ReleaseKey, SecretRef, SourceSpec};

/// The chart source of one HelmRelease, or why its spec names none.
pub fn chart_source_of(hr: &HelmRelease) -> Result<SourceSpec, String> {
    crate::sources::spec::source_of(&hr.spec.chart, &hr.namespace_or_default())
        .map_err(|e| e.to_string())
}

/// What the source loop last decided for one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceState {
    /// The source the decision is for.
    pub source: SourceSpec,
    /// The artifact, or why there is none (naming the source).
    pub artifact: Result<ArtifactRef, String>,
    /// The failure is the spec's own (schema violated, kind not served): no retry helps.
    pub invalid_spec: bool,
}

/// Artifacts published by the source loop, read by the release loop.
#[derive(Default)]
pub struct Artifacts {
    by_release: RwLock<BTreeMap<ReleaseKey, SourceState>>,
    wake: Notify,
}

impl Artifacts {
    /// The source loop's decision for `release`, when it is about `source`.
    pub async fn lookup(&self, release: &ReleaseKey, source: &SourceSpec) -> Option<SourceState> {
        self.by_release
            .read()
            .await
            .get(release)
            .filter(|state| &state.source == source)
            .cloned()
    }

    /// Ask the source loop for a pass now (a release's source is new or changed).
    pub fn request_pass(&self) {
        self.wake.notify_one();
    }
}

/// Settings of the source loop.
#[derive(Debug, Clone, Copy)]
pub struct SourceLoopOptions {
    /// Time between passes when nothing asks for one.
    pub tick: Duration,
    /// Whether a HelmRelease may name credentials in another namespace
    /// ([`super::refs`]); a release that may not is skipped, its Secret never read.
    pub allow_cross_namespace_refs: bool,
}

/// Run the source loop until `stop` is set.
pub async fn run(
    client: Client,
    store: Store<HelmRelease>,
    sync: Arc<SourceSync>,
    artifacts: Arc<Artifacts>,
    changed: mpsc::UnboundedSender<ObjectRef<HelmRelease>>,
    options: SourceLoopOptions,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let resolve_finished = sync.resolve_finished();
    loop {
        // A pass only reads sources and publishes decisions; one cut short by shutdown
        // loses nothing (the next start recomputes everything), so it does not hold the
        // process up.
        tokio::select! {
            _ = pass(&client, &store, &sync, &artifacts, &changed, options.allow_cross_namespace_refs) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let woken = tokio::select! {
            _ = tokio::time::sleep(options.tick) => false,
            _ = artifacts.wake.notified() => true,
            // A slow source's resolve ended: take its result.
            _ = resolve_finished.notified() => true,
            _ = stop.wait_for(|s| *s) => return,
        };
        if woken {
            // Let a burst of new releases arrive before the pass.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tracing::instrument(name = "source_pass", skip_all)]
async fn pass(
    client: &Client,
    store: &Store<HelmRelease>,
    sync: &SourceSync,
    artifacts: &Artifacts,
    changed: &mpsc::UnboundedSender<ObjectRef<HelmRelease>>,
    allow_cross_namespace_refs: bool,
) {
    let mut specs = BTreeMap::new();
    let mut refs = BTreeMap::new();
    for hr in store.state() {
        let key = ReleaseKey {
            namespace: hr.namespace_or_default(),
            name: hr.metadata.name.clone().unwrap_or_default(),
        };
        refs.insert(key.clone(), ObjectRef::from_obj(hr.as_ref()));
        // A spec naming no usable source, or credentials it may not read, is reported by
        // the release loop itself.
        if super::refs::check(&hr, allow_cross_namespace_refs).is_err() {
            continue;
        }
        if let Ok(source) = chart_source_of(&hr) {
            specs.insert(key, source);
        }
    }
    let secrets: BTreeSet<SecretRef> = specs
        .values()
        .filter_map(|s| s.credentials().cloned())
        .collect();
    let mut credentials = KnownCredentials::default();
    for secret in secrets {
        let api: Api<Secret> = Api::namespaced(client.clone(), &secret.namespace);
        match api.get_opt(&secret.name).await {
            Ok(Some(found)) => credentials.insert_secret(secret, &found),
            Ok(None) => credentials.insert_error(secret, "not found".to_owned()),
            Err(error) => credentials.insert_error(secret, format!("cannot be read: {error}")),
        }
    }
    let report = sync.pass(&specs, &credentials, Instant::now()).await;
    let mut published = artifacts.by_release.write().await;
    let mut wake = Vec::new();
    for (key, result) in report.releases {
        let Some(source) = specs.get(&key) else {
            continue;
        };
        let invalid_spec = result.as_ref().is_err_and(|e| e.invalid_spec);
        let state = SourceState {
            source: source.clone(),
            artifact: result.map_err(|e| e.to_string()),
            invalid_spec,
        };
        if published.get(&key) != Some(&state) {
            wake.push(key.clone());
        }
        published.insert(key, state);
    }
    published.retain(|key, _| specs.contains_key(key));
    drop(published);
    for key in &wake {
        if let Some(object) = refs.get(key) {
            let _ = changed.send(object.clone());
        }
    }
    if !report.fetch_failures.is_empty() || !wake.is_empty() {
        tracing::info!(
            releases = specs.len(),
            changed = wake.len(),
            fetch_failures = report.fetch_failures.len(),
            collected = report.collected.len(),
            "source pass"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ChartSource as ChartSpec, HelmReleaseSpec, NamespacedRef, PluginSource};

    fn release(chart: ChartSpec) -> HelmRelease {
        let mut hr = HelmRelease::new(
            "web",
            HelmReleaseSpec {
                chart,
                ..HelmReleaseSpec::default()
            },
        );
        hr.metadata.namespace = Some("apps".into());
        hr
    }

    #[test]
    fn chart_fields_map_to_kinds_and_errors_name_the_field() {
        let none = chart_source_of(&release(ChartSpec::default())).unwrap_err();
        assert!(
            none.starts_with("spec.chart: names no chart source"),
            "{none}"
        );
        let nameless = chart_source_of(&release(ChartSpec {
            repository: Some("https://h/".into()),
            ..ChartSpec::default()
        }))
        .unwrap_err();
        assert!(
            nameless.starts_with("spec.chart.name: missing"),
            "{nameless}"
        );
        let git = chart_source_of(&release(ChartSpec {
            git: Some("https://h/r.git".into()),
            git_ref: Some("v1".into()),
            path: Some("/charts/web/".into()),
            secret_ref: Some(NamespacedRef {
                name: "auth".into(),
                namespace: None,
            }),
            ..ChartSpec::default()
        }))
        .unwrap();
        assert_eq!(git.kind, "git");
        assert_eq!(
            git.spec,
            r#"{"path":"charts/web","ref":"v1","url":"https://h/r.git"}"#
        );
        assert_eq!(git.credentials.unwrap().namespace, "apps");
        let generic = chart_source_of(&release(ChartSpec {
            source: Some(PluginSource {
                kind: "https-url".into(),
                spec: serde_json::json!({"url": "https://h/c.tgz"}),
                secret_ref: None,
            }),
            ..ChartSpec::default()
        }))
        .unwrap();
        assert_eq!(generic.kind, "https-url");
    }
}
