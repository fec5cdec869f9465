//! The capabilities of one plugin call ([`Grants`]): what its imports may reach.

use super::credentials::CredentialsGrant;
use super::folder_files::FolderFilesGrant;
use super::git::GitGrant;
use super::http::HttpGrant;
use super::kube::KubeGrant;
use super::post_render::PostRenderGrant;
use super::release_context::ReleaseContextGrant;

/// The capabilities of one plugin call. The default grants nothing.
#[derive(Clone, Default)]
pub struct Grants {
    /// Kubernetes access, scoped to namespaces and cluster-scoped kinds.
    pub kube: Option<KubeGrant>,
    /// Read access to one host-owned git mirror.
    pub git: Option<GitGrant>,
    /// Outgoing HTTP to the source's origins (and hosts granted in the configuration).
    pub http: Option<HttpGrant>,
    /// The declared keys of the release's credentials Secret.
    pub credentials: Option<CredentialsGrant>,
    /// The release's post-renderers (`post-render`).
    pub post_render: Option<PostRenderGrant>,
    /// Release options for the backend (`release-context`).
    pub release_context: Option<ReleaseContextGrant>,
    /// The unread files of the chart folder a `template-folder` call renders.
    pub folder_files: Option<FolderFilesGrant>,
}

impl Grants {
    /// Grant `release-context` (adding to what the call already has) as `change` sets it;
    /// returns a handle sharing its reports (tests run, drifted objects) for reading after
    /// the call.
    pub fn extend_release_context(
        &mut self,
        change: impl FnOnce(&mut ReleaseContextGrant),
    ) -> ReleaseContextGrant {
        let mut context = self.release_context.take().unwrap_or_default();
        change(&mut context);
        self.release_context = Some(context.clone());
        context
    }
}
