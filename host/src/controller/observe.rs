//! Observing a release before anything is chosen: the gates it must pass (suspend,
//! tenancy, dependsOn, the artifact the source loop published, values, backend, target
//! cluster, ownership, identity), each setting its conditions and stopping the reconcile
//! with what to do next; then the desired digest and the release as the backend reports it.

use std::sync::Arc;
use std::time::Instant;

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::context::Context;
use super::contract::release_context_refusal;
use super::dependencies::Verdict;
use super::options::{desired_digest, options_text};
use super::queue::{Next, backoff};
use super::remote::RemoteCluster;
use super::report::{StatusWriter, call_message, publish, stall_on_spec};
use super::sourcing::chart_source_of;
use super::values::{ValuesInputs, compose, fetch_values_from, layers_text};
use crate::api::{FORCE_AT_ANNOTATION, HelmRelease, RECONCILE_AT_ANNOTATION};
use crate::capabilities::Grants;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::ValueLayer;
use crate::plugins::bindings::types::{ReleaseId, ReleaseInfo};
use crate::sources::ReleaseKey;
use crate::sources::sync::ArtifactRef;

/// The Helm release a HelmRelease manages.
pub(crate) fn release_id(hr: &HelmRelease) -> ReleaseId {
    ReleaseId {
        name: hr.release_name(),
        namespace: hr.target_namespace(),
    }
}

/// The HelmRelease's own key.
pub(crate) fn key_of(hr: &HelmRelease) -> ReleaseKey {
    ReleaseKey {
        namespace: hr.namespace_or_default(),
        name: hr.name_any(),
    }
}

/// What a reconcile knows before it decides: the gates a release must pass (suspend,
/// tenancy, dependsOn, the chart artifact, values, backend, target cluster, ownership,
/// identity), each setting its conditions and stopping the reconcile with what to do next,
/// then the desired state (digest) and the release as the backend reports it.
pub(crate) struct Observed {
    pub(crate) started: Instant,
    pub(crate) reconcile_requested: bool,
    pub(crate) forced: bool,
    pub(crate) force_at: Option<String>,
    pub(crate) ready: bool,
    pub(crate) artifact: ArtifactRef,
    pub(crate) chart_archive: Option<Vec<u8>>,
    pub(crate) values: Vec<ValueLayer>,
    pub(crate) backend: Arc<BackendPlugin>,
    pub(crate) release: ReleaseId,
    pub(crate) remote: Option<Arc<RemoteCluster>>,
    pub(crate) digest: String,
    pub(crate) grants: Grants,
    pub(crate) current: Option<ReleaseInfo>,
}

/// Observe `hr` (see [`Observed`]); `Err` is where the reconcile stops.
pub(crate) async fn observe(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    started: Instant,
) -> Result<Observed, Next> {
    let reconcile_at = hr.annotation(RECONCILE_AT_ANNOTATION).map(str::to_owned);
    let force_at = hr.annotation(FORCE_AT_ANNOTATION).map(str::to_owned);
    let reconcile_requested =
        reconcile_at.is_some() && reconcile_at != writer.status.last_handled_reconcile_at;
    if reconcile_at.is_some() {
        writer.status.last_handled_reconcile_at = reconcile_at;
    }
    if hr.spec.suspend {
        writer.set(
            "Ready",
            writer
                .status
                .condition("Ready")
                .is_some_and(|c| c.status == "True"),
            "Suspended",
            "reconciliation is suspended (spec.suspend)",
        );
        writer.status.remove_condition("Reconciling");
        return Err(Next::AwaitChange);
    }

    // Tenancy: nothing is read for a release pointing into another namespace.
    if let Err(refused) = super::refs::check(hr, ctx.options.allow_cross_namespace_refs) {
        let message = refused.to_string();
        stall_on_spec(ctx, hr, writer, "CrossNamespaceRef", &message).await;
        return Err(Next::AwaitChange);
    }

    // dependsOn: nothing is installed or upgraded before every dependency is Ready. A
    // dependency becoming Ready wakes this release (controller/dependencies.rs); the
    // resync is the safety net.
    match ctx.dependencies.check(hr) {
        Verdict::Ready => {}
        Verdict::NotReady(message) => {
            writer.ready(false, "DependencyNotReady", &message);
            writer.reconciling("DependencyNotReady", &message);
            return Err(Next::Requeue(ctx.options.resync));
        }
        Verdict::Cycle(message) => {
            stall_on_spec(ctx, hr, writer, "DependencyCycle", &message).await;
            return Err(Next::AwaitChange);
        }
    }

    // The chart artifact, as the source loop decided it.
    let source = match chart_source_of(hr) {
        Ok(source) => source,
        Err(message) => {
            writer.set("ChartFetched", false, "InvalidSource", &message);
            writer.stalled("InvalidSource", &message);
            return Err(Next::AwaitChange);
        }
    };
    let key = key_of(hr);
    let Some(state) = ctx.artifacts.lookup(&key, &source).await else {
        ctx.artifacts.request_pass();
        writer.reconciling(
            "FetchingChart",
            "waiting for the chart source to be resolved",
        );
        writer.set(
            "ChartFetched",
            false,
            "FetchingChart",
            "waiting for the chart source",
        );
        if writer.status.condition("Ready").is_none() {
            writer.set(
                "Ready",
                false,
                "FetchingChart",
                "waiting for the chart source",
            );
        }
        // The source loop wakes this release when it publishes its first decision (a slow
        // source keeps resolving in the background); polling here would only compete
        // with healthy releases for the workers. The resync is the safety net.
        return Err(Next::Requeue(ctx.options.resync));
    };
    let artifact = match state.artifact {
        Ok(artifact) => artifact,
        Err(message) if state.invalid_spec => {
            // The spec breaks its kind's schema (or names a kind nobody serves): no plugin
            // was called, and nothing changes until the spec or the configuration does.
            writer.set("ChartFetched", false, "InvalidSourceSpec", &message);
            writer.stalled("InvalidSourceSpec", &message);
            return Err(Next::AwaitChange);
        }
        Err(message) => {
            writer.set("ChartFetched", false, "ChartFetchFailed", &message);
            writer.ready(false, "ChartFetchFailed", &message);
            writer.reconciling("ChartFetchFailed", "retrying when the source changes");
            // The source loop wakes this release when the source outcome changes.
            return Err(Next::Requeue(ctx.options.resync));
        }
    };
    writer.set(
        "ChartFetched",
        true,
        "ChartFetched",
        &format!(
            "chart {} {} at {}",
            artifact.chart, artifact.version, artifact.revision
        ),
    );

    // Values.
    let chart_archive = hr
        .spec
        .values_from
        .iter()
        .any(|entry| entry.chart_file_ref.is_some())
        .then(|| ctx.artifact_store.get(&artifact.digest).ok())
        .flatten();
    let inputs = ValuesInputs {
        chart_archive: chart_archive.as_deref(),
        egress: &ctx.values_egress,
    };
    let values = match fetch_values_from(&ctx.client, hr, &inputs).await {
        Ok(fetched) => compose(hr, &fetched),
        Err(error) => Err(error),
    };
    let values = match values {
        Ok(values) => values,
        Err(error) => {
            let message = error.to_string();
            writer.ready(false, "ValuesError", &message);
            writer.reconciling("ValuesError", "retrying when the values change");
            publish(ctx, hr, EventType::Warning, "ValuesError", message).await;
            return Err(Next::Requeue(backoff(1)));
        }
    };

    // Backend.
    let (backend_name, backend) = match ctx.backend_for(hr) {
        Ok(found) => found,
        Err(message) => {
            writer.stalled("BackendNotConfigured", &message);
            return Err(Next::AwaitChange);
        }
    };
    let release = release_id(hr);
    // Options the backend cannot serve are refused by name whatever the release's state
    // (enabling tests on a release in line included), before anything runs.
    if let Some(message) = release_context_refusal(hr, &release, &backend) {
        stall_on_spec(ctx, hr, writer, "BackendUnsupported", &message).await;
        return Err(Next::Requeue(ctx.options.resync));
    }
    // The target cluster: the operator's own, or the one of `spec.kubeConfig`.
    let remote = match ctx.remotes.for_release(&ctx.client, hr).await {
        Ok(remote) => remote,
        Err(message) => {
            writer.ready(false, "KubeConfigError", &message);
            writer.reconciling("KubeConfigError", "retrying when the Secret changes");
            publish(ctx, hr, EventType::Warning, "KubeConfigError", message).await;
            return Err(Next::Requeue(backoff(1)));
        }
    };
    let digest = desired_digest(
        &artifact.digest,
        &layers_text(&values),
        &options_text(hr, remote.as_deref()),
        &backend_name,
        &release,
    );
    let forced = force_at.is_some() && force_at != writer.status.last_handled_force_at;
    let ready = writer
        .status
        .condition("Ready")
        .is_some_and(|c| c.status == "True");

    let cluster_id = remote.as_ref().map_or("", |cluster| cluster.id.as_str());
    if let Err(owner) = ctx.claims.claim(cluster_id, &release, &key) {
        let message = format!(
            "release {}/{} is managed by HelmRelease {owner}; set spec.releaseName or spec.targetNamespace to tell them apart",
            release.namespace, release.name
        );
        writer.stalled("ReleaseConflict", &message);
        return Err(Next::Requeue(ctx.options.resync));
    }
    let grants = match ctx.grants_for(hr, &release, remote.as_deref()) {
        Ok(grants) => grants,
        Err(message) => {
            writer.ready(false, "IdentityError", &message);
            writer.reconciling("IdentityError", "retrying");
            return Err(Next::Requeue(backoff(1)));
        }
    };
    let current = match backend.status(&release, grants.clone()).await {
        Ok(current) => current,
        Err(error) => {
            let message = format!("cannot read the release: {}", call_message(&error));
            writer.ready(false, "BackendError", &message);
            writer.reconciling("BackendError", "retrying");
            return Err(Next::Requeue(backoff(1)));
        }
    };

    Ok(Observed {
        started,
        reconcile_requested,
        forced,
        force_at,
        ready,
        artifact,
        chart_archive,
        values,
        backend,
        release,
        remote,
        digest,
        grants,
        current,
    })
}
