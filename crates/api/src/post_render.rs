//! Post-renderers of a release: Kustomize-style patches and images, and plugins.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One post-renderer: exactly one of its fields.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("has(self.kustomize) != has(self.plugin)").message("a post-renderer sets exactly one of kustomize and plugin"))]
pub struct PostRenderer {
    /// Kustomize-style patches and image overrides (Flux v2's `kustomize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kustomize: Option<KustomizePostRenderer>,
    /// A Helm 4 `postrenderer/v1` plugin named in the operator's configuration
    /// (`helm --post-renderer NAME --post-renderer-args …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginPostRenderer>,
}

/// Patches and images, applied as Kustomize applies them.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KustomizePostRenderer {
    /// Strategic merge patches (a YAML object) and JSON 6902 patches (a YAML list of
    /// operations), each on the objects its target selects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<KustomizePatch>,
    /// Image name, tag and digest overrides for every container and init container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageOverride>,
}

/// One Kustomize patch.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KustomizePatch {
    /// The patch, inline YAML: an object is a strategic merge patch, a list is JSON 6902.
    pub patch: String,
    /// Which objects it applies to; without one a strategic merge patch applies to the
    /// object its own `apiVersion`, `kind`, `metadata.name` (and `metadata.namespace`, when
    /// given) name, and a JSON 6902 patch is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PatchTarget>,
}

/// Selects objects for a patch (Kustomize's selector: group, version, kind, name and
/// namespace are anchored regular expressions; an unset field matches any object).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchTarget {
    /// API group, an anchored regular expression (empty: the core group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object name, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Object namespace, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Label selector, e.g. `app=web,tier in (a,b),!legacy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Annotation selector, same syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_selector: Option<String>,
}

/// Replaces a container image (Kustomize's `images`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageOverride {
    /// The image name to match (without tag or digest).
    pub name: String,
    /// The name to put instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    /// The tag to put instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_tag: Option<String>,
    /// The digest to put instead; with `newTag` both are kept (`name:tag@digest`), as
    /// Kustomize does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// A Helm 4 post-renderer plugin.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginPostRenderer {
    /// The plugin's `name` in its `plugin.yaml`; it must be configured in the operator's
    /// `plugins`.
    pub name: String,
    /// Arguments, as `--post-renderer-args`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// Which documents the post-renderers and `commonMetadata` see: `combined` (default; hooks
/// and templates in one stream, Helm 4's), `separate` (two streams) or `nohooks` (templates
/// only, as Helm 3).
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PostRenderStrategy {
    /// Hooks and templates in one stream (Helm 4's default).
    #[default]
    Combined,
    /// Hooks and templates in two streams.
    Separate,
    /// Only templates; hooks are left alone (Helm 3).
    Nohooks,
}
