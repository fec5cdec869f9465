//! The upgrade action: upgrade an installed release through the backend
//! ([`sync`](super::sync)), as `helm upgrade` would.

use super::Outcome;
use super::sync::{Prepared, run_sync};
use crate::api::{HelmRelease, ReleaseAction};
use crate::controller::context::Context;
use crate::controller::error::ReconcileError;
use crate::controller::observe::Observed;
use crate::controller::report::StatusWriter;

/// Upgrade `observed`'s release.
pub(crate) async fn upgrade(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    prepared: Prepared,
) -> Result<Outcome, ReconcileError> {
    run_sync(hr, ctx, writer, observed, prepared, ReleaseAction::Upgrade).await
}
