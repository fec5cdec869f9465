//! The names and defaults the API fixes: group, finalizer, annotations, defaults of unset
//! fields.

/// API group of Capstan's resources.
pub const GROUP: &str = "helm.capstan.dev";
/// Finalizer that makes deleting a HelmRelease uninstall its release first.
pub const FINALIZER: &str = "helm.capstan.dev/uninstall";
/// Annotation: any new value makes the operator reconcile the release now.
pub const RECONCILE_AT_ANNOTATION: &str = "capstan.dev/reconcile-at";
/// Annotation: any new value makes the operator upgrade the release even if unchanged.
pub const FORCE_AT_ANNOTATION: &str = "capstan.dev/force-at";
/// Operation budget when `spec.timeout` is not set, in seconds (Flux Helm Operator's).
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 300;
/// Revisions kept when `spec.maxHistory` is not set.
pub const DEFAULT_MAX_HISTORY: i64 = 10;
/// The git ref followed when `spec.chart.ref` is not set, as the Flux Helm Operator did.
pub const DEFAULT_GIT_REF: &str = "master";
/// Retries of a failed rollback-remediated upgrade when `rollback.maxRetries` is not set.
pub const DEFAULT_ROLLBACK_MAX_RETRIES: i64 = 5;
