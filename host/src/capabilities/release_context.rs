//! The `release-context` host interface: options of the release a backend call is about
//! that the 0.2 records cannot carry (its records' storage namespace, whether to run its
//! tests), and the test results the backend reports back.

use std::sync::{Arc, Mutex};

use crate::plugins::bindings::release_context::{Host, TestOptions, TestResult};
use crate::plugins::call::CallState;

/// The release-level options a call may read, and where its test results go.
#[derive(Clone, Debug, Default)]
pub struct ReleaseContextGrant {
    /// Where the release's records live, when not in the release namespace.
    pub storage_namespace: Option<String>,
    /// Run the tests after a successful install or upgrade, within this many seconds.
    pub test_timeout_seconds: Option<u32>,
    /// The results the backend reported, for the caller to read after the call.
    pub test_results: Arc<Mutex<Option<Vec<TestResult>>>>,
}

impl ReleaseContextGrant {
    /// The test results reported during the call, if the tests ran.
    pub fn take_test_results(&self) -> Option<Vec<TestResult>> {
        self.test_results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

impl Host for CallState {
    async fn storage_namespace(&mut self) -> Option<String> {
        self.grants
            .release_context
            .as_ref()
            .and_then(|c| c.storage_namespace.clone())
    }

    async fn tests(&mut self) -> Option<TestOptions> {
        let timeout_seconds = self.grants.release_context.as_ref()?.test_timeout_seconds?;
        Some(TestOptions { timeout_seconds })
    }

    async fn report_tests(&mut self, results: Vec<TestResult>) {
        if let Some(context) = &self.grants.release_context {
            *context
                .test_results
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(results);
        }
    }
}
