//! The `post-render` host interface: a backend hands over its rendered documents between
//! rendering and sorting, and gets back what the release's post-renderers make of them
//! ([`crate::postrender`]); a release without post-renderers answers `none` at once.

use std::sync::Arc;

use tracing::Instrument;

use super::bindings::post_render::{Document, Host};
use super::bindings::types::{Error, ErrorCode};
use super::errors::error;
use capstan_postrender::{self as postrender, Pipeline};

/// The post-rendering of the release a call is about.
#[derive(Clone)]
pub struct PostRenderGrant {
    /// The release's pipeline.
    pub pipeline: Arc<Pipeline>,
}

fn parse(document: Document) -> Result<postrender::Document, Error> {
    let object = serde_json::from_str(&document.object).map_err(|e| {
        error(
            ErrorCode::InvalidInput,
            format!("post-render: {} is not a JSON object: {e}", document.source),
        )
    })?;
    Ok(postrender::Document {
        source: document.source,
        hook: document.hook,
        object,
    })
}

/// What the `post-render` import sees of a call: the plugin's name and its grant.
pub struct PostRenderView<'a> {
    /// The plugin's name.
    pub(crate) plugin: &'a str,
    /// The grant, if any.
    pub(crate) grant: Option<&'a PostRenderGrant>,
}

impl Host for PostRenderView<'_> {
    async fn run(&mut self, documents: Vec<Document>) -> Result<Option<Vec<Document>>, Error> {
        let Some(grant) = self.grant.cloned() else {
            return Ok(None);
        };
        let documents = documents
            .into_iter()
            .map(parse)
            .collect::<Result<Vec<_>, _>>()?;
        let span =
            tracing::info_span!("post_render", plugin = %self.plugin, documents = documents.len());
        // Attached to the future, not entered across its awaits (a Helm 4 plugin step
        // awaits a nested call).
        let out = grant
            .pipeline
            .run(documents)
            .instrument(span)
            .await
            .map_err(|e| error(ErrorCode::InvalidInput, e.to_string()))?;
        Ok(Some(
            out.into_iter()
                .map(|d| Document {
                    source: d.source,
                    hook: d.hook,
                    object: d.object.to_string(),
                })
                .collect(),
        ))
    }
}
