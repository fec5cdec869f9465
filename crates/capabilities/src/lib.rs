//! What Capstan's plugins may reach outside their sandbox: the `capstan:plugin` interfaces
//! they import (Kubernetes, git mirrors, credentials, crypto, post-rendering, release
//! context, chart folder files, logs), WASI and outgoing WASI HTTP. Each plugin call carries
//! its own [`Grants`]; an import outside them answers `denied`, naming what was refused.
//!
//! The bindings of the interfaces are generated here ([`bindings`], [`v0_1`] for the
//! previous contract), where they are implemented: each import on a narrow view of the
//! call's state holding only what it needs, projected from the store with `HasData`, and
//! all of them added to a linker at once ([`linker::add_to_linker`]). The plugin worlds
//! reuse these bindings.

pub mod bindings;
pub mod credentials;
pub mod crypto;
pub mod discovery;
mod discovery_cache;
mod errors;
pub mod folder_files;
pub mod git;
pub mod grants;
pub mod http;
pub mod kube;
pub mod linker;
pub mod log;
pub mod pod_logs;
pub mod post_render;
pub mod readiness;
pub mod release_context;
pub mod resources;
pub mod state;
pub mod v0_1;

pub use capstan_net::egress;
pub use grants::Grants;
