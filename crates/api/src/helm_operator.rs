//! The Flux Helm Operator's `helm.fluxcd.io/v1` HelmRelease, as its users' clusters hold
//! it: the status it wrote (phase, conditions `ChartFetched`, `Deployed`, `Released`,
//! `RolledBack`, `Tested` with the phase as reason, revisions as source revisions) and how
//! Capstan's own status of a release reads in that shape ([`status_from`]), so that the
//! scripts and dashboards that read the old status keep working. The spec is read by the
//! conversion into Capstan's model (the host's `convert`); the CRD is the Helm Operator's
//! own, not generated here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::status::HelmReleaseStatus;

/// API group of the Helm Operator's resources.
pub const GROUP: &str = "helm.fluxcd.io";
/// Version of the Helm Operator's HelmRelease.
pub const VERSION: &str = "v1";

/// The phases the Helm Operator reported (`status.phase`), in its words.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Phase {
    /// The chart was fetched.
    ChartFetched,
    /// The chart could not be fetched.
    ChartFetchFailed,
    /// A first install runs.
    Installing,
    /// A Helm 2 release is moved to Helm 3.
    Migrating,
    /// An upgrade runs.
    Upgrading,
    /// The install or upgrade succeeded.
    Deployed,
    /// The install or upgrade failed.
    DeployFailed,
    /// The release's tests run.
    Testing,
    /// The release's tests failed.
    TestFailed,
    /// The release's tests passed.
    Tested,
    /// The whole release run succeeded.
    Succeeded,
    /// The release run failed.
    Failed,
    /// A failed upgrade is rolled back.
    RollingBack,
    /// A failed upgrade was rolled back.
    RolledBack,
    /// The rollback failed.
    RollbackFailed,
}

impl Phase {
    /// The phase's name, as the status and the condition reasons say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::ChartFetched => "ChartFetched",
            Phase::ChartFetchFailed => "ChartFetchFailed",
            Phase::Installing => "Installing",
            Phase::Migrating => "Migrating",
            Phase::Upgrading => "Upgrading",
            Phase::Deployed => "Deployed",
            Phase::DeployFailed => "DeployFailed",
            Phase::Testing => "Testing",
            Phase::TestFailed => "TestFailed",
            Phase::Tested => "Tested",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
            Phase::RollingBack => "RollingBack",
            Phase::RolledBack => "RolledBack",
            Phase::RollbackFailed => "RollbackFailed",
        }
    }
}

/// One condition of a Helm Operator status.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `ChartFetched`, `Deployed`, `Released`, `RolledBack` or `Tested`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the condition was last set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// The phase that set it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// What happened, in the Helm Operator's sentence.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// The status of a `helm.fluxcd.io/v1` HelmRelease, field for field as the Helm Operator
/// wrote it.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The phase of the last release run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Name of the Helm release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    /// Helm's status of the release (`deployed`, `failed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_status: Option<String>,
    /// Source revision (git commit or chart version) of the last successful release run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Source revision of the last release attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    /// Rollbacks since the last successful release (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rollback_count: i64,
    /// The conditions, one per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

fn is_zero(count: &i64) -> bool {
    *count == 0
}

/// What [`status_from`] needs besides Capstan's status.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The Helm release's name.
    pub release_name: &'a str,
    /// The namespace it is installed in.
    pub target_namespace: &'a str,
    /// `spec.test.ignoreFailures`: a failed test does not fail the release.
    pub ignore_test_failures: bool,
}

/// Capstan's status of a release as the Helm Operator would have written it, keeping the
/// condition times of `previous` where a condition did not change. `now` is RFC 3339.
pub fn status_from(
    capstan: &HelmReleaseStatus,
    subject: Subject<'_>,
    previous: Option<&Status>,
    now: &str,
) -> Status {
    let mut status = Status {
        observed_generation: capstan.observed_generation,
        phase: previous.and_then(|p| p.phase),
        release_name: Some(subject.release_name.to_owned()),
        release_status: capstan.release_status.clone(),
        revision: capstan.applied_source_revision.clone(),
        last_attempted_revision: capstan.attempted_source_revision.clone(),
        rollback_count: capstan.rollback_count,
        conditions: previous.map(|p| p.conditions.clone()).unwrap_or_default(),
    };
    let said = |type_: &str| {
        capstan
            .condition(type_)
            .map(|c| (c.status.as_str(), c.reason.as_str(), c.message.as_str()))
    };
    let mut phases = Vec::new();
    match said("ChartFetched") {
        Some(("True", ..)) => phases.push(Phase::ChartFetched),
        Some(("False", ..)) => phases.push(Phase::ChartFetchFailed),
        _ => {}
    }
    match said("Reconciling") {
        Some(("True", "Installing", _)) => phases.push(Phase::Installing),
        Some(("True", "Upgrading", _)) => phases.push(Phase::Upgrading),
        _ => {}
    }
    match said("Released") {
        Some(("True", ..)) => {
            phases.push(Phase::Deployed);
            match said("TestSuccess") {
                Some(("True", ..)) => phases.push(Phase::Tested),
                Some(("False", ..)) => phases.push(Phase::TestFailed),
                _ => {}
            }
            phases.push(Phase::Succeeded);
        }
        Some(("False", _, message)) => {
            let tests_failed = said("TestSuccess").is_some_and(|(s, ..)| s == "False");
            phases.push(if tests_failed {
                Phase::TestFailed
            } else {
                Phase::DeployFailed
            });
            if message.contains("the rollback failed too") {
                phases.push(Phase::RollbackFailed);
            } else if said("RolledBack").is_some_and(|(s, ..)| s == "True") {
                phases.push(Phase::RolledBack);
            }
        }
        _ => {}
    }
    for phase in phases {
        apply_phase(&mut status, phase, subject, now);
    }
    status
}

/// Set the conditions `phase` sets, as the Helm Operator's `SetStatusPhase` did.
fn apply_phase(status: &mut Status, phase: Phase, subject: Subject<'_>, now: &str) {
    let (name, namespace) = (subject.release_name, subject.target_namespace);
    let of = format!("Helm release '{name}' in '{namespace}'.");
    let mut set: Vec<(&str, &str, String)> = match phase {
        Phase::Installing => vec![(
            "Deployed",
            "Unknown",
            format!("Running installation for {of}"),
        )],
        Phase::Upgrading => vec![("Deployed", "Unknown", format!("Running upgrade for {of}"))],
        Phase::Deployed => vec![(
            "Deployed",
            "True",
            format!("Installation or upgrade succeeded for {of}"),
        )],
        Phase::DeployFailed => {
            let message = format!("Installation or upgrade failed for {of}");
            vec![
                ("Deployed", "False", message.clone()),
                ("Released", "False", message),
            ]
        }
        Phase::Succeeded => vec![(
            "Released",
            "True",
            format!("Release was successful for {of}"),
        )],
        Phase::Failed => vec![("Released", "False", format!("Release failed for {of}"))],
        Phase::Testing => vec![("Tested", "Unknown", format!("Testing {of}"))],
        Phase::Tested => vec![("Tested", "True", format!("Tested {of}"))],
        Phase::TestFailed => {
            let message = format!("Test failed for {of}");
            let mut set = vec![("Tested", "False", message.clone())];
            if !subject.ignore_test_failures {
                set.push(("Released", "False", message));
            }
            set
        }
        Phase::RollingBack => vec![("RolledBack", "Unknown", format!("Rolling back {of}"))],
        Phase::RolledBack => vec![("RolledBack", "True", format!("Rolled back {of}"))],
        Phase::RollbackFailed => {
            vec![("RolledBack", "False", format!("Rollback failed for {of}"))]
        }
        Phase::ChartFetched => vec![(
            "ChartFetched",
            "True",
            format!("Chart fetch was successful for {of}"),
        )],
        Phase::ChartFetchFailed => {
            let message = format!("Chart fetch failed for {of}");
            vec![
                ("ChartFetched", "False", message.clone()),
                ("Released", "False", message),
            ]
        }
        Phase::Migrating => Vec::new(),
    };
    for (type_, value, message) in set.drain(..) {
        let transition = status
            .conditions
            .iter()
            .find(|c| c.type_ == type_ && c.status == value)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.to_owned());
        status.conditions.retain(|c| c.type_ != type_);
        status.conditions.push(Condition {
            type_: type_.to_owned(),
            status: value.to_owned(),
            last_update_time: Some(now.to_owned()),
            last_transition_time: Some(transition),
            reason: phase.as_str().to_owned(),
            message,
        });
        if type_ == "Released" && value == "True" {
            status.conditions.retain(|c| c.type_ != "RolledBack");
        }
    }
    if phase != Phase::Migrating {
        status.phase = Some(phase);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-12-08T00:00:00Z";

    fn subject() -> Subject<'static> {
        Subject {
            release_name: "podinfo-git",
            target_namespace: "demo",
            ignore_test_failures: false,
        }
    }

    fn capstan(conditions: &[(&str, bool, &str, &str)]) -> HelmReleaseStatus {
        let mut status = HelmReleaseStatus {
            observed_generation: Some(2),
            release_status: Some("deployed".into()),
            applied_source_revision: Some("abc123".into()),
            attempted_source_revision: Some("def456".into()),
            ..HelmReleaseStatus::default()
        };
        for (type_, value, reason, message) in conditions {
            status.set_condition(type_, *value, reason, message, Some(2), NOW);
        }
        status
    }

    fn condition<'a>(status: &'a Status, type_: &str) -> (&'a str, &'a str) {
        let c = status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .unwrap_or_else(|| panic!("no {type_} in {status:?}"));
        (c.status.as_str(), c.reason.as_str())
    }

    #[test]
    fn a_successful_release_reads_as_the_helm_operator_wrote_it() {
        let status = status_from(
            &capstan(&[
                ("ChartFetched", true, "ChartFetched", "chart podinfo 3.2.0"),
                (
                    "Released",
                    true,
                    "UpgradeSucceeded",
                    "release demo/podinfo-git",
                ),
                (
                    "Ready",
                    true,
                    "UpgradeSucceeded",
                    "release demo/podinfo-git",
                ),
            ]),
            subject(),
            None,
            NOW,
        );
        assert_eq!(status.phase, Some(Phase::Succeeded));
        assert_eq!(status.release_status.as_deref(), Some("deployed"));
        assert_eq!(status.revision.as_deref(), Some("abc123"));
        assert_eq!(status.last_attempted_revision.as_deref(), Some("def456"));
        assert_eq!(status.observed_generation, Some(2));
        assert_eq!(condition(&status, "ChartFetched"), ("True", "ChartFetched"));
        assert_eq!(condition(&status, "Deployed"), ("True", "Deployed"));
        assert_eq!(condition(&status, "Released"), ("True", "Succeeded"));
        let released = status.conditions.iter().find(|c| c.type_ == "Released");
        assert_eq!(
            released.map(|c| c.message.as_str()),
            Some("Release was successful for Helm release 'podinfo-git' in 'demo'.")
        );
        let json = serde_json::to_value(&status).unwrap();
        assert!(json.get("rollbackCount").is_none(), "{json}");
        assert_eq!(json["phase"], "Succeeded");
    }

    #[test]
    fn tests_failures_and_rollbacks_set_their_phases() {
        let tested = status_from(
            &capstan(&[
                ("Released", true, "InstallSucceeded", "ok"),
                ("TestSuccess", true, "TestSucceeded", "1 test(s) passed"),
            ]),
            subject(),
            None,
            NOW,
        );
        assert_eq!(condition(&tested, "Tested"), ("True", "Tested"));
        let mut rolled = capstan(&[
            (
                "Released",
                false,
                "UpgradeFailed",
                "upgrade failed: timed out",
            ),
            (
                "RolledBack",
                true,
                "RolledBack",
                "rolled back as revision 3",
            ),
        ]);
        rolled.rollback_count = 1;
        let status = status_from(&rolled, subject(), Some(&tested), NOW);
        assert_eq!(status.phase, Some(Phase::RolledBack));
        assert_eq!(status.rollback_count, 1);
        assert_eq!(condition(&status, "Released"), ("False", "DeployFailed"));
        assert_eq!(condition(&status, "RolledBack"), ("True", "RolledBack"));
        // The success that follows drops RolledBack, as SetConditions did.
        let again = status_from(
            &capstan(&[("Released", true, "UpgradeSucceeded", "ok")]),
            subject(),
            Some(&status),
            NOW,
        );
        assert!(again.conditions.iter().all(|c| c.type_ != "RolledBack"));
        let failed_tests = status_from(
            &capstan(&[
                (
                    "Released",
                    false,
                    "UpgradeFailed",
                    "revision 2 is deployed but its test",
                ),
                ("TestSuccess", false, "TestFailed", "test Pod x failed"),
            ]),
            subject(),
            None,
            NOW,
        );
        assert_eq!(failed_tests.phase, Some(Phase::TestFailed));
        assert_eq!(condition(&failed_tests, "Tested"), ("False", "TestFailed"));
        assert_eq!(
            condition(&failed_tests, "Released"),
            ("False", "TestFailed")
        );
        let no_rollback = status_from(
            &capstan(&[(
                "Released",
                false,
                "UpgradeFailed",
                "upgrade failed: x; the rollback failed too: y",
            )]),
            subject(),
            None,
            NOW,
        );
        assert_eq!(no_rollback.phase, Some(Phase::RollbackFailed));
        assert_eq!(
            condition(&no_rollback, "RolledBack"),
            ("False", "RollbackFailed")
        );
    }

    #[test]
    fn unchanged_conditions_keep_their_transition_time() {
        let first = status_from(
            &capstan(&[("Released", true, "InstallSucceeded", "ok")]),
            subject(),
            None,
            "2026-12-08T00:00:00Z",
        );
        let later = status_from(
            &capstan(&[("Released", true, "UpgradeSucceeded", "ok")]),
            subject(),
            Some(&first),
            "2026-12-08T01:00:00Z",
        );
        let released = later
            .conditions
            .iter()
            .find(|c| c.type_ == "Released")
            .unwrap();
        assert_eq!(
            released.last_transition_time.as_deref(),
            Some("2026-12-08T00:00:00Z")
        );
        assert_eq!(
            released.last_update_time.as_deref(),
            Some("2026-12-08T01:00:00Z")
        );
    }

    #[test]
    fn every_phase_of_the_crd_is_known() {
        // The suite's CRD, the Helm Operator's own (shared/ beside the checkout).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/helm-operator-e2e/suite/crds.yaml");
        let crd =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let phases = crd
            .split("phase:")
            .nth(1)
            .and_then(|rest| rest.split("enum:").nth(1))
            .unwrap();
        let mut seen = 0;
        for line in phases.lines().skip(1) {
            let Some(value) = line.trim().strip_prefix("- ") else {
                break;
            };
            let parsed: Phase = serde_json::from_value(serde_json::json!(value)).unwrap();
            assert_eq!(parsed.as_str(), value);
            seen += 1;
        }
        assert_eq!(seen, 14, "the CRD's phase enum");
    }
}
