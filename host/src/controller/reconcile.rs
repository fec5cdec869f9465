//! The release loop's reconcile of one HelmRelease, shaped as Flux's `internal/reconcile`
//! atomic release: [`observe`](super::observe) the release (its gates, the desired digest,
//! the release as the backend reports it), let [`next_action`] choose one action from what
//! was observed and the failure history in the status, run it (one file each under
//! [`actions`](super::actions)), write the status, and choose again until an action ends the
//! reconcile. A failure is counted and recorded with the remediation it is owed before the
//! remediation runs, so an operator killed in between remediates after its restart.
//! Deleting a HelmRelease uninstalls its release first ([`cleanup`](super::cleanup)).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::runtime::controller::Action as ControllerAction;
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};

use super::actions::drift::{check_drift, drift_check};
use super::actions::install::install;
use super::actions::rollback::rollback;
use super::actions::uninstall_remediation::uninstall_remediation;
use super::actions::upgrade::upgrade;
use super::actions::{Outcome, sync};
use super::cleanup::cleanup;
use super::context::Context;
use super::decision::{
    Action, Facts, FailurePolicy, GAVE_UP_REASONS, GiveUp, History, next_action,
};
use super::error::ReconcileError;
use super::observe::{Observed, key_of, observe};
use super::options::retries_allowed;
use super::queue::{Next, backoff};
use super::report::{StatusWriter, finish};
use crate::api::{FINALIZER, HelmRelease};

/// Delay before retrying a reconcile that failed outside the backend (status writes,
/// finalizer, uninstall).
const ERROR_RETRY: Duration = Duration::from_secs(5);

/// Most actions one reconcile runs (a failed upgrade, its remediation and the verdict take
/// three); a bound against a choice that never settles.
const MAX_ACTIONS: usize = 6;

/// Reconcile entry point for the controller.
pub async fn reconcile(
    hr: Arc<HelmRelease>,
    ctx: Arc<Context>,
) -> Result<ControllerAction, ReconcileError> {
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
            Finalizer::Apply(hr) => Box::pin(apply(&hr, &ctx)).await,
            Finalizer::Cleanup(hr) => Box::pin(cleanup(&hr, &ctx)).await?,
        };
        *decided.lock().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(ControllerAction::from(next))
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

/// Requeue policy when a reconcile returned an error.
pub fn error_policy(
    _hr: Arc<HelmRelease>,
    error: &ReconcileError,
    _ctx: Arc<Context>,
) -> ControllerAction {
    tracing::warn!(%error, "reconcile failed");
    ControllerAction::requeue(ERROR_RETRY)
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
    let mut writer = StatusWriter::new(hr, ctx);
    let started = Instant::now();
    let mut observed = match Box::pin(observe(hr, ctx, &mut writer, started)).await {
        Ok(observed) => observed,
        Err(next) => return finish(writer, next).await,
    };
    let policy = FailurePolicy {
        rollback: hr.spec.rollback.as_ref(),
        install_retries: retries_allowed(hr, true),
        upgrade_retries: retries_allowed(hr, false),
    };
    let mut failed_this_pass = false;
    for _ in 0..MAX_ACTIONS {
        let action = choose(hr, ctx, &writer, &observed, &policy, failed_this_pass);
        tracing::debug!(?action, "next action");
        match Box::pin(run(hr, ctx, &mut writer, &mut observed, action)).await? {
            Outcome::Done(next) => return finish(writer, next).await,
            Outcome::ChooseAgain => {
                failed_this_pass = true;
                // What failed, and what it is owed, is in the status before anything else
                // runs.
                writer.write().await?;
            }
        }
    }
    tracing::warn!("no settled choice after {MAX_ACTIONS} actions");
    let failures = writer.status.failures;
    finish(writer, Next::Requeue(backoff(failures))).await
}

/// The next action for `observed`, from the status's failure history.
fn choose(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &StatusWriter<'_>,
    observed: &Observed,
    policy: &FailurePolicy<'_>,
    failed_this_pass: bool,
) -> Action {
    let status = &writer.status;
    let facts = Facts {
        forced: observed.forced,
        ready: observed.ready,
        gave_up: status
            .condition("Stalled")
            .is_some_and(|c| c.status == "True" && GAVE_UP_REASONS.contains(&c.reason.as_str())),
        desired_digest: &observed.digest,
        applied_digest: status.applied_digest.as_deref(),
        attempted_digest: status.attempted_digest.as_deref(),
        recorded_revision: status.revision,
        current: observed
            .current
            .as_ref()
            .map(|info| (info.status, info.revision)),
        history: History {
            failures: status.failures,
            rollbacks: status.rollback_count,
            rolled_back: writer.is_true("RolledBack"),
            last_failed: status.last_failed_action,
            last_failed_revision: status.last_failed_revision,
            pending: status.pending_remediation,
        },
        failed_this_pass,
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
    next_action(&facts, policy, || drift_check(hr), due)
}

/// Run `action`, recording in `writer` what it did. Each action's future is boxed, as are
/// the observation and the loop's step: held inline, their state machines add up to one
/// future large enough to overflow a worker's stack in a debug build (seen: the operator
/// aborted with a stack overflow at its first install).
async fn run(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    action: Action,
) -> Result<Outcome, ReconcileError> {
    if !matches!(action, Action::Rollback | Action::UninstallRemediation) {
        // A remediation the release no longer needs (it moved on) is not owed any more.
        writer.status.pending_remediation = None;
    }
    Ok(match action {
        Action::InLine { drift_off } => {
            if drift_off {
                writer.status.remove_condition("Drifted");
            }
            ctx.metrics
                .observe("none", true, observed.started.elapsed());
            Outcome::Done(Next::Requeue(ctx.options.resync))
        }
        Action::InvalidDriftDetection(message) => {
            writer.stalled("DriftDetectionError", &message);
            Outcome::Done(Next::Requeue(ctx.options.resync))
        }
        Action::AwaitChange => Outcome::Done(Next::AwaitChange),
        Action::CheckDrift(check) => match sync::prepare(hr, ctx, writer, observed).await {
            Ok(prepared) => Box::pin(check_drift(hr, ctx, writer, observed, prepared, check)).await,
            Err(stop) => stop,
        },
        Action::Install => match sync::prepare(hr, ctx, writer, observed).await {
            Ok(prepared) => Box::pin(install(hr, ctx, writer, observed, prepared)).await?,
            Err(stop) => stop,
        },
        Action::Upgrade => match sync::prepare(hr, ctx, writer, observed).await {
            Ok(prepared) => Box::pin(upgrade(hr, ctx, writer, observed, prepared)).await?,
            Err(stop) => stop,
        },
        Action::Rollback => {
            pause_before_remediation();
            Box::pin(rollback(hr, ctx, writer, observed)).await?
        }
        Action::UninstallRemediation => {
            pause_before_remediation();
            Box::pin(uninstall_remediation(hr, ctx, writer, observed)).await?
        }
        Action::RetryLater => {
            let failures = writer.status.failures;
            let reason = failure_reason_of(writer);
            let retry = if writer.is_true("RolledBack") && hr.spec.rollback.is_some() {
                format!("upgrade retry {} scheduled", writer.status.rollback_count)
            } else {
                format!("retry {failures} scheduled")
            };
            writer.reconciling(&reason, &retry);
            Outcome::Done(Next::Requeue(backoff(failures)))
        }
        Action::GiveUp(why) => {
            let message = writer.message("Ready");
            let (reason, message) = match why {
                GiveUp::RetriesExhausted { failures } => (
                    "RetriesExhausted",
                    format!("{message} (gave up after {failures} attempts)"),
                ),
                GiveUp::RolledBackNoRetry => (
                    "RolledBack",
                    format!("{message}; not retried (rollback.retry is false)"),
                ),
                GiveUp::RollbacksExhausted { count } => (
                    "RetriesExhausted",
                    format!("{message}; gave up after {count} rollbacks (rollback.maxRetries)"),
                ),
            };
            writer.stalled(reason, &message);
            Outcome::Done(Next::AwaitChange)
        }
    })
}

/// The reason the last failure was recorded with (`InstallFailed`, `UpgradeFailed`).
fn failure_reason_of(writer: &StatusWriter<'_>) -> String {
    writer
        .status
        .condition("Released")
        .map_or_else(|| "UpgradeFailed".to_owned(), |c| c.reason.clone())
}

/// A fault-injection point for the crash tests (`fail` crate; inert unless the binary is
/// built with the `failpoints` feature and `FAILPOINTS=before-remediation=...` is set):
/// the operator can be held, and killed, after a failure was recorded and before its
/// remediation runs.
fn pause_before_remediation() {
    #[cfg(feature = "failpoints")]
    tracing::info!("failpoint before-remediation reached");
    fail::fail_point!("before-remediation");
}
