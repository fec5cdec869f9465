//! One call: a fresh `Store` with its own WASI context, memory limit, deadline and the
//! embedder's per-call data, run in one of the runtime's call slots, and every way it can
//! fail turned into a [`CallError`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::engine::{Preemption, RuntimeError, engine_for, start_epoch_ticker};
use crate::failure::{CallError, CallFailure, HostFailure, Interruption};
use crate::memory::{BudgetRefusal, MemoryBudget, MemoryLimiter};
use crate::watchdog::Watchdog;

/// Everything a call's store holds: WASI, the resource table, the memory limiter, and
/// `data`, what the embedder keeps per call (the grants its imports check, say). Dropped
/// with the store at the end of the call, so nothing leaks from one call to the next.
pub struct CallState<T> {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    plugin: Arc<str>,
    data: T,
}

/// The parts of a [`CallState`], borrowed at once (an import's view takes several).
pub struct CallParts<'a, T> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// WASI's context.
    pub wasi: &'a mut WasiCtx,
    /// The call's resources.
    pub table: &'a mut ResourceTable,
    /// The embedder's data.
    pub data: &'a mut T,
}

impl<T> CallState<T> {
    /// The plugin's name.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// The embedder's data.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The embedder's data, to change.
    pub fn data_mut(&mut self) -> &mut T {
        &mut self.data
    }

    /// The call's memory limiter.
    pub fn limiter(&self) -> &MemoryLimiter {
        &self.limiter
    }

    /// Every part at once.
    pub fn parts(&mut self) -> CallParts<'_, T> {
        CallParts {
            plugin: &self.plugin,
            wasi: &mut self.wasi,
            table: &mut self.table,
            data: &mut self.data,
        }
    }
}

impl<T: Send> WasiView for CallState<T> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    /// Largest linear memory of the call's instance, in MiB.
    pub memory_mib: u32,
    /// Wall-clock budget of the call, waiting for a slot included.
    pub timeout: Duration,
}

impl CallLimits {
    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.memory_mib as usize) << 20
    }
}

/// Told of every call when it ends: the embedder's metrics.
pub trait CallObserver: Send + Sync {
    /// A call of `function` of `plugin` ended after `elapsed` with `outcome` (`ok`, or the
    /// failure's [`CallFailure::label`]).
    fn observe(&self, plugin: &str, function: &str, outcome: &str, elapsed: Duration);
}

/// What every call shares: the engine, the call slots, the memory budget, the observer,
/// and the watchdog when the engine was built for [`Preemption::Watchdog`]. Cheap to clone.
#[derive(Clone)]
pub struct CallRuntime {
    engine: Engine,
    call_slots: Arc<Semaphore>,
    slots: u32,
    memory_budget: Arc<MemoryBudget>,
    observer: Option<Arc<dyn CallObserver>>,
    watchdog: Option<Arc<Watchdog>>,
}

impl CallRuntime {
    /// An engine for `call_slots` calls in flight (further calls wait for a slot), with the
    /// epoch ticker or the watchdog `preemption` asks for, and a memory budget of
    /// `memory_budget` bytes.
    pub fn new(
        call_slots: u32,
        preemption: Preemption,
        memory_budget: usize,
        observer: Option<Arc<dyn CallObserver>>,
    ) -> Result<Self, RuntimeError> {
        let engine = engine_for(call_slots, preemption)?;
        let watchdog =
            match preemption {
                Preemption::Epoch => {
                    start_epoch_ticker(&engine)?;
                    None
                }
                Preemption::Watchdog => Some(Arc::new(Watchdog::start().map_err(|e| {
                    RuntimeError::new(format!("cannot start the call watchdog: {e}"))
                })?)),
            };
        Ok(CallRuntime {
            engine,
            call_slots: Arc::new(Semaphore::new(call_slots as usize)),
            slots: call_slots,
            memory_budget: MemoryBudget::new(memory_budget),
            observer,
            watchdog,
        })
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The memory all calls in flight may hold together.
    pub fn memory_budget(&self) -> &Arc<MemoryBudget> {
        &self.memory_budget
    }

    /// Replace the memory budget (calls started afterwards draw on the new one).
    pub fn set_memory_budget(&mut self, bytes: usize) {
        self.memory_budget = MemoryBudget::new(bytes);
    }

    /// Calls currently holding a slot.
    pub fn calls_in_flight(&self) -> usize {
        (self.slots as usize).saturating_sub(self.call_slots.available_permits())
    }

    /// Make the store of one call of `function` of `plugin`, with `wasi` and the embedder's
    /// `data`.
    pub fn start<T: Send + 'static>(
        &self,
        plugin: &Arc<str>,
        function: &'static str,
        limits: CallLimits,
        wasi: WasiCtx,
        data: T,
    ) -> (Store<CallState<T>>, CallGuard) {
        let state = |limiter| CallState {
            wasi,
            table: ResourceTable::new(),
            limiter,
            plugin: Arc::clone(plugin),
            data,
        };
        self.start_with(plugin, function, limits, state, |s| &mut s.limiter)
    }

    /// Make the store of one call with any store state (another ABI's, say): `state` is
    /// given the call's memory limiter and `limiter_of` finds it again.
    pub fn start_with<S: Send + 'static>(
        &self,
        plugin: &Arc<str>,
        function: &'static str,
        limits: CallLimits,
        state: impl FnOnce(MemoryLimiter) -> S,
        limiter_of: fn(&mut S) -> &mut MemoryLimiter,
    ) -> (Store<S>, CallGuard) {
        let refused = Arc::new(AtomicBool::new(false));
        let over_budget = Arc::new(BudgetRefusal::default());
        let limiter = MemoryLimiter::new(
            limits.memory_bytes(),
            Arc::clone(&self.memory_budget),
            Arc::clone(&refused),
            Arc::clone(&over_budget),
        );
        let mut store = Store::new(&self.engine, state(limiter));
        store.limiter(move |state| limiter_of(state));
        if self.watchdog.is_none() {
            let deadline = Instant::now() + limits.timeout;
            // Every epoch tick the guest yields to the executor (so it holds no worker
            // thread while others wait) and is stopped once past its deadline.
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
            call_slots: Arc::clone(&self.call_slots),
            plugin: Arc::clone(plugin),
            function,
            timeout: limits.timeout,
            memory_mib: limits.memory_mib,
            refused,
            over_budget,
            budget_mib: self.memory_budget.limit() >> 20,
            observer: self.observer.clone(),
            watchdog: self.watchdog.clone(),
        };
        (store, guard)
    }
}

/// Bookkeeping of one call outside its store: what to name in errors and metrics, and the
/// flags the memory limiter raises.
pub struct CallGuard {
    call_slots: Arc<Semaphore>,
    plugin: Arc<str>,
    function: &'static str,
    timeout: Duration,
    memory_mib: u32,
    refused: Arc<AtomicBool>,
    over_budget: Arc<BudgetRefusal>,
    budget_mib: usize,
    observer: Option<Arc<dyn CallObserver>>,
    /// Set when the engine has no epoch checks: it ends the process at the deadline.
    watchdog: Option<Arc<Watchdog>>,
}

impl CallGuard {
    /// The plugin's name.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// The function called.
    pub fn function(&self) -> &'static str {
        self.function
    }

    /// Run the call (instantiate + invoke, owning the store) in a call slot under the
    /// deadline, and turn every way it can fail into a [`CallError`]; the observer is told
    /// of it either way.
    pub async fn run<R, E: std::fmt::Display>(
        self,
        call: impl Future<Output = wasmtime::Result<Result<R, E>>>,
    ) -> Result<R, CallError<E>> {
        let started = Instant::now();
        // Without epoch checks a running guest never returns to the executor, so the
        // timeout below only fires while it waits on the host; the watchdog covers the rest.
        let _armed = self.watchdog.as_ref().map(|watchdog| {
            let error = CallError::<E> {
                plugin: self.plugin.to_string(),
                function: self.function,
                cause: CallFailure::Deadline(self.timeout),
            };
            watchdog.arm(started + self.timeout, error.to_string())
        });
        // Wait for a slot; the wait counts against the call's deadline.
        let call = async {
            let _slot = self
                .call_slots
                .acquire()
                .await
                .map_err(|_| wasmtime::Error::new(Interruption::RuntimeClosed))?;
            call.await
        };
        let result = match tokio::time::timeout(self.timeout, call).await {
            Err(_) => Err(CallFailure::Deadline(self.timeout)),
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(CallFailure::Returned(error)),
            Ok(Err(error)) => Err(self.classify(&error)),
        };
        if let Some(observer) = &self.observer {
            let outcome = result.as_ref().err().map_or("ok", CallFailure::label);
            observer.observe(&self.plugin, self.function, outcome, started.elapsed());
        }
        result.map_err(|cause| CallError {
            plugin: self.plugin.to_string(),
            function: self.function,
            cause,
        })
    }

    fn classify<E>(&self, error: &wasmtime::Error) -> CallFailure<E> {
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
            // with its name section (for plugin authors; `RUST_LOG=capstan_wasm_runtime=debug`).
            if let Some(backtrace) = error.downcast_ref::<wasmtime::WasmBacktrace>() {
                tracing::debug!(%backtrace, "the plugin trapped");
            }
            return CallFailure::Trap(trap.to_string());
        }
        CallFailure::Trap(format!("{error:#}"))
    }
}
