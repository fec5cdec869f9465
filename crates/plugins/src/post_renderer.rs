//! Helm 4 `postrenderer/v1` plugins as the post-rendering steps releases name
//! ([`PostRendererPlugin`]).

use std::sync::Arc;

use capstan_postrender::Document;

use crate::handle::Handle;
use crate::helm4;

/// A Helm 4 `postrenderer/v1` plugin, ready to post-render releases.
pub struct PostRendererPlugin {
    pub(crate) plugin: Arc<helm4::Helm4Plugin>,
    pub(crate) handle: Handle,
}

impl PostRendererPlugin {
    /// The configured name (what `postRenderers[].plugin.name` gives).
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// Post-render `documents` with `args` (Helm's `--post-renderer-args`): one call of a
    /// fresh instance under the plugin's limits.
    pub async fn run(
        &self,
        documents: &[Document],
        args: &[String],
    ) -> Result<Vec<Document>, String> {
        let input = helm4::postrenderer::input_json(documents, args)?;
        self.plugin
            .invoke(
                &self.handle.calls,
                &self.handle.plugin.name,
                "post-render",
                input,
                |output| {
                    helm4::postrenderer::output_documents(output).map_err(|message| {
                        crate::bindings::types::Error {
                            code: crate::bindings::types::ErrorCode::InvalidInput,
                            message,
                            retryable: false,
                        }
                    })
                },
            )
            .await
            .map_err(|e| e.to_string())
    }
}

impl capstan_postrender::PluginStep for PostRendererPlugin {
    fn name(&self) -> &str {
        PostRendererPlugin::name(self)
    }

    fn run<'a>(
        &'a self,
        documents: &'a [Document],
        args: &'a [String],
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<Document>, String>> + Send + 'a>> {
        Box::pin(PostRendererPlugin::run(self, documents, args))
    }
}
