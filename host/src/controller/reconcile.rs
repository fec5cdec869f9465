//! The release loop's reconcile of one HelmRelease, in steps as Flux's `internal/reconcile`
//! takes them: `observe` the release (the gates it must pass — suspend, tenancy,
//! dependsOn, the artifact the source loop published, values, backend, target cluster,
//! ownership, identity — then the desired digest and the release as the backend reports
//! it), choose the next step from digests (never by rendering: nothing, a drift check of
//! the unchanged release, or a sync; [`decision`](super::decision)), run it
//! (`check_drift`, or `install_or_upgrade` with tests and post-rendering), and
//! [`remediate`](super::remediation) a failure (rollback, uninstall, retry or stall).
//! Each step records its outcome in status, conditions, events and metrics. Deleting a
//! HelmRelease uninstalls its release first (finalizer).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};

use super::Context;
use super::contract::{post_render_grant, release_context_refusal};
use super::decision::{Facts, GAVE_UP_REASONS, Step, next_step};
use super::drift::{drift_check, report_drift};
use super::helm_tests::{test_verdict, tests_enabled};
use super::options::{desired_digest, options_text, sha256_text, sync_options, timeout_seconds};
use super::queue::Next;
use super::remote::RemoteCluster;
use super::sourcing::chart_source_of;
use super::values::{ValuesInputs, compose, fetch_values_from, layers_text};
use crate::api::{
    DeletionPropagation, FINALIZER, FORCE_AT_ANNOTATION, HelmRelease, HelmReleaseStatus,
    RECONCILE_AT_ANNOTATION,
};
use crate::capabilities::Grants;
use crate::capabilities::release_context::DriftCheck;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    SyncAction, SyncOptions, SyncRequest, UninstallOptions,
};
use crate::plugins::bindings::kube::Propagation;
use crate::plugins::bindings::types::{ChartArtifact, ChartMetadata, ErrorCode, ReleaseId};
use crate::plugins::call::{CallError, CallFailure};
use crate::sources::ReleaseKey;
use crate::sources::sync::ArtifactRef;

/// Why a reconcile failed in a way the controller should retry with backoff.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The Kubernetes API refused a status or finalizer update.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The finalizer machinery failed.
    #[error("finalizer: {0}")]
    Finalizer(String),
    /// Uninstalling the release failed (the finalizer stays).
    #[error("uninstall of release {release} failed: {message}")]
    Uninstall {
        /// Namespace/name of the release.
        release: String,
        /// What failed.
        message: String,
    },
}

/// The message of a failed plugin call, without the call wrapping when the plugin itself
/// said what is wrong.
pub fn call_message(error: &CallError) -> String {
    match &error.cause {
        CallFailure::Returned { message, .. } | CallFailure::Locked(message) => message.clone(),
        other => format!("plugin `{}` {}: {other}", error.plugin, error.function),
    }
}

fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

/// Delay before retry `failures` of one release: exponential from 5 s up to 5 min, with
/// up to 20 % jitter so failing releases do not retry in lockstep.
pub fn backoff(failures: i64) -> Duration {
    let base = 5u64.saturating_mul(1u64 << failures.clamp(1, 7).saturating_sub(1) as u32);
    let base = base.min(300);
    let jitter_range = base * 200; // milliseconds in 20 % of `base`
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    Duration::from_millis(base * 1000 + nanos % jitter_range.max(1))
}

/// Reconcile entry point for the controller.
pub async fn reconcile(hr: Arc<HelmRelease>, ctx: Arc<Context>) -> Result<Action, ReconcileError> {
    let namespace = hr.namespace_or_default();
    let api: Api<HelmRelease> = Api::namespaced(ctx.client.clone(), &namespace);
    let key = ObjectRef::from_obj(hr.as_ref());
    ctx.metrics.queue.started(&key);
    ctx.metrics.in_flight.inc();
    // What the reconcile decided, kept for the queue account (the finalizer helper hands
    // the controller an opaque `Action`).
    let decided = std::sync::Mutex::new(Next::AwaitChange);
    let result = finalizer(&api, FINALIZER, hr, |event| async {
        let next = match event {
            Finalizer::Apply(hr) => apply(&hr, &ctx).await,
            Finalizer::Cleanup(hr) => cleanup(&hr, &ctx).await?,
        };
        *decided.lock().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(Action::from(next))
    })
    .await;
    ctx.metrics.in_flight.dec();
    let result = result.map_err(|error| match error {
        kube::runtime::finalizer::Error::ApplyFailed(e)
        | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
        other => ReconcileError::Finalizer(other.to_string()),
    });
    // The requeue the controller will schedule (`error_policy` for an error).
    let next = match &result {
        Ok(_) => decided.into_inner().unwrap_or_else(|e| e.into_inner()),
        Err(_) => Next::Requeue(ERROR_RETRY),
    };
    ctx.metrics.queue.finished(key, next);
    result
}

/// Delay before retrying a reconcile that failed outside the backend (status writes,
/// finalizer, uninstall).
const ERROR_RETRY: Duration = Duration::from_secs(5);

/// Delay before trying again a release another process holds.
const LOCKED_RETRY: Duration = Duration::from_secs(10);

/// Requeue policy when a reconcile returned an error.
pub fn error_policy(_hr: Arc<HelmRelease>, error: &ReconcileError, _ctx: Arc<Context>) -> Action {
    tracing::warn!(%error, "reconcile failed");
    Action::requeue(ERROR_RETRY)
}

fn release_id(hr: &HelmRelease) -> ReleaseId {
    ReleaseId {
        name: hr.release_name(),
        namespace: hr.target_namespace(),
    }
}

fn key_of(hr: &HelmRelease) -> ReleaseKey {
    ReleaseKey {
        namespace: hr.namespace_or_default(),
        name: hr.name_any(),
    }
}

/// `install.createNamespace`: create the target namespace, as the release's identity, unless
/// it exists (Helm's `--create-namespace`; the namespace is not part of the release).
async fn create_namespace(
    ctx: &Context,
    hr: &HelmRelease,
    remote: Option<&RemoteCluster>,
    namespace: &str,
) -> Result<(), String> {
    let client = ctx.client_in_target(hr, remote)?;
    let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let object = k8s_openapi::api::core::v1::Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(namespace.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&kube::api::PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(response)) if response.code == 409 => Ok(()),
        Err(error) => Err(format!(
            "install.createNamespace: cannot create namespace {namespace}: {error}"
        )),
    }
}

/// Status changes of one reconcile, written at the end (and once before a long action).
pub(crate) struct StatusWriter<'a> {
    hr: &'a HelmRelease,
    ctx: &'a Context,
    pub(super) status: HelmReleaseStatus,
    generation: Option<i64>,
    now: String,
}

impl StatusWriter<'_> {
    pub(crate) fn set(&mut self, type_: &str, status: bool, reason: &str, message: &str) {
        let (generation, now) = (self.generation, self.now.clone());
        self.status
            .set_condition(type_, status, reason, message, generation, &now);
    }

    pub(super) fn ready(&mut self, ready: bool, reason: &str, message: &str) {
        self.set("Ready", ready, reason, message);
        if ready {
            self.status.remove_condition("Reconciling");
            self.status.remove_condition("Stalled");
        }
    }

    pub(super) fn stalled(&mut self, reason: &str, message: &str) {
        self.ready(false, reason, message);
        self.set("Stalled", true, reason, message);
        self.status.remove_condition("Reconciling");
    }

    pub(super) fn reconciling(&mut self, reason: &str, message: &str) {
        self.set("Reconciling", true, reason, message);
        self.status.remove_condition("Stalled");
    }

    async fn write(&mut self) -> Result<(), kube::Error> {
        self.status.observed_generation = self.generation;
        self.status.release_name = Some(self.hr.release_name());
        let api: Api<HelmRelease> =
            Api::namespaced(self.ctx.client.clone(), &self.hr.namespace_or_default());
        let patch = serde_json::json!({ "status": self.status });
        api.patch_status(
            &self.hr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
        let key = key_of(self.hr);
        let cond = |t: &str| self.status.condition(t).is_some_and(|c| c.status == "True");
        self.ctx
            .metrics
            .set_condition(&key.namespace, &key.name, "Ready", cond("Ready"));
        self.ctx
            .metrics
            .set_condition(&key.namespace, &key.name, "Stalled", cond("Stalled"));
        Ok(())
    }
}

pub(crate) async fn publish(
    ctx: &Context,
    hr: &HelmRelease,
    type_: EventType,
    reason: &str,
    note: String,
) {
    let event = KubeEvent {
        type_,
        reason: reason.to_owned(),
        note: Some(note.chars().take(1000).collect()),
        action: reason.to_owned(),
        secondary: None,
    };
    if let Err(error) = ctx.recorder.publish(&event, &hr.object_ref(&())).await {
        tracing::debug!(%error, "cannot publish an event");
    }
}

/// Finish a reconcile by writing the status; a status write failure is retried.
pub(crate) async fn finish(
    mut writer: StatusWriter<'_>,
    action: Next,
) -> Result<Next, ReconcileError> {
    writer.write().await?;
    Ok(action)
}

#[tracing::instrument(name = "reconcile", skip_all, fields(helmrelease = %key_of(hr)))]
async fn apply(hr: &HelmRelease, ctx: &Context) -> Next {
    match apply_inner(hr, ctx).await {
        Ok(action) => action,
        Err(error) => {
            tracing::warn!(%error, "reconcile failed");
            Next::Requeue(backoff(1))
        }
    }
}

async fn apply_inner(hr: &HelmRelease, ctx: &Context) -> Result<Next, ReconcileError> {
    // The controller's cache can lag behind this operator's own last status write (a
    // reconcile queued by that write may run before the cache sees it): decide from the
    // object as the API server has it now.
    let api: Api<HelmRelease> = Api::namespaced(ctx.client.clone(), &hr.namespace_or_default());
    let Some(fresh) = api.get_opt(&hr.name_any()).await? else {
        return Ok(Next::AwaitChange);
    };
    let hr = &fresh;
    let mut writer = StatusWriter {
        hr,
        ctx,
        status: hr.status.clone().unwrap_or_default(),
        generation: hr.metadata.generation,
        now: now_rfc3339(),
    };
    let started = Instant::now();
    let observed = match observe(hr, ctx, &mut writer, started).await {
        Ok(observed) => observed,
        Err(next) => return finish(writer, next).await,
    };
    let facts = Facts {
        forced: observed.forced,
        ready: observed.ready,
        gave_up: writer
            .status
            .condition("Stalled")
            .is_some_and(|c| c.status == "True" && GAVE_UP_REASONS.contains(&c.reason.as_str())),
        desired_digest: &observed.digest,
        applied_digest: writer.status.applied_digest.as_deref(),
        attempted_digest: writer.status.attempted_digest.as_deref(),
        recorded_revision: writer.status.revision,
        current: observed
            .current
            .as_ref()
            .map(|info| (info.status, info.revision)),
    };
    // At most one comparison with the cluster per release per resync interval, unless asked.
    let due = || {
        observed.reconcile_requested
            || ctx.drift_schedule.due(
                &hr.namespace_or_default(),
                &hr.name_any(),
                ctx.options.resync,
            )
    };
    let drift_only = match next_step(&facts, || drift_check(hr), due) {
        Step::Sync => None,
        Step::CheckDrift(check) => Some(check),
        Step::InLine { drift_off } => {
            if drift_off {
                writer.status.remove_condition("Drifted");
            }
            ctx.metrics
                .observe("none", true, observed.started.elapsed());
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
        }
        Step::InvalidDriftDetection(message) => {
            writer.stalled("DriftDetectionError", &message);
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
        }
        Step::AwaitChange => return finish(writer, Next::AwaitChange).await,
    };
    sync_release(hr, ctx, writer, observed, drift_only).await
}

/// Stall on something the spec gets wrong (`reason`, `message`); the Warning Event is
/// published only when the stall is new or says something else, not on every reconcile.
async fn stall_on_spec(
    ctx: &Context,
    hr: &HelmRelease,
    writer: &mut StatusWriter<'_>,
    reason: &str,
    message: &str,
) {
    let repeated = writer
        .status
        .condition("Stalled")
        .is_some_and(|c| c.status == "True" && c.message == message);
    if !repeated {
        publish(ctx, hr, EventType::Warning, reason, message.to_owned()).await;
    }
    writer.stalled(reason, message);
}

/// What a reconcile knows before it decides: the gates a release must pass (suspend,
/// tenancy, dependsOn, the chart artifact, values, backend, target cluster, ownership,
/// identity), each setting its conditions and stopping the reconcile with what to do next,
/// then the desired state (digest) and the release as the backend reports it.
struct Observed {
    started: Instant,
    reconcile_requested: bool,
    forced: bool,
    force_at: Option<String>,
    ready: bool,
    artifact: ArtifactRef,
    chart_archive: Option<Vec<u8>>,
    values: Vec<crate::plugins::bindings::backend::exports::capstan::plugin::backend::ValueLayer>,
    backend: Arc<BackendPlugin>,
    release: ReleaseId,
    remote: Option<Arc<RemoteCluster>>,
    digest: String,
    grants: Grants,
    current: Option<crate::plugins::bindings::types::ReleaseInfo>,
}

/// Observe `hr` (see [`Observed`]); `Err` is where the reconcile stops.
async fn observe(
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
        super::dependencies::Verdict::Ready => {}
        super::dependencies::Verdict::NotReady(message) => {
            writer.ready(false, "DependencyNotReady", &message);
            writer.reconciling("DependencyNotReady", &message);
            return Err(Next::Requeue(ctx.options.resync));
        }
        super::dependencies::Verdict::Cycle(message) => {
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

/// Run the chosen step of an observed release: a drift check of the unchanged release
/// ([`check_drift`]) or an install or upgrade ([`install_or_upgrade`]). Both hand the
/// backend the chart and the release's post-rendering.
async fn sync_release(
    hr: &HelmRelease,
    ctx: &Context,
    mut writer: StatusWriter<'_>,
    mut observed: Observed,
    drift_only: Option<DriftCheck>,
) -> Result<Next, ReconcileError> {
    let chart = match chart_of(ctx, &observed.artifact, observed.chart_archive.take()) {
        Ok(chart) => chart,
        Err(message) => {
            ctx.artifacts.request_pass();
            writer.ready(false, "ChartFetchFailed", &message);
            writer.reconciling("FetchingChart", "waiting for the source loop");
            return finish(writer, Next::Requeue(Duration::from_secs(5))).await;
        }
    };
    let post_render = match post_render_grant(ctx, hr, &observed.backend) {
        Ok(grant) => grant,
        Err(message) => {
            stall_on_spec(ctx, hr, &mut writer, "PostRenderError", &message).await;
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
        }
    };
    let grants = Grants {
        post_render,
        ..observed.grants.clone()
    };
    match drift_only {
        Some(check) => check_drift(hr, ctx, writer, observed, chart, grants, check).await,
        None => install_or_upgrade(hr, ctx, writer, observed, chart, grants).await,
    }
}

/// The chart archive of `artifact` (`archive` when the values already read it for
/// `chartFileRef`, else from the artifact store), or why it is not there.
fn chart_of(
    ctx: &Context,
    artifact: &ArtifactRef,
    archive: Option<Vec<u8>>,
) -> Result<ChartArtifact, String> {
    let archive = match archive {
        Some(archive) => archive,
        None => ctx.artifact_store.get(&artifact.digest).map_err(|error| {
            format!(
                "chart archive {} is not in the store: {error}",
                artifact.digest
            )
        })?,
    };
    Ok(ChartArtifact {
        archive,
        digest: artifact.digest.clone(),
        metadata: ChartMetadata {
            name: artifact.chart.clone(),
            version: artifact.version.clone(),
            app_version: None,
        },
    })
}

/// The backend request of a sync of `observed`, and the digest of the options it carries
/// (recorded on success). Options changed since the last success (not just chart or
/// values) upgrade even a release the backend finds unchanged, as do a forced sync and a
/// release whose tests failed (tests run after an install or upgrade only).
fn sync_request(
    hr: &HelmRelease,
    status: &HelmReleaseStatus,
    observed: &mut Observed,
    chart: ChartArtifact,
) -> (SyncRequest, String) {
    let installing = observed.current.is_none();
    let options_digest = sha256_text(&options_text(hr, observed.remote.as_deref()));
    let options_changed = status
        .applied_options_digest
        .as_ref()
        .is_some_and(|applied| *applied != options_digest);
    let request = SyncRequest {
        release: observed.release.clone(),
        chart,
        values: std::mem::take(&mut observed.values),
        options: SyncOptions {
            upgrade_unchanged: observed.forced
                || options_changed
                || (tests_enabled(hr) && status.failures > 0),
            ..sync_options(hr, installing)
        },
    };
    (request, options_digest)
}

/// The drift check of a release in line: the backend finds it unchanged and compares its
/// objects with the cluster ([`report_drift`] records what it found).
async fn check_drift(
    hr: &HelmRelease,
    ctx: &Context,
    mut writer: StatusWriter<'_>,
    mut observed: Observed,
    chart: ChartArtifact,
    mut grants: Grants,
    check: DriftCheck,
) -> Result<Next, ReconcileError> {
    if !tests_enabled(hr) {
        writer.status.remove_condition("TestSuccess");
    }
    let (request, _) = sync_request(hr, &writer.status, &mut observed, chart);
    let context = grants.extend_release_context(|context| context.drift = Some(check));
    let outcome = observed.backend.sync(&request, grants).await;
    let drifted = context.drifted.take();
    report_drift(ctx, hr, writer, outcome.map(|_| drifted), observed.started).await
}

/// Install or upgrade: announce it, run it (with the release's tests when enabled), and
/// record the outcome; a failure goes to
/// [`remediate`](super::remediation::remediate).
async fn install_or_upgrade(
    hr: &HelmRelease,
    ctx: &Context,
    mut writer: StatusWriter<'_>,
    mut observed: Observed,
    chart: ChartArtifact,
    mut grants: Grants,
) -> Result<Next, ReconcileError> {
    let installing = observed.current.is_none();
    announce(&mut writer, installing, &observed).await?;
    if installing
        && hr.spec.install.as_ref().is_some_and(|i| i.create_namespace)
        && let Err(message) = create_namespace(
            ctx,
            hr,
            observed.remote.as_deref(),
            &observed.release.namespace,
        )
        .await
    {
        writer.ready(false, "InstallFailed", &message);
        writer.reconciling("InstallFailed", "retrying");
        publish(ctx, hr, EventType::Warning, "InstallFailed", message).await;
        return finish(writer, Next::Requeue(backoff(1))).await;
    }
    let (request, options_digest) = sync_request(hr, &writer.status, &mut observed, chart);
    let tests = match hr.spec.test.as_ref().filter(|t| t.enable) {
        Some(test) => {
            let timeout = test
                .timeout
                .and_then(|t| u32::try_from(t).ok())
                .unwrap_or_else(|| timeout_seconds(hr));
            Some(
                grants
                    .extend_release_context(|context| context.test_timeout_seconds = Some(timeout)),
            )
        }
        None => {
            writer.status.remove_condition("TestSuccess");
            None
        }
    };
    let outcome = observed.backend.sync(&request, grants).await;
    writer.now = now_rfc3339();
    if observed.forced {
        writer.status.last_handled_force_at = observed.force_at.take();
    }
    let results = tests.and_then(|context| context.take_test_results());
    let (outcome, tests_failed) = match (outcome, results) {
        (Ok(synced), Some(results)) => {
            judge_tests(hr, ctx, &mut writer, &observed.backend, synced, &results).await
        }
        (outcome, _) => (outcome, false),
    };
    match outcome {
        Ok(synced) => record_success(hr, ctx, writer, &observed, &synced, options_digest).await,
        Err(error) if matches!(error.cause, CallFailure::Locked(_)) => {
            // Nothing ran: another process (e.g. `capstan release`) is changing the
            // release. Not a failure of this release; try again shortly.
            let message = call_message(&error);
            writer.reconciling("ReleaseLocked", &message);
            publish(ctx, hr, EventType::Normal, "ReleaseLocked", message).await;
            finish(writer, Next::Requeue(LOCKED_RETRY)).await
        }
        Err(error) => {
            let failed = super::remediation::FailedSync {
                error,
                installing,
                tests_failed,
                release: &observed.release,
                backend: &observed.backend,
                grants: &observed.grants,
                started: observed.started,
            };
            super::remediation::remediate(hr, ctx, writer, failed).await
        }
    }
}

/// Record that an install or upgrade of `observed` starts (attempted digest and source
/// revision, `Reconciling`, `Ready=False` unless it was Ready) before it runs, so a
/// killed operator leaves a status saying what it was doing.
async fn announce(
    writer: &mut StatusWriter<'_>,
    installing: bool,
    observed: &Observed,
) -> Result<(), ReconcileError> {
    let action_name = if installing { "install" } else { "upgrade" };
    let artifact = &observed.artifact;
    if writer.status.attempted_digest.as_deref() != Some(observed.digest.as_str()) {
        writer.status.failures = 0;
    }
    writer.status.attempted_digest = Some(observed.digest.clone());
    writer.status.attempted_source_revision = Some(artifact.revision.clone());
    writer.status.chart_digest = Some(artifact.digest.clone());
    writer.reconciling(
        if installing {
            "Installing"
        } else {
            "Upgrading"
        },
        &format!(
            "running {action_name} of chart {} {}",
            artifact.chart, artifact.version
        ),
    );
    if writer
        .status
        .condition("Ready")
        .is_none_or(|c| c.status != "True")
    {
        writer.set(
            "Ready",
            false,
            "Progressing",
            &format!("running {action_name}"),
        );
    }
    writer.write().await?;
    Ok(())
}

/// The results of the tests that ran after a successful install or upgrade, as
/// `TestSuccess` and an Event: a failure is the sync's (`true`: remediated as such) unless
/// `test.ignoreFailures`.
async fn judge_tests(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    backend: &BackendPlugin,
    synced: crate::plugins::bindings::backend::exports::capstan::plugin::backend::SyncOutcome,
    results: &[crate::plugins::bindings::release_context::TestResult],
) -> (
    Result<
        crate::plugins::bindings::backend::exports::capstan::plugin::backend::SyncOutcome,
        CallError,
    >,
    bool,
) {
    let (passed, reason, message) = test_verdict(results);
    writer.set("TestSuccess", passed, reason, &message);
    if passed {
        publish(ctx, hr, EventType::Normal, reason, message).await;
        return (Ok(synced), false);
    }
    if hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures) {
        let message = format!("{message} (ignored: test.ignoreFailures)");
        publish(ctx, hr, EventType::Warning, reason, message).await;
        return (Ok(synced), false);
    }
    let failed = CallError {
        plugin: backend.name().to_owned(),
        function: "sync",
        cause: CallFailure::Returned {
            code: ErrorCode::Unavailable,
            message: format!(
                "revision {} is deployed but its {message}",
                synced.release.revision
            ),
            retryable: true,
        },
    };
    (Err(failed), true)
}

/// Record a successful install or upgrade (or a sync that found nothing to change):
/// applied digests, revision, counters reset, `Released` and `Ready`, an Event, metrics.
async fn record_success(
    hr: &HelmRelease,
    ctx: &Context,
    mut writer: StatusWriter<'_>,
    observed: &Observed,
    synced: &crate::plugins::bindings::backend::exports::capstan::plugin::backend::SyncOutcome,
    options_digest: String,
) -> Result<Next, ReconcileError> {
    let installing = observed.current.is_none();
    let (artifact, release) = (&observed.artifact, &observed.release);
    let action = match synced.action {
        SyncAction::Installed => "install",
        SyncAction::Upgraded => "upgrade",
        SyncAction::Unchanged => "none",
    };
    if synced.action != SyncAction::Unchanged {
        ctx.metrics.actions.inc();
    }
    let message = format!(
        "release {}/{} revision {} ({} {}, {action})",
        release.namespace, release.name, synced.release.revision, artifact.chart, artifact.version
    );
    writer.status.applied_digest = Some(observed.digest.clone());
    writer.status.applied_options_digest = Some(options_digest);
    writer.status.applied_source_revision = Some(artifact.revision.clone());
    writer.status.revision = Some(i64::from(synced.release.revision));
    writer.status.release_status = Some("deployed".into());
    writer.status.failures = 0;
    writer.status.install_failures = 0;
    writer.status.upgrade_failures = 0;
    writer.status.rollback_count = 0;
    let reason = if installing {
        "InstallSucceeded"
    } else {
        "UpgradeSucceeded"
    };
    writer.set("Released", true, reason, &message);
    writer.status.remove_condition("RolledBack");
    writer.ready(true, reason, &message);
    ctx.metrics
        .observe(action, true, observed.started.elapsed());
    publish(ctx, hr, EventType::Normal, reason, message).await;
    finish(writer, Next::Requeue(ctx.options.resync)).await
}

/// [`uninstall`], given up once the deletion is older than the configured deadline: the
/// finalizer is then removed with an `UninstallAbandoned` Warning naming the last error,
/// so a release whose uninstall can never succeed (its backend gone, its namespace
/// forbidden) does not keep its HelmRelease — and the namespace holding it — forever.
/// The deletion's age is taken from the API server's `deletionTimestamp` against this
/// host's clock; a skew of seconds does not matter against a deadline of minutes.
async fn cleanup(hr: &HelmRelease, ctx: &Context) -> Result<Next, ReconcileError> {
    let error = match uninstall(hr, ctx).await {
        Ok(next) => return Ok(next),
        Err(error) => error,
    };
    let age = hr.metadata.deletion_timestamp.as_ref().and_then(|t| {
        std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::from(t.0))
            .ok()
    });
    match (ctx.options.uninstall_deadline, age) {
        (Some(deadline), Some(age)) if age >= deadline => {
            let message = format!(
                "{error}; still failing {}s after the HelmRelease was deleted (deadline {}s, --uninstall-deadline): the finalizer is removed, and the release's objects and records may be left in the cluster",
                age.as_secs(),
                deadline.as_secs()
            );
            tracing::warn!("{message}");
            publish(ctx, hr, EventType::Warning, "UninstallAbandoned", message).await;
            Ok(Next::AwaitChange)
        }
        _ => Err(error),
    }
}

#[tracing::instrument(name = "uninstall", skip_all, fields(helmrelease = %key_of(hr)))]
async fn uninstall(hr: &HelmRelease, ctx: &Context) -> Result<Next, ReconcileError> {
    let started = Instant::now();
    let release = release_id(hr);
    let key = key_of(hr);
    let failed = |message: String| ReconcileError::Uninstall {
        release: format!("{}/{}", release.namespace, release.name),
        message,
    };
    let (_, backend) = match ctx.backend_for(hr) {
        Ok(found) => found,
        Err(message) => return Err(failed(message)),
    };
    let remote = ctx
        .remotes
        .for_release(&ctx.client, hr)
        .await
        .map_err(failed)?;
    let cluster_id = remote.as_ref().map_or("", |cluster| cluster.id.as_str());
    if let Err(owner) = ctx.claims.claim(cluster_id, &release, &key) {
        // Another HelmRelease manages this release: deleting this one must not remove it.
        publish(
            ctx,
            hr,
            EventType::Warning,
            "UninstallSkipped",
            format!(
                "release {}/{} is managed by HelmRelease {owner}; not uninstalled",
                release.namespace, release.name
            ),
        )
        .await;
        return Ok(Next::AwaitChange);
    }
    let uninstall = hr.spec.uninstall.clone().unwrap_or_default();
    let options = UninstallOptions {
        keep_history: uninstall.keep_history,
        wait: uninstall.wait,
        timeout_seconds: uninstall
            .timeout
            .and_then(|t| u32::try_from(t).ok())
            .unwrap_or_else(|| timeout_seconds(hr)),
        disable_hooks: uninstall.disable_hooks,
    };
    let mut grants = ctx
        .grants_for(hr, &release, remote.as_deref())
        .map_err(failed)?;
    if let Some(policy) = uninstall.deletion_propagation {
        grants.kube = grants.kube.map(|kube| {
            kube.deleting_with(match policy {
                DeletionPropagation::Background => Propagation::Background,
                DeletionPropagation::Foreground => Propagation::Foreground,
                DeletionPropagation::Orphan => Propagation::Orphan,
            })
        });
    }
    ctx.metrics.actions.inc();
    match backend.uninstall(&release, options, grants).await {
        Ok(removed) => {
            ctx.claims.release(&key);
            ctx.metrics.observe("uninstall", true, started.elapsed());
            ctx.metrics.forget(&key.namespace, &key.name);
            if removed.is_some() {
                publish(
                    ctx,
                    hr,
                    EventType::Normal,
                    "UninstallSucceeded",
                    format!("release {}/{} uninstalled", release.namespace, release.name),
                )
                .await;
            }
            Ok(Next::AwaitChange)
        }
        Err(error) => {
            ctx.metrics.observe("uninstall", false, started.elapsed());
            let message = call_message(&error);
            publish(
                ctx,
                hr,
                EventType::Warning,
                "UninstallFailed",
                message.clone(),
            )
            .await;
            Err(failed(message))
        }
    }
}

/// A backend plugin by name.
pub type Backend = Arc<BackendPlugin>;

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
}
