//! How a call fails: the error value the guest returned, or what the runtime saw (deadline,
//! memory limit, memory budget, trap), named with the plugin and the function.

use std::fmt;
use std::time::Duration;

/// Why the runtime cut a call short (raised into the guest as a trap and recognised after).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Interruption {
    /// The epoch callback found the call past its deadline.
    #[error("call deadline reached")]
    Deadline,
    /// The runtime's call slots are closed (the runtime is shutting down).
    #[error("the plugin runtime is shutting down")]
    RuntimeClosed,
}

/// A host function refused or failed a guest's request (e.g. an HTTP request to a host that
/// is not allowed). The call fails with this message alone, without the wasm backtrace
/// wasmtime wraps around host errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HostFailure(pub String);

/// Why a call failed; `E` is the error value the guest's function returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallFailure<E> {
    /// The guest returned an error value.
    #[error("{0}")]
    Returned(E),
    /// The call ran past its deadline and was stopped.
    #[error("deadline of {} ms exceeded; the call was stopped", .0.as_millis())]
    Deadline(Duration),
    /// The guest tried to grow its memory past the limit.
    #[error("memory limit of {limit_mib} MiB exceeded")]
    MemoryLimit {
        /// The limit.
        limit_mib: u32,
    },
    /// The guest's memory would have passed what all calls in flight may hold together.
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
    /// The guest trapped (while being instantiated or called).
    #[error("trapped: {0}")]
    Trap(String),
}

impl<E> CallFailure<E> {
    /// Short label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            CallFailure::Returned(_) => "error",
            CallFailure::Deadline(_) => "deadline",
            CallFailure::MemoryLimit { .. } => "memory",
            CallFailure::MemoryBudget { .. } => "memory_budget",
            CallFailure::Trap(_) => "trap",
        }
    }
}

/// A failed call, naming the plugin and the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError<E> {
    /// The plugin's name.
    pub plugin: String,
    /// The function called.
    pub function: &'static str,
    /// What went wrong.
    pub cause: CallFailure<E>,
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin `{}` failed in `{}`: {}",
            self.plugin, self.function, self.cause
        )
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for CallError<E> {}
