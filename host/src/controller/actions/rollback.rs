//! The rollback remediation: roll a failed upgrade back to the last deployed revision with
//! the rollback's own options (`rollback.*`), and record the revision it made.

use kube::runtime::events::EventType;

use super::Outcome;
use super::sync::failure_reason;
use crate::api::{HelmRelease, ReleaseAction};
use crate::controller::context::Context;
use crate::controller::error::ReconcileError;
use crate::controller::observe::Observed;
use crate::controller::options::rollback_options;
use crate::controller::report::{StatusWriter, call_message, publish};
use crate::plugins::bindings::types::ReleaseStatus;
use crate::release::status_text;

/// Roll `observed`'s failed upgrade back. Whatever happens, the remediation is no longer
/// owed; the reconcile chooses again (a retry waits for the backoff).
pub(crate) async fn rollback(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
) -> Result<Outcome, ReconcileError> {
    writer.status.pending_remediation = None;
    let reason = failure_reason(ReleaseAction::Upgrade);
    let failure = writer.message("Released");
    let rolled = observed
        .backend
        .rollback(
            &observed.release,
            None,
            &rollback_options(hr),
            observed.grants.clone(),
        )
        .await;
    writer.tick();
    if let Err(error) = &rolled {
        let message = format!(
            "{failure}; the rollback failed too: {}",
            call_message(error)
        );
        writer.status.last_failed_action = Some(ReleaseAction::Rollback);
        writer.set("Released", false, reason, &message);
        writer.ready(false, reason, &message);
        publish(ctx, hr, EventType::Warning, reason, message).await;
    }
    let after = observed
        .backend
        .status(&observed.release, observed.grants.clone())
        .await;
    if let Ok(current) = after {
        if let Some(info) = &current {
            writer.status.revision = Some(i64::from(info.revision));
            writer.status.release_status = Some(status_text(info.status).into());
        }
        let deployed = current
            .as_ref()
            .filter(|info| info.status == ReleaseStatus::Deployed)
            .map(|info| info.revision);
        observed.current = current;
        if let (Ok(_), Some(revision)) = (&rolled, deployed) {
            let message = format!(
                "{failure}; rolled back to the last deployed release as revision {revision}"
            );
            writer.status.rollback_count += 1;
            writer.set("RolledBack", true, "RolledBack", &message);
            writer.ready(false, reason, &message);
            publish(ctx, hr, EventType::Warning, "RolledBack", message).await;
        }
    }
    Ok(Outcome::ChooseAgain)
}
