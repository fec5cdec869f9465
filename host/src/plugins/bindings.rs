//! Host-side bindings of the plugin worlds of the `capstan:plugin` WIT package (`wit/` at
//! the repository root): their exports, with every import reusing the capabilities'
//! bindings ([`crate::capabilities::bindings`]), where the imports are implemented.

/// Bindings of the `source-plugin` world.
pub mod source {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "source-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types": crate::capabilities::bindings::types,
            "capstan:plugin/log": crate::capabilities::bindings::log,
            "capstan:plugin/git": crate::capabilities::bindings::git,
            "capstan:plugin/credentials": crate::capabilities::bindings::credentials,
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
            "capstan:plugin/types": crate::capabilities::bindings::types,
            "capstan:plugin/log": crate::capabilities::bindings::log,
            "capstan:plugin/kube": crate::capabilities::bindings::kube,
            "capstan:plugin/discovery": crate::capabilities::bindings::discovery,
            "capstan:plugin/post-render": crate::capabilities::bindings::post_render,
            "capstan:plugin/release-context": crate::capabilities::bindings::release_context,
            "capstan:plugin/crypto": crate::capabilities::bindings::crypto,
            "capstan:plugin/folder-files": crate::capabilities::bindings::folder_files,
        },
    });
}

pub use crate::capabilities::bindings::{
    credentials, crypto, discovery, folder_files, git, kube, log, post_render, release_context,
    types,
};
