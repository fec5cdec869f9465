//! One operation per release at a time, across processes: before a backend changes a
//! release (`sync`, `uninstall`, `rollback`), the host takes the `coordination.k8s.io/v1`
//! Lease `capstan.release.<name>` in the release's namespace, renews it while the call runs
//! and deletes it afterwards.
//!
//! The Lease is what tells a live operation from a dead one. A backend finding a release
//! record `pending-*` may only treat it as left by a killed operation (and unlock it)
//! because the host holds this Lease: whoever wrote that record either still holds the
//! Lease (and this operation waited for it) or stopped renewing it, and a Lease nobody
//! renews expires after [`LOCK_DURATION`]. The protocol is the leader election's
//! ([`crate::controller::leader`]): compare-and-swap on the Lease's resourceVersion, takeover
//! only of an expired or released Lease.
//!
//! Whether another holder's Lease has expired is judged by observation, never by comparing
//! its `renewTime` with this host's clock: the Lease's `resourceVersion` unchanged for the
//! lease's duration, timed on this process's monotonic clock, so hosts whose clocks
//! disagree neither steal a live lock nor wait on a dead one. The operator (a process that
//! keeps running, see [`judge_expiry_by_observation`]) fails the attempt at once and keeps
//! what it saw for its next attempt; a one-shot `capstan release` watches the Lease within
//! the call instead: it is refused as soon as the holder renews, and takes the Lease over
//! once it stood still for the whole duration (so a dead holder costs it up to
//! [`LOCK_DURATION`] of waiting).
//!
//! Real `helm` does not take this Lease (Helm itself guards only with the `pending-*`
//! record), so an operation of real `helm` running at the same moment is not excluded.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{DeleteParams, Preconditions};
use kube::{Api, Client};

use capstan_plugins::lock::{BoxFuture, LockRefused, ReleaseLock};

use crate::controller::leader::{LeaderElection, LeaseOptions, Observation};
use crate::plugins::bindings::types::ReleaseId;

/// How long a lock lasts without renewal; it is renewed every third of this.
pub const LOCK_DURATION: Duration = Duration::from_secs(30);

/// Why a release could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live operation holds the release.
    #[error(
        "release {namespace}/{name} is locked by {holder} (Lease {lease}): another operation is in progress"
    )]
    Held {
        /// Release namespace.
        namespace: String,
        /// Release name.
        name: String,
        /// The holder's identity (`host/pid operation`).
        holder: String,
        /// The Lease's name.
        lease: String,
    },
    /// The Lease was lost while the operation ran (taken over, or not renewed for as long
    /// as it lasts): the operation was stopped at once, since another may now hold it.
    #[error(
        "the lock of release {namespace}/{name} (Lease {lease}) was lost while the operation ran ({why}); the operation was stopped"
    )]
    Lost {
        /// Release namespace.
        namespace: String,
        /// Release name.
        name: String,
        /// The Lease's name.
        lease: String,
        /// Taken over, or how long renewals failed.
        why: String,
    },
    /// The Lease could not be read or written.
    #[error("cannot take the lock of release {namespace}/{name} (Lease {lease}): {source}")]
    Api {
        /// Release namespace.
        namespace: String,
        /// Release name.
        name: String,
        /// The Lease's name.
        lease: String,
        /// What the API server said.
        source: kube::Error,
    },
}

/// The release lock as the plugin runtime holds it around the backend calls that change a
/// release ([`ReleaseLock`]): [`with_release_lock`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LeaseLock;

impl ReleaseLock for LeaseLock {
    fn hold<'a>(
        &'a self,
        client: Client,
        release: &'a ReleaseId,
        operation: &'a str,
        work: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, Result<(), LockRefused>> {
        Box::pin(async move {
            with_release_lock(client, release, operation, work)
                .await
                .map_err(|error| LockRefused(error.to_string()))
        })
    }
}

/// Whether this process judges other holders' release Leases by observation.
static BY_OBSERVATION: AtomicBool = AtomicBool::new(false);

/// Judge other holders' release Leases expired by observation from now on (for the
/// operator, which keeps running; see the module documentation).
pub fn judge_expiry_by_observation() {
    BY_OBSERVATION.store(true, Ordering::Relaxed);
}

/// What this process observed of each release Lease it could not take, by
/// `namespace/name`; dropped once it takes the Lease.
fn observations() -> &'static Mutex<HashMap<String, Arc<Observation>>> {
    static OBSERVATIONS: OnceLock<Mutex<HashMap<String, Arc<Observation>>>> = OnceLock::new();
    OBSERVATIONS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The Lease guarding `release`.
pub fn lease_name(release: &ReleaseId) -> String {
    format!("capstan.release.{}", release.name)
}

/// Who this process is, for the Lease's holder identity.
fn holder_identity(operation: &str) -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "capstan".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{host}/{} {operation} #{nanos:08x}", std::process::id())
}

/// Run `operation` on `release` while holding its Lease; fails at once with
/// [`LockError::Held`] when another live operation holds it, and stops `work` with
/// [`LockError::Lost`] when the Lease is lost while it runs.
pub async fn with_release_lock<T>(
    client: Client,
    release: &ReleaseId,
    operation: &str,
    work: impl Future<Output = T>,
) -> Result<T, LockError> {
    let lease = lease_name(release);
    let api_error = |source| LockError::Api {
        namespace: release.namespace.clone(),
        name: release.name.clone(),
        lease: lease.clone(),
        source,
    };
    let identity = holder_identity(operation);
    let options = LeaseOptions {
        namespace: release.namespace.clone(),
        name: lease.clone(),
        identity: identity.clone(),
        duration: LOCK_DURATION,
    };
    let key = format!("{}/{lease}", release.namespace);
    let (election, acquired) = if BY_OBSERVATION.load(Ordering::Relaxed) {
        let observed = Arc::clone(
            observations()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(key.clone())
                .or_default(),
        );
        let election = LeaderElection::observed_with(client.clone(), options, observed);
        let acquired = election.try_acquire_or_renew().await.map_err(api_error)?;
        (election, acquired)
    } else {
        let election = LeaderElection::observing(client.clone(), options);
        let acquired = acquire_watching(&election, &lease)
            .await
            .map_err(api_error)?;
        (election, acquired)
    };
    if acquired {
        observations()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    } else {
        let api: Api<Lease> = Api::namespaced(client, &release.namespace);
        let holder = api
            .get_opt(&lease)
            .await
            .ok()
            .flatten()
            .and_then(|l| l.spec.and_then(|s| s.holder_identity))
            .unwrap_or_else(|| "another operation".into());
        return Err(LockError::Held {
            namespace: release.namespace.clone(),
            name: release.name.clone(),
            holder,
            lease,
        });
    }
    tracing::debug!(lease = %lease, holder = %identity, "release locked");
    let lost = |why: String| LockError::Lost {
        namespace: release.namespace.clone(),
        name: release.name.clone(),
        lease: lease.clone(),
        why,
    };
    // Renewals are timed on this process's monotonic clock: the lock is given up when it
    // could not be renewed for as long as the Lease lasts, whatever the clocks say.
    let mut renewed = tokio::time::Instant::now();
    let mut work = std::pin::pin!(work);
    let output = loop {
        tokio::select! {
            output = &mut work => break output,
            _ = tokio::time::sleep(LOCK_DURATION / 3) => {
                match election.try_acquire_or_renew().await {
                    Ok(true) => renewed = tokio::time::Instant::now(),
                    Ok(false) => {
                        // Dropping `work` stops the plugin call where it stands; the record
                        // it leaves `pending-*` is unlocked by the next operation.
                        tracing::error!(lease = %lease, "the release lock was taken over; stopping the operation");
                        return Err(lost("taken over by another operation".into()));
                    }
                    Err(error) => {
                        tracing::warn!(%error, lease = %lease, "cannot renew the release lock");
                        if renewed.elapsed() >= LOCK_DURATION {
                            return Err(lost(format!(
                                "not renewed for {}s: {error}",
                                renewed.elapsed().as_secs()
                            )));
                        }
                    }
                }
            }
        }
    };
    unlock(client, &release.namespace, &lease, &identity).await;
    Ok(output)
}

/// For a one-shot process: take the Lease, or watch another holder's for as long as it
/// lasts (polling once a second) to tell a live holder (it renews: `Ok(false)` at once)
/// from a dead one (its version stands still for the whole duration: taken over).
async fn acquire_watching(election: &LeaderElection, lease: &str) -> Result<bool, kube::Error> {
    /// Longest watch, whatever duration the holder wrote into its Lease.
    const LONGEST_WATCH: Duration = Duration::from_secs(2 * LOCK_DURATION.as_secs() + 5);
    let started = tokio::time::Instant::now();
    let mut first_seen: Option<String> = None;
    loop {
        if election.try_acquire_or_renew().await? {
            return Ok(true);
        }
        match (&first_seen, election.observed_version()) {
            (None, Some(version)) => {
                tracing::info!(
                    lease,
                    "the release is locked; watching the lock for up to {}s to tell a live holder from a dead one",
                    LOCK_DURATION.as_secs()
                );
                first_seen = Some(version);
            }
            (Some(first), Some(version)) if *first != version => return Ok(false),
            _ => {}
        }
        if started.elapsed() >= LONGEST_WATCH {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Delete the Lease if this operation still holds it (an unlock that fails only delays the
/// next operation until the Lease expires).
async fn unlock(client: Client, namespace: &str, lease: &str, identity: &str) {
    let api: Api<Lease> = Api::namespaced(client, namespace);
    let current = match api.get_opt(lease).await {
        Ok(Some(current)) => current,
        Ok(None) => return,
        Err(error) => {
            tracing::warn!(%error, lease, "cannot read the release lock to remove it");
            return;
        }
    };
    let held = current
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        == Some(identity);
    if !held {
        return;
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: current.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    if let Err(error) = api.delete(lease, &params).await {
        tracing::warn!(%error, lease, "cannot remove the release lock; it expires by itself");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_names_follow_the_release() {
        let release = ReleaseId {
            namespace: "shop".into(),
            name: "web".into(),
        };
        assert_eq!(lease_name(&release), "capstan.release.web");
    }

    #[test]
    fn holders_differ_per_operation() {
        let first = holder_identity("sync");
        assert!(
            first.contains(&format!("/{} sync #", std::process::id())),
            "{first}"
        );
    }
}
