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
use crate::sources::spec::{KnownCredentials, ca_from_secret, credentials_from_secret};
use crate::sources::sync::{ArtifactRef, SourceSync};
use crate::sources::{
    ChartSource, GitChartSource, GitReference, HelmRepositorySource, ReleaseKey, SecretRef,
};

/// The chart source of one HelmRelease, or why its spec names none the operator serves.
pub fn chart_source_of(hr: &HelmRelease) -> Result<ChartSource, String> {
    let chart = &hr.spec.chart;
    let namespace = hr.namespace_or_default();
    let secret = |r: &crate::api::NamespacedRef| SecretRef {
        namespace: r.namespace.clone().unwrap_or_else(|| namespace.clone()),
        name: r.name.clone(),
    };
    let Some(url) = chart.git.as_ref().filter(|u| !u.is_empty()) else {
        let Some(repository) = chart.repository.as_ref().filter(|u| !u.is_empty()) else {
            return Err(
                "spec.chart: set git (with path) or repository (with name and version)".to_owned(),
            );
        };
        let Some(name) = chart.name.as_ref().filter(|n| !n.is_empty()) else {
            return Err("spec.chart.name: missing (the chart's name in the repository)".to_owned());
        };
        return Ok(ChartSource::HelmRepository(HelmRepositorySource {
            url: repository.clone(),
            chart: name.clone(),
            version: chart.version.clone().unwrap_or_default(),
            credentials: chart.chart_pull_secret.as_ref().map(secret),
        }));
    };
    let reference = GitReference::from_ref_field(chart.git_ref.as_deref());
    Ok(ChartSource::Git(GitChartSource {
        url: url.clone(),
        reference,
        path: chart
            .path
            .as_deref()
            .unwrap_or_default()
            .trim_matches('/')
            .to_owned(),
        credentials: chart.secret_ref.as_ref().map(secret),
    }))
}

/// What the source loop last decided for one release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceState {
    /// The source the decision is for.
    pub source: ChartSource,
    /// The artifact, or why there is none (naming the source).
    pub artifact: Result<ArtifactRef, String>,
}

/// Artifacts published by the source loop, read by the release loop.
#[derive(Default)]
pub struct Artifacts {
    by_release: RwLock<BTreeMap<ReleaseKey, SourceState>>,
    wake: Notify,
}

impl Artifacts {
    /// The source loop's decision for `release`, when it is about `source`.
    pub async fn lookup(&self, release: &ReleaseKey, source: &ChartSource) -> Option<SourceState> {
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
    loop {
        pass(&client, &store, &sync, &artifacts, &changed).await;
        let woken = tokio::select! {
            _ = tokio::time::sleep(options.tick) => false,
            _ = artifacts.wake.notified() => true,
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
) {
    let mut specs = BTreeMap::new();
    let mut refs = BTreeMap::new();
    for hr in store.state() {
        let key = ReleaseKey {
            namespace: hr.namespace_or_default(),
            name: hr.metadata.name.clone().unwrap_or_default(),
        };
        refs.insert(key.clone(), ObjectRef::from_obj(hr.as_ref()));
        // A spec naming no usable source is reported by the release loop itself.
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
        let read = match api.get_opt(&secret.name).await {
            Ok(Some(found)) => {
                if let Some(ca) = ca_from_secret(&found) {
                    credentials.1.insert(secret.clone(), ca);
                }
                credentials_from_secret(&found)
            }
            Ok(None) => Err("not found".to_owned()),
            Err(error) => Err(format!("cannot be read: {error}")),
        };
        credentials.0.insert(secret, read);
    }
    let report = sync.pass(&specs, &credentials, Instant::now()).await;
    let mut published = artifacts.by_release.write().await;
    let mut wake = Vec::new();
    for (key, result) in report.releases {
        let Some(source) = specs.get(&key) else {
            continue;
        };
        let state = SourceState {
            source: source.clone(),
            artifact: result.map_err(|e| e.to_string()),
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
    use crate::api::{ChartSource as ChartSpec, HelmReleaseSpec};

    fn release(chart: ChartSpec) -> HelmRelease {
        let mut hr = HelmRelease::new(
            "a",
            HelmReleaseSpec {
                chart,
                ..HelmReleaseSpec::default()
            },
        );
        hr.metadata.namespace = Some("n".into());
        hr
    }

    #[test]
    fn a_spec_without_a_usable_source_is_refused_naming_the_field() {
        let none = chart_source_of(&release(ChartSpec::default())).unwrap_err();
        assert!(none.starts_with("spec.chart: set git"), "{none}");
        let nameless = chart_source_of(&release(ChartSpec {
            repository: Some("https://charts.example.com/".into()),
            ..ChartSpec::default()
        }))
        .unwrap_err();
        assert!(
            nameless.starts_with("spec.chart.name: missing"),
            "{nameless}"
        );
    }

    #[test]
    fn git_sources_take_the_flux_defaults_and_the_secret_namespace() {
        let source = chart_source_of(&release(ChartSpec {
            git: Some("file:///repo".into()),
            path: Some("/charts/a/".into()),
            secret_ref: Some(crate::api::NamespacedRef {
                name: "auth".into(),
                namespace: None,
            }),
            ..ChartSpec::default()
        }))
        .unwrap();
        let ChartSource::Git(git) = source else {
            panic!("not a git source: {source:?}")
        };
        assert_eq!(git.reference, GitReference::Branch("master".into()));
        assert_eq!(git.path, "charts/a");
        assert_eq!(git.credentials.unwrap().namespace, "n");
    }
}
