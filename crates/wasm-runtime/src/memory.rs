//! Memory limits: one call's own limit ([`MemoryLimiter`]) and the budget every call in
//! flight shares ([`MemoryBudget`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use wasmtime::ResourceLimiter;

/// The linear memory every call in flight may hold together: the guests' memory lives in
/// the embedder's process, so per-call limits alone bound it only by the number of calls
/// times their limit. Each call reserves its growth here and gives it back when its store
/// is dropped; a growth past the budget fails that call (retryable: the memory of other
/// calls is freed as they end), never the process.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// The budget, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes reserved by calls in flight.
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Reserve `bytes`; false (nothing reserved) when that would pass the budget.
    fn reserve(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// A refused growth against the budget: what the call wanted and what others held.
#[derive(Debug, Default)]
pub(crate) struct BudgetRefusal {
    hit: AtomicBool,
    wanted: AtomicUsize,
    others: AtomicUsize,
}

impl BudgetRefusal {
    fn record(&self, wanted: usize, others: usize) {
        self.wanted.store(wanted, Ordering::Relaxed);
        self.others.store(others, Ordering::Relaxed);
        self.hit.store(true, Ordering::Release);
    }

    /// What the call wanted and what others held, if the budget refused it.
    pub(crate) fn recorded(&self) -> Option<(usize, usize)> {
        self.hit.load(Ordering::Acquire).then(|| {
            (
                self.wanted.load(Ordering::Relaxed),
                self.others.load(Ordering::Relaxed),
            )
        })
    }
}

/// Refuses linear-memory growth past the call's limit or the shared [`MemoryBudget`], and
/// remembers which, so the resulting trap can be reported as what it is. What it reserved
/// from the budget is given back when the call's store (which owns it) is dropped.
pub struct MemoryLimiter {
    limit: usize,
    refused: Arc<AtomicBool>,
    budget: Arc<MemoryBudget>,
    reserved: usize,
    over_budget: Arc<BudgetRefusal>,
}

impl Drop for MemoryLimiter {
    fn drop(&mut self) {
        self.budget.release(self.reserved);
    }
}

/// Most table elements one instance may have (guards host memory like the memory limit).
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

impl MemoryLimiter {
    /// A limiter of `limit` bytes drawing on `budget`; it raises `refused` when the limit
    /// refuses a growth and records in `over_budget` when the budget does.
    pub(crate) fn new(
        limit: usize,
        budget: Arc<MemoryBudget>,
        refused: Arc<AtomicBool>,
        over_budget: Arc<BudgetRefusal>,
    ) -> Self {
        MemoryLimiter {
            limit,
            refused,
            budget,
            reserved: 0,
            over_budget,
        }
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Record that memory outside linear memory (e.g. a runtime's host-side buffers) was
    /// refused for this call, so its failure is reported as the memory limit.
    pub fn refuse(&self) {
        self.refused.store(true, Ordering::Relaxed);
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.refused.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        let growth = desired.saturating_sub(current);
        if !self.budget.reserve(growth) {
            let wanted = self.reserved.saturating_add(growth);
            let others = self.budget.in_use().saturating_sub(self.reserved);
            self.over_budget.record(wanted, others);
            return Ok(false);
        }
        self.reserved += growth;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
