//! The release reconcile's choices, as Flux's `internal/reconcile` makes them: after
//! observing a release, which step comes next ([`next_step`]); after an install or upgrade
//! failed, which remediation runs ([`remediation`]) and what follows it
//! ([`after_failure`]). They read only what they are given (no cluster, no backend), so
//! every rule has its own unit test; `reconcile.rs` runs the step they choose.

use crate::api::{DEFAULT_ROLLBACK_MAX_RETRIES, RemediationStrategy, Rollback};
use crate::capabilities::release_context::DriftCheck;
use crate::plugins::bindings::types::ReleaseStatus;

/// The `Stalled` reasons of a digest whose install or upgrade failed as often as allowed.
pub(crate) const GAVE_UP_REASONS: &[&str] = &["RetriesExhausted", "RolledBack"];

/// What a reconcile knows when it chooses the next step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// A sync was asked for by annotation (`reconcile.fluxcd.io/forceAt`-style) and not yet
    /// handled.
    pub forced: bool,
    /// The `Ready` condition is true.
    pub ready: bool,
    /// The attempts at `attempted_digest` were given up: `Stalled` with one of
    /// [`GAVE_UP_REASONS`]. (A stall on the spec itself — an option the backend cannot
    /// serve, a wrong post-renderer — is judged again on every reconcile instead, so that
    /// taking the option out again, which may restore the digest, is seen.)
    pub gave_up: bool,
    /// The digest of what the spec asks for now (chart, values, options, backend, target).
    pub desired_digest: &'a str,
    /// The digest of the last successful sync.
    pub applied_digest: Option<&'a str>,
    /// The digest of the last sync attempted.
    pub attempted_digest: Option<&'a str>,
    /// The revision the status recorded after the last successful sync.
    pub recorded_revision: Option<i64>,
    /// The release as its backend reports it now: status and revision.
    pub current: Option<(ReleaseStatus, u32)>,
}

impl Facts<'_> {
    /// Nothing changed since the last success and the release is still what it left:
    /// same digest, still deployed at the recorded revision, and `Ready`.
    fn in_line(&self) -> bool {
        self.ready
            && self.applied_digest == Some(self.desired_digest)
            && self.current.is_some_and(|(status, revision)| {
                status == ReleaseStatus::Deployed
                    && Some(i64::from(revision)) == self.recorded_revision
            })
    }
}

/// The next step of a reconcile.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// In line with the spec: nothing to do until the next interval. `drift_off`: drift
    /// detection is not configured (its condition goes).
    InLine { drift_off: bool },
    /// In line, and due for a comparison with the cluster (drift detection).
    CheckDrift(DriftCheck),
    /// The drift detection settings are wrong: stall, naming them.
    InvalidDriftDetection(String),
    /// This digest already failed as often as allowed: wait for a change of the spec.
    AwaitChange,
    /// Install or upgrade.
    Sync,
}

/// Choose the next step. `drift` reads the release's drift detection settings and `due`
/// says whether a comparison is due (it books the slot: called only when a comparison would
/// run, at most once per release per interval).
pub(crate) fn next_step(
    facts: &Facts<'_>,
    drift: impl FnOnce() -> Result<Option<DriftCheck>, String>,
    due: impl FnOnce() -> bool,
) -> Step {
    if !facts.forced && facts.in_line() {
        return match drift() {
            Ok(Some(check)) if due() => Step::CheckDrift(check),
            Ok(check) => Step::InLine {
                drift_off: check.is_none(),
            },
            Err(message) => Step::InvalidDriftDetection(message),
        };
    }
    if !facts.forced && facts.gave_up && facts.attempted_digest == Some(facts.desired_digest) {
        return Step::AwaitChange;
    }
    Step::Sync
}

/// What remediates a failed install or upgrade, before any retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Remediation {
    /// Roll the upgrade back to the last deployed revision.
    pub rollback: bool,
    /// Uninstall the release, so that the next attempt installs afresh.
    pub uninstall: bool,
}

/// The remediation of a failed sync: an upgrade is rolled back when the spec asks for it
/// (`rollback.enable`, or `upgrade.remediation.strategy: rollback`) and there is something to
/// roll back from (a `failed` revision was recorded, or the new revision's tests failed — a
/// failure before any record, e.g. a render error, leaves the deployed revision as it was);
/// it is uninstalled with strategy `uninstall`. A failed install is only retried.
pub(crate) fn remediation(
    installing: bool,
    rolls_back: bool,
    strategy: Option<RemediationStrategy>,
    recorded_failed: bool,
    tests_failed: bool,
) -> Remediation {
    Remediation {
        rollback: !installing && rolls_back && (recorded_failed || tests_failed),
        uninstall: !installing && strategy == Some(RemediationStrategy::Uninstall),
    }
}

/// What follows a failed sync once it is remediated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterFailure {
    /// Rolled back (this is rollback number `count`); the upgrade is retried after a backoff.
    RolledBackRetry { count: i64 },
    /// Rolled back; not retried (`rollback.retry: false`).
    RolledBackStop,
    /// Rolled back `count` times, as many as `rollback.maxRetries` allows: stall.
    RolledBackExhausted { count: i64 },
    /// `failures` attempts, more than the remediation's `retries` allow: stall.
    Exhausted,
    /// Retry after a backoff.
    Retry,
}

/// What follows a failed sync: with `rollback.enable` and a deployed revision after the
/// remediation (it was rolled back), Helm Operator's rollback rules (`retry`, `maxRetries`
/// counted in rollbacks, default [`DEFAULT_ROLLBACK_MAX_RETRIES`], 0 unlimited); otherwise
/// Flux's (`install|upgrade.remediation.retries`: stall once the failures exceed them).
/// `rollbacks` is the count before this failure.
pub(crate) fn after_failure(
    installing: bool,
    rollback: Option<&Rollback>,
    deployed_after: bool,
    rollbacks: i64,
    failures: i64,
    retries_allowed: Option<i64>,
) -> AfterFailure {
    match rollback.filter(|r| r.enable) {
        Some(rollback) if !installing && deployed_after => {
            let count = rollbacks + 1;
            let max = rollback.max_retries.unwrap_or(DEFAULT_ROLLBACK_MAX_RETRIES);
            if !rollback.retry {
                AfterFailure::RolledBackStop
            } else if max > 0 && count >= max {
                AfterFailure::RolledBackExhausted { count }
            } else {
                AfterFailure::RolledBackRetry { count }
            }
        }
        _ => match retries_allowed {
            Some(allowed) if failures > allowed => AfterFailure::Exhausted,
            _ => AfterFailure::Retry,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:new";

    /// A release that was synced with [`DIGEST`] and is still deployed at revision 3.
    fn in_line() -> Facts<'static> {
        Facts {
            forced: false,
            ready: true,
            gave_up: false,
            desired_digest: DIGEST,
            applied_digest: Some(DIGEST),
            attempted_digest: Some(DIGEST),
            recorded_revision: Some(3),
            current: Some((ReleaseStatus::Deployed, 3)),
        }
    }

    fn check() -> DriftCheck {
        DriftCheck {
            correct: true,
            ignore: std::sync::Arc::new(Vec::new()),
        }
    }

    /// `next_step` with drift detection off; `due` must not be asked.
    fn step(facts: Facts<'_>) -> Step {
        next_step(
            &facts,
            || Ok(None),
            || panic!("due asked without drift detection"),
        )
    }

    fn never_due() -> bool {
        panic!("due asked although no comparison could run")
    }

    #[test]
    fn a_release_in_line_waits_for_the_next_interval() {
        assert!(matches!(step(in_line()), Step::InLine { drift_off: true }));
    }

    #[test]
    fn anything_out_of_line_syncs() {
        let cases = [
            (
                "never installed",
                Facts {
                    current: None,
                    ..in_line()
                },
            ),
            (
                "spec changed",
                Facts {
                    desired_digest: "sha256:other",
                    ..in_line()
                },
            ),
            (
                "never succeeded",
                Facts {
                    applied_digest: None,
                    ..in_line()
                },
            ),
            (
                "not Ready (a refused option was taken back)",
                Facts {
                    ready: false,
                    ..in_line()
                },
            ),
            (
                "someone else upgraded it",
                Facts {
                    current: Some((ReleaseStatus::Deployed, 4)),
                    ..in_line()
                },
            ),
            (
                "its last revision failed",
                Facts {
                    current: Some((ReleaseStatus::Failed, 3)),
                    ..in_line()
                },
            ),
            (
                "left pending by a killed operator",
                Facts {
                    current: Some((ReleaseStatus::PendingUpgrade, 3)),
                    ..in_line()
                },
            ),
            (
                "forced",
                Facts {
                    forced: true,
                    ..in_line()
                },
            ),
        ];
        for (case, facts) in cases {
            let step = next_step(&facts, || Ok(Some(check())), never_due);
            assert!(matches!(step, Step::Sync), "{case}: {step:?}");
        }
    }

    #[test]
    fn drift_is_checked_only_when_due() {
        let mut asked = 0;
        let due = next_step(
            &in_line(),
            || Ok(Some(check())),
            || {
                asked += 1;
                true
            },
        );
        assert!(
            matches!(due, Step::CheckDrift(DriftCheck { correct: true, .. })),
            "{due:?}"
        );
        assert_eq!(asked, 1);
        let not_due = next_step(&in_line(), || Ok(Some(check())), || false);
        assert!(
            matches!(not_due, Step::InLine { drift_off: false }),
            "{not_due:?}"
        );
        let invalid = next_step(
            &in_line(),
            || Err("driftDetection.ignore[0]: bad".into()),
            never_due,
        );
        assert!(
            matches!(&invalid, Step::InvalidDriftDetection(m) if m == "driftDetection.ignore[0]: bad"),
            "{invalid:?}"
        );
    }

    #[test]
    fn a_given_up_digest_waits_for_a_change_unless_forced() {
        let stalled = Facts {
            ready: false,
            gave_up: true,
            applied_digest: Some("sha256:old"),
            ..in_line()
        };
        assert!(matches!(step(stalled), Step::AwaitChange));
        assert!(matches!(
            step(Facts {
                forced: true,
                ..stalled
            }),
            Step::Sync
        ));
        // Stalled on another digest: the spec changed since, so try it.
        assert!(matches!(
            step(Facts {
                attempted_digest: Some("sha256:older"),
                ..stalled
            }),
            Step::Sync
        ));
    }

    #[test]
    fn remediation_rolls_back_or_uninstalls_only_failed_upgrades() {
        let none = Remediation {
            rollback: false,
            uninstall: false,
        };
        // Installs are only retried.
        assert_eq!(
            remediation(true, true, Some(RemediationStrategy::Uninstall), true, true),
            none
        );
        // Rollback asked for, and a failed revision (or failed tests) to roll back from.
        assert_eq!(
            remediation(false, true, None, true, false),
            Remediation {
                rollback: true,
                ..none
            }
        );
        assert_eq!(
            remediation(false, true, None, false, true),
            Remediation {
                rollback: true,
                ..none
            }
        );
        // A failure before any record leaves the deployed revision alone.
        assert_eq!(remediation(false, true, None, false, false), none);
        assert_eq!(remediation(false, false, None, true, true), none);
        assert_eq!(
            remediation(
                false,
                false,
                Some(RemediationStrategy::Uninstall),
                true,
                false
            ),
            Remediation {
                uninstall: true,
                ..none
            }
        );
    }

    fn rollback(retry: bool, max_retries: Option<i64>) -> Rollback {
        Rollback {
            enable: true,
            retry,
            max_retries,
            ..Rollback::default()
        }
    }

    #[test]
    fn after_a_rollback_helm_operator_rules_count_rollbacks() {
        let retrying = rollback(true, None);
        assert_eq!(
            after_failure(false, Some(&retrying), true, 0, 1, Some(0)),
            AfterFailure::RolledBackRetry { count: 1 },
            "rollbacks, not remediation retries, decide"
        );
        assert_eq!(
            after_failure(
                false,
                Some(&retrying),
                true,
                DEFAULT_ROLLBACK_MAX_RETRIES - 1,
                9,
                None
            ),
            AfterFailure::RolledBackExhausted {
                count: DEFAULT_ROLLBACK_MAX_RETRIES
            }
        );
        let unlimited = rollback(true, Some(0));
        assert_eq!(
            after_failure(false, Some(&unlimited), true, 100, 101, None),
            AfterFailure::RolledBackRetry { count: 101 }
        );
        assert_eq!(
            after_failure(false, Some(&rollback(false, None)), true, 0, 1, None),
            AfterFailure::RolledBackStop
        );
    }

    #[test]
    fn without_a_rollback_flux_rules_count_failures() {
        let enabled = rollback(true, None);
        // Nothing deployed after the remediation (or an install): retries decide.
        for (rollback, deployed_after, installing) in [
            (Some(&enabled), false, false),
            (Some(&enabled), true, true),
            (None, true, false),
        ] {
            assert_eq!(
                after_failure(installing, rollback, deployed_after, 0, 3, Some(3)),
                AfterFailure::Retry
            );
            assert_eq!(
                after_failure(installing, rollback, deployed_after, 0, 4, Some(3)),
                AfterFailure::Exhausted
            );
            assert_eq!(
                after_failure(installing, rollback, deployed_after, 0, 40, None),
                AfterFailure::Retry,
                "no retries configured: retried forever with backoff"
            );
        }
    }
}
