//! What a release needs from its backend beyond the exports of `capstan:plugin@0.2.0`:
//! the imports added within 0.2 (`post-render`, `release-context`) that features of the
//! spec rely on, refused by name for a backend built without them, and the post-rendering
//! grant of a sync.

use std::sync::Arc;

use super::context::Context;
use super::helm_tests::tests_enabled;
use crate::api::{DriftMode, HelmRelease};
use crate::capabilities::post_render::PostRenderGrant;
use crate::plugins::BackendPlugin;
use crate::plugins::bindings::types::ReleaseId;
use crate::postrender::Pipeline;

/// The interface a backend must import to post-render.
pub(crate) const POST_RENDER_IMPORT: &str = "capstan:plugin/post-render";

/// The interface a backend must import to keep records in a storage namespace.
pub(crate) const RELEASE_CONTEXT_IMPORT: &str = "capstan:plugin/release-context";

/// Why `backend` cannot serve the release-level options `hr` sets, if it cannot.
pub(crate) fn release_context_refusal(
    hr: &HelmRelease,
    release: &ReleaseId,
    backend: &BackendPlugin,
) -> Option<String> {
    if backend.imports(RELEASE_CONTEXT_IMPORT) {
        return None;
    }
    let drift = hr
        .spec
        .drift_detection
        .as_ref()
        .is_some_and(|d| d.mode != DriftMode::Disabled);
    let field = if let Some(namespace) = super::context::storage_namespace(hr, release) {
        format!(
            "storageNamespace {namespace} (the records would stay in {})",
            release.namespace
        )
    } else if tests_enabled(hr) {
        "test.enable (the tests would not run)".to_owned()
    } else if drift {
        "driftDetection (the release would not be compared with the cluster)".to_owned()
    } else {
        return None;
    };
    Some(format!(
        "{field}: backend `{}` does not import {RELEASE_CONTEXT_IMPORT} (built before it was added to the 0.2 contract); rebuild it with the current SDK or pick another backend",
        backend.name()
    ))
}

/// The release's post-rendering for `backend`, or why it cannot be had (a post-renderer
/// the spec gets wrong, or a backend built before `post-render` existed).
pub(crate) fn post_render_grant(
    ctx: &Context,
    hr: &HelmRelease,
    backend: &BackendPlugin,
) -> Result<Option<PostRenderGrant>, String> {
    let plugins = &ctx.backends.current().post_renderers;
    let Some(pipeline) = Pipeline::for_release(hr, plugins).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    if !backend.imports(POST_RENDER_IMPORT) {
        return Err(format!(
            "backend `{}` does not import {POST_RENDER_IMPORT} (built before post-rendering was added to the 0.2 contract), so it cannot apply postRenderers or commonMetadata; rebuild it with the current SDK or pick another backend",
            backend.name()
        ));
    }
    Ok(Some(PostRenderGrant {
        pipeline: Arc::new(pipeline),
    }))
}
