//! Helm tests (`helm test`): after a successful install or upgrade, when the host's
//! `release-context` asks for them, the chart's `test` hooks run as Helm runs them (by
//! weight, each awaited, stopping at the first failure, delete policies honoured), their
//! last runs are written into the release record (so `helm status` shows them) and the
//! outcome is reported to the host, which decides what a failure means for the release.
//! A failing test does not fail the sync: the release is deployed, as after `helm test`.

use capstan_helm::release::Release;
use capstan_plugin_sdk::backend::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::backend::capstan::plugin::release_context::{self, TestResult};

use crate::store;
use crate::wait::Deadline;

/// The event of test hooks (`test-success` is read as `test`).
const TEST_EVENT: &str = "test";

/// Run the tests of `record` if the host asks for them, and report them.
pub fn run_if_asked(record: &mut Release) {
    let Some(options) = release_context::tests() else {
        return;
    };
    let deadline = Deadline::start(options.timeout_seconds);
    let mut created = Vec::new();
    let failure = crate::hooks::run(record, TEST_EVENT, &deadline, &mut created).err();
    if let Err(e) = store::update(record) {
        log(
            Level::Warn,
            &format!(
                "recording the test results of {}: {}",
                record.key(),
                e.message
            ),
        );
    }
    let results = record
        .hooks
        .iter()
        .filter(|h| h.events.iter().any(|e| e == TEST_EVENT))
        .map(|h| TestResult {
            name: h.name.clone(),
            kind: h.kind.clone(),
            phase: if h.last_run.phase.is_empty() {
                "Unknown".into()
            } else {
                h.last_run.phase.clone()
            },
            started_at: h.last_run.started_at.clone(),
            completed_at: h.last_run.completed_at.clone(),
            message: (h.last_run.phase == "Failed")
                .then(|| failure.as_ref().map(|f| f.message.clone()))
                .flatten(),
        })
        .collect::<Vec<_>>();
    release_context::report_tests(&results);
}
