//! The `release-context` host interface: options of the release a backend call is about
//! that the 0.2 records cannot carry (its records' storage namespace, whether to run its
//! tests, whether and how to check it for drift), and what the backend reports back (test
//! results, drifted objects).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::bindings::release_context::{
    DriftOptions, DriftedObject, Host, TestOptions, TestResult,
};
use capstan_postrender::selector::Selector;

/// Fields drift detection ignores on the objects a selector picks (all without one).
#[derive(Debug)]
pub struct IgnoreRule {
    /// JSON pointers.
    pub paths: Vec<String>,
    /// Which objects.
    pub target: Option<Selector>,
}

/// A drift check the backend runs when it finds the release unchanged.
#[derive(Clone, Debug)]
pub struct DriftCheck {
    /// Put drifted objects back.
    pub correct: bool,
    /// What to ignore.
    pub ignore: Arc<Vec<IgnoreRule>>,
}

/// A value the backend reports during a call, for the caller to read after it.
#[derive(Clone, Debug)]
pub struct Report<T>(Arc<Mutex<Option<T>>>);

impl<T> Default for Report<T> {
    fn default() -> Self {
        Report(Arc::new(Mutex::new(None)))
    }
}

impl<T> Report<T> {
    fn put(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
    }

    /// What was reported, if anything.
    pub fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The release-level options a call may read, and where its reports go.
#[derive(Clone, Debug, Default)]
pub struct ReleaseContextGrant {
    /// Where the release's records live, when not in the release namespace.
    pub storage_namespace: Option<String>,
    /// Run the tests after a successful install or upgrade, within this many seconds.
    pub test_timeout_seconds: Option<u32>,
    /// The test results the backend reported.
    pub test_results: Report<Vec<TestResult>>,
    /// Check the unchanged release for drift.
    pub drift: Option<DriftCheck>,
    /// The drifted objects the backend reported.
    pub drifted: Report<Vec<DriftedObject>>,
}

impl ReleaseContextGrant {
    /// The test results reported during the call, if the tests ran.
    pub fn take_test_results(&self) -> Option<Vec<TestResult>> {
        self.test_results.take()
    }
}

/// What the `release-context` import sees of a call: its grant.
pub struct ReleaseContextView<'a> {
    /// The grant, if any.
    pub(crate) grant: Option<&'a ReleaseContextGrant>,
}

impl Host for ReleaseContextView<'_> {
    async fn storage_namespace(&mut self) -> Option<String> {
        self.grant.and_then(|c| c.storage_namespace.clone())
    }

    async fn tests(&mut self) -> Option<TestOptions> {
        let timeout_seconds = self.grant?.test_timeout_seconds?;
        Some(TestOptions { timeout_seconds })
    }

    async fn report_tests(&mut self, results: Vec<TestResult>) {
        if let Some(context) = self.grant {
            context.test_results.put(results);
        }
    }

    async fn drift(&mut self) -> Option<DriftOptions> {
        let check = self.grant?.drift.as_ref()?;
        Some(DriftOptions {
            correct: check.correct,
        })
    }

    async fn drift_ignored_paths(&mut self, object: String) -> Vec<String> {
        let Some(check) = self.grant.and_then(|c| c.drift.as_ref()) else {
            return Vec::new();
        };
        let object: Value = serde_json::from_str(&object).unwrap_or(Value::Null);
        check
            .ignore
            .iter()
            .filter(|rule| rule.target.as_ref().is_none_or(|t| t.matches(&object)))
            .flat_map(|rule| rule.paths.iter().cloned())
            .collect()
    }

    async fn report_drift(&mut self, drifted: Vec<DriftedObject>) {
        if let Some(context) = self.grant {
            context.drifted.put(drifted);
        }
    }
}
