//! Sprig v3.3 (the function library Helm gives templates), written in Rust against
//! [`capstan_gotmpl`]'s value model, with Sprig's semantics and error texts.

use capstan_gotmpl::funcs::FuncMap;

/// Every Sprig function Helm exposes (`TxtFuncMap` without `env` and `expandenv`).
pub fn functions() -> FuncMap {
    FuncMap::new()
}
