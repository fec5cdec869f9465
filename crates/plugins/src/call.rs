//! One plugin call in Capstan's terms: its store made with the plugin's limits, WASI grants
//! and capabilities, run under the runtime's guard, logged, and its failure described
//! with the `capstan:plugin` error codes ([`CallFailure`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use capstan_wasm_runtime::call::{CallGuard, CallLimits, CallRuntime};
use capstan_wasm_runtime::failure;
use tracing::Instrument;
use wasmtime::Store;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

use crate::config::{PluginLimits, WasiGrants};
use capstan_capabilities::Grants;
use capstan_capabilities::bindings::types::{Error as PluginError, ErrorCode};
use capstan_capabilities::state::{CallData, CallState};

/// The target of the plugin-call span and its events, whatever module makes the call
/// (`RUST_LOG=capstan::plugins::call=debug` shows every call).
const LOG_TARGET: &str = "capstan::plugins::call";

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
    /// The call was not made: another operation holds the release (see the release lock
    /// of [`crate::backend::BackendPlugin`]).
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

impl From<PluginError> for CallFailure {
    fn from(error: PluginError) -> Self {
        CallFailure::Returned {
            code: error.code,
            message: error.message,
            retryable: error.retryable,
        }
    }
}

impl From<failure::CallFailure<CallFailure>> for CallFailure {
    fn from(failure: failure::CallFailure<CallFailure>) -> Self {
        match failure {
            failure::CallFailure::Returned(returned) => returned,
            failure::CallFailure::Deadline(timeout) => CallFailure::Deadline(timeout),
            failure::CallFailure::MemoryLimit { limit_mib } => {
                CallFailure::MemoryLimit { limit_mib }
            }
            failure::CallFailure::MemoryBudget {
                budget_mib,
                wanted_mib,
                others_mib,
            } => CallFailure::MemoryBudget {
                budget_mib,
                wanted_mib,
                others_mib,
            },
            failure::CallFailure::Trap(message) => CallFailure::Trap(message),
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

impl From<failure::CallError<CallFailure>> for CallError {
    fn from(error: failure::CallError<CallFailure>) -> Self {
        CallError {
            plugin: error.plugin,
            function: error.function,
            cause: error.cause.into(),
        }
    }
}

/// The runtime's limits of a call under `limits`.
pub(crate) fn call_limits(limits: &PluginLimits) -> CallLimits {
    CallLimits {
        memory_mib: limits.memory_mib,
        timeout: Duration::from_millis(limits.timeout_ms),
    }
}

/// The WASI context `grants` allow: the given environment, stderr if asked, nothing else.
pub(crate) fn wasi_ctx(grants: &WasiGrants) -> WasiCtx {
    let mut wasi = WasiCtxBuilder::new();
    for (key, value) in &grants.env {
        wasi.env(key, value);
    }
    if grants.stderr {
        wasi.inherit_stderr();
    }
    wasi.build()
}

/// Make the store of one call to a component.
pub(crate) fn start(
    runtime: &CallRuntime,
    plugin: &Arc<str>,
    function: &'static str,
    limits: &PluginLimits,
    wasi: &WasiGrants,
    grants: Grants,
) -> (Store<CallState>, CallGuard) {
    runtime.start(
        plugin,
        function,
        call_limits(limits),
        wasi_ctx(wasi),
        CallData::new(grants),
    )
}

/// Run a call under `guard`, logged in a `plugin_call` span (target [`LOG_TARGET`]): the
/// plugin's error value, or what the runtime saw, becomes a [`CallError`].
pub(crate) async fn run<R>(
    guard: CallGuard,
    call: impl Future<Output = wasmtime::Result<Result<R, PluginError>>>,
) -> Result<R, CallError> {
    run_returning(guard, async { Ok(call.await?.map_err(CallFailure::from)) }).await
}

/// [`run`] of a call whose error value is already a [`CallFailure`].
pub(crate) async fn run_returning<R>(
    guard: CallGuard,
    call: impl Future<Output = wasmtime::Result<Result<R, CallFailure>>>,
) -> Result<R, CallError> {
    let span = tracing::info_span!(
        target: LOG_TARGET,
        "plugin_call",
        plugin = %guard.plugin(),
        function = guard.function()
    );
    let started = Instant::now();
    let result = guard.run(call).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    match result {
        Ok(value) => {
            tracing::debug!(target: LOG_TARGET, parent: &span, elapsed_us = elapsed.as_micros() as u64, "plugin call succeeded");
            Ok(value)
        }
        Err(error) => {
            let error = CallError::from(error);
            tracing::warn!(target: LOG_TARGET, parent: &span, elapsed_ms = elapsed.as_millis() as u64, "{error}");
            Err(error)
        }
    }
}
