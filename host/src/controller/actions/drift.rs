//! The drift action (Flux v2's `driftDetection`): the check a sync of an unchanged release
//! asks the backend for (`release-context`), and what its report does to the HelmRelease's
//! `Drifted` condition and Events.

use std::sync::Arc;
use std::time::Instant;

use kube::runtime::events::EventType;

use super::Outcome;
use super::sync::{Prepared, sync_request};
use crate::api::{DriftMode, HelmRelease};
use crate::capabilities::release_context::{DriftCheck, IgnoreRule};
use crate::controller::context::Context;
use crate::controller::helm_tests::tests_enabled;
use crate::controller::observe::Observed;
use crate::controller::queue::Next;
use crate::controller::report::{StatusWriter, call_message, publish};
use crate::plugins::bindings::release_context::DriftedObject;
use crate::plugins::call::CallError;
use crate::postrender::selector::Selector;

/// The drift check `hr` asks for, or why its rules are wrong.
pub(crate) fn drift_check(hr: &HelmRelease) -> Result<Option<DriftCheck>, String> {
    let Some(spec) = hr
        .spec
        .drift_detection
        .as_ref()
        .filter(|d| d.mode != DriftMode::Disabled)
    else {
        return Ok(None);
    };
    let mut ignore = Vec::new();
    for (index, rule) in spec.ignore.iter().enumerate() {
        if let Some(bad) = rule.paths.iter().find(|p| !p.starts_with('/')) {
            return Err(format!(
                "driftDetection.ignore[{index}].paths: {bad:?} is not a JSON pointer (RFC 6901: it must start with `/`)"
            ));
        }
        let target = rule
            .target
            .as_ref()
            .map(Selector::new)
            .transpose()
            .map_err(|e| format!("driftDetection.ignore[{index}].{e}"))?;
        ignore.push(IgnoreRule {
            paths: rule.paths.clone(),
            target,
        });
    }
    Ok(Some(DriftCheck {
        correct: spec.mode == DriftMode::Enabled,
        ignore: Arc::new(ignore),
    }))
}

/// The drift check of a release in line: the backend finds it unchanged and compares its
/// objects with the cluster ([`report_drift`] records what it found).
pub(crate) async fn check_drift(
    hr: &HelmRelease,
    ctx: &Context,
    writer: &mut StatusWriter<'_>,
    observed: &mut Observed,
    prepared: Prepared,
    check: DriftCheck,
) -> Outcome {
    let Prepared { chart, mut grants } = prepared;
    if !tests_enabled(hr) {
        writer.status.remove_condition("TestSuccess");
    }
    let (request, _) = sync_request(hr, &writer.status, observed, chart);
    let context = grants.extend_release_context(|context| context.drift = Some(check));
    let outcome = observed.backend.sync(&request, grants).await;
    let drifted = context.drifted.take();
    report_drift(ctx, hr, writer, outcome.map(|_| drifted), observed.started).await
}

/// Record what a drift check found: the `Drifted` condition and, when something drifted,
/// a Warning Event naming the objects.
async fn report_drift(
    ctx: &Context,
    hr: &HelmRelease,
    writer: &mut StatusWriter<'_>,
    outcome: Result<Option<Vec<DriftedObject>>, CallError>,
    started: Instant,
) -> Outcome {
    match outcome {
        Ok(Some(drifted)) if drifted.is_empty() => {
            writer.set(
                "Drifted",
                false,
                "NoDrift",
                "the cluster matches the release",
            );
        }
        Ok(Some(drifted)) => {
            let corrected = drifted.iter().all(|d| d.corrected);
            let list = drifted
                .iter()
                .map(|d| {
                    let namespace = d
                        .object
                        .namespace
                        .as_deref()
                        .map(|n| format!("{n}/"))
                        .unwrap_or_default();
                    format!(
                        "{} {namespace}{} ({})",
                        d.object.kind, d.object.name, d.difference
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let (reason, message) = if corrected {
                ("DriftCorrected", format!("drift corrected: {list}"))
            } else {
                ("DriftDetected", format!("drift detected: {list}"))
            };
            // Corrected drift is no longer drift; detected drift stays until it is gone.
            writer.set("Drifted", !corrected, reason, &message);
            publish(ctx, hr, EventType::Warning, reason, message).await;
        }
        Ok(None) => {}
        Err(error) => {
            let message = format!("drift check failed: {}", call_message(&error));
            writer.set("Drifted", false, "DriftCheckFailed", &message);
            tracing::warn!(%message, "drift check");
        }
    }
    ctx.metrics.observe("none", true, started.elapsed());
    Outcome::Done(Next::Requeue(ctx.options.resync))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{DriftDetection, DriftIgnoreRule, HelmReleaseSpec, PatchTarget};

    fn release(drift: Option<DriftDetection>) -> HelmRelease {
        HelmRelease::new(
            "web",
            HelmReleaseSpec {
                drift_detection: drift,
                ..HelmReleaseSpec::default()
            },
        )
    }

    fn rule(path: &str, kind: Option<&str>) -> DriftIgnoreRule {
        DriftIgnoreRule {
            paths: vec![path.into()],
            target: kind.map(|k| PatchTarget {
                kind: Some(k.into()),
                ..PatchTarget::default()
            }),
        }
    }

    #[test]
    fn modes_and_ignore_rules_are_checked_by_field() {
        assert!(drift_check(&release(None)).unwrap().is_none());
        let disabled = DriftDetection::default();
        assert!(drift_check(&release(Some(disabled))).unwrap().is_none());
        let enabled = drift_check(&release(Some(DriftDetection {
            mode: DriftMode::Enabled,
            ignore: vec![rule("/spec/replicas", Some("Deployment"))],
        })))
        .unwrap()
        .unwrap();
        assert!(enabled.correct);
        assert_eq!(enabled.ignore.len(), 1);
        let warn = DriftDetection {
            mode: DriftMode::Warn,
            ignore: vec![rule("/a", None), rule("spec.replicas", None)],
        };
        assert_eq!(
            drift_check(&release(Some(warn))).unwrap_err(),
            "driftDetection.ignore[1].paths: \"spec.replicas\" is not a JSON pointer (RFC 6901: it must start with `/`)"
        );
        let bad_target = DriftDetection {
            mode: DriftMode::Warn,
            ignore: vec![rule("/a", Some("("))],
        };
        assert!(
            drift_check(&release(Some(bad_target)))
                .unwrap_err()
                .starts_with("driftDetection.ignore[0].target.kind \"(\"")
        );
    }
}
