//! The vocabulary of failed releases: the actions a reconcile takes and how a failed
//! upgrade is remediated.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a failed upgrade is remediated (Flux v2's `strategy`): `rollback` to the last
/// deployed revision, or `uninstall` the release (the next attempt installs it afresh).
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RemediationStrategy {
    /// Roll back to the last deployed revision.
    Rollback,
    /// Uninstall the release.
    Uninstall,
}

/// A release action of the reconcile, as the status names it: `install`, `upgrade`,
/// `rollback` or `uninstall` (the remediations of a failed upgrade).
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseAction {
    /// A first install.
    Install,
    /// An upgrade of an installed release.
    Upgrade,
    /// The rollback of a failed upgrade.
    Rollback,
    /// The uninstall of a failed upgrade (`upgrade.remediation.strategy: uninstall`).
    Uninstall,
}

impl ReleaseAction {
    /// The action's name, as Events and messages say it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseAction::Install => "install",
            ReleaseAction::Upgrade => "upgrade",
            ReleaseAction::Rollback => "rollback",
            ReleaseAction::Uninstall => "uninstall",
        }
    }
}
