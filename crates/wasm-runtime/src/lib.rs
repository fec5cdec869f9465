//! A WebAssembly component runtime for many short, sandboxed calls: one engine with pooled
//! instance slots ([`engine`]), components compiled once and kept on disk ([`cache`]),
//! pre-initialised where they allow it ([`preinit`]), and each call in a fresh store under
//! its own deadline and memory limit, within a memory budget all calls share ([`call`],
//! [`memory`], [`watchdog`]), its failure described by plugin, function and cause
//! ([`failure`]).
//!
//! It knows no particular WIT world: the store holds the embedder's per-call data
//! ([`call::CallState`]), and the embedder links the imports its components need.

pub mod cache;
pub mod call;
pub mod engine;
pub mod failure;
pub mod memory;
pub mod preinit;
pub mod watchdog;
