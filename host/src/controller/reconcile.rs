//! The release loop's reconcile of one HelmRelease: take the artifact the source loop
//! published, compose the values, decide from digests (never by rendering) whether the
//! release must change, call the backend's `sync`, and record the outcome in status,
//! conditions, events and metrics. Deleting a HelmRelease uninstalls its release first
//! (finalizer).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use sha2::{Digest, Sha256};

use super::Context;
use super::queue::Next;
use super::remote::RemoteCluster;
use super::sourcing::chart_source_of;
use super::values::{ValuesInputs, compose, fetch_values_from, layers_text};
use crate::api::{
    CrdsPolicy, DEFAULT_MAX_HISTORY, DEFAULT_ROLLBACK_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS,
    DeletionPropagation, DriftMode, FINALIZER, FORCE_AT_ANNOTATION, HelmRelease, HelmReleaseStatus,
    RECONCILE_AT_ANNOTATION, RemediationStrategy,
};
use crate::capabilities::Grants;
use crate::capabilities::post_render::PostRenderGrant;
use crate::capabilities::release_context::{DriftCheck, IgnoreRule};
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    CrdPolicy, SyncAction, SyncOptions, SyncRequest, UninstallOptions,
};
use crate::plugins::bindings::kube::Propagation;
use crate::plugins::bindings::release_context::{DriftedObject, TestResult};
use crate::plugins::bindings::types::{
    ChartArtifact, ChartMetadata, ErrorCode, ReleaseId, ReleaseStatus,
};
use crate::plugins::call::{CallError, CallFailure};
use crate::postrender::Pipeline;
use crate::postrender::selector::Selector;
use crate::release::status_text;
use crate::sources::ReleaseKey;

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

/// The operation budget: `spec.timeout`, 300 s by default.
fn timeout_seconds(hr: &HelmRelease) -> u32 {
    hr.spec
        .timeout
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
        .clamp(1, i64::from(u32::MAX)) as u32
}

/// `upgrade.remediation.strategy`, when set.
fn upgrade_strategy(hr: &HelmRelease) -> Option<RemediationStrategy> {
    hr.spec
        .upgrade
        .as_ref()
        .and_then(|u| u.remediation.as_ref())
        .and_then(|r| r.strategy)
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

/// A `crds` policy of the spec as the backend contract names it.
fn crd_policy(policy: CrdsPolicy) -> CrdPolicy {
    match policy {
        CrdsPolicy::Skip => CrdPolicy::Skip,
        CrdsPolicy::Create => CrdPolicy::Create,
        CrdsPolicy::CreateReplace => CrdPolicy::CreateReplace,
    }
}

/// The options of a sync that installs (`installing`) or upgrades the release: Helm
/// Operator's top-level fields, refined by Flux v2's `install` and `upgrade` sections.
fn sync_options(hr: &HelmRelease, installing: bool) -> SyncOptions {
    let spec = &hr.spec;
    let install = spec.install.clone().unwrap_or_default();
    let upgrade = spec.upgrade.clone().unwrap_or_default();
    let rollback_enabled = spec.rollback.as_ref().is_some_and(|r| r.enable);
    let disable_wait = if installing {
        install.disable_wait
    } else {
        upgrade.disable_wait
    };
    SyncOptions {
        wait: spec.wait.unwrap_or(rollback_enabled) && !disable_wait,
        timeout_seconds: timeout_seconds(hr),
        atomic: true,
        // A failed upgrade is rolled back by the host, with `rollback.*`'s own options
        // ([`rollback_options`]), not within the sync with the upgrade's.
        rollback_on_failure: false,
        max_history: spec
            .max_history
            .unwrap_or(DEFAULT_MAX_HISTORY)
            .clamp(0, i64::from(u32::MAX)) as u32,
        force: !installing && (spec.force_upgrade || upgrade.force),
        install_crds: match install.crds {
            Some(policy) => crd_policy(policy),
            None if spec.skip_crds => CrdPolicy::Skip,
            None => CrdPolicy::Create,
        },
        upgrade_crds: upgrade.crds.map_or(CrdPolicy::Skip, crd_policy),
        disable_hooks: if installing {
            install.disable_hooks
        } else {
            upgrade.disable_hooks
        },
        description: None,
        upgrade_unchanged: false,
    }
}

/// Whether a failed upgrade is rolled back: `upgrade.remediation.strategy`, else
/// `rollback.enable`.
fn rolls_back(hr: &HelmRelease) -> bool {
    match upgrade_strategy(hr) {
        Some(RemediationStrategy::Rollback) => true,
        Some(RemediationStrategy::Uninstall) => false,
        None => hr.spec.rollback.as_ref().is_some_and(|r| r.enable),
    }
}

/// The options of the rollback of a failed upgrade: `rollback.{timeout, wait, force,
/// disableHooks}` (Helm Operator's; `recreate` is accepted and has no effect, as Helm 3's
/// `--recreate-pods`), the history limit of the release.
fn rollback_options(hr: &HelmRelease) -> SyncOptions {
    let rollback = hr.spec.rollback.clone().unwrap_or_default();
    SyncOptions {
        wait: rollback.wait,
        timeout_seconds: rollback.timeout.map_or_else(
            || timeout_seconds(hr),
            |t| t.clamp(1, i64::from(u32::MAX)) as u32,
        ),
        atomic: false,
        rollback_on_failure: false,
        max_history: sync_options(hr, false).max_history,
        force: rollback.force,
        install_crds: CrdPolicy::Skip,
        upgrade_crds: CrdPolicy::Skip,
        disable_hooks: rollback.disable_hooks,
        description: None,
        upgrade_unchanged: false,
    }
}

/// What the digest covers of the options: both actions' (a change of an install-only
/// option after the install is still a change of the spec), and the target cluster.
fn options_text(hr: &HelmRelease, remote: Option<&RemoteCluster>) -> String {
    let mut text = format!(
        "install {:?}; upgrade {:?}; rollback {}: {:?}; create namespace {}; cluster {}",
        sync_options(hr, true),
        sync_options(hr, false),
        rolls_back(hr),
        rollback_options(hr),
        hr.spec.install.as_ref().is_some_and(|i| i.create_namespace),
        remote.map_or("", |cluster| cluster.id.as_str())
    );
    // Post-rendering counts only when asked for, so that releases without it keep the
    // digest they had before it existed (no upgrade of every release on a new operator).
    let spec = &hr.spec;
    if let Some(namespace) = spec.storage_namespace.as_deref().filter(|n| !n.is_empty()) {
        text.push_str(&format!("; storage namespace {namespace}"));
    }
    let common = spec
        .common_metadata
        .as_ref()
        .filter(|m| !m.labels.is_empty() || !m.annotations.is_empty());
    if !spec.post_renderers.is_empty() || common.is_some() {
        text.push_str(&format!(
            "; post-render {:?} {:?} {:?}",
            spec.post_renderers,
            common,
            spec.post_render_strategy.unwrap_or_default()
        ));
    }
    text
}

/// The interface a backend must import to post-render.
const POST_RENDER_IMPORT: &str = "capstan:plugin/post-render";
/// The interface a backend must import to keep records in a storage namespace.
const RELEASE_CONTEXT_IMPORT: &str = "capstan:plugin/release-context";

/// Why `backend` cannot serve the release-level options `hr` sets, if it cannot.
fn release_context_refusal(
    hr: &HelmRelease,
    release: &ReleaseId,
    backend: &BackendPlugin,
) -> Option<String> {
    if backend.imports(RELEASE_CONTEXT_IMPORT) {
        return None;
    }
    let drift = hr
        .spec
        .drift_detection
        .as_ref()
        .is_some_and(|d| d.mode != DriftMode::Disabled);
    let field = if let Some(namespace) = super::storage_namespace(hr, release) {
        format!(
            "storageNamespace {namespace} (the records would stay in {})",
            release.namespace
        )
    } else if tests_enabled(hr) {
        "test.enable (the tests would not run)".to_owned()
    } else if drift {
        "driftDetection (the release would not be compared with the cluster)".to_owned()
    } else {
        return None;
    };
    Some(format!(
        "{field}: backend `{}` does not import {RELEASE_CONTEXT_IMPORT} (built before it was added to the 0.2 contract); rebuild it with the current SDK or pick another backend",
        backend.name()
    ))
}

/// The drift check `hr` asks for, or why its rules are wrong.
fn drift_check(hr: &HelmRelease) -> Result<Option<DriftCheck>, String> {
    let Some(spec) = hr
        .spec
        .drift_detection
        .as_ref()
        .filter(|d| d.mode != DriftMode::Disabled)
    else {
        return Ok(None);
    };
    let mut ignore = Vec::new();
    for (index, rule) in spec.ignore.iter().enumerate() {
        if let Some(bad) = rule.paths.iter().find(|p| !p.starts_with('/')) {
            return Err(format!(
                "driftDetection.ignore[{index}].paths: {bad:?} is not a JSON pointer (it starts with `/`)"
            ));
        }
        let target = rule
            .target
            .as_ref()
            .map(Selector::new)
            .transpose()
            .map_err(|e| format!("driftDetection.ignore[{index}].{e}"))?;
        ignore.push(IgnoreRule {
            paths: rule.paths.clone(),
            target,
        });
    }
    Ok(Some(DriftCheck {
        correct: spec.mode == DriftMode::Enabled,
        ignore: Arc::new(ignore),
    }))
}

/// Record what a drift check found: the `Drifted` condition and, when something drifted,
/// a Warning Event naming the objects.
async fn report_drift(
    ctx: &Context,
    hr: &HelmRelease,
    mut writer: StatusWriter<'_>,
    outcome: Result<Option<Vec<DriftedObject>>, CallError>,
    started: Instant,
) -> Result<Next, ReconcileError> {
    match outcome {
        Ok(Some(drifted)) if drifted.is_empty() => {
            writer.set(
                "Drifted",
                false,
                "NoDrift",
                "the cluster matches the release",
            );
        }
        Ok(Some(drifted)) => {
            let corrected = drifted.iter().all(|d| d.corrected);
            let list = drifted
                .iter()
                .map(|d| {
                    let namespace = d
                        .object
                        .namespace
                        .as_deref()
                        .map(|n| format!("{n}/"))
                        .unwrap_or_default();
                    format!(
                        "{} {namespace}{} ({})",
                        d.object.kind, d.object.name, d.difference
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let (reason, message) = if corrected {
                ("DriftCorrected", format!("drift corrected: {list}"))
            } else {
                ("DriftDetected", format!("drift detected: {list}"))
            };
            // Corrected drift is no longer drift; detected drift stays until it is gone.
            writer.set("Drifted", !corrected, reason, &message);
            publish(ctx, hr, EventType::Warning, reason, message).await;
        }
        Ok(None) => {}
        Err(error) => {
            let message = format!("drift check failed: {}", call_message(&error));
            writer.set("Drifted", false, "DriftCheckFailed", &message);
            tracing::warn!(%message, "drift check");
        }
    }
    ctx.metrics.observe("none", true, started.elapsed());
    finish(writer, Next::Requeue(ctx.options.resync)).await
}

fn tests_enabled(hr: &HelmRelease) -> bool {
    hr.spec.test.as_ref().is_some_and(|t| t.enable)
}

/// What the test results of a sync mean: the `TestSuccess` condition's status, reason and
/// message.
fn test_verdict(results: &[TestResult]) -> (bool, &'static str, String) {
    let failed: Vec<&TestResult> = results.iter().filter(|r| r.phase == "Failed").collect();
    if results.is_empty() {
        return (true, "TestSucceeded", "the chart has no tests".into());
    }
    match failed.first() {
        None => (
            true,
            "TestSucceeded",
            format!(
                "{} test(s) passed: {}",
                results.len(),
                results
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Some(first) => (
            false,
            "TestFailed",
            format!(
                "test {} {} failed{}",
                first.kind,
                first.name,
                first
                    .message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        ),
    }
}

/// The release's post-rendering for `backend`, or why it cannot be had (a post-renderer
/// the spec gets wrong, or a backend built before `post-render` existed).
fn post_render_grant(
    ctx: &Context,
    hr: &HelmRelease,
    backend: &BackendPlugin,
) -> Result<Option<PostRenderGrant>, String> {
    let plugins = &ctx.backends.current().post_renderers;
    let Some(pipeline) = Pipeline::for_release(hr, plugins).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    if !backend.imports(POST_RENDER_IMPORT) {
        return Err(format!(
            "backend `{}` does not import {POST_RENDER_IMPORT} (built before post-rendering was added to the 0.2 contract), so it cannot apply postRenderers or commonMetadata; rebuild it with the current SDK or pick another backend",
            backend.name()
        ));
    }
    Ok(Some(PostRenderGrant {
        pipeline: Arc::new(pipeline),
    }))
}

/// Digest of everything that decides what `sync` would produce: the chart archive, the
/// value layers (see [`super::values::layers_text`]), the options, the backend and the
/// release identity.
pub fn desired_digest(
    chart_digest: &str,
    values_text: &str,
    options: &str,
    backend: &str,
    release: &ReleaseId,
) -> String {
    let mut hasher = Sha256::new();
    for part in [
        chart_digest,
        values_text,
        options,
        backend,
        &release.namespace,
        &release.name,
    ] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// `sha256:<hex>` of `text`.
fn sha256_text(text: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// Status changes of one reconcile, written at the end (and once before a long action).
struct StatusWriter<'a> {
    hr: &'a HelmRelease,
    ctx: &'a Context,
    status: HelmReleaseStatus,
    generation: Option<i64>,
    now: String,
}

impl StatusWriter<'_> {
    fn set(&mut self, type_: &str, status: bool, reason: &str, message: &str) {
        let (generation, now) = (self.generation, self.now.clone());
        self.status
            .set_condition(type_, status, reason, message, generation, &now);
    }

    fn ready(&mut self, ready: bool, reason: &str, message: &str) {
        self.set("Ready", ready, reason, message);
        if ready {
            self.status.remove_condition("Reconciling");
            self.status.remove_condition("Stalled");
        }
    }

    fn stalled(&mut self, reason: &str, message: &str) {
        self.ready(false, reason, message);
        self.set("Stalled", true, reason, message);
        self.status.remove_condition("Reconciling");
    }

    fn reconciling(&mut self, reason: &str, message: &str) {
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

async fn publish(ctx: &Context, hr: &HelmRelease, type_: EventType, reason: &str, note: String) {
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
async fn finish(mut writer: StatusWriter<'_>, action: Next) -> Result<Next, ReconcileError> {
    writer.write().await?;
    Ok(action)
}

/// Retries allowed after a failed install or upgrade; `None` is unlimited.
fn retries_allowed(hr: &HelmRelease, installing: bool) -> Option<i64> {
    let configured = if installing {
        hr.spec
            .install
            .as_ref()
            .and_then(|i| i.remediation.as_ref())
            .and_then(|r| r.retries)
    } else {
        hr.spec
            .upgrade
            .as_ref()
            .and_then(|u| u.remediation.as_ref())
            .and_then(|r| r.retries)
    };
    configured.filter(|r| *r >= 0)
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
    let started = Instant::now();
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
        return finish(writer, Next::AwaitChange).await;
    }

    // Tenancy: nothing is read for a release pointing into another namespace.
    if let Err(refused) = super::refs::check(hr, ctx.options.allow_cross_namespace_refs) {
        let message = refused.to_string();
        if writer
            .status
            .condition("Stalled")
            .map(|c| c.message.as_str())
            != Some(&message)
        {
            publish(
                ctx,
                hr,
                EventType::Warning,
                "CrossNamespaceRef",
                message.clone(),
            )
            .await;
        }
        writer.stalled("CrossNamespaceRef", &message);
        return finish(writer, Next::AwaitChange).await;
    }

    // dependsOn: nothing is installed or upgraded before every dependency is Ready. A
    // dependency becoming Ready wakes this release (controller/dependencies.rs); the
    // resync is the safety net.
    match ctx.dependencies.check(hr) {
        super::dependencies::Verdict::Ready => {}
        super::dependencies::Verdict::NotReady(message) => {
            writer.ready(false, "DependencyNotReady", &message);
            writer.reconciling("DependencyNotReady", &message);
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
        }
        super::dependencies::Verdict::Cycle(message) => {
            if writer
                .status
                .condition("Stalled")
                .map(|c| c.message.as_str())
                != Some(&message)
            {
                publish(
                    ctx,
                    hr,
                    EventType::Warning,
                    "DependencyCycle",
                    message.clone(),
                )
                .await;
            }
            writer.stalled("DependencyCycle", &message);
            return finish(writer, Next::AwaitChange).await;
        }
    }

    // The chart artifact, as the source loop decided it.
    let source = match chart_source_of(hr) {
        Ok(source) => source,
        Err(message) => {
            writer.set("ChartFetched", false, "InvalidSource", &message);
            writer.stalled("InvalidSource", &message);
            return finish(writer, Next::AwaitChange).await;
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
        return finish(writer, Next::Requeue(ctx.options.resync)).await;
    };
    let artifact = match state.artifact {
        Ok(artifact) => artifact,
        Err(message) if state.invalid_spec => {
            // The spec breaks its kind's schema (or names a kind nobody serves): no plugin
            // was called, and nothing changes until the spec or the configuration does.
            writer.set("ChartFetched", false, "InvalidSourceSpec", &message);
            writer.stalled("InvalidSourceSpec", &message);
            return finish(writer, Next::AwaitChange).await;
        }
        Err(message) => {
            writer.set("ChartFetched", false, "ChartFetchFailed", &message);
            writer.ready(false, "ChartFetchFailed", &message);
            writer.reconciling("ChartFetchFailed", "retrying when the source changes");
            // The source loop wakes this release when the source outcome changes.
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
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
            return finish(writer, Next::Requeue(backoff(1))).await;
        }
    };

    // Backend.
    let (backend_name, backend) = match ctx.backend_for(hr) {
        Ok(found) => found,
        Err(message) => {
            writer.stalled("BackendNotConfigured", &message);
            return finish(writer, Next::AwaitChange).await;
        }
    };
    let release = release_id(hr);
    // The target cluster: the operator's own, or the one of `spec.kubeConfig`.
    let remote = match ctx.remotes.for_release(&ctx.client, hr).await {
        Ok(remote) => remote,
        Err(message) => {
            writer.ready(false, "KubeConfigError", &message);
            writer.reconciling("KubeConfigError", "retrying when the Secret changes");
            publish(ctx, hr, EventType::Warning, "KubeConfigError", message).await;
            return finish(writer, Next::Requeue(backoff(1))).await;
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
        return finish(writer, Next::Requeue(ctx.options.resync)).await;
    }
    let grants = match ctx.grants_for(hr, &release, remote.as_deref()) {
        Ok(grants) => grants,
        Err(message) => {
            writer.ready(false, "IdentityError", &message);
            writer.reconciling("IdentityError", "retrying");
            return finish(writer, Next::Requeue(backoff(1))).await;
        }
    };
    let current = match backend.status(&release, grants.clone()).await {
        Ok(current) => current,
        Err(error) => {
            let message = format!("cannot read the release: {}", call_message(&error));
            writer.ready(false, "BackendError", &message);
            writer.reconciling("BackendError", "retrying");
            return finish(writer, Next::Requeue(backoff(1))).await;
        }
    };

    // No-op: same digest as the last success, and the release still at that revision —
    // unless drift detection wants the backend to compare it with the cluster.
    let mut drift_only = None;
    if !forced
        && ready
        && writer.status.applied_digest.as_deref() == Some(digest.as_str())
        && current.as_ref().is_some_and(|info| {
            info.status == ReleaseStatus::Deployed
                && Some(i64::from(info.revision)) == writer.status.revision
        })
    {
        // At most one comparison per release per resync interval, unless asked for.
        let due = |ctx: &Context| {
            reconcile_requested
                || ctx.drift_schedule.due(
                    &hr.namespace_or_default(),
                    &hr.name_any(),
                    ctx.options.resync,
                )
        };
        match drift_check(hr) {
            Ok(Some(check)) if due(ctx) => drift_only = Some(check),
            Ok(check) => {
                if check.is_none() {
                    writer.status.remove_condition("Drifted");
                }
                ctx.metrics.observe("none", true, started.elapsed());
                return finish(writer, Next::Requeue(ctx.options.resync)).await;
            }
            Err(message) => {
                writer.stalled("DriftDetectionError", &message);
                return finish(writer, Next::Requeue(ctx.options.resync)).await;
            }
        }
    }

    // A digest that already failed as often as allowed waits for a change.
    let installing = current.is_none();
    if !forced
        && writer.status.attempted_digest.as_deref() == Some(digest.as_str())
        && writer
            .status
            .condition("Stalled")
            .is_some_and(|c| c.status == "True")
    {
        return finish(writer, Next::AwaitChange).await;
    }

    // Read once: the values may have needed it already (`chartFileRef`).
    let archive = match chart_archive {
        Some(archive) => Ok(archive),
        None => ctx.artifact_store.get(&artifact.digest),
    };
    let chart = match archive {
        Ok(archive) => ChartArtifact {
            archive,
            digest: artifact.digest.clone(),
            metadata: ChartMetadata {
                name: artifact.chart.clone(),
                version: artifact.version.clone(),
                app_version: None,
            },
        },
        Err(error) => {
            ctx.artifacts.request_pass();
            let message = format!(
                "chart archive {} is not in the store: {error}",
                artifact.digest
            );
            writer.ready(false, "ChartFetchFailed", &message);
            writer.reconciling("FetchingChart", "waiting for the source loop");
            return finish(writer, Next::Requeue(Duration::from_secs(5))).await;
        }
    };

    if let Some(message) = release_context_refusal(hr, &release, &backend) {
        writer.stalled("BackendUnsupported", &message);
        publish(ctx, hr, EventType::Warning, "BackendUnsupported", message).await;
        return finish(writer, Next::Requeue(ctx.options.resync)).await;
    }
    let post_render = match post_render_grant(ctx, hr, &backend) {
        Ok(grant) => grant,
        Err(message) => {
            writer.stalled("PostRenderError", &message);
            publish(ctx, hr, EventType::Warning, "PostRenderError", message).await;
            return finish(writer, Next::Requeue(ctx.options.resync)).await;
        }
    };

    let action_name = if installing { "install" } else { "upgrade" };
    // A drift check of an unchanged release is no install or upgrade to announce.
    if drift_only.is_none() {
        if writer.status.attempted_digest.as_deref() != Some(digest.as_str()) {
            writer.status.failures = 0;
        }
        writer.status.attempted_digest = Some(digest.clone());
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
    }

    if installing
        && hr.spec.install.as_ref().is_some_and(|i| i.create_namespace)
        && let Err(message) = create_namespace(ctx, hr, remote.as_deref(), &release.namespace).await
    {
        writer.ready(false, "InstallFailed", &message);
        writer.reconciling("InstallFailed", "retrying");
        publish(ctx, hr, EventType::Warning, "InstallFailed", message).await;
        return finish(writer, Next::Requeue(backoff(1))).await;
    }
    // Options changed since the last success (not just chart or values): upgrade anyway.
    let options_digest = sha256_text(&options_text(hr, remote.as_deref()));
    let options_changed = writer
        .status
        .applied_options_digest
        .as_ref()
        .is_some_and(|applied| *applied != options_digest);
    let request = SyncRequest {
        release: release.clone(),
        chart,
        values,
        options: SyncOptions {
            // A release whose tests failed is upgraded again (the tests run after an
            // install or upgrade only), even when its deployed revision matches.
            upgrade_unchanged: forced
                || options_changed
                || (tests_enabled(hr) && writer.status.failures > 0),
            ..sync_options(hr, installing)
        },
    };
    let mut sync_grants = Grants {
        post_render,
        ..grants.clone()
    };
    if let Some(test) = hr.spec.test.as_ref().filter(|t| t.enable) {
        let mut context = sync_grants.release_context.take().unwrap_or_default();
        context.test_timeout_seconds = Some(
            test.timeout
                .and_then(|t| u32::try_from(t).ok())
                .unwrap_or_else(|| timeout_seconds(hr)),
        );
        sync_grants.release_context = Some(context);
    } else {
        writer.status.remove_condition("TestSuccess");
    }
    if let Some(check) = &drift_only {
        let mut context = sync_grants.release_context.take().unwrap_or_default();
        context.drift = Some(check.clone());
        sync_grants.release_context = Some(context);
    }
    let test_results = sync_grants.release_context.clone();
    let outcome = backend.sync(&request, sync_grants).await;
    if drift_only.is_some() {
        let drifted = test_results.as_ref().and_then(|c| c.drifted.take());
        return report_drift(ctx, hr, writer, outcome.map(|_| drifted), started).await;
    }
    writer.now = now_rfc3339();
    if forced {
        writer.status.last_handled_force_at = force_at;
    }
    // Tests ran after a successful install or upgrade: their failure is the sync's, unless
    // ignored.
    let mut tests_failed = false;
    let outcome = match (outcome, test_results.and_then(|c| c.take_test_results())) {
        (Ok(synced), Some(results)) => {
            let (passed, reason, message) = test_verdict(&results);
            writer.set("TestSuccess", passed, reason, &message);
            let ignored = hr.spec.test.as_ref().is_some_and(|t| t.ignore_failures);
            if passed {
                publish(ctx, hr, EventType::Normal, reason, message).await;
                Ok(synced)
            } else if ignored {
                let message = format!("{message} (ignored: test.ignoreFailures)");
                publish(ctx, hr, EventType::Warning, reason, message).await;
                Ok(synced)
            } else {
                tests_failed = true;
                Err(CallError {
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
                })
            }
        }
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(outcome) => {
            let action = match outcome.action {
                SyncAction::Installed => "install",
                SyncAction::Upgraded => "upgrade",
                SyncAction::Unchanged => "none",
            };
            if outcome.action != SyncAction::Unchanged {
                ctx.metrics.actions.inc();
            }
            let message = format!(
                "release {}/{} revision {} ({} {}, {action})",
                release.namespace,
                release.name,
                outcome.release.revision,
                artifact.chart,
                artifact.version
            );
            writer.status.applied_digest = Some(digest);
            writer.status.applied_options_digest = Some(options_digest);
            writer.status.applied_source_revision = Some(artifact.revision.clone());
            writer.status.revision = Some(i64::from(outcome.release.revision));
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
            ctx.metrics.observe(action, true, started.elapsed());
            publish(ctx, hr, EventType::Normal, reason, message).await;
            finish(writer, Next::Requeue(ctx.options.resync)).await
        }
        Err(error) if matches!(error.cause, CallFailure::Locked(_)) => {
            // Nothing ran: another process (e.g. `capstan release`) is changing the
            // release. Not a failure of this release; try again shortly.
            let message = call_message(&error);
            writer.reconciling("ReleaseLocked", &message);
            publish(ctx, hr, EventType::Normal, "ReleaseLocked", message).await;
            finish(writer, Next::Requeue(LOCKED_RETRY)).await
        }
        Err(error) => {
            ctx.metrics.actions.inc();
            let message = call_message(&error);
            writer.status.failures += 1;
            if installing {
                writer.status.install_failures += 1;
            } else {
                writer.status.upgrade_failures += 1;
            }
            let reason = if installing {
                "InstallFailed"
            } else {
                "UpgradeFailed"
            };
            let message = format!("{action_name} failed: {message}");
            writer.set("Released", false, reason, &message);
            writer.ready(false, reason, &message);
            // A failed upgrade that recorded a `failed` revision is rolled back when asked,
            // with the rollback's own options (a failure before any record, e.g. a render
            // error, leaves the deployed revision as it was: nothing to roll back).
            let mut message = message;
            let mut after = backend.status(&release, grants.clone()).await;
            let recorded_failed =
                matches!(&after, Ok(Some(info)) if info.status == ReleaseStatus::Failed);
            if !installing && rolls_back(hr) && (recorded_failed || tests_failed) {
                let rolled = backend
                    .rollback(&release, None, &rollback_options(hr), grants.clone())
                    .await;
                // Success is told below (RolledBack, with the new revision).
                if let Err(error) = rolled {
                    message = format!(
                        "{message}; the rollback failed too: {}",
                        call_message(&error)
                    );
                    writer.set("Released", false, reason, &message);
                    writer.ready(false, reason, &message);
                }
                after = backend.status(&release, grants.clone()).await;
            }
            // What the release is now: a failed upgrade stays `failed` in its record, or
            // was rolled back to a new deployed revision.
            let now_deployed = match after {
                Ok(Some(info)) => {
                    writer.status.revision = Some(i64::from(info.revision));
                    writer.status.release_status = Some(status_text(info.status).into());
                    (info.status == ReleaseStatus::Deployed).then_some(info.revision)
                }
                _ => {
                    if installing {
                        writer.status.revision = None;
                        writer.status.release_status = None;
                    }
                    None
                }
            };
            ctx.metrics.observe(action_name, false, started.elapsed());
            publish(ctx, hr, EventType::Warning, reason, message.clone()).await;
            // upgrade.remediation.strategy: uninstall — the next attempt installs afresh.
            let now_deployed = if !installing
                && upgrade_strategy(hr) == Some(RemediationStrategy::Uninstall)
            {
                let options = UninstallOptions {
                    keep_history: false,
                    wait: false,
                    timeout_seconds: timeout_seconds(hr),
                    disable_hooks: false,
                };
                match backend.uninstall(&release, options, grants.clone()).await {
                    Ok(_) => {
                        let remediated = format!(
                            "{message}; uninstalled the release (upgrade.remediation.strategy: uninstall)"
                        );
                        writer.status.revision = None;
                        writer.status.release_status = None;
                        writer.status.applied_digest = None;
                        writer.set("Remediated", true, "Uninstalled", &remediated);
                        writer.ready(false, reason, &remediated);
                        publish(
                            ctx,
                            hr,
                            EventType::Warning,
                            "UninstallRemediation",
                            remediated,
                        )
                        .await;
                    }
                    Err(error) => {
                        let text = format!(
                            "{message}; the uninstall remediation failed too: {}",
                            call_message(&error)
                        );
                        writer.ready(false, reason, &text);
                        publish(ctx, hr, EventType::Warning, "RemediationFailed", text).await;
                    }
                }
                None
            } else {
                now_deployed
            };
            let failures = writer.status.failures;
            let rollback = hr.spec.rollback.as_ref().filter(|r| r.enable);
            let next = match (rollback, now_deployed) {
                (Some(rollback), Some(revision)) if !installing => {
                    writer.status.rollback_count += 1;
                    let count = writer.status.rollback_count;
                    let rolled_back = format!(
                        "{message}; rolled back to the last deployed release as revision {revision}"
                    );
                    writer.set("RolledBack", true, "RolledBack", &rolled_back);
                    writer.ready(false, reason, &rolled_back);
                    publish(
                        ctx,
                        hr,
                        EventType::Warning,
                        "RolledBack",
                        rolled_back.clone(),
                    )
                    .await;
                    let max = rollback.max_retries.unwrap_or(DEFAULT_ROLLBACK_MAX_RETRIES);
                    if !rollback.retry {
                        writer.stalled(
                            "RolledBack",
                            &format!("{rolled_back}; not retried (rollback.retry is false)"),
                        );
                        Next::AwaitChange
                    } else if max > 0 && count >= max {
                        writer.stalled(
                            "RetriesExhausted",
                            &format!("{rolled_back}; gave up after {count} rollbacks (rollback.maxRetries)"),
                        );
                        Next::AwaitChange
                    } else {
                        writer.reconciling(reason, &format!("upgrade retry {count} scheduled"));
                        Next::Requeue(backoff(failures))
                    }
                }
                _ => match retries_allowed(hr, installing) {
                    Some(allowed) if failures > allowed => {
                        writer.stalled(
                            "RetriesExhausted",
                            &format!("{message} (gave up after {failures} attempts)"),
                        );
                        Next::AwaitChange
                    }
                    _ => {
                        writer.reconciling(reason, &format!("retry {failures} scheduled"));
                        Next::Requeue(backoff(failures))
                    }
                },
            };
            finish(writer, next).await
        }
    }
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

    #[test]
    fn digest_changes_with_each_input() {
        let release = ReleaseId {
            name: "r".into(),
            namespace: "n".into(),
        };
        let hr = HelmRelease::new("a", crate::api::HelmReleaseSpec::default());
        let options = options_text(&hr, None);
        let base = desired_digest("sha256:a", "{}", &options, "helm3", &release);
        assert_eq!(
            base,
            desired_digest("sha256:a", "{}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:b", "{}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:a", "{\"a\":1}", &options, "helm3", &release)
        );
        assert_ne!(
            base,
            desired_digest("sha256:a", "{}", &options, "helm2", &release)
        );
        // Option-only changes, of either action, count.
        let changed = |edit: fn(&mut HelmRelease)| {
            let mut changed = hr.clone();
            edit(&mut changed);
            desired_digest(
                "sha256:a",
                "{}",
                &options_text(&changed, None),
                "helm3",
                &release,
            )
        };
        assert_ne!(base, changed(|h| h.spec.wait = Some(true)));
        assert_ne!(
            base,
            changed(|h| h.spec.upgrade.get_or_insert_default().force = true)
        );
        assert_ne!(
            base,
            changed(|h| h.spec.install.get_or_insert_default().create_namespace = true)
        );
        assert_ne!(
            base,
            changed(
                |h| h.spec.upgrade.get_or_insert_default().crds = Some(CrdsPolicy::CreateReplace)
            )
        );
    }

    #[test]
    fn install_and_upgrade_sections_refine_the_top_level_fields() {
        let mut hr = HelmRelease::new("a", crate::api::HelmReleaseSpec::default());
        hr.spec.wait = Some(true);
        hr.spec.skip_crds = true;
        let install = sync_options(&hr, true);
        assert!(install.wait);
        assert_eq!(install.install_crds, CrdPolicy::Skip);
        assert_eq!(install.upgrade_crds, CrdPolicy::Skip);
        let sections = hr.spec.install.get_or_insert_default();
        sections.crds = Some(CrdsPolicy::CreateReplace);
        sections.disable_wait = true;
        sections.disable_hooks = true;
        let upgrade = hr.spec.upgrade.get_or_insert_default();
        upgrade.crds = Some(CrdsPolicy::Create);
        upgrade.force = true;
        let (install, upgrade) = (sync_options(&hr, true), sync_options(&hr, false));
        assert!(!install.wait && install.disable_hooks && !install.force);
        assert_eq!(install.install_crds, CrdPolicy::CreateReplace);
        assert!(upgrade.wait && !upgrade.disable_hooks && upgrade.force);
        assert_eq!(upgrade.upgrade_crds, CrdPolicy::Create);
    }
}
