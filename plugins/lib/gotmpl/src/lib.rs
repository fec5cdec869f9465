//! Go's `text/template`, written in Rust, with the behaviour Helm charts rely on.
//!
//! Written by hand because no crate reproduces Go's template language exactly (its lexer
//! rules, trim markers, truthiness, formatting of values and error texts), and Helm
//! compatibility depends on byte-identical output. This crate has no Helm knowledge and
//! does no I/O; it compiles natively and to `wasm32-wasip2`.

pub mod builtins;
pub mod exec;
pub mod funcs;
pub mod gofmt;
pub mod json;
pub mod lex;
pub mod number;
pub mod parse;
pub mod strconv;
pub mod value;

#[cfg(test)]
mod test_values;

pub use exec::{ExecError, Limits, MissingKey, Template, TemplateError};
pub use funcs::{FuncError, FuncMap, Runtime};
pub use value::Value;
