//! What plugins may reach outside their sandbox. Each plugin call carries its own
//! [`Grants`]; a host import outside them answers `denied`, naming what was refused.

pub mod credentials;
pub mod crypto;
pub mod discovery;
pub mod egress;
pub mod folder_files;
pub mod git;
pub mod http;
pub mod kube;
pub mod log;
pub mod pod_logs;
pub mod post_render;
pub mod readiness;
pub mod release_context;

use crate::plugins::bindings::types::{Error, ErrorCode};

/// The capabilities of one plugin call. The default grants nothing.
#[derive(Clone, Default)]
pub struct Grants {
    /// Kubernetes access, scoped to namespaces and cluster-scoped kinds.
    pub kube: Option<kube::KubeGrant>,
    /// Read access to one host-owned git mirror.
    pub git: Option<git::GitGrant>,
    /// Outgoing HTTP to the source's origins (and hosts granted in the configuration).
    pub http: Option<http::HttpGrant>,
    /// The declared keys of the release's credentials Secret.
    pub credentials: Option<credentials::CredentialsGrant>,
    /// The release's post-renderers (`post-render`).
    pub post_render: Option<post_render::PostRenderGrant>,
    /// Release options for the backend (`release-context`).
    pub release_context: Option<release_context::ReleaseContextGrant>,
    /// The unread files of the chart folder a `template-folder` call renders.
    pub folder_files: Option<folder_files::FolderFilesGrant>,
}

impl Grants {
    /// Grant `release-context` (adding to what the call already has) as `change` sets it;
    /// returns a handle sharing its reports (tests run, drifted objects) for reading after
    /// the call.
    pub fn extend_release_context(
        &mut self,
        change: impl FnOnce(&mut release_context::ReleaseContextGrant),
    ) -> release_context::ReleaseContextGrant {
        let mut context = self.release_context.take().unwrap_or_default();
        change(&mut context);
        self.release_context = Some(context.clone());
        context
    }
}

/// An error value for a plugin.
pub(crate) fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    let retryable = matches!(code, ErrorCode::Unavailable | ErrorCode::Timeout);
    Error {
        code,
        message: message.into(),
        retryable,
    }
}
