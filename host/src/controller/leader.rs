//! Leader election with a `coordination.k8s.io/v1` Lease, as client-go does it: a replica
//! acts only while it holds the Lease, renews it well before it expires, takes it over
//! only once the holder let it expire, and stops acting as soon as a renewal fails for
//! longer than the lease lasts.
//!
//! Every election judges another holder's Lease expired as client-go does, without trusting
//! clocks across hosts: only when the Lease's `resourceVersion` has not changed for the
//! whole lease duration, timed on this process's monotonic clock. A long-lived election
//! ([`LeaderElection::observing`], the operator's replicas) keeps what it saw between its
//! own attempts; [`LeaderElection::observed_with`] shares it between attempts that are each
//! a new election (the operator's release locks); a short-lived `capstan release` process
//! watches the Lease within one call (see [`crate::release_lock`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

/// Settings of the election.
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This replica's identity (pod name).
    pub identity: String,
    /// How long a holder's claim lasts without renewal.
    pub duration: Duration,
}

/// Holds or waits for the Lease.
pub struct LeaderElection {
    api: Api<Lease>,
    options: LeaseOptions,
    /// The other holder's Lease version last seen, and when it was first seen (monotonic).
    observed: Arc<Observation>,
}

/// What an observing election saw of another holder's Lease: its version and when that
/// version was first seen (monotonic).
pub type Observation = Mutex<Option<(String, Instant)>>;

/// Whether another holder's Lease at `version` is expired by observation: the same version
/// seen for at least `duration` since `observed` first recorded it. Records what it saw.
fn expired_by_observation(
    observed: &mut Option<(String, Instant)>,
    version: &str,
    now: Instant,
    duration: Duration,
) -> bool {
    match observed {
        Some((seen, since)) if seen == version => now.duration_since(*since) >= duration,
        _ => {
            *observed = Some((version.to_owned(), now));
            false
        }
    }
}

impl LeaderElection {
    /// An election over the Lease `options.namespace/options.name` that keeps what it
    /// observes of another holder's Lease between its own attempts (for a process that
    /// keeps running).
    pub fn observing(client: Client, options: LeaseOptions) -> Self {
        Self::observed_with(client, options, Arc::new(Mutex::new(None)))
    }

    /// An election whose observations are kept in `observed`, shared with the earlier and
    /// later attempts on the same Lease (each attempt being a new election).
    pub fn observed_with(
        client: Client,
        options: LeaseOptions,
        observed: Arc<Observation>,
    ) -> Self {
        LeaderElection {
            api: Api::namespaced(client, &options.namespace),
            options,
            observed,
        }
    }

    /// The version of another holder's Lease this election saw last, if any.
    pub fn observed_version(&self) -> Option<String> {
        self.observed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|(version, _)| version.clone())
    }

    fn spec(&self, now: Timestamp, acquired: Option<MicroTime>, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.options.identity.clone()),
            lease_duration_seconds: Some(self.options.duration.as_secs().max(1) as i32),
            acquire_time: Some(acquired.unwrap_or(MicroTime(now))),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    /// One attempt to take or renew the Lease; `Ok(true)` when this replica holds it.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let Some(mut lease) = self.api.get_opt(&self.options.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.options.name.clone()),
                    namespace: Some(self.options.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now, None, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            };
        };
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.clone())
            .unwrap_or_default();
        let transitions = lease
            .spec
            .as_ref()
            .and_then(|s| s.lease_transitions)
            .unwrap_or(0);
        let spec = if holder == self.options.identity {
            let acquired = lease.spec.as_ref().and_then(|s| s.acquire_time.clone());
            self.spec(now, acquired, transitions)
        } else if holder.is_empty() || self.holder_gone(&lease) {
            self.spec(now, None, transitions + 1)
        } else {
            return Ok(false);
        };
        lease.spec = Some(spec);
        // The resourceVersion in `lease` makes this a compare-and-swap.
        match self
            .api
            .replace(&self.options.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Whether another holder's `lease` may be taken over.
    fn holder_gone(&self, lease: &Lease) -> bool {
        let duration = lease
            .spec
            .as_ref()
            .and_then(|s| s.lease_duration_seconds)
            .map_or(self.options.duration, |s| {
                Duration::from_secs(u64::try_from(s).unwrap_or(0))
            });
        let version = lease.metadata.resource_version.clone().unwrap_or_default();
        let mut observed = self.observed.lock().unwrap_or_else(|e| e.into_inner());
        expired_by_observation(&mut observed, &version, Instant::now(), duration)
    }

    /// Wait until this replica holds the Lease (or `stop` is set: `false`).
    pub async fn acquire(&self, stop: &mut tokio::sync::watch::Receiver<bool>) -> bool {
        let retry = self.options.duration / 5;
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => return true,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, lease = %self.options.name, "cannot read the leader Lease")
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(retry) => {}
                _ = stop.wait_for(|s| *s) => return false,
            }
        }
    }

    /// Renew the Lease until renewals fail for longer than it lasts (returns: leadership
    /// lost) or `stop` is set (releases nothing; the Lease simply expires).
    pub async fn hold(&self, stop: &mut tokio::sync::watch::Receiver<bool>) -> bool {
        let every = self.options.duration / 3;
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = stop.wait_for(|s| *s) => return false,
            }
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => return true,
                Err(error) => {
                    tracing::warn!(%error, "cannot renew the leader Lease");
                    if last_renewal.elapsed() >= self.options.duration {
                        return true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_holder_expires_only_after_its_version_stood_still_for_the_duration() {
        let duration = Duration::from_secs(15);
        let start = Instant::now();
        let mut observed = None;
        // First sight of a Lease, however old its renewTime: not expired yet.
        assert!(!expired_by_observation(
            &mut observed,
            "10",
            start,
            duration
        ));
        assert!(!expired_by_observation(
            &mut observed,
            "10",
            start + Duration::from_secs(14),
            duration
        ));
        // The holder renewed (new version): the wait starts again.
        assert!(!expired_by_observation(
            &mut observed,
            "11",
            start + Duration::from_secs(14),
            duration
        ));
        assert!(!expired_by_observation(
            &mut observed,
            "11",
            start + Duration::from_secs(28),
            duration
        ));
        assert!(expired_by_observation(
            &mut observed,
            "11",
            start + Duration::from_secs(29),
            duration
        ));
    }
}
