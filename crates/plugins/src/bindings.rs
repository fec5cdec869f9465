//! Host-side bindings of the plugin worlds of the `capstan:plugin` WIT package (`wit/` at
//! the repository root): their exports, with every import reusing the capabilities'
//! bindings ([`capstan_capabilities::bindings`]), where the imports are implemented.

/// Bindings of the `source-plugin` world.
pub mod source {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "source-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types": capstan_capabilities::bindings::types,
            "capstan:plugin/log": capstan_capabilities::bindings::log,
            "capstan:plugin/git": capstan_capabilities::bindings::git,
            "capstan:plugin/credentials": capstan_capabilities::bindings::credentials,
        },
    });
}

/// Bindings of the `backend-plugin` world.
pub mod backend {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "backend-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types": capstan_capabilities::bindings::types,
            "capstan:plugin/log": capstan_capabilities::bindings::log,
            "capstan:plugin/kube": capstan_capabilities::bindings::kube,
            "capstan:plugin/discovery": capstan_capabilities::bindings::discovery,
            "capstan:plugin/post-render": capstan_capabilities::bindings::post_render,
            "capstan:plugin/release-context": capstan_capabilities::bindings::release_context,
            "capstan:plugin/crypto": capstan_capabilities::bindings::crypto,
            "capstan:plugin/folder-files": capstan_capabilities::bindings::folder_files,
        },
    });
}

pub use capstan_capabilities::bindings::{
    credentials, crypto, discovery, folder_files, git, kube, log, post_render, release_context,
    types,
};
