//! Which Helm major's rules the lifecycle follows where Helm 2 and Helm 3 differ, chosen
//! once per component (default Helm 3):
//!
//! - **ownership**: Helm 3 labels and annotates every release object
//!   (`app.kubernetes.io/managed-by: Helm`, `meta.helm.sh/release-*`) and adopts an
//!   existing object that carries them; Helm 2 writes no such metadata and never adopts:
//!   an object the previous revision did not have that already exists stops the operation;
//! - **rendering**: Helm 2 charts see `.Capabilities.TillerVersion` (no `HelmVersion`) and
//!   `.Release.Service` `Tiller`, and `crd-install` hooks are hooks (Helm 3 drops them);
//! - **crd-install**: an install creates those CRDs first (`crds::install_hook_crds`).

use std::sync::OnceLock;

/// The Tiller version Helm 2 charts see (`.Capabilities.TillerVersion.SemVer`): the last
/// Helm 2 release, whose records this backend writes.
pub const TILLER_VERSION: &str = "v2.17.0";

/// A Helm major version's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Helm 3 (`backend-helm3`).
    Helm3,
    /// Helm 2 (`backend-helm2`).
    Helm2,
}

static FLAVOR: OnceLock<Flavor> = OnceLock::new();

/// Choose this component's rules (once, before any operation; later calls are ignored).
pub fn use_flavor(flavor: Flavor) {
    let _ = FLAVOR.set(flavor);
}

/// The rules in force.
pub fn current() -> Flavor {
    *FLAVOR.get_or_init(|| Flavor::Helm3)
}

impl Flavor {
    /// Whether release objects carry Helm 3's ownership label and annotations.
    pub fn marks_ownership(self) -> bool {
        self == Flavor::Helm3
    }
}
