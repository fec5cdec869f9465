//! The engine every call shares: Cranelift, the component model, pooled instance slots,
//! and how a call past its deadline is stopped ([`Preemption`]).

use std::time::Duration;

use wasmtime::{Config as EngineConfig, Engine};

/// How often the engine's epoch advances: the granularity of call deadlines and of a busy
/// guest yielding to other tasks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Bytes of each pooled memory, table and async stack reset with `memset` and kept resident
/// when a call ends, instead of given back to the kernel and faulted in again by the next.
const KEEP_RESIDENT: usize = 1 << 20;

/// Errors building the runtime itself.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the WebAssembly runtime: {0}")]
pub struct RuntimeError(String);

impl RuntimeError {
    /// An error saying what could not be set up.
    pub fn new(message: impl Into<String>) -> Self {
        RuntimeError(message.into())
    }
}

/// How a runtime stops a call that runs past its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preemption {
    /// Compiled code checks the engine's epoch, advanced every [`EPOCH_TICK`]: a running
    /// call yields to other tasks each tick and fails with a deadline error once past its
    /// deadline. For long-running processes, where many calls share the worker threads.
    Epoch,
    /// No checks in compiled code; a watchdog thread ends the whole process (status 1, the
    /// deadline error on stderr) when a call is still running at its deadline
    /// ([`crate::watchdog`]). For one-shot commands whose only work is the call.
    Watchdog,
}

/// An engine with room for `call_slots` calls in flight. Compiled code does not depend on
/// the number of slots, so engines of any size share a compiled cache; `preemption`
/// decides whether compiled code checks the epoch ([`Preemption`]).
pub fn engine_for(call_slots: u32, preemption: Preemption) -> Result<Engine, RuntimeError> {
    let mut config = EngineConfig::new();
    config.wasm_component_model(true);
    // Epoch checks change the compiled code, so each kind has its own compiled-cache entry
    // (the cache key holds the engine's compatibility hash).
    config.epoch_interruption(preemption == Preemption::Epoch);
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    // A one-shot command makes one or two calls: its function tables are filled when the
    // instance is made, and indirect calls skip the check for an entry not filled yet (the
    // rendering engine calls template functions and trait objects indirectly). Measured as
    // the fastest `template-chart` call of 15 alternating runs: redmine 25.0 -> 23.2 ms,
    // kong 18.9 -> 17.4, wordpress 16.9 -> 16.7, mastodon 55.2 -> 55.3. The operator keeps
    // lazy tables: it makes a fresh instance per call, and filling whole tables would add to
    // every one.
    config.table_lazy_init(preemption == Preemption::Epoch);
    // For profiling plugins with `perf`: `CAPSTAN_WASM_PROFILER=perfmap` writes
    // /tmp/perf-PID.map naming the compiled functions (build the plugin with its name
    // section to get its own names: `CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="" make plugins`,
    // .cargo/config.toml).
    if std::env::var_os("CAPSTAN_WASM_PROFILER").is_some_and(|v| v == "perfmap") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // Pooling reuses instance slots, memories and async stacks between calls: measured
    // 51 µs -> 36 µs for a fresh instance plus a trivial call (host/benches/plugin_call.rs).
    // Keeping the first MiB of each slot resident and resetting it with the kernel's
    // PAGEMAP_SCAN (Linux 6.7+, `Auto` falls back elsewhere) instead of `madvise` spares the
    // next call its page faults: 24.3 -> 10.4 µs for that call, and 62.0 -> 21.6 µs for a
    // fresh backend instance and `status`, in one run on the same machine.
    let mut pooling = wasmtime::PoolingAllocationConfig::default();
    pooling
        .total_component_instances(call_slots)
        .total_core_instances(call_slots * 8)
        .total_memories(call_slots * 2)
        .total_tables(call_slots * 4)
        .total_stacks(call_slots)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        .async_stack_keep_resident(KEEP_RESIDENT)
        .pagemap_scan(wasmtime::Enabled::Auto);
    config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pooling));
    Engine::new(&config).map_err(|e| RuntimeError(format!("{e:#}")))
}

/// Advance `engine`'s epoch every [`EPOCH_TICK`] until the engine is dropped.
pub fn start_epoch_ticker(engine: &Engine) -> Result<(), RuntimeError> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("capstan-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(|_| ())
        .map_err(|e| RuntimeError(format!("cannot start the epoch ticker: {e}")))
}
