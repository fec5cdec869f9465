//! What a plugin call's store holds for the imports ([`CallData`]), beside what the runtime
//! keeps ([`capstan_wasm_runtime::call::CallState`]).

use wasmtime_wasi_http::WasiHttpCtx;

use super::crypto::RunningHashes;
use super::grants::Grants;
use super::http::HttpHooks;

/// The per-call data of the imports: the call's grants and the state of the imports that
/// serve them. Dropped with the call's store.
pub struct CallData {
    /// What the call may reach.
    pub(crate) grants: Grants,
    /// `wasi:http`'s context.
    pub(crate) http: WasiHttpCtx,
    /// `wasi:http` requests, checked against the HTTP grant.
    pub(crate) http_hooks: HttpHooks,
    /// Hashes started by `crypto.bcrypt-hash-start` and not finished yet.
    pub(crate) bcrypt_hashes: RunningHashes,
}

impl CallData {
    /// The data of a call granted `grants`.
    pub fn new(grants: Grants) -> Self {
        CallData {
            http_hooks: HttpHooks::new(grants.http.clone()),
            grants,
            http: WasiHttpCtx::new(),
            bcrypt_hashes: RunningHashes::default(),
        }
    }

    /// What the call may reach.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }
}

/// The store state of a plugin call.
pub type CallState = capstan_wasm_runtime::call::CallState<CallData>;
