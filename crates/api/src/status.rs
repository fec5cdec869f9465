//! The observed state of a HelmRelease and its kstatus-style conditions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::remediation::{ReleaseAction, RemediationStrategy};

/// Observed state of a HelmRelease.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// kstatus conditions: `Ready`, `Reconciling`, `Stalled`, `ChartFetched`, `Released`,
    /// `RolledBack`, `Remediated` (uninstall remediation), `TestSuccess` (`test.enable`),
    /// `Drifted` (`driftDetection`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Name of the Helm release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    /// Helm status of the current revision (`deployed`, `failed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_status: Option<String>,
    /// Current release revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Source revision (git commit or chart version) of the last successful sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_source_revision: Option<String>,
    /// Source revision of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_source_revision: Option<String>,
    /// Digest of chart, value layers, options, backend and release of the last successful
    /// sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_digest: Option<String>,
    /// Digest of the install/upgrade options of the last successful sync: when only the
    /// options change, the next sync upgrades (a new revision) even if chart and values
    /// are the same, as `helm upgrade` with the new flags would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_options_digest: Option<String>,
    /// Digest of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_digest: Option<String>,
    /// Chart archive digest of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_digest: Option<String>,
    /// Consecutive failures of the attempted digest.
    #[serde(default)]
    pub failures: i64,
    /// Failed installs since the last success.
    #[serde(default)]
    pub install_failures: i64,
    /// Failed upgrades since the last success.
    #[serde(default)]
    pub upgrade_failures: i64,
    /// Rollbacks since the last successful install or upgrade.
    #[serde(default)]
    pub rollback_count: i64,
    /// The last release action that failed since the last successful install or upgrade
    /// (written before the next action starts, so a restarted operator continues from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failed_action: Option<ReleaseAction>,
    /// The revision the last failed install or upgrade left behind (a `failed` record, or
    /// a deployed revision whose tests failed), when there is one to remediate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failed_revision: Option<i64>,
    /// The remediation the last failed upgrade is owed and has not had yet: the next
    /// reconcile runs it before anything else while the release is still at
    /// `lastFailedRevision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_remediation: Option<RemediationStrategy>,
    /// Last handled `capstan.dev/reconcile-at` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// Last handled `capstan.dev/force-at` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_force_at: Option<String>,
}

/// A kstatus-style condition.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// One-word reason.
    pub reason: String,
    /// What happened, for a person.
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
    /// The generation the condition describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl HelmReleaseStatus {
    /// The condition of `type_`, if set.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Set a condition, keeping its transition time when the status does not change.
    pub fn set_condition(
        &mut self,
        type_: &str,
        status: bool,
        reason: &str,
        message: &str,
        generation: Option<i64>,
        now: &str,
    ) {
        let status = if status { "True" } else { "False" };
        let transition = self
            .condition(type_)
            .filter(|c| c.status == status)
            .map_or_else(|| now.to_owned(), |c| c.last_transition_time.clone());
        self.remove_condition(type_);
        self.conditions.push(Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: transition,
            observed_generation: generation,
        });
        self.conditions
            .sort_by_key(|c| CONDITION_ORDER.iter().position(|t| *t == c.type_));
    }

    /// Remove a condition.
    pub fn remove_condition(&mut self, type_: &str) {
        self.conditions.retain(|c| c.type_ != type_);
    }
}

/// Conditions in the order they are listed.
const CONDITION_ORDER: [&str; 9] = [
    "Ready",
    "Reconciling",
    "Stalled",
    "ChartFetched",
    "Released",
    "TestSuccess",
    "RolledBack",
    "Remediated",
    "Drifted",
];
