//! The `release-context` host interface: options of the release a backend call is about
//! that the 0.2 records cannot carry (so far its records' storage namespace).

use crate::plugins::bindings::release_context::Host;
use crate::plugins::call::CallState;

/// The release-level options a call may read.
#[derive(Clone, Debug, Default)]
pub struct ReleaseContextGrant {
    /// Where the release's records live, when not in the release namespace.
    pub storage_namespace: Option<String>,
}

impl Host for CallState {
    async fn storage_namespace(&mut self) -> Option<String> {
        self.grants
            .release_context
            .as_ref()
            .and_then(|c| c.storage_namespace.clone())
    }
}
