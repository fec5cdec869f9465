//! The release reconcile's one choice, as Flux's `internal/reconcile` makes it: from the
//! release as observed and the failure history the status keeps, the next action
//! ([`next_action`]). It reads only what it is given (no cluster, no backend), so every rule
//! has its own unit test; `reconcile.rs` runs the action it chooses, writes the status, and
//! asks again until an action says the reconcile is done.

use crate::api::{DEFAULT_ROLLBACK_MAX_RETRIES, ReleaseAction, RemediationStrategy, Rollback};
use crate::capabilities::release_context::DriftCheck;
use crate::plugins::bindings::types::ReleaseStatus;

/// The `Stalled` reasons of a digest whose install or upgrade failed as often as allowed.
pub(crate) const GAVE_UP_REASONS: &[&str] = &["RetriesExhausted", "RolledBack"];

/// What a reconcile knows when it chooses the next action.
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
    /// Failures and remediations since the last success, as the status keeps them.
    pub history: History,
    /// An action of this reconcile failed, or remediated a failure: the rest waits for a
    /// backoff (a retry is never run back to back with the failure it retries).
    pub failed_this_pass: bool,
}

/// The failure history of a release, from its status.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct History {
    /// Consecutive failures of the attempted digest.
    pub failures: i64,
    /// Rollbacks since the last successful upgrade.
    pub rollbacks: i64,
    /// The `RolledBack` condition is true: the last failed upgrade was rolled back.
    pub rolled_back: bool,
    /// The last action that failed.
    pub last_failed: Option<ReleaseAction>,
    /// The revision the last failed install or upgrade left behind.
    pub last_failed_revision: Option<i64>,
    /// The remediation the last failed upgrade is owed.
    pub pending: Option<RemediationStrategy>,
}

/// What the spec says about failures.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FailurePolicy<'a> {
    /// `rollback` (the Flux Helm Operator's rules: `enable`, `retry`, `maxRetries`).
    pub rollback: Option<&'a Rollback>,
    /// Retries allowed after a failed install; `None`: forever.
    pub install_retries: Option<i64>,
    /// Retries allowed after a failed upgrade; `None`: forever.
    pub upgrade_retries: Option<i64>,
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

    /// The remediation owed to the last failed upgrade, while the release is still what
    /// that failure left (someone else changing it — or the remediation having run before
    /// its status was written — settles the debt).
    fn owed_remediation(&self) -> Option<RemediationStrategy> {
        let pending = self.history.pending?;
        let (_, revision) = self.current?;
        (self.history.last_failed_revision == Some(i64::from(revision))).then_some(pending)
    }

    /// The last attempt at this very digest failed.
    fn retrying(&self) -> bool {
        self.history.failures > 0 && self.attempted_digest == Some(self.desired_digest)
    }
}

/// Why a release stopped retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// `failures` attempts, more than the remediation's `retries` allow.
    RetriesExhausted { failures: i64 },
    /// Rolled back; not retried (`rollback.retry: false`).
    RolledBackNoRetry,
    /// Rolled back `count` times, as many as `rollback.maxRetries` allows.
    RollbacksExhausted { count: i64 },
}

/// The next action of a reconcile.
#[derive(Debug, Clone)]
pub(crate) enum Action {
    /// In line with the spec: nothing to do until the next interval. `drift_off`: drift
    /// detection is not configured (its condition goes).
    InLine { drift_off: bool },
    /// In line, and due for a comparison with the cluster (drift detection).
    CheckDrift(DriftCheck),
    /// The drift detection settings are wrong: stall, naming them.
    InvalidDriftDetection(String),
    /// This digest already failed as often as allowed: wait for a change of the spec.
    AwaitChange,
    /// Install the release.
    Install,
    /// Upgrade the release.
    Upgrade,
    /// Roll the failed upgrade back to the last deployed revision.
    Rollback,
    /// Uninstall the failed upgrade, so that the next attempt installs afresh.
    UninstallRemediation,
    /// A failure was recorded (and remediated, if asked): retry after a backoff.
    RetryLater,
    /// Stop retrying until the spec changes.
    GiveUp(GiveUp),
}

/// Choose the next action. `drift` reads the release's drift detection settings and `due`
/// says whether a comparison is due (it books the slot: called only when a comparison would
/// run, at most once per release per interval).
pub(crate) fn next_action(
    facts: &Facts<'_>,
    policy: &FailurePolicy<'_>,
    drift: impl FnOnce() -> Result<Option<DriftCheck>, String>,
    due: impl FnOnce() -> bool,
) -> Action {
    match facts.owed_remediation() {
        Some(RemediationStrategy::Rollback) => return Action::Rollback,
        Some(RemediationStrategy::Uninstall) => return Action::UninstallRemediation,
        None => {}
    }
    if facts.failed_this_pass {
        return match give_up(facts, policy) {
            Some(reason) => Action::GiveUp(reason),
            None => Action::RetryLater,
        };
    }
    if !facts.forced && facts.in_line() {
        return match drift() {
            Ok(Some(check)) if due() => Action::CheckDrift(check),
            Ok(check) => Action::InLine {
                drift_off: check.is_none(),
            },
            Err(message) => Action::InvalidDriftDetection(message),
        };
    }
    if !facts.forced && facts.retrying() {
        if facts.gave_up {
            return Action::AwaitChange;
        }
        // The give-up was not written (the operator stopped between the failure and its
        // verdict): reach it now rather than retry past the limit.
        if let Some(reason) = give_up(facts, policy) {
            return Action::GiveUp(reason);
        }
    }
    match facts.current {
        None => Action::Install,
        Some(_) => Action::Upgrade,
    }
}

/// Whether the failures recorded so far exhaust what the spec allows: with `rollback.enable`
/// and a rolled-back upgrade deployed, the Helm Operator's rollback rules (`retry`, then
/// upgrade retries while the rollbacks do not exceed `maxRetries`, default
/// [`DEFAULT_ROLLBACK_MAX_RETRIES`], 0 unlimited — its `ShouldRetryUpgrade`); otherwise Flux's (`install|upgrade.remediation.retries`: give up once the
/// failures exceed them).
fn give_up(facts: &Facts<'_>, policy: &FailurePolicy<'_>) -> Option<GiveUp> {
    let history = &facts.history;
    let deployed = facts
        .current
        .is_some_and(|(status, _)| status == ReleaseStatus::Deployed);
    let upgrade_failed = history.last_failed != Some(ReleaseAction::Install);
    match policy.rollback.filter(|r| r.enable) {
        Some(rollback) if upgrade_failed && deployed && history.rolled_back => {
            let max = rollback.max_retries.unwrap_or(DEFAULT_ROLLBACK_MAX_RETRIES);
            if !rollback.retry {
                Some(GiveUp::RolledBackNoRetry)
            } else if max > 0 && history.rollbacks > max {
                Some(GiveUp::RollbacksExhausted {
                    count: history.rollbacks,
                })
            } else {
                None
            }
        }
        _ => {
            let allowed = if upgrade_failed {
                policy.upgrade_retries
            } else {
                policy.install_retries
            };
            allowed
                .filter(|allowed| history.failures > *allowed)
                .map(|_| GiveUp::RetriesExhausted {
                    failures: history.failures,
                })
        }
    }
}

/// The remediation a failed sync is owed, decided when it fails: an upgrade is rolled back
/// when the spec asks for it (`rollback.enable`, or `upgrade.remediation.strategy:
/// rollback`) and there is something to roll back from (a `failed` revision was recorded,
/// or the new revision's tests failed — a failure before any record, e.g. a render error,
/// leaves the deployed revision as it was); it is uninstalled with strategy `uninstall`. A
/// failed install is only retried.
pub(crate) fn remediation_owed(
    installing: bool,
    rolls_back: bool,
    strategy: Option<RemediationStrategy>,
    left_revision: bool,
) -> Option<RemediationStrategy> {
    if installing {
        None
    } else if strategy == Some(RemediationStrategy::Uninstall) {
        Some(RemediationStrategy::Uninstall)
    } else if rolls_back && left_revision {
        Some(RemediationStrategy::Rollback)
    } else {
        None
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
            history: History::default(),
            failed_this_pass: false,
        }
    }

    /// An upgrade to [`DIGEST`] that failed once and left a `failed` revision 4.
    fn failed_upgrade() -> Facts<'static> {
        Facts {
            ready: false,
            applied_digest: Some("sha256:old"),
            current: Some((ReleaseStatus::Failed, 4)),
            history: History {
                failures: 1,
                last_failed: Some(ReleaseAction::Upgrade),
                last_failed_revision: Some(4),
                ..History::default()
            },
            ..in_line()
        }
    }

    fn check() -> DriftCheck {
        DriftCheck {
            correct: true,
            ignore: std::sync::Arc::new(Vec::new()),
        }
    }

    /// `next_action` with drift detection off and no failure settings; `due` must not be
    /// asked.
    fn action(facts: Facts<'_>) -> Action {
        action_with(facts, &FailurePolicy::default())
    }

    fn action_with(facts: Facts<'_>, policy: &FailurePolicy<'_>) -> Action {
        next_action(
            &facts,
            policy,
            || Ok(None),
            || panic!("due asked without drift detection"),
        )
    }

    fn never_due() -> bool {
        panic!("due asked although no comparison could run")
    }

    #[test]
    fn a_release_in_line_waits_for_the_next_interval() {
        assert!(matches!(
            action(in_line()),
            Action::InLine { drift_off: true }
        ));
    }

    #[test]
    fn anything_out_of_line_installs_or_upgrades() {
        let cases = [
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
            let next = next_action(
                &facts,
                &FailurePolicy::default(),
                || Ok(Some(check())),
                never_due,
            );
            assert!(matches!(next, Action::Upgrade), "{case}: {next:?}");
        }
        let absent = Facts {
            current: None,
            ..in_line()
        };
        assert!(matches!(action(absent), Action::Install));
    }

    #[test]
    fn drift_is_checked_only_when_due() {
        let mut asked = 0;
        let policy = FailurePolicy::default();
        let due = next_action(
            &in_line(),
            &policy,
            || Ok(Some(check())),
            || {
                asked += 1;
                true
            },
        );
        assert!(
            matches!(due, Action::CheckDrift(DriftCheck { correct: true, .. })),
            "{due:?}"
        );
        assert_eq!(asked, 1);
        let not_due = next_action(&in_line(), &policy, || Ok(Some(check())), || false);
        assert!(
            matches!(not_due, Action::InLine { drift_off: false }),
            "{not_due:?}"
        );
        let invalid = next_action(
            &in_line(),
            &policy,
            || Err("driftDetection.ignore[0]: bad".into()),
            never_due,
        );
        assert!(
            matches!(&invalid, Action::InvalidDriftDetection(m) if m == "driftDetection.ignore[0]: bad"),
            "{invalid:?}"
        );
    }

    #[test]
    fn a_given_up_digest_waits_for_a_change_unless_forced() {
        let stalled = Facts {
            gave_up: true,
            ..failed_upgrade()
        };
        assert!(matches!(action(stalled), Action::AwaitChange));
        assert!(matches!(
            action(Facts {
                forced: true,
                ..stalled
            }),
            Action::Upgrade
        ));
        assert!(matches!(
            action(Facts {
                attempted_digest: Some("sha256:older"),
                ..stalled
            }),
            Action::Upgrade
        ));
    }

    #[test]
    fn an_owed_remediation_comes_first_even_after_a_restart() {
        // The operator died after recording the failure, before the rollback: the next
        // reconcile (nothing failed in it yet) rolls back instead of upgrading again.
        let owed = Facts {
            history: History {
                pending: Some(RemediationStrategy::Rollback),
                ..failed_upgrade().history
            },
            ..failed_upgrade()
        };
        assert!(matches!(action(owed), Action::Rollback));
        assert!(matches!(
            action(Facts {
                forced: true,
                ..owed
            }),
            Action::Rollback
        ));
        let uninstall = Facts {
            history: History {
                pending: Some(RemediationStrategy::Uninstall),
                ..owed.history
            },
            ..owed
        };
        assert!(matches!(action(uninstall), Action::UninstallRemediation));
        // Moved on since (the rollback ran but its status was not written, or someone
        // else changed the release): nothing is owed any more.
        let moved = Facts {
            current: Some((ReleaseStatus::Deployed, 5)),
            ..owed
        };
        assert!(matches!(action(moved), Action::Upgrade));
        let gone = Facts {
            current: None,
            ..uninstall
        };
        assert!(matches!(action(gone), Action::Install));
    }

    #[test]
    fn after_a_failure_in_this_reconcile_the_retry_waits() {
        let failed = Facts {
            failed_this_pass: true,
            ..failed_upgrade()
        };
        assert!(matches!(action(failed), Action::RetryLater));
        let limited = FailurePolicy {
            upgrade_retries: Some(0),
            ..FailurePolicy::default()
        };
        assert!(matches!(
            action_with(failed, &limited),
            Action::GiveUp(GiveUp::RetriesExhausted { failures: 1 })
        ));
    }

    #[test]
    fn a_give_up_that_was_not_written_is_reached_on_the_next_reconcile() {
        let limited = FailurePolicy {
            upgrade_retries: Some(0),
            ..FailurePolicy::default()
        };
        assert!(matches!(
            action_with(failed_upgrade(), &limited),
            Action::GiveUp(GiveUp::RetriesExhausted { failures: 1 })
        ));
        let one_more = FailurePolicy {
            upgrade_retries: Some(1),
            ..FailurePolicy::default()
        };
        assert!(matches!(
            action_with(failed_upgrade(), &one_more),
            Action::Upgrade
        ));
    }

    #[test]
    fn install_and_upgrade_retries_are_counted_apart() {
        let install_failed = Facts {
            current: None,
            history: History {
                failures: 2,
                last_failed: Some(ReleaseAction::Install),
                ..History::default()
            },
            ..failed_upgrade()
        };
        let policy = FailurePolicy {
            install_retries: Some(1),
            upgrade_retries: None,
            ..FailurePolicy::default()
        };
        assert!(matches!(
            action_with(install_failed, &policy),
            Action::GiveUp(GiveUp::RetriesExhausted { failures: 2 })
        ));
        let forever = FailurePolicy {
            install_retries: None,
            upgrade_retries: Some(0),
            ..FailurePolicy::default()
        };
        assert!(matches!(
            action_with(install_failed, &forever),
            Action::Install
        ));
    }

    fn rollback(retry: bool, max_retries: Option<i64>) -> Rollback {
        Rollback {
            enable: true,
            retry,
            max_retries,
            ..Rollback::default()
        }
    }

    /// An upgrade that failed and was rolled back `rollbacks` times, now deployed at the
    /// rolled-back revision.
    fn rolled_back(rollbacks: i64, failures: i64) -> Facts<'static> {
        Facts {
            current: Some((ReleaseStatus::Deployed, 5)),
            failed_this_pass: true,
            history: History {
                failures,
                rollbacks,
                rolled_back: true,
                ..failed_upgrade().history
            },
            ..failed_upgrade()
        }
    }

    #[test]
    fn after_a_rollback_helm_operator_rules_count_rollbacks() {
        let retrying = rollback(true, None);
        let policy = |rollback| FailurePolicy {
            rollback: Some(rollback),
            upgrade_retries: Some(0),
            ..FailurePolicy::default()
        };
        assert!(
            matches!(
                action_with(rolled_back(1, 1), &policy(&retrying)),
                Action::RetryLater
            ),
            "rollbacks, not remediation retries, decide"
        );
        // maxRetries upgrade retries: the last one's rollback is the one that gives up.
        assert!(matches!(
            action_with(
                rolled_back(DEFAULT_ROLLBACK_MAX_RETRIES, 9),
                &policy(&retrying)
            ),
            Action::RetryLater
        ));
        assert!(matches!(
            action_with(
                rolled_back(DEFAULT_ROLLBACK_MAX_RETRIES + 1, 9),
                &policy(&retrying)
            ),
            Action::GiveUp(GiveUp::RollbacksExhausted { count: 6 })
        ));
        let once = rollback(true, Some(1));
        assert!(matches!(
            action_with(rolled_back(1, 1), &policy(&once)),
            Action::RetryLater
        ));
        assert!(matches!(
            action_with(rolled_back(2, 2), &policy(&once)),
            Action::GiveUp(GiveUp::RollbacksExhausted { count: 2 })
        ));
        let unlimited = rollback(true, Some(0));
        assert!(matches!(
            action_with(rolled_back(101, 101), &policy(&unlimited)),
            Action::RetryLater
        ));
        let no_retry = rollback(false, None);
        assert!(matches!(
            action_with(rolled_back(1, 1), &policy(&no_retry)),
            Action::GiveUp(GiveUp::RolledBackNoRetry)
        ));
        // The next reconcile (after the backoff) retries the upgrade.
        let later = Facts {
            failed_this_pass: false,
            ..rolled_back(1, 1)
        };
        assert!(matches!(
            action_with(later, &policy(&retrying)),
            Action::Upgrade
        ));
    }

    #[test]
    fn without_a_rollback_flux_rules_count_failures() {
        let enabled = rollback(true, None);
        let not_rolled_back = Facts {
            failed_this_pass: true,
            history: History {
                failures: 3,
                ..failed_upgrade().history
            },
            ..failed_upgrade()
        };
        for (rollback, facts) in [(Some(&enabled), not_rolled_back), (None, rolled_back(1, 3))] {
            let policy = |retries| FailurePolicy {
                rollback,
                upgrade_retries: retries,
                ..FailurePolicy::default()
            };
            assert!(matches!(
                action_with(facts, &policy(Some(3))),
                Action::RetryLater
            ));
            let exhausted = Facts {
                history: History {
                    failures: 4,
                    ..facts.history
                },
                ..facts
            };
            assert!(matches!(
                action_with(exhausted, &policy(Some(3))),
                Action::GiveUp(GiveUp::RetriesExhausted { failures: 4 })
            ));
            let many = Facts {
                history: History {
                    failures: 40,
                    ..facts.history
                },
                ..facts
            };
            assert!(
                matches!(action_with(many, &policy(None)), Action::RetryLater),
                "no retries configured: retried forever with backoff"
            );
        }
    }

    #[test]
    fn remediation_rolls_back_or_uninstalls_only_failed_upgrades() {
        use RemediationStrategy::{Rollback, Uninstall};
        // Installs are only retried.
        assert_eq!(remediation_owed(true, true, Some(Uninstall), true), None);
        // Rollback asked for, and a failed revision (or failed tests) to roll back from.
        assert_eq!(remediation_owed(false, true, None, true), Some(Rollback));
        // A failure before any record leaves the deployed revision alone.
        assert_eq!(remediation_owed(false, true, None, false), None);
        assert_eq!(remediation_owed(false, false, None, true), None);
        assert_eq!(
            remediation_owed(false, false, Some(Uninstall), false),
            Some(Uninstall)
        );
    }
}
