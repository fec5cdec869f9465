//! Time budgets and waits: every operation runs within its `timeout-seconds` (hooks, wait
//! and deletions included), and readiness is judged by the host's `wait-ready`, which
//! watches the objects rather than polling them.

use std::time::{Duration, Instant};

use capstan_plugin_sdk::backend::capstan::plugin::kube::{self, ObjectRef};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode};

use crate::objects;
use crate::store::with_context;

/// The end of an operation's time budget.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    seconds: u32,
}

impl Deadline {
    /// A budget of `seconds` from now.
    pub fn start(seconds: u32) -> Self {
        Deadline {
            at: Instant::now() + Duration::from_secs(u64::from(seconds)),
            seconds,
        }
    }

    /// Whichever of the two budgets ends first.
    pub fn earliest(self, other: &Deadline) -> Deadline {
        if other.at < self.at { *other } else { self }
    }

    /// Milliseconds left (0 once passed).
    pub fn remaining_ms(&self) -> u32 {
        let left = self
            .at
            .saturating_duration_since(Instant::now())
            .as_millis();
        u32::try_from(left).unwrap_or(u32::MAX)
    }

    /// Whether the budget is used up.
    pub fn passed(&self) -> bool {
        self.remaining_ms() == 0
    }

    /// The whole budget, for messages.
    pub fn seconds(&self) -> u32 {
        self.seconds
    }
}

/// Wait until every object in `objects` is ready. The error names each object that is not
/// and why (with code `timeout` when the budget ran out).
pub fn ready(objects: &[ObjectRef], deadline: &Deadline) -> Result<(), Error> {
    if objects.is_empty() {
        return Ok(());
    }
    let verdicts = kube::wait_ready(objects, deadline.remaining_ms())
        .map_err(|e| with_context(e, "wait for readiness"))?;
    let not_ready: Vec<String> = verdicts
        .iter()
        .filter(|r| !r.ready)
        .map(|r| {
            format!(
                "{} is not ready: {}",
                objects::describe(&r.object),
                r.message
            )
        })
        .collect();
    if not_ready.is_empty() {
        return Ok(());
    }
    let (code, why) = if deadline.passed() {
        (
            ErrorCode::Timeout,
            format!("timed out after {}s waiting", deadline.seconds()),
        )
    } else {
        (ErrorCode::Conflict, "failed while waiting".to_owned())
    };
    Err(Error::new(code, format!("{why}: {}", not_ready.join("; "))))
}

/// Wait until `object` no longer exists (after a delete). The capability has no watch for
/// deletions, so this reads the object every 100 ms within the budget.
pub fn gone(object: &ObjectRef, deadline: &Deadline) -> Result<(), Error> {
    loop {
        let found = kube::get(object)
            .map_err(|e| with_context(e, &format!("get {}", objects::describe(object))))?;
        if found.is_none() {
            return Ok(());
        }
        if deadline.passed() {
            return Err(Error::new(
                ErrorCode::Timeout,
                format!(
                    "timed out after {}s waiting for {} to be deleted",
                    deadline.seconds(),
                    objects::describe(object)
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a Pod's `status.phase` says about a hook Pod that has run.
fn pod_completion(pod: &serde_json::Value) -> Option<Result<(), String>> {
    let status = pod.get("status");
    match status.and_then(|s| s.get("phase")).and_then(|p| p.as_str()) {
        Some("Succeeded") => Some(Ok(())),
        Some("Failed") => {
            let reason = status
                .and_then(|s| s.get("reason").or_else(|| s.get("message")))
                .and_then(|r| r.as_str())
                .unwrap_or("no reason given");
            Some(Err(format!("pod failed ({reason})")))
        }
        _ => None,
    }
}

/// Wait until the hook Pod `object` has completed: Helm waits for a hook Pod to succeed,
/// not merely to be ready (a Pod that keeps running never completes its hook). The
/// capability's readiness treats a Ready Pod as done, so this reads the Pod every 250 ms
/// within the budget once it is ready.
pub fn pod_completed(object: &ObjectRef, deadline: &Deadline) -> Result<(), Error> {
    loop {
        let found = kube::get(object)
            .map_err(|e| with_context(e, &format!("get {}", objects::describe(object))))?;
        let Some(text) = found else {
            return Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "{} disappeared before it completed",
                    objects::describe(object)
                ),
            ));
        };
        let pod: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                ErrorCode::Internal,
                format!("{} as returned by the host: {e}", objects::describe(object)),
            )
        })?;
        match pod_completion(&pod) {
            Some(Ok(())) => return Ok(()),
            Some(Err(why)) => {
                // The host's verdict on a failed Pod carries its last log lines.
                let why = kube::wait_ready(std::slice::from_ref(object), 5_000)
                    .ok()
                    .and_then(|verdicts| verdicts.into_iter().next())
                    .filter(|verdict| !verdict.ready && verdict.message.contains("pod failed"))
                    .map_or(why, |verdict| verdict.message);
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!("{} is not ready: {why}", objects::describe(object)),
                ));
            }
            None if deadline.passed() => {
                let phase = pod
                    .pointer("/status/phase")
                    .and_then(|p| p.as_str())
                    .unwrap_or("unknown");
                return Err(Error::new(
                    ErrorCode::Timeout,
                    format!(
                        "timed out after {}s waiting for hook {} to complete (phase {phase})",
                        deadline.seconds(),
                        objects::describe(object)
                    ),
                ));
            }
            None => std::thread::sleep(Duration::from_millis(250)),
        }
    }
}

#[cfg(test)]
mod completion_tests {
    use super::pod_completion;

    #[test]
    fn only_a_finished_pod_completes_a_hook() {
        let pod = |status: serde_json::Value| serde_json::json!({"status": status});
        assert_eq!(
            pod_completion(&pod(serde_json::json!({"phase": "Succeeded"}))),
            Some(Ok(()))
        );
        assert_eq!(
            pod_completion(&pod(
                serde_json::json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
            )),
            None
        );
        assert_eq!(
            pod_completion(&pod(
                serde_json::json!({"phase": "Failed", "reason": "Evicted"})
            )),
            Some(Err("pod failed (Evicted)".into()))
        );
        assert_eq!(pod_completion(&serde_json::json!({})), None);
    }
}
