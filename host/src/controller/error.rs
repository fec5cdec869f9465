//! Why a reconcile failed in a way the controller retries with backoff (as opposed to a
//! release failing, which the status records).

/// Why a reconcile failed in a way the controller should retry with backoff.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The Kubernetes API refused a status or finalizer update.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The finalizer machinery failed.
    #[error("finalizer: {0}")]
    Finalizer(String),
    /// Uninstalling the release failed (the finalizer stays).
    #[error("uninstall of release {release} failed: {message}")]
    Uninstall {
        /// Namespace/name of the release.
        release: String,
        /// What failed.
        message: String,
    },
}
