//! Guest-side glue for Capstan plugins.
//!
//! A plugin is a `wasm32-wasip2` component built with plain `cargo build --target
//! wasm32-wasip2`. This crate generates the bindings of the two plugin worlds of the
//! `capstan:plugin` WIT package and adds small helpers for building error values. It ships
//! the WIT it was generated from (`wit/` beside this crate's manifest; a test fails when it
//! drifts from the repository's `wit/`), so it builds from any crate that depends on it by
//! path or git, inside this workspace or not.
//!
//! A source plugin implements [`source::exports::capstan::plugin::source::Guest`] and calls
//! [`source::export_source_plugin!`]; a backend implements
//! [`backend::exports::capstan::plugin::backend::Guest`] and calls
//! [`backend::export_backend_plugin!`].

pub mod alloc;
pub mod memcmp;

/// Version of the `capstan:plugin` WIT package these bindings were generated from.
pub const WIT_VERSION: &str = "0.2.0";

/// Bindings of the `source-plugin` world: imports `log`, `git` and `credentials`, exports
/// `source`.
pub mod source {
    wit_bindgen::generate!({
        world: "source-plugin",
        path: "wit",
        pub_export_macro: true,
        export_macro_name: "export_source_plugin",
        default_bindings_module: "capstan_plugin_sdk::source",
    });

    use capstan::plugin::types::{Error, ErrorCode};
    use exports::capstan::plugin::source::{
        Capabilities, HttpAccess, PluginInfo, SourceKind, SourceRequest,
    };

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

    impl SourceKind {
        /// A kind named `name` whose spec follows `spec_schema` (JSON Schema text), needing
        /// nothing from the host yet.
        pub fn new(name: &str, summary: &str, spec_schema: &str) -> Self {
            SourceKind {
                name: name.to_owned(),
                summary: summary.to_owned(),
                spec_schema: spec_schema.to_owned(),
                capabilities: Capabilities {
                    git_url_field: None,
                    http: Vec::new(),
                    secret_keys: Vec::new(),
                },
            }
        }

        /// Ask the host to mirror the git repository whose URL is at `pointer` in the spec.
        pub fn with_git_mirror(mut self, pointer: &str) -> Self {
            self.capabilities.git_url_field = Some(pointer.to_owned());
            self
        }

        /// Ask for HTTP access to the origin of the URL at `url_field`.
        pub fn with_http(mut self, access: HttpAccess) -> Self {
            self.capabilities.http.push(access);
            self
        }

        /// Ask to read these keys of the release's credentials Secret.
        pub fn with_secret_keys(mut self, keys: &[&str]) -> Self {
            self.capabilities
                .secret_keys
                .extend(keys.iter().map(|k| (*k).to_owned()));
            self
        }
    }

    impl HttpAccess {
        /// Access to the origin of the URL at `url_field`, nothing more.
        pub fn to(url_field: &str) -> Self {
            HttpAccess {
                url_field: url_field.to_owned(),
                insecure_field: None,
                send_credentials: false,
                shared_document: None,
            }
        }
    }

    impl PluginInfo {
        /// A plugin serving `kinds`.
        pub fn serving(kinds: Vec<SourceKind>) -> Self {
            PluginInfo { kinds }
        }
    }

    impl SourceRequest {
        /// The spec as a JSON value (`invalid-input` if it is not JSON, which the host
        /// never sends).
        pub fn spec_json(&self) -> Result<serde_json::Value, Error> {
            serde_json::from_str(&self.spec)
                .map_err(|e| Error::new(ErrorCode::InvalidInput, format!("spec: {e}")))
        }

        /// The spec read into `T` (`invalid-input` naming the problem otherwise).
        pub fn spec_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
            serde_json::from_str(&self.spec).map_err(|e| {
                Error::new(ErrorCode::InvalidInput, format!("{} spec: {e}", self.kind))
            })
        }

        /// The string at JSON Pointer `pointer` in the spec, if any.
        pub fn spec_field(&self, pointer: &str) -> Option<String> {
            let spec: serde_json::Value = serde_json::from_str(&self.spec).ok()?;
            spec.pointer(pointer)?.as_str().map(str::to_owned)
        }
    }
}

/// Bindings of the `backend-plugin` world: imports `log`, `kube` and `crypto`, exports
/// `backend`.
pub mod backend {
    wit_bindgen::generate!({
        world: "backend-plugin-extended",
        path: "wit",
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The WIT shipped with the SDK is the repository's contract, file for file.
    #[test]
    fn shipped_wit_matches_the_repository_contract() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let repository_wit = crate_dir.join("../../../wit");
        let shipped_wit = crate_dir.join("wit");
        let names = |dir: &Path| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".wit"))
                .collect();
            names.sort();
            names
        };
        assert_eq!(
            names(&repository_wit),
            names(&shipped_wit),
            "plugins/lib/sdk/wit must hold the same files as wit/ (copy wit/*.wit there)"
        );
        for name in names(&repository_wit) {
            let want = std::fs::read_to_string(repository_wit.join(&name)).unwrap();
            let have = std::fs::read_to_string(shipped_wit.join(&name)).unwrap();
            assert!(
                want == have,
                "plugins/lib/sdk/wit/{name} differs from wit/{name}: copy wit/*.wit into the SDK"
            );
        }
    }

    #[test]
    fn version_constant_matches_the_shipped_package() {
        let types =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("wit/types.wit"))
                .unwrap();
        assert!(
            types.contains(&format!("package capstan:plugin@{};", super::WIT_VERSION)),
            "WIT_VERSION is not the version of wit/types.wit"
        );
    }
}
