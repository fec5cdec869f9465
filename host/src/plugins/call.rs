//! One plugin call: a fresh `Store` with its own WASI context, memory limit, grants and
//! deadline, and how a failed call is described (plugin, function, cause).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tracing::Instrument;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::bindings::types::{Error as PluginError, ErrorCode};
use super::watchdog::Watchdog;
use crate::capabilities::Grants;
use crate::capabilities::http::HttpHooks;
use crate::config::{PluginLimits, WasiGrants};
use crate::telemetry::PluginMetrics;

/// Everything a plugin call's store holds. Dropped with the store at the end of the call,
/// so nothing leaks from one call (or one release) to the next.
pub struct CallState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) grants: Grants,
    pub(crate) plugin: Arc<str>,
    pub(crate) http: WasiHttpCtx,
    pub(crate) http_hooks: HttpHooks,
    /// Hashes started by `crypto.bcrypt-hash-start` and not finished yet.
    pub(crate) bcrypt_hashes: crate::capabilities::crypto::RunningHashes,
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The linear memory every plugin call in flight may hold together: the guests' memory
/// lives in the operator's process, so per-call limits alone bound it only by the number of
/// calls times their limit. Each call reserves its growth here and gives it back when its
/// store is dropped; a growth past the budget fails that call (retryable: the memory of
/// other calls is freed as they end), never the operator.
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

    fn recorded(&self) -> Option<(usize, usize)> {
        self.hit.load(Ordering::Acquire).then(|| {
            (
                self.wanted.load(Ordering::Relaxed),
                self.others.load(Ordering::Relaxed),
            )
        })
    }
}

/// Refuses linear-memory growth past the plugin's limit or the shared [`MemoryBudget`], and
/// remembers which, so the resulting trap can be reported as what it is. What it reserved
/// from the budget is given back when the call's store (which owns it) is dropped.
pub(crate) struct MemoryLimiter {
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
    /// The limit, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Record that memory outside linear memory (e.g. a runtime's host-side buffers) was
    /// refused for this call, so its failure is reported as the memory limit.
    pub(crate) fn refuse(&self) {
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

/// Why the host cut a call short (raised into the guest as a trap and recognised after).
#[derive(Debug, thiserror::Error)]
enum Interruption {
    /// The epoch callback found the call past its deadline.
    #[error("call deadline reached")]
    Deadline,
    /// The runtime's call slots are closed (the runtime is shutting down).
    #[error("the plugin runtime is shutting down")]
    RuntimeClosed,
}

/// A host function refused or failed a guest's request (e.g. an Extism `http_request` to a
/// host that is not allowed). The call fails with this message alone, without the wasm
/// backtrace wasmtime wraps around host errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HostFailure(pub(crate) String);

/// The WIT name of an error code.
pub fn code_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidInput => "invalid-input",
        ErrorCode::NotFound => "not-found",
        ErrorCode::Denied => "denied",
        ErrorCode::Conflict => "conflict",
        ErrorCode::Unavailable => "unavailable",
        ErrorCode::Timeout => "timeout",
        ErrorCode::Unsupported => "unsupported",
        ErrorCode::Internal => "internal",
    }
}

/// Why a plugin call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallFailure {
    /// The plugin returned an error value.
    #[error("{message} ({}{})", code_name(*code), if *retryable { ", retryable" } else { "" })]
    Returned {
        /// The plugin's error code.
        code: ErrorCode,
        /// The plugin's message.
        message: String,
        /// Whether the plugin says a retry may succeed.
        retryable: bool,
    },
    /// The call ran past its deadline and was stopped.
    #[error("deadline of {} ms exceeded; the call was stopped", .0.as_millis())]
    Deadline(Duration),
    /// The plugin tried to grow its memory past the limit.
    #[error("memory limit of {limit_mib} MiB exceeded")]
    MemoryLimit {
        /// The limit.
        limit_mib: u32,
    },
    /// The plugin's memory would have passed what all calls in flight may hold together.
    #[error(
        "growing to {wanted_mib} MiB would pass the plugins' shared memory budget of {budget_mib} MiB ({others_mib} MiB held by other calls in flight)"
    )]
    MemoryBudget {
        /// The budget.
        budget_mib: usize,
        /// What this call's instance would have held.
        wanted_mib: usize,
        /// What the other calls held at that moment.
        others_mib: usize,
    },
    /// The plugin trapped (while being instantiated or called).
    #[error("trapped: {0}")]
    Trap(String),
    /// The call was not made: another operation holds the release
    /// ([`crate::release_lock`]).
    #[error("{0}")]
    Locked(String),
}

impl CallFailure {
    /// Short label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            CallFailure::Returned { .. } => "error",
            CallFailure::Deadline(_) => "deadline",
            CallFailure::MemoryLimit { .. } => "memory",
            CallFailure::MemoryBudget { .. } => "memory_budget",
            CallFailure::Trap(_) => "trap",
            CallFailure::Locked(_) => "locked",
        }
    }
}

/// A failed plugin call, naming the plugin and the function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin `{plugin}` failed in `{function}`: {cause}")]
pub struct CallError {
    /// Configured plugin name.
    pub plugin: String,
    /// Exported function called.
    pub function: &'static str,
    /// What went wrong.
    pub cause: CallFailure,
}

impl CallError {
    /// Whether retrying the same call later may succeed.
    pub fn retryable(&self) -> bool {
        match &self.cause {
            CallFailure::Returned { retryable, .. } => *retryable,
            CallFailure::Deadline(_)
            | CallFailure::Locked(_)
            | CallFailure::MemoryBudget { .. } => true,
            _ => false,
        }
    }
}

/// Bookkeeping of one call outside its store: what to name in errors and metrics, and the
/// flag the memory limiter raises.
pub(crate) struct CallGuard {
    call_slots: Arc<Semaphore>,
    plugin: Arc<str>,
    function: &'static str,
    timeout: Duration,
    memory_mib: u32,
    refused: Arc<AtomicBool>,
    over_budget: Arc<BudgetRefusal>,
    budget_mib: usize,
    metrics: Option<Arc<PluginMetrics>>,
    /// Set when the engine has no epoch checks: it ends the process at the deadline.
    watchdog: Option<Arc<Watchdog>>,
}

/// What every call shares: the engine, the instance slots, the metrics, and the watchdog
/// when the engine was built for [`Preemption::Watchdog`](super::Preemption::Watchdog).
#[derive(Clone, Copy)]
pub(crate) struct CallRuntime<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) call_slots: &'a Arc<Semaphore>,
    pub(crate) memory_budget: &'a Arc<MemoryBudget>,
    pub(crate) metrics: &'a Option<Arc<PluginMetrics>>,
    pub(crate) watchdog: Option<&'a Arc<Watchdog>>,
}

/// Make the store of one call to a component.
pub(crate) fn start(
    runtime: CallRuntime<'_>,
    plugin: &Arc<str>,
    function: &'static str,
    limits: &PluginLimits,
    wasi_grants: &WasiGrants,
    grants: Grants,
) -> (Store<CallState>, CallGuard) {
    let mut wasi = WasiCtxBuilder::new();
    for (key, value) in &wasi_grants.env {
        wasi.env(key, value);
    }
    if wasi_grants.stderr {
        wasi.inherit_stderr();
    }
    let http_hooks = HttpHooks::new(grants.http.clone());
    let state = |limiter| CallState {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limiter,
        grants,
        plugin: Arc::clone(plugin),
        http: WasiHttpCtx::new(),
        http_hooks,
        bcrypt_hashes: Default::default(),
    };
    start_with(runtime, plugin, function, limits, state, |s| &mut s.limiter)
}

/// Make the store of one call with any store state (components' [`CallState`], or another
/// runtime's): the memory limiter `state` is given, the deadline and the guard.
pub(crate) fn start_with<S: Send + 'static>(
    runtime: CallRuntime<'_>,
    plugin: &Arc<str>,
    function: &'static str,
    limits: &PluginLimits,
    state: impl FnOnce(MemoryLimiter) -> S,
    limiter_of: fn(&mut S) -> &mut MemoryLimiter,
) -> (Store<S>, CallGuard) {
    let refused = Arc::new(AtomicBool::new(false));
    let over_budget = Arc::new(BudgetRefusal::default());
    let limiter = MemoryLimiter {
        limit: limits.memory_bytes(),
        refused: Arc::clone(&refused),
        budget: Arc::clone(runtime.memory_budget),
        reserved: 0,
        over_budget: Arc::clone(&over_budget),
    };
    let mut store = Store::new(runtime.engine, state(limiter));
    store.limiter(move |state| limiter_of(state));
    let timeout = Duration::from_millis(limits.timeout_ms);
    if runtime.watchdog.is_none() {
        let deadline = Instant::now() + timeout;
        // Every epoch tick the guest yields to the executor (so it holds no worker thread
        // while others wait) and is stopped once past its deadline.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(wasmtime::Error::new(Interruption::Deadline))
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
    }
    let guard = CallGuard {
        call_slots: Arc::clone(runtime.call_slots),
        plugin: Arc::clone(plugin),
        function,
        timeout,
        memory_mib: limits.memory_mib,
        refused,
        over_budget,
        budget_mib: runtime.memory_budget.limit() >> 20,
        metrics: runtime.metrics.clone(),
        watchdog: runtime.watchdog.cloned(),
    };
    (store, guard)
}

impl CallGuard {
    /// Run the call (instantiate + invoke, owning the store) under the deadline, and turn
    /// every way it can fail into a [`CallError`].
    pub(crate) async fn run<R>(
        self,
        call: impl Future<Output = wasmtime::Result<Result<R, PluginError>>>,
    ) -> Result<R, CallError> {
        let span =
            tracing::info_span!("plugin_call", plugin = %self.plugin, function = self.function);
        let started = Instant::now();
        // Without epoch checks a running guest never returns to the executor, so the
        // timeout below only fires while it waits on the host; the watchdog covers the rest.
        let _armed = self.watchdog.as_ref().map(|watchdog| {
            let error = CallError {
                plugin: self.plugin.to_string(),
                function: self.function,
                cause: CallFailure::Deadline(self.timeout),
            };
            watchdog.arm(started + self.timeout, error.to_string())
        });
        // Wait for an instance slot; the wait counts against the call's deadline.
        let call = async {
            let _slot = self
                .call_slots
                .acquire()
                .await
                .map_err(|_| wasmtime::Error::new(Interruption::RuntimeClosed))?;
            call.await
        };
        let outcome = tokio::time::timeout(self.timeout, call)
            .instrument(span.clone())
            .await;
        let result = match outcome {
            Err(_) => Err(CallFailure::Deadline(self.timeout)),
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(CallFailure::Returned {
                code: error.code,
                message: error.message,
                retryable: error.retryable,
            }),
            Ok(Err(error)) => Err(self.classify(&error)),
        };
        let elapsed = started.elapsed();
        let outcome_label = result.as_ref().err().map_or("ok", CallFailure::label);
        if let Some(metrics) = &self.metrics {
            metrics.observe(&self.plugin, self.function, outcome_label, elapsed);
        }
        match result {
            Ok(value) => {
                tracing::debug!(parent: &span, elapsed_us = elapsed.as_micros() as u64, "plugin call succeeded");
                Ok(value)
            }
            Err(cause) => {
                let error = CallError {
                    plugin: self.plugin.to_string(),
                    function: self.function,
                    cause,
                };
                tracing::warn!(parent: &span, elapsed_ms = elapsed.as_millis() as u64, "{error}");
                Err(error)
            }
        }
    }

    fn classify(&self, error: &wasmtime::Error) -> CallFailure {
        match error.downcast_ref::<Interruption>() {
            Some(Interruption::Deadline) => return CallFailure::Deadline(self.timeout),
            Some(Interruption::RuntimeClosed) => {
                return CallFailure::Trap(Interruption::RuntimeClosed.to_string());
            }
            None => {}
        }
        if self.refused.load(Ordering::Relaxed) {
            return CallFailure::MemoryLimit {
                limit_mib: self.memory_mib,
            };
        }
        if let Some((wanted, others)) = self.over_budget.recorded() {
            return CallFailure::MemoryBudget {
                budget_mib: self.budget_mib,
                wanted_mib: wanted.div_ceil(1 << 20),
                others_mib: others >> 20,
            };
        }
        if let Some(failure) = error.downcast_ref::<HostFailure>() {
            return CallFailure::Trap(failure.0.clone());
        }
        if let Some(trap) = error.downcast_ref::<wasmtime::Trap>() {
            // Where in the component it trapped: function names when the plugin was built
            // with its name section (for plugin authors; `RUST_LOG=capstan::plugins=debug`).
            if let Some(backtrace) = error.downcast_ref::<wasmtime::WasmBacktrace>() {
                tracing::debug!(%backtrace, "the plugin trapped");
            }
            return CallFailure::Trap(trap.to_string());
        }
        CallFailure::Trap(format!("{error:#}"))
    }
}
