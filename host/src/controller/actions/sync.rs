//! What install and upgrade share: the chart and post-rendering handed to the backend, the
//! sync request, the announcement written before the backend runs, the verdict of the
//! release's tests, and how a success or a failure is recorded (a failure with the
//! remediation it is owed, written before anything else runs).

use std::time::Duration;

use kube::runtime::events::EventType;

use super::Outcome;
use crate::api::{HelmRelease, HelmReleaseStatus, ReleaseAction};
use crate::capabilities::Grants;
use crate::controller::context::Context;
use crate::controller::contract::post_render_grant;
use crate::controller::decision::remediation_owed;
use crate::controller::error::ReconcileError;
use crate::controller::helm_tests::{test_verdict, tests_enabled};
use crate::controller::observe::Observed;
use crate::controller::options::{
    options_text, rolls_back, sha256_text, sync_options, timeout_seconds, upgrade_strategy,
};
use crate::controller::queue::Next;
use crate::controller::report::{StatusWriter, call_message, publish, stall_on_spec};
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    SyncAction, SyncOptions, SyncOutcome, SyncRequest,
};
use crate::plugins::bindings::release_context::TestResult;
use crate::plugins::bindings::types::{ChartArtifact, ChartMetadata, ErrorCode, ReleaseStatus};
use crate::plugins::call::{CallError, CallFailure};
use crate::release::status_text;
use crate::sources::sync::ArtifactRef;

/// Delay before trying again a release another process holds.
const LOCKED_RETRY: Duration = Duration::from_secs(10);

/// What the backend is handed besides the request: the chart, and the call's grants with
/// the release's post-rendering.
pub(crate) struct Prepared {
    pub(crate) chart: ChartArtifact,
    pub(crate) grants: Grants,
}

/// The chart of `observed` and its post-rendering, or where the reconcile stops (the
/// archive left the store: the source loop puts it back; the post-renderers are wrong:
/// stall on the spec).
pub(crate) async fn prepare(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
) -> Result<Prepared, Outcome> {
    let chart = match chart_of(ctx, &observed.artifact, observed.chart_archive.take()) {
        Ok(chart) => chart,
        Err(message) => {
            ctx.artifacts.request_pass();
            writer.ready(false, "ChartFetchFailed", &message);
            writer.reconciling("FetchingChart", "waiting for the source loop");
            return Err(Outcome::Done(Next::Requeue(Duration::from_secs(5))));
        }
    };
    let post_render = match post_render_grant(ctx, hr, &observed.backend) {
        Ok(grant) => grant,
        Err(message) => {
            stall_on_spec(ctx, hr, writer, "PostRenderError", &message).await;
            return Err(Outcome::Done(Next::Requeue(ctx.options.resync)));
        }
    };
    let grants = Grants {
        post_render,
        ..observed.grants.clone()
    };
    Ok(Prepared { chart, grants })
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
pub(crate) fn sync_request(
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

/// Install or upgrade (`action`): announce it, run it (with the release's tests when
/// enabled), and record the outcome. A failure is counted and recorded with the remediation
/// it is owed, and the reconcile chooses again.
pub(crate) async fn run_sync(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    prepared: Prepared,
    action: ReleaseAction,
) -> Result<Outcome, ReconcileError> {
    let Prepared { chart, mut grants } = prepared;
    announce(writer, action, observed).await?;
    let (request, options_digest) = sync_request(hr, &writer.status, observed, chart);
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
    writer.tick();
    if observed.forced {
        writer.status.last_handled_force_at = observed.force_at.take();
    }
    let results = tests.and_then(|context| context.take_test_results());
    let (outcome, tests_failed) = match (outcome, results) {
        (Ok(synced), Some(results)) => {
            judge_tests(hr, ctx, writer, &observed.backend, synced, &results).await
        }
        (outcome, _) => (outcome, false),
    };
    match outcome {
        Ok(synced) => {
            record_success(hr, ctx, writer, observed, &synced, options_digest).await;
            Ok(Outcome::Done(Next::Requeue(ctx.options.resync)))
        }
        Err(error) if matches!(error.cause, CallFailure::Locked(_)) => {
            // Nothing ran: another process (e.g. `capstan release`) is changing the
            // release. Not a failure of this release; try again shortly.
            let message = call_message(&error);
            writer.reconciling("ReleaseLocked", &message);
            publish(ctx, hr, EventType::Normal, "ReleaseLocked", message).await;
            Ok(Outcome::Done(Next::Requeue(LOCKED_RETRY)))
        }
        Err(error) => {
            record_failure(hr, ctx, writer, observed, action, &error, tests_failed).await;
            Ok(Outcome::ChooseAgain)
        }
    }
}

/// Record a failed install or upgrade, before anything else runs: the counters, the last
/// failed action, the revision it left, the remediation it is owed (decided here, so that
/// an operator restarted before the remediation still runs it), conditions, an Event and
/// metrics.
async fn record_failure(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    action: ReleaseAction,
    error: &CallError,
    tests_failed: bool,
) {
    let installing = action == ReleaseAction::Install;
    ctx.metrics.actions.inc();
    writer.status.failures += 1;
    if installing {
        writer.status.install_failures += 1;
    } else {
        writer.status.upgrade_failures += 1;
    }
    let reason = failure_reason(action);
    let message = format!("{} failed: {}", action.as_str(), call_message(error));
    writer.set("Released", false, reason, &message);
    writer.ready(false, reason, &message);
    // What the release is now: a failed upgrade leaves a `failed` record (or a deployed
    // revision whose tests failed); a failure before any record (e.g. a render error)
    // leaves the deployed revision as it was, with nothing to roll back.
    let after = observed
        .backend
        .status(&observed.release, observed.grants.clone())
        .await;
    let left_revision = match &after {
        Ok(Some(info)) => info.status == ReleaseStatus::Failed || tests_failed,
        _ => false,
    };
    writer.status.last_failed_action = Some(action);
    writer.status.last_failed_revision = None;
    match after {
        Ok(Some(info)) => {
            writer.status.revision = Some(i64::from(info.revision));
            writer.status.release_status = Some(status_text(info.status).into());
            writer.status.last_failed_revision = Some(i64::from(info.revision));
            observed.current = Some(info);
        }
        Ok(None) => {
            if installing {
                writer.status.revision = None;
                writer.status.release_status = None;
            }
            observed.current = None;
        }
        Err(error) => {
            tracing::warn!(error = %call_message(&error), "cannot read the release after a failure");
            if installing {
                writer.status.revision = None;
                writer.status.release_status = None;
            }
        }
    }
    writer.status.pending_remediation = remediation_owed(
        installing,
        rolls_back(hr),
        upgrade_strategy(hr),
        left_revision,
    );
    ctx.metrics
        .observe(action.as_str(), false, observed.started.elapsed());
    publish(ctx, hr, EventType::Warning, reason, message).await;
}

/// The reason of a failed install or upgrade, as conditions and Events say it.
pub(crate) fn failure_reason(action: ReleaseAction) -> &'static str {
    match action {
        ReleaseAction::Install => "InstallFailed",
        _ => "UpgradeFailed",
    }
}

/// Record that an install or upgrade of `observed` starts (attempted digest and source
/// revision, `Reconciling`, `Ready=False` unless it was Ready) before it runs, so a
/// killed operator leaves a status saying what it was doing.
async fn announce(
    writer: &mut StatusWriter<'_>,
    action: ReleaseAction,
    observed: &Observed,
) -> Result<(), ReconcileError> {
    let installing = action == ReleaseAction::Install;
    let action_name = action.as_str();
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
    synced: SyncOutcome,
    results: &[TestResult],
) -> (Result<SyncOutcome, CallError>, bool) {
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
    writer: &mut StatusWriter<'_>,
    observed: &Observed,
    synced: &SyncOutcome,
    options_digest: String,
) {
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
    writer.status.last_failed_action = None;
    writer.status.last_failed_revision = None;
    writer.status.pending_remediation = None;
    let reason = if installing {
        "InstallSucceeded"
    } else {
        "UpgradeSucceeded"
    };
    writer.set("Released", true, reason, &message);
    writer.status.remove_condition("RolledBack");
    writer.status.remove_condition("Remediated");
    writer.ready(true, reason, &message);
    ctx.metrics
        .observe(action, true, observed.started.elapsed());
    publish(ctx, hr, EventType::Normal, reason, message).await;
}
