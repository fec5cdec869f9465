//! Call deadlines of one-shot commands, enforced without epoch checks in compiled code.
//!
//! An engine built for [`Epoch`](crate::engine::Preemption::Epoch) preemption compiles an
//! epoch check into every loop head and function entry, so a running call yields to the
//! executor every [`crate::engine::EPOCH_TICK`] and can be stopped past its deadline while
//! the other calls go on. Those checks cost 10-12 % of a `capstan template` run
//! (docs/rendering.md), which makes one call at a time and has nothing else to keep alive.
//! Its engine leaves them out ([`Watchdog`](crate::engine::Preemption::Watchdog)
//! preemption), and a call that is still running at its deadline is ended with the
//! process: wasmtime cannot interrupt uninstrumented code any other way. The process prints
//! the same error a preempting runtime would return for that call and exits with status 1.

use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// How often the watchdog thread looks at its deadlines when none is due sooner (also
/// how long it outlives its runtime at most).
const IDLE_WAKE: Duration = Duration::from_millis(200);

/// Exit status of a process ended by the watchdog, as for any failed command.
const EXIT_STATUS: i32 = 1;

/// The deadlines of the calls in flight, shared with the watchdog thread.
#[derive(Default)]
struct Deadlines {
    calls: Mutex<Vec<Armed>>,
    changed: Condvar,
}

struct Armed {
    id: u64,
    deadline: Instant,
    /// What the process prints when it ends for this call.
    message: String,
}

/// Watches the deadlines of a runtime's calls from its own thread.
pub struct Watchdog {
    deadlines: Arc<Deadlines>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Watchdog {
    /// Start the watchdog thread; it ends within [`IDLE_WAKE`] of the watchdog's drop.
    pub fn start() -> std::io::Result<Self> {
        let deadlines = Arc::new(Deadlines::default());
        let weak = Arc::downgrade(&deadlines);
        std::thread::Builder::new()
            .name("capstan-watchdog".into())
            .spawn(move || watch(&weak))?;
        Ok(Watchdog {
            deadlines,
            next_id: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Watch a call from now on: when it is still armed at `deadline`, the process prints
    /// `message` and exits. Dropping the returned guard disarms it.
    pub fn arm(&self, deadline: Instant, message: String) -> ArmedCall {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut calls = lock(&self.deadlines.calls);
        calls.push(Armed {
            id,
            deadline,
            message,
        });
        drop(calls);
        self.deadlines.changed.notify_one();
        ArmedCall {
            deadlines: Arc::clone(&self.deadlines),
            id,
        }
    }
}

/// One watched call; disarmed when dropped.
pub struct ArmedCall {
    deadlines: Arc<Deadlines>,
    id: u64,
}

impl Drop for ArmedCall {
    fn drop(&mut self) {
        lock(&self.deadlines.calls).retain(|armed| armed.id != self.id);
    }
}

/// A lock that a panicking holder cannot make unusable: the list stays consistent because
/// every change to it is a single push or retain.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watchdog thread: sleep until the earliest deadline (or [`IDLE_WAKE`]), end the
/// process when a call is still armed past it; stop once the watchdog is gone.
fn watch(deadlines: &Weak<Deadlines>) {
    while let Some(shared) = deadlines.upgrade() {
        let calls = lock(&shared.calls);
        let now = Instant::now();
        if let Some(due) = calls.iter().find(|armed| armed.deadline <= now) {
            eprintln!("error: {}", due.message);
            std::process::exit(EXIT_STATUS);
        }
        let wait = calls
            .iter()
            .map(|armed| armed.deadline - now)
            .min()
            .map_or(IDLE_WAKE, |soonest| soonest.min(IDLE_WAKE));
        // Woken early by a new call, or at the wait's end; either way look again.
        let (calls, _) = shared
            .changed
            .wait_timeout(calls, wait)
            .unwrap_or_else(PoisonError::into_inner);
        drop(calls);
        drop(shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disarmed_calls_leave_the_list_and_the_thread_ends_with_the_watchdog() {
        let watchdog = Watchdog::start().unwrap();
        let far = Instant::now() + Duration::from_secs(3600);
        let first = watchdog.arm(far, "first".into());
        let second = watchdog.arm(far, "second".into());
        assert_eq!(lock(&watchdog.deadlines.calls).len(), 2);
        drop(first);
        let left: Vec<String> = lock(&watchdog.deadlines.calls)
            .iter()
            .map(|armed| armed.message.clone())
            .collect();
        assert_eq!(left, ["second"]);
        drop(second);
        assert!(lock(&watchdog.deadlines.calls).is_empty());
        let weak = Arc::downgrade(&watchdog.deadlines);
        drop(watchdog);
        // The thread holds the list only while it looks at it; it lets go for good within
        // IDLE_WAKE.
        let started = Instant::now();
        while weak.upgrade().is_some() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the watchdog thread outlived its watchdog"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
