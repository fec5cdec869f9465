//! Capstan: a Kubernetes operator that keeps Helm releases in line with `HelmRelease`
//! resources.
//!
//! The host is Helm-agnostic. Chart sources and release backends are sandboxed WebAssembly
//! components loaded by [`plugins::PluginRuntime`] and reached through the WIT package in
//! `wit/`; what they may touch is granted per call by [`capabilities`].

pub use capstan_api as api;
pub mod backoff;
pub use capstan_capabilities as capabilities;
pub mod config;
pub mod controller;
pub mod convert;
pub use capstan_plugins as plugins;
pub use capstan_postrender as postrender;
pub mod release;
pub mod release_lock;
pub mod scaffold;
pub mod scaffold_wasi;
pub mod sources;
pub mod telemetry;
pub mod template;
