//! One operation per release at a time: what a [`PluginRuntime`](crate::PluginRuntime) is
//! given to hold a release while a backend call changes it (`sync`, `uninstall`,
//! `rollback`). The embedder decides how (Capstan: a `coordination.k8s.io` Lease per
//! release); the runtime only asks for it around those calls.

use std::future::Future;
use std::pin::Pin;

use crate::bindings::types::ReleaseId;

/// A future borrowed for `'a`, boxed.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a release could not be held, or was lost while the work ran (the work was stopped).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LockRefused(pub String);

/// Holds a release while a call changes it.
pub trait ReleaseLock: Send + Sync {
    /// Run `work` (the call of `operation`) while holding `release`, with `client` (the
    /// operator's own, never the plugin's) for the lock's bookkeeping; `Err` without running
    /// it when another operation holds the release, or when the lock was lost meanwhile
    /// (`work` is then dropped where it stands).
    fn hold<'a>(
        &'a self,
        client: kube::Client,
        release: &'a ReleaseId,
        operation: &'a str,
        work: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, Result<(), LockRefused>>;
}
