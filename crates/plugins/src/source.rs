//! Calls into a source plugin ([`SourcePlugin`]): `describe`, `resolve` and `fetch`, for
//! components of the current and previous contracts and Helm 4 getters.

use std::sync::Arc;

use capstan_capabilities::Grants;
use capstan_capabilities::state::CallState;

use crate::bindings;
use crate::bindings::source::SourcePluginPre;
use crate::bindings::source::exports::capstan::plugin::source::{
    PluginInfo, Revision, SourceRequest,
};
use crate::bindings::types::ChartArtifact;
use crate::call::{CallError, CallFailure};
use crate::handle::{Handle, plugin_call};
use crate::kinds::{DeclaredKind, HttpAccess, KindCapabilities};
use crate::{compat, helm4};

/// Calls into one source plugin. Each call runs in a fresh instance.
pub struct SourcePlugin {
    pub(crate) pre: SourcePre,
    pub(crate) handle: Handle,
}

/// A source component of the current contract, or of the previous one with its kinds.
pub(crate) enum SourcePre {
    Current(SourcePluginPre<CallState>),
    V0_1(compat::v0_1::SourcePluginPre<CallState>, Vec<String>),
    Helm4(Arc<helm4::Helm4Plugin>),
}

impl SourcePlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.handle.plugin.name
    }

    /// `source.describe`, with no capability granted (current components only; see
    /// [`SourcePlugin::declared_kinds`]).
    async fn describe_current(
        &self,
        pre: &SourcePluginPre<CallState>,
    ) -> Result<PluginInfo, CallError> {
        let grants = Grants::default();
        plugin_call!(self.handle, pre, "describe", grants, |b, store| async {
            b.capstan_plugin_source()
                .call_describe(&mut store)
                .await
                .map(Ok)
        })
    }

    /// The kinds this plugin declares, read through `describe` and checked for shape (each
    /// schema must be a JSON object). Errors name the plugin and the kind.
    pub async fn declared_kinds(&self) -> Result<Vec<DeclaredKind>, String> {
        let pre = match &self.pre {
            SourcePre::Current(pre) => pre,
            SourcePre::V0_1(_, kinds) => {
                return Ok(kinds
                    .iter()
                    .filter_map(|kind| compat::declared_kind(kind))
                    .collect());
            }
            SourcePre::Helm4(plugin) => {
                return Ok(helm4::getter::declared_kinds(self.name(), &plugin.metadata));
            }
        };
        let info = self
            .describe_current(pre)
            .await
            .map_err(|e| format!("plugin `{}`: describe failed: {e}", self.name()))?;
        if info.kinds.is_empty() {
            return Err(format!("plugin `{}` declares no source kind", self.name()));
        }
        info.kinds
            .into_iter()
            .map(|kind| {
                let schema: serde_json::Value =
                    serde_json::from_str(&kind.spec_schema).map_err(|e| {
                        format!(
                            "plugin `{}`: the spec schema of kind `{}` is not JSON: {e}",
                            self.name(),
                            kind.name
                        )
                    })?;
                if !schema.is_object() {
                    return Err(format!(
                        "plugin `{}`: the spec schema of kind `{}` is not a JSON object",
                        self.name(),
                        kind.name
                    ));
                }
                Ok(DeclaredKind {
                    name: kind.name,
                    summary: kind.summary,
                    schema,
                    capabilities: KindCapabilities {
                        git_url_field: kind.capabilities.git_url_field,
                        http: kind
                            .capabilities
                            .http
                            .into_iter()
                            .map(|h| HttpAccess {
                                url_field: h.url_field,
                                insecure_field: h.insecure_field,
                                send_credentials: h.send_credentials,
                                shared_document: h.shared_document,
                            })
                            .collect(),
                        secret_keys: kind.capabilities.secret_keys,
                    },
                })
            })
            .collect()
    }

    /// `source.describe` of a current component (a 0.1 component has none).
    pub async fn describe(&self) -> Result<PluginInfo, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => self.describe_current(pre).await,
            SourcePre::V0_1(..) | SourcePre::Helm4(_) => Err(CallError {
                plugin: self.name().to_owned(),
                function: "describe",
                cause: CallFailure::Returned {
                    code: bindings::types::ErrorCode::Unsupported,
                    message: "only capstan:plugin@0.2 components have describe".into(),
                    retryable: false,
                },
            }),
        }
    }

    /// The error of a request the 0.1 adapter cannot translate.
    fn untranslatable(&self, function: &'static str, error: bindings::types::Error) -> CallError {
        CallError {
            plugin: self.name().to_owned(),
            function,
            cause: CallFailure::Returned {
                code: error.code,
                message: error.message,
                retryable: error.retryable,
            },
        }
    }

    /// `source.resolve`.
    pub async fn resolve(
        &self,
        request: &SourceRequest,
        grants: Grants,
    ) -> Result<Revision, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => {
                plugin_call!(self.handle, pre, "resolve", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_resolve(&mut store, request))
            }
            SourcePre::V0_1(pre, _) => {
                let old = compat::request(&request.kind, &request.spec)
                    .map_err(|e| self.untranslatable("resolve", e))?;
                plugin_call!(self.handle, pre, "resolve", grants, |b, store| async {
                    b.capstan_plugin_source()
                        .call_resolve(&mut store, &old)
                        .await
                        .map(|r| r.map(compat::revision_from))
                })
            }
            SourcePre::Helm4(plugin) => {
                let artifact = self.download(plugin, "resolve", request, &grants).await?;
                let revision = Revision {
                    id: format!("{}@{}", artifact.metadata.version, artifact.digest),
                    content_id: artifact.digest.clone(),
                };
                plugin
                    .downloads
                    .keep(&helm4_url(request).unwrap_or_default(), artifact);
                Ok(revision)
            }
        }
    }

    /// Download through a Helm 4 getter and read the chart's metadata.
    async fn download(
        &self,
        plugin: &helm4::Helm4Plugin,
        function: &'static str,
        request: &SourceRequest,
        grants: &Grants,
    ) -> Result<Arc<ChartArtifact>, CallError> {
        let refused = |message: String| {
            self.untranslatable(
                function,
                bindings::types::Error {
                    code: bindings::types::ErrorCode::InvalidInput,
                    message,
                    retryable: false,
                },
            )
        };
        let url = helm4_url(request).ok_or_else(|| refused("the spec has no `url`".into()))?;
        let credential = |key: &str| {
            grants
                .credentials
                .as_ref()
                .and_then(|c| c.value(key))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default()
        };
        let credentials = helm4::getter::GetterCredentials {
            username: credential("username"),
            password: credential("password"),
        };
        let archive = plugin
            .get(
                &self.handle.calls,
                &self.handle.plugin.name,
                &url,
                &credentials,
            )
            .await?;
        if archive.is_empty() {
            return Err(refused(format!("the getter returned no bytes for {url}")));
        }
        let metadata =
            helm4::getter::chart_metadata(&archive).map_err(|e| refused(format!("{url}: {e}")))?;
        Ok(Arc::new(ChartArtifact {
            digest: helm4::getter::digest_of(&archive),
            archive,
            metadata,
        }))
    }

    /// `source.fetch`.
    pub async fn fetch(
        &self,
        request: &SourceRequest,
        at: &Revision,
        grants: Grants,
    ) -> Result<ChartArtifact, CallError> {
        match &self.pre {
            SourcePre::Current(pre) => {
                plugin_call!(self.handle, pre, "fetch", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_fetch(&mut store, request, at))
            }
            SourcePre::V0_1(pre, _) => {
                let old = compat::request(&request.kind, &request.spec)
                    .map_err(|e| self.untranslatable("fetch", e))?;
                let at = compat::revision(at);
                plugin_call!(self.handle, pre, "fetch", grants, |b, store| b
                    .capstan_plugin_source()
                    .call_fetch(&mut store, &old, &at))
            }
            SourcePre::Helm4(plugin) => {
                let url = helm4_url(request).unwrap_or_default();
                let artifact = match plugin.downloads.take(&url, &at.content_id) {
                    Some(kept) => kept,
                    None => self.download(plugin, "fetch", request, &grants).await?,
                };
                if artifact.digest != at.content_id {
                    return Err(self.untranslatable(
                        "fetch",
                        bindings::types::Error {
                            code: bindings::types::ErrorCode::Conflict,
                            message: format!(
                                "{url} changed since it was resolved ({} now, {} then); the next pass picks it up",
                                artifact.digest, at.content_id
                            ),
                            retryable: true,
                        },
                    ));
                }
                Ok(Arc::unwrap_or_clone(artifact))
            }
        }
    }
}

/// The `url` of a Helm 4 getter kind's spec.
fn helm4_url(request: &SourceRequest) -> Option<String> {
    let spec: serde_json::Value = serde_json::from_str(&request.spec).ok()?;
    spec.get("url")?.as_str().map(str::to_owned)
}
