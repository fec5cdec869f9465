//! Helm tests of a release (`test`): whether a sync asks the backend to run them, and what
//! their results mean for the HelmRelease's `TestSuccess` condition.

use crate::api::HelmRelease;
use crate::plugins::bindings::release_context::TestResult;

pub(crate) fn tests_enabled(hr: &HelmRelease) -> bool {
    hr.spec.test.as_ref().is_some_and(|t| t.enable)
}

/// What the test results of a sync mean: the `TestSuccess` condition's status, reason and
/// message.
pub(crate) fn test_verdict(results: &[TestResult]) -> (bool, &'static str, String) {
    let failed: Vec<&TestResult> = results.iter().filter(|r| r.phase == "Failed").collect();
    if results.is_empty() {
        return (true, "TestSucceeded", "the chart has no tests".into());
    }
    match failed.first() {
        None => (
            true,
            "TestSucceeded",
            format!(
                "{} test(s) passed: {}",
                results.len(),
                results
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Some(first) => (
            false,
            "TestFailed",
            format!(
                "test {} {} failed{}",
                first.kind,
                first.name,
                first
                    .message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        ),
    }
}
