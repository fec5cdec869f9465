//! Remediating a failed install or upgrade, as the spec asks and
//! [`decision`](super::decision) chooses: count the failure, roll a recorded failed upgrade
//! back or uninstall it, then retry with backoff or stall, each with its conditions, Events
//! and metrics.

use std::time::Instant;

use kube::runtime::events::EventType;

use super::Context;
use super::decision::{AfterFailure, after_failure, remediation};
use super::options::{
    retries_allowed, rollback_options, rolls_back, timeout_seconds, upgrade_strategy,
};
use super::queue::Next;
use super::reconcile::{ReconcileError, StatusWriter, backoff, call_message, finish, publish};
use crate::api::HelmRelease;
use crate::capabilities::Grants;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::UninstallOptions;
use crate::plugins::bindings::types::{ReleaseId, ReleaseStatus};
use crate::plugins::call::CallError;
use crate::release::status_text;

/// An install or upgrade that failed, with what remediating it needs.
pub(super) struct FailedSync<'a> {
    pub(super) error: CallError,
    pub(super) installing: bool,
    /// It deployed, but its tests failed.
    pub(super) tests_failed: bool,
    pub(super) release: &'a ReleaseId,
    pub(super) backend: &'a BackendPlugin,
    pub(super) grants: &'a Grants,
    pub(super) started: Instant,
}

/// Remediate a failed install or upgrade as the spec asks: count it, roll an upgrade back
/// (`rollback.enable`, `upgrade.remediation.strategy: rollback`) or uninstall it (strategy
/// `uninstall`), then retry with backoff or stall once the retries are spent.
pub(super) async fn remediate(
    hr: &HelmRelease,
    ctx: &Context,
    mut writer: StatusWriter<'_>,
    failed: FailedSync<'_>,
) -> Result<Next, ReconcileError> {
    let FailedSync {
        error,
        installing,
        tests_failed,
        release,
        backend,
        grants,
        started,
    } = failed;
    let action_name = if installing { "install" } else { "upgrade" };
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
    let mut after = backend.status(release, grants.clone()).await;
    let recorded_failed = matches!(&after, Ok(Some(info)) if info.status == ReleaseStatus::Failed);
    let steps = remediation(
        installing,
        rolls_back(hr),
        upgrade_strategy(hr),
        recorded_failed,
        tests_failed,
    );
    if steps.rollback {
        let rolled = backend
            .rollback(release, None, &rollback_options(hr), grants.clone())
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
        after = backend.status(release, grants.clone()).await;
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
    let now_deployed = if steps.uninstall {
        let options = UninstallOptions {
            keep_history: false,
            wait: false,
            timeout_seconds: timeout_seconds(hr),
            disable_hooks: false,
        };
        match backend.uninstall(release, options, grants.clone()).await {
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
    let rolled_back = |revision: u32| {
        format!("{message}; rolled back to the last deployed release as revision {revision}")
    };
    let next = match after_failure(
        installing,
        hr.spec.rollback.as_ref(),
        now_deployed.is_some(),
        writer.status.rollback_count,
        failures,
        retries_allowed(hr, installing),
    ) {
        AfterFailure::Retry => {
            writer.reconciling(reason, &format!("retry {failures} scheduled"));
            Next::Requeue(backoff(failures))
        }
        AfterFailure::Exhausted => {
            writer.stalled(
                "RetriesExhausted",
                &format!("{message} (gave up after {failures} attempts)"),
            );
            Next::AwaitChange
        }
        rolled => {
            // `after_failure` reports a rollback only with a revision deployed after it.
            let rolled_back = rolled_back(now_deployed.unwrap_or_default());
            writer.status.rollback_count += 1;
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
            match rolled {
                AfterFailure::RolledBackStop => {
                    writer.stalled(
                        "RolledBack",
                        &format!("{rolled_back}; not retried (rollback.retry is false)"),
                    );
                    Next::AwaitChange
                }
                AfterFailure::RolledBackExhausted { count } => {
                    writer.stalled(
                        "RetriesExhausted",
                        &format!(
                            "{rolled_back}; gave up after {count} rollbacks (rollback.maxRetries)"
                        ),
                    );
                    Next::AwaitChange
                }
                AfterFailure::RolledBackRetry { count } => {
                    writer.reconciling(reason, &format!("upgrade retry {count} scheduled"));
                    Next::Requeue(backoff(failures))
                }
                AfterFailure::Retry | AfterFailure::Exhausted => Next::Requeue(backoff(failures)),
            }
        }
    };
    finish(writer, next).await
}
