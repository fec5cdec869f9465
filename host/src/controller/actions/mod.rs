//! The actions of the release reconcile, one per file, each run when
//! [`next_action`](super::decision::next_action) chooses it: [`install`], [`upgrade`] (both
//! through [`sync`], with the release's tests), [`rollback`] and [`uninstall_remediation`]
//! of a failed upgrade, and the [`drift`] check of a release in line. An action records
//! what it did in the status; the reconcile writes it before choosing again.

pub(crate) mod drift;
pub(crate) mod install;
pub(crate) mod rollback;
pub(crate) mod sync;
pub(crate) mod uninstall_remediation;
pub(crate) mod upgrade;

use super::queue::Next;

/// What an action leaves for the reconcile.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The reconcile is over: requeue as `Next` says.
    Done(Next),
    /// A failure was recorded, or remediated: write the status and choose again.
    ChooseAgain,
}
