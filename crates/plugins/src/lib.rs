//! Capstan's plugins: the plugin worlds (source, backend; their bindings reuse the
//! capabilities' for every import) and handles that call them ([`SourcePlugin`],
//! [`BackendPlugin`], [`PostRendererPlugin`]), adapters for components of the previous
//! contract ([`compat`], [`compat_backend`]) and for Helm 4's own Wasm plugins ([`helm4`]),
//! all loaded into one [`PluginRuntime`] on the generic component runtime
//! (`capstan-wasm-runtime`).

pub mod backend;
pub mod bindings;
pub mod call;
pub mod compat;
pub mod compat_backend;
pub mod config;
pub mod error;
mod handle;
pub mod helm4;
pub mod inspect;
pub mod installed;
pub mod kinds;
pub mod load;
pub mod loaded;
pub mod lock;
pub mod metrics;
pub mod post_renderer;
pub mod runtime;
pub mod source;

pub use backend::{BackendPlugin, UnreadFile};
pub use capstan_wasm_runtime::cache;
pub use capstan_wasm_runtime::engine::{EPOCH_TICK, Preemption, RuntimeError, engine_for};
pub use error::{LoadError, LookupError};
pub use load::describe_file;
pub use loaded::{LoadReport, LoadedPlugin};
pub use post_renderer::PostRendererPlugin;
pub use runtime::{
    COMMAND_CALL_SLOTS, DEFAULT_MEMORY_BUDGET_MIB, MAX_CONCURRENT_CALLS, PluginRuntime, engine,
};
pub use source::SourcePlugin;
