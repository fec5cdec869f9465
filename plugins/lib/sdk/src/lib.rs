//! Guest-side glue for Capstan plugins.
//!
//! A plugin is a `wasm32-wasip2` component built with plain `cargo build --target
//! wasm32-wasip2`. This crate generates the bindings of the two plugin worlds of the
//! `capstan:plugin` WIT package (in `wit/` at the repository root) and adds small helpers
//! for building error values.
//!
//! A source plugin implements [`source::exports::capstan::plugin::source::Guest`] and calls
//! [`source::export_source_plugin!`]; a backend implements
//! [`backend::exports::capstan::plugin::backend::Guest`] and calls
//! [`backend::export_backend_plugin!`].

/// Version of the `capstan:plugin` WIT package these bindings were generated from.
pub const WIT_VERSION: &str = "0.1.0";

/// Bindings of the `source-plugin` world: imports `log` and `git`, exports `source`.
pub mod source {
    wit_bindgen::generate!({
        world: "source-plugin",
        path: "../../../wit",
        pub_export_macro: true,
        export_macro_name: "export_source_plugin",
        default_bindings_module: "capstan_plugin_sdk::source",
    });

    use capstan::plugin::types::{Error, ErrorCode};

    impl Error {
        /// An error of `code` with a message; retryable only for transient codes.
        pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
            let retryable = matches!(code, ErrorCode::Unavailable | ErrorCode::Timeout);
            Error {
                code,
                message: message.into(),
                retryable,
            }
        }
    }
}

/// Bindings of the `backend-plugin` world: imports `log` and `kube`, exports `backend`.
pub mod backend {
    wit_bindgen::generate!({
        world: "backend-plugin",
        path: "../../../wit",
        pub_export_macro: true,
        export_macro_name: "export_backend_plugin",
        default_bindings_module: "capstan_plugin_sdk::backend",
    });

    use capstan::plugin::types::{Error, ErrorCode};

    impl Error {
        /// An error of `code` with a message; retryable only for transient codes.
        pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
            let retryable = matches!(code, ErrorCode::Unavailable | ErrorCode::Timeout);
            Error {
                code,
                message: message.into(),
                retryable,
            }
        }
    }
}
