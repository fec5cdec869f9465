//! Sprig v3.3 (the function library Helm gives templates), written in Rust against
//! [`capstan_gotmpl`]'s value model, with Sprig's semantics and error texts.
//!
//! Each module registers one family of functions; [`functions`] puts them together. A Go
//! panic inside a Sprig function surfaces in templates as `error calling NAME: PANIC`, so the
//! panicking (non-`must`) variants return the same [`FuncError`] text as their `must` twins.
//!
//! [`FuncError`]: capstan_gotmpl::funcs::FuncError

use capstan_gotmpl::funcs::FuncMap;

mod conv;
mod crypto;
mod dates;
mod decimal;
mod defaults;
mod dicts;
mod encoding;
mod lists;
mod math;
mod paths;
mod reflect;
mod regex;
mod semver;
mod strings;
mod url;
mod values;

/// Every Sprig function Helm exposes (`TxtFuncMap` without `env` and `expandenv`).
pub fn functions() -> FuncMap {
    let mut funcs = FuncMap::new();
    conv::register(&mut funcs);
    crypto::register(&mut funcs);
    dates::register(&mut funcs);
    defaults::register(&mut funcs);
    dicts::register(&mut funcs);
    encoding::register(&mut funcs);
    lists::register(&mut funcs);
    math::register(&mut funcs);
    paths::register(&mut funcs);
    reflect::register(&mut funcs);
    regex::register(&mut funcs);
    semver::register(&mut funcs);
    strings::register(&mut funcs);
    url::register(&mut funcs);
    funcs
}

#[cfg(test)]
pub(crate) mod testing;
