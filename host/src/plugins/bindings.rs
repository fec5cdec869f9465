//! Host-side bindings of the `capstan:plugin` WIT package (`wit/` at the repository root).
//!
//! Two worlds are generated; the shared `types` and `log` interfaces come from the source
//! world's bindings so that the host implements each import once.

/// Bindings of the `source-plugin` world (also the home of the shared interfaces).
pub mod source {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "source-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/git.repository": crate::capabilities::git::OpenRepository,
        },
    });
}

/// Bindings of the `backend-plugin` world.
pub mod backend {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "backend-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types": super::source::capstan::plugin::types,
            "capstan:plugin/log": super::source::capstan::plugin::log,
        },
    });
}

pub use backend::capstan::plugin::{
    crypto, discovery, folder_files, kube, post_render, release_context,
};
pub use source::capstan::plugin::{credentials, git, log, types};
