//! Post-rendering of a release's rendered documents as its HelmRelease asks, the work behind
//! the `post-render` plugin import: Kustomize patches (strategic merge and JSON 6902, with
//! Kustomize's target selectors) and image overrides, `commonMetadata`, and plugin steps the
//! embedder supplies ([`PluginStep`]), in the order and over the documents the release's
//! `postRenderStrategy` says. Pure: documents in, documents out, on the API types. Documents
//! arrive as JSON objects read by the backend with Helm's YAML rules, so no step guesses a
//! scalar's type.

pub mod images;
pub mod pipeline;
pub mod selector;
pub mod strategic_merge;

pub use pipeline::{Document, Pipeline, PipelineError, PluginStep, PostRenderError};
