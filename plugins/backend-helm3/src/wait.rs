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
