//! What plugins may reach outside their sandbox. Each plugin call carries its own
//! [`Grants`]; a host import outside them answers `denied`, naming what was refused.
//! The imports are implemented here on narrow views of the call's state and added to a
//! linker all at once ([`linker::add_to_linker`]).

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
