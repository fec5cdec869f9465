//! Helm charts in OCI registries, for source plugins (`wasm32-wasip2`), as `helm push` and
//! `helm pull oci://…` store and read them: references ([`reference`]), the tag a version
//! or constraint selects ([`constraint`]), the registry protocol with its authentication
//! challenges ([`registry`], over `wasi:http` in [`http`]), and checked manifests, config
//! blobs and chart layers ([`manifest`], [`pull`]).
//!
//! The `oci` source serves whole charts from it; the `git` source fetches a chart's
//! `oci://` dependencies from it, as `helm dependency build` does.

pub mod constraint;
pub mod headers;
pub mod http;
pub mod manifest;
pub mod pull;
pub mod reference;
pub mod registry;
