//! The uninstall remediation (`upgrade.remediation.strategy: uninstall`): uninstall a
//! failed upgrade, so that the next attempt installs the release afresh.

use kube::runtime::events::EventType;

use super::Outcome;
use super::sync::failure_reason;
use crate::api::{HelmRelease, ReleaseAction};
use crate::controller::context::Context;
use crate::controller::error::ReconcileError;
use crate::controller::observe::Observed;
use crate::controller::options::timeout_seconds;
use crate::controller::report::{StatusWriter, call_message, publish};
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::UninstallOptions;

/// Uninstall `observed`'s failed upgrade. Whatever happens, the remediation is no longer
/// owed; the reconcile chooses again (a retry waits for the backoff).
pub(crate) async fn uninstall_remediation(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
) -> Result<Outcome, ReconcileError> {
    writer.status.pending_remediation = None;
    let reason = failure_reason(ReleaseAction::Upgrade);
    let failure = writer.message("Released");
    let options = UninstallOptions {
        keep_history: false,
        wait: false,
        timeout_seconds: timeout_seconds(hr),
        disable_hooks: false,
    };
    let removed = observed
        .backend
        .uninstall(&observed.release, options, observed.grants.clone())
        .await;
    writer.tick();
    match removed {
        Ok(_) => {
            let remediated = format!(
                "{failure}; uninstalled the release (upgrade.remediation.strategy: uninstall)"
            );
            writer.status.revision = None;
            writer.status.release_status = None;
            writer.status.applied_digest = None;
            observed.current = None;
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
                "{failure}; the uninstall remediation failed too: {}",
                call_message(&error)
            );
            writer.status.last_failed_action = Some(ReleaseAction::Uninstall);
            writer.ready(false, reason, &text);
            publish(ctx, hr, EventType::Warning, "RemediationFailed", text).await;
        }
    }
    Ok(Outcome::ChooseAgain)
}
