//! The `HelmRelease` API (`helm.capstan.dev/v1alpha1`): spec field names and defaults of the
//! Flux Helm Operator's `helm.fluxcd.io/v1`, plus `backend`, `install`/`upgrade`
//! remediation and `suspend`, and a kstatus-style status. `capstan crd` prints the CRD
//! generated from these types (`deploy/crds/helmreleases.yaml`).

use std::collections::BTreeMap;

use kube::{CustomResource, CustomResourceExt, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API group of Capstan's resources.
pub const GROUP: &str = "helm.capstan.dev";
/// Finalizer that makes deleting a HelmRelease uninstall its release first.
pub const FINALIZER: &str = "helm.capstan.dev/uninstall";
/// Annotation: any new value makes the operator reconcile the release now.
pub const RECONCILE_AT_ANNOTATION: &str = "capstan.dev/reconcile-at";
/// Annotation: any new value makes the operator upgrade the release even if unchanged.
pub const FORCE_AT_ANNOTATION: &str = "capstan.dev/force-at";
/// Operation budget when `spec.timeout` is not set, in seconds (Flux Helm Operator's).
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 300;
/// Revisions kept when `spec.maxHistory` is not set.
pub const DEFAULT_MAX_HISTORY: i64 = 10;
/// The git ref followed when `spec.chart.ref` is not set, as the Flux Helm Operator did.
pub const DEFAULT_GIT_REF: &str = "master";
/// Retries of a failed rollback-remediated upgrade when `rollback.maxRetries` is not set.
pub const DEFAULT_ROLLBACK_MAX_RETRIES: i64 = 5;

/// A Helm release kept in line with a chart and values.
#[derive(CustomResource, KubeSchema, Deserialize, Serialize, Clone, Debug, Default)]
#[kube(
    group = "helm.capstan.dev",
    version = "v1alpha1",
    kind = "HelmRelease",
    plural = "helmreleases",
    shortname = "hr",
    namespaced,
    status = "HelmReleaseStatus",
    printcolumn = r#"{"name":"Release","type":"string","jsonPath":".status.releaseName"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#,
    printcolumn = r#"{"name":"Revision","type":"integer","jsonPath":".status.revision"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseSpec {
    /// Where the chart comes from: a git repository or a Helm HTTP repository.
    pub chart: ChartSource,
    /// Service account (in this namespace) every cluster call of the release runs as,
    /// through impersonation; default the configuration's `defaultServiceAccount`, else
    /// the operator's own identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Release into another cluster (Flux v2's `kubeConfig`): a kubeconfig in a Secret of
    /// this namespace; objects, release records, hooks and waits go to its API server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_config: Option<KubeConfigReference>,
    /// HelmReleases that must be Ready (for their current generation) before this one is
    /// installed or upgraded (Flux's `dependsOn`); each in this namespace unless it names
    /// another, which the configuration's `allowCrossNamespaceRefs` must allow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<NamespacedRef>,
    /// Release name; default `<targetNamespace>-<name>`, or
    /// `<namespace>-<targetNamespace>-<name>` when the namespaces differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 53))]
    pub release_name: Option<String>,
    /// Namespace the release is installed in; default the HelmRelease's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub target_namespace: Option<String>,
    /// Namespace the release's records are kept in (Flux v2's `storageNamespace`); default
    /// the release namespace (`targetNamespace`), where Helm and the Helm Operator keep them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub storage_namespace: Option<String>,
    /// Helm version whose backend serves this release (`backends.v2`/`backends.v3` in the
    /// operator configuration); ignored when `backend` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_version: Option<HelmVersion>,
    /// Backend plugin by its configured name; default by `helmVersion`, then the
    /// configuration's default backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Wait for the release's resources to become ready; default: `rollback.enable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Budget of install, upgrade and uninstall, in seconds; default 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout: Option<i64>,
    /// Revisions kept; default 10; 0 keeps all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_history: Option<i64>,
    /// Replace resources that cannot be patched.
    #[serde(default)]
    pub force_upgrade: bool,
    /// Do not install the chart's CRDs.
    #[serde(default, rename = "skipCRDs")]
    pub skip_crds: bool,
    /// Accepted for compatibility: Capstan always computes values from this spec alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_values: Option<bool>,
    /// Roll back a failed upgrade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<Rollback>,
    /// Install behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<InstallSpec>,
    /// Upgrade behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<UpgradeSpec>,
    /// Uninstall behaviour, when the HelmRelease is deleted (Flux v2's `uninstall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstall: Option<UninstallSpec>,
    /// Compare the deployed objects with the cluster at each resync and report or correct
    /// what differs (Flux v2's `driftDetection`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_detection: Option<DriftDetection>,
    /// Run the chart's tests after each install and upgrade (`helm test`; the Helm
    /// Operator's and Flux v2's `test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestSpec>,
    /// Stop reconciling this release (deletion still uninstalls it).
    #[serde(default)]
    pub suspend: bool,
    /// Values, merged over `valuesFrom`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "free_form_object")]
    pub values: Option<serde_json::Map<String, serde_json::Value>>,
    /// Values from ConfigMaps and Secrets, merged in order before `values`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values_from: Vec<ValuesFromSource>,
    /// Labels and annotations put on every object of the release, after the
    /// post-renderers; they override the chart's on a matching key (Flux v2's
    /// `commonMetadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_metadata: Option<CommonMetadata>,
    /// Post-renderers applied in order to the rendered manifests before they are recorded
    /// and applied (Flux v2's `postRenderers`, and Helm 4 `postrenderer/v1` plugins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_renderers: Vec<PostRenderer>,
    /// Which documents the post-renderers see: `combined` (hooks and templates in one
    /// stream, Helm 4's default), `separate` (two streams) or `nohooks` (Helm 3: hooks are
    /// left alone). Default `combined`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_render_strategy: Option<PostRenderStrategy>,
}

/// Labels and annotations for every object of a release.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommonMetadata {
    /// Labels to set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

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
    /// object its own `apiVersion`, `kind` and `metadata.name` name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PatchTarget>,
}

/// Selects objects for a patch (Kustomize's selector: name, namespace and kind are
/// anchored regular expressions).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchTarget {
    /// API group (empty for the core group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Object namespace.
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
    /// The digest to put instead (wins over `newTag`).
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

/// Which documents post-renderers see.
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

fn free_form_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// Helm major version.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum HelmVersion {
    /// Helm 2 (Tiller-compatible storage).
    #[serde(rename = "v2")]
    V2,
    /// Helm 3.
    #[serde(rename = "v3")]
    V3,
}

/// A chart source: `git` + `path` (+ `ref`, `secretRef`), `repository` + `name` +
/// `version`, or `source` (a kind a plugin serves, and its spec).
#[derive(Deserialize, Serialize, Clone, Debug, Default, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("(has(self.git) ? 1 : 0) + (has(self.repository) ? 1 : 0) + (has(self.source) ? 1 : 0) == 1").message("set one of chart.git (with chart.path), chart.repository (with chart.name and chart.version), or chart.source (with kind and spec)"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.insecure) || !self.insecure || has(self.repository) || has(self.git)").message("chart.insecure applies to chart.repository and chart.git"))]
pub struct ChartSource {
    /// Git repository URL (`https://`, `ssh://`, `file://`, `git@host:org/repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    /// Branch, tag or commit; default `master`.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// Chart folder inside the git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Secret with git credentials (`username`/`password` or `identity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<NamespacedRef>,
    /// Accepted for compatibility: a git chart's dependencies that are not in `charts/` are
    /// always built (`file://` ones from the same commit, others from
    /// `dependencyRepositories`).
    #[serde(default)]
    pub skip_dep_update: bool,
    /// Helm chart repositories (`https://`, `http://` or `oci://` URLs, as `Chart.yaml`
    /// names them) that the dependencies of a git chart may be downloaded from when
    /// `charts/` lacks them, as after `helm repo add`; anonymous (an `oci://` registry over
    /// plain HTTP only with `insecure`). Only with `git`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependency_repositories: Vec<String>,
    /// Helm repository URL (where `index.yaml` lives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Chart name in the Helm repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Chart version or SemVer range in the Helm repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Secret with Helm repository credentials (`username`/`password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_pull_secret: Option<NamespacedRef>,
    /// Let the chart credentials (`chartPullSecret` or `secretRef`) be sent over a plain
    /// `http://` Helm repository or git URL; refused otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// A chart from any source kind a configured plugin serves (`oci`, `https-url`, an
    /// in-house kind, ...), instead of `git` or `repository`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PluginSource>,
}

/// A chart source of a kind declared by a source plugin. The host routes it by `kind` and
/// checks `spec` against the JSON Schema the plugin declared for the kind.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginSource {
    /// Source kind, as a configured plugin declares it (see `capstan plugin inspect`).
    pub kind: String,
    /// The kind's spec; its schema is the plugin's.
    #[serde(default)]
    #[schemars(schema_with = "free_form_object")]
    pub spec: serde_json::Value,
    /// Secret with credentials for the source; the plugin sees only the keys its kind
    /// declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<NamespacedRef>,
}

/// Why a HelmRelease's chart fields name no source. Names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ChartSpecError {
    /// The field at fault, e.g. `spec.chart.name`.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl ChartSource {
    /// The source kind and spec these fields name: `chart.source` as written, or the Flux
    /// Helm Operator's fields mapped to the first-party kinds: `git`/`ref`/`path` to kind
    /// `git` (`ref` defaulting to `master`), `repository`/`name`/`version` to kind
    /// `helm-repository`. Returns the kind, the spec and the credentials Secret reference.
    pub fn kind_and_spec(
        &self,
    ) -> Result<(String, serde_json::Value, Option<&NamespacedRef>), ChartSpecError> {
        let set = |field: &Option<String>| {
            field
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let error = |field, message: &str| ChartSpecError {
            field,
            message: message.to_owned(),
        };
        let git = set(&self.git);
        let repository = set(&self.repository);
        match (&self.source, git, repository) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(error(
                "spec.chart.source",
                "is set together with `git` or `repository`; a release has one chart source",
            )),
            (Some(source), None, None) => {
                if source.kind.trim().is_empty() {
                    return Err(error("spec.chart.source.kind", "missing"));
                }
                Ok((
                    source.kind.trim().to_owned(),
                    source.spec.clone(),
                    source.secret_ref.as_ref(),
                ))
            }
            (None, Some(_), Some(_)) => Err(error(
                "spec.chart",
                "sets both `git` and `repository`; a release has one chart source",
            )),
            (None, Some(url), None) => {
                let reference = set(&self.git_ref).unwrap_or_else(|| DEFAULT_GIT_REF.to_owned());
                let path = self.path.as_deref().unwrap_or_default().trim_matches('/');
                let mut spec = serde_json::json!({"url": url, "ref": reference, "path": path});
                if self.insecure {
                    spec["insecure"] = serde_json::Value::Bool(true);
                }
                if !self.dependency_repositories.is_empty() {
                    spec["dependencyRepositories"] =
                        serde_json::json!(self.dependency_repositories);
                }
                Ok(("git".to_owned(), spec, self.secret_ref.as_ref()))
            }
            (None, None, Some(url)) => {
                let name = set(&self.name).ok_or_else(|| {
                    error(
                        "spec.chart.name",
                        "missing (the chart's name in the repository index)",
                    )
                })?;
                let version = set(&self.version).unwrap_or_default();
                let mut spec = serde_json::json!({"url": url, "chart": name, "version": version});
                if self.insecure {
                    spec["insecure"] = serde_json::Value::Bool(true);
                }
                Ok((
                    "helm-repository".to_owned(),
                    spec,
                    self.chart_pull_secret.as_ref().or(self.secret_ref.as_ref()),
                ))
            }
            (None, None, None) => Err(error(
                "spec.chart",
                "names no chart source: set `git` (with `path`), `repository` (with `name`), or `source` (`kind` and `spec`)",
            )),
        }
    }
}

/// A reference to an object by name, in the HelmRelease's namespace unless given.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct NamespacedRef {
    /// Object name.
    pub name: String,
    /// Object namespace; default the HelmRelease's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Rolling back failed upgrades (Flux Helm Operator's `rollback`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rollback {
    /// Roll back a failed upgrade to the last deployed revision.
    #[serde(default)]
    pub enable: bool,
    /// Retry the upgrade after a rollback.
    #[serde(default)]
    pub retry: bool,
    /// Upgrade retries after rollbacks; default 5; 0 is unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_retries: Option<i64>,
    /// Replace resources during the rollback.
    #[serde(default)]
    pub force: bool,
    /// Accepted for compatibility (Helm 2's `--recreate-pods`).
    #[serde(default)]
    pub recreate: bool,
    /// Do not run rollback hooks.
    #[serde(default)]
    pub disable_hooks: bool,
    /// Budget of the rollback, in seconds; default 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<i64>,
    /// Wait for the rolled-back resources to become ready.
    #[serde(default)]
    pub wait: bool,
}

/// Where a remote cluster's kubeconfig is.
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubeConfigReference {
    /// A Secret in the HelmRelease's namespace holding the kubeconfig (credentials
    /// embedded: file references, `exec` and `auth-provider` are refused).
    pub secret_ref: SecretKeyReference,
}

/// A key of a Secret in the HelmRelease's namespace.
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyReference {
    /// The Secret's name.
    pub name: String,
    /// The key; default `value`, then `value.yaml` (Flux's keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Install behaviour (Flux v2's `install`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallSpec {
    /// What to do when an install fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    /// The chart's `crds/` folder on install: `Skip`, `Create` (default; `Skip` when
    /// `skipCRDs` is set) or `CreateReplace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crds: Option<CrdsPolicy>,
    /// Create the target namespace when it does not exist (`helm install
    /// --create-namespace`); it is created with the release's identity and is not part of
    /// the release (uninstalling leaves it).
    #[serde(default)]
    pub create_namespace: bool,
    /// Do not run the chart's install hooks.
    #[serde(default)]
    pub disable_hooks: bool,
    /// Do not wait for the installed objects to be ready, whatever `spec.wait` says.
    #[serde(default)]
    pub disable_wait: bool,
}

/// What to do with the CRDs of a chart's `crds/` folder (Flux v2's `crds` policies).
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CrdsPolicy {
    /// Leave them alone.
    Skip,
    /// Create the missing ones; never change existing ones.
    Create,
    /// Create the missing ones and replace existing ones.
    CreateReplace,
}

/// Uninstall behaviour (Flux v2's `uninstall`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UninstallSpec {
    /// Keep the release's records, marked `uninstalled` (`helm uninstall --keep-history`).
    #[serde(default)]
    pub keep_history: bool,
    /// Do not run the chart's `pre-delete` and `post-delete` hooks.
    #[serde(default)]
    pub disable_hooks: bool,
    /// Budget of the uninstall, in seconds; default `spec.timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout: Option<i64>,
    /// Wait until the deleted objects are gone.
    #[serde(default)]
    pub wait: bool,
    /// How the release's objects' dependents are deleted (`helm uninstall --cascade`):
    /// `background` (default), `foreground` or `orphan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_propagation: Option<DeletionPropagation>,
}

/// Drift detection.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftDetection {
    /// `enabled` (report and correct), `warn` (report only) or `disabled` (default).
    #[serde(default)]
    pub mode: DriftMode,
    /// Fields left out of the comparison (and of corrections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignore: Vec<DriftIgnoreRule>,
}

/// What drift detection does.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DriftMode {
    /// Report drifted objects and put them back.
    Enabled,
    /// Report drifted objects only.
    Warn,
    /// Do not compare.
    #[default]
    Disabled,
}

/// Fields drift detection ignores.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftIgnoreRule {
    /// JSON pointers (RFC 6901), e.g. `/spec/replicas`.
    pub paths: Vec<String>,
    /// The objects the rule applies to (as a post-renderer patch target); all without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PatchTarget>,
}

/// Helm tests after install and upgrade.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestSpec {
    /// Run the chart's `test` hooks after every successful install or upgrade.
    #[serde(default)]
    pub enable: bool,
    /// Budget of the test run, in seconds; default `spec.timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout: Option<i64>,
    /// A failed test only sets `TestSuccess=False`: the release stays Ready and is not
    /// remediated.
    #[serde(default)]
    pub ignore_failures: bool,
}

/// Kubernetes' deletion propagation policy.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeletionPropagation {
    /// Delete the object now; the garbage collector deletes its dependents afterwards.
    #[default]
    Background,
    /// Delete the dependents first, then the object.
    Foreground,
    /// Leave the dependents, without their owner reference.
    Orphan,
}

/// Upgrade behaviour (Flux v2's `upgrade`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeSpec {
    /// What to do when an upgrade fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<Remediation>,
    /// The chart's `crds/` folder on upgrade: `Skip` (default, as Helm), `Create` or
    /// `CreateReplace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crds: Option<CrdsPolicy>,
    /// Replace objects that cannot be patched (`helm upgrade --force`); the same as
    /// `spec.forceUpgrade`.
    #[serde(default)]
    pub force: bool,
    /// Do not run the chart's upgrade hooks.
    #[serde(default)]
    pub disable_hooks: bool,
    /// Do not wait for the upgraded objects to be ready, whatever `spec.wait` says.
    #[serde(default)]
    pub disable_wait: bool,
}

/// Retries of a failed action. A failed install is always removed (atomic install); a
/// failed upgrade is rolled back when `rollback.enable` is set.
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    /// Attempts after the first failure before the release is `Stalled`; default 0; -1
    /// retries forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = -1))]
    pub retries: Option<i64>,
    /// Upgrades only (Flux v2): what a failed upgrade is remediated with before it is
    /// retried: `rollback` to the last deployed revision, or `uninstall` the release (the
    /// next attempt installs it afresh); default: as `rollback.enable` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RemediationStrategy>,
}

/// How a failed upgrade is remediated.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RemediationStrategy {
    /// Roll back to the last deployed revision.
    Rollback,
    /// Uninstall the release.
    Uninstall,
}

/// One source of values (exactly one of its fields).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValuesFromSource {
    /// A key of a ConfigMap holding YAML values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeyRef>,
    /// A key of a Secret holding YAML values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeyRef>,
    /// (Helm Operator) A values file fetched over HTTP(S) at every reconcile, within the
    /// configuration's `sources.egress` rules (no credentials are sent, redirects are not
    /// followed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_source_ref: Option<ExternalSourceRef>,
    /// (Helm Operator) A values file inside the chart, by its path from the chart's root
    /// (e.g. `values-production.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_file_ref: Option<ChartFileRef>,
    /// (Flux v2) Where the key's content goes, in `--set` path notation (`a.b[0].c`): the
    /// key then holds one flat value, typed as `--set` types it, instead of a values
    /// document merged at the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_path: Option<String>,
}

/// A key of a ConfigMap or Secret.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct KeyRef {
    /// Object name.
    pub name: String,
    /// Object namespace; default the HelmRelease's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Key holding the YAML; default `values.yaml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Skip when the object or key is missing or does not parse.
    #[serde(default)]
    pub optional: bool,
}

/// A values file at a URL (Helm Operator's `externalSourceRef`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSourceRef {
    /// `http://` or `https://` URL of a YAML values file.
    pub url: String,
    /// Skip, instead of failing, when it cannot be fetched or is not a values document.
    #[serde(default)]
    pub optional: bool,
}

/// A values file inside the chart (Helm Operator's `chartFileRef`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChartFileRef {
    /// Path from the chart's root, `/`-separated.
    pub path: String,
    /// Skip, instead of failing, when the file is missing or is not a values document.
    #[serde(default)]
    pub optional: bool,
}

impl KeyRef {
    /// The key read, `values.yaml` unless given.
    pub fn key_or_default(&self) -> &str {
        self.key.as_deref().unwrap_or("values.yaml")
    }
}

/// Observed state of a HelmRelease.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmReleaseStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// kstatus conditions: `Ready`, `Reconciling`, `Stalled`, `ChartFetched`, `Released`,
    /// `RolledBack`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Name of the Helm release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    /// Helm status of the current revision (`deployed`, `failed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_status: Option<String>,
    /// Current release revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Source revision (git commit or chart version) of the last successful sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_source_revision: Option<String>,
    /// Source revision of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_source_revision: Option<String>,
    /// Digest of chart, merged values and options of the last successful sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_digest: Option<String>,
    /// Digest of the install/upgrade options of the last successful sync: when only the
    /// options change, the next sync upgrades (a new revision) even if chart and values
    /// are the same, as `helm upgrade` with the new flags would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_options_digest: Option<String>,
    /// Digest of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_digest: Option<String>,
    /// Chart archive digest of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart_digest: Option<String>,
    /// Consecutive failures of the attempted digest.
    #[serde(default)]
    pub failures: i64,
    /// Failed installs since the last success.
    #[serde(default)]
    pub install_failures: i64,
    /// Failed upgrades since the last success.
    #[serde(default)]
    pub upgrade_failures: i64,
    /// Rollbacks since the last successful upgrade.
    #[serde(default)]
    pub rollback_count: i64,
    /// Last handled `capstan.dev/reconcile-at` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_reconcile_at: Option<String>,
    /// Last handled `capstan.dev/force-at` value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_handled_force_at: Option<String>,
}

/// A kstatus-style condition.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// One-word reason.
    pub reason: String,
    /// What happened, for a person.
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
    /// The generation the condition describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl HelmReleaseStatus {
    /// The condition of `type_`, if set.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Set a condition, keeping its transition time when the status does not change.
    pub fn set_condition(
        &mut self,
        type_: &str,
        status: bool,
        reason: &str,
        message: &str,
        generation: Option<i64>,
        now: &str,
    ) {
        let status = if status { "True" } else { "False" };
        let transition = self
            .condition(type_)
            .filter(|c| c.status == status)
            .map_or_else(|| now.to_owned(), |c| c.last_transition_time.clone());
        self.remove_condition(type_);
        self.conditions.push(Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: transition,
            observed_generation: generation,
        });
        self.conditions
            .sort_by_key(|c| CONDITION_ORDER.iter().position(|t| *t == c.type_));
    }

    /// Remove a condition.
    pub fn remove_condition(&mut self, type_: &str) {
        self.conditions.retain(|c| c.type_ != type_);
    }
}

/// Conditions in the order they are listed.
const CONDITION_ORDER: [&str; 6] = [
    "Ready",
    "Reconciling",
    "Stalled",
    "ChartFetched",
    "Released",
    "RolledBack",
];

impl HelmRelease {
    /// Namespace of the HelmRelease itself.
    pub fn namespace_or_default(&self) -> String {
        self.metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned())
    }

    /// Namespace the release is installed in.
    pub fn target_namespace(&self) -> String {
        self.spec
            .target_namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| self.namespace_or_default())
    }

    /// Helm release name, defaulted as the Flux Helm Operator did.
    pub fn release_name(&self) -> String {
        if let Some(name) = self.spec.release_name.as_ref().filter(|n| !n.is_empty()) {
            return name.clone();
        }
        let namespace = self.namespace_or_default();
        let target = self.target_namespace();
        let name = self.metadata.name.clone().unwrap_or_default();
        if namespace == target {
            format!("{target}-{name}")
        } else {
            format!("{namespace}-{target}-{name}")
        }
    }

    /// Value of an annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }
}

/// The CRD manifest, as committed in `deploy/crds/helmreleases.yaml`.
pub fn crd_yaml() -> Result<String, serde_yaml_ng::Error> {
    let header =
        "# Generated by `capstan crd`; do not edit. A test fails when this file is stale.\n";
    Ok(format!(
        "{header}{}",
        serde_yaml_ng::to_string(&HelmRelease::crd())?
    ))
}

/// Labels every object Capstan creates for its own bookkeeping carries.
pub fn managed_by_labels() -> BTreeMap<String, String> {
    BTreeMap::from([(
        "app.kubernetes.io/managed-by".to_owned(),
        "capstan".to_owned(),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(namespace: &str, target: Option<&str>) -> HelmRelease {
        let mut hr = HelmRelease::new("podinfo", HelmReleaseSpec::default());
        hr.metadata.namespace = Some(namespace.into());
        hr.spec.target_namespace = target.map(str::to_owned);
        hr
    }

    #[test]
    fn a_git_chart_passes_its_dependency_repositories_to_the_git_kind() {
        let mut chart = ChartSource {
            git: Some("https://example.com/apps.git".into()),
            path: Some("/charts/app/".into()),
            ..ChartSource::default()
        };
        let (kind, spec, _) = chart.kind_and_spec().unwrap();
        assert_eq!(kind, "git");
        assert_eq!(
            spec,
            serde_json::json!({"url": "https://example.com/apps.git", "ref": "master", "path": "charts/app"})
        );
        chart.dependency_repositories = vec!["https://charts.example.com".into()];
        let (_, spec, _) = chart.kind_and_spec().unwrap();
        assert_eq!(
            spec["dependencyRepositories"],
            serde_json::json!(["https://charts.example.com"])
        );
    }

    #[test]
    fn release_names_default_as_the_flux_helm_operator() {
        assert_eq!(release("demo", None).release_name(), "demo-podinfo");
        assert_eq!(release("demo", Some("demo")).release_name(), "demo-podinfo");
        assert_eq!(
            release("demo", Some("apps")).release_name(),
            "demo-apps-podinfo"
        );
        let mut named = release("demo", None);
        named.spec.release_name = Some("web".into());
        assert_eq!(named.release_name(), "web");
    }

    #[test]
    fn flux_helm_operator_documents_deserialize() {
        let hr: HelmRelease = serde_yaml_ng::from_str(
            "apiVersion: helm.capstan.dev/v1alpha1\nkind: HelmRelease\nmetadata: {name: a, namespace: n}\n\
             spec:\n  chart: {git: 'https://h/r.git', ref: main, path: charts/a}\n  skipCRDs: true\n\
               \x20 valuesFrom:\n  - configMapKeyRef: {name: cm, optional: true}\n  values: {replicas: 2, image: {tag: v1}}\n\
               \x20 rollback: {enable: true, maxRetries: 2}\n",
        )
        .unwrap();
        assert_eq!(hr.spec.chart.git_ref.as_deref(), Some("main"));
        assert!(hr.spec.skip_crds);
        let from = hr.spec.values_from[0].config_map_key_ref.as_ref().unwrap();
        assert_eq!(from.key_or_default(), "values.yaml");
        assert!(from.optional);
        assert_eq!(hr.spec.values.unwrap()["image"]["tag"], "v1");
        assert_eq!(hr.spec.rollback.unwrap().max_retries, Some(2));
    }

    #[test]
    fn conditions_keep_their_transition_time_while_unchanged() {
        let mut status = HelmReleaseStatus::default();
        status.set_condition("Ready", false, "Progressing", "a", Some(1), "t1");
        status.set_condition("ChartFetched", true, "Fetched", "b", Some(1), "t1");
        status.set_condition("Ready", false, "Progressing", "c", Some(2), "t2");
        assert_eq!(
            status.condition("Ready").unwrap().last_transition_time,
            "t1"
        );
        status.set_condition("Ready", true, "Released", "d", Some(2), "t3");
        assert_eq!(
            status.condition("Ready").unwrap().last_transition_time,
            "t3"
        );
        assert_eq!(status.conditions[0].type_, "Ready");
    }

    #[test]
    fn committed_crd_is_current() {
        let committed = include_str!("../../deploy/crds/helmreleases.yaml");
        let generated = crd_yaml().unwrap();
        assert!(
            committed == generated,
            "deploy/crds/helmreleases.yaml is stale: run `cargo run -p capstan -- crd > deploy/crds/helmreleases.yaml`"
        );
    }

    #[test]
    fn chart_crd_is_current() {
        let copy = include_str!("../../deploy/chart/capstan/crds/helmreleases.yaml");
        let generated = crd_yaml().unwrap();
        assert!(
            copy == generated,
            "deploy/chart/capstan/crds/helmreleases.yaml is stale: run `cargo run -p capstan -- crd > deploy/chart/capstan/crds/helmreleases.yaml`"
        );
    }
}
