//! Where a release's chart comes from: git, a Helm repository, or a source plugin.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::names::DEFAULT_GIT_REF;
use crate::schema::free_form_object;

/// Helm major version of the backend that serves the release: `v2` (the configuration's
/// `backends.v2`) or `v3` (`backends.v3`); ignored when `backend` is set; unset: the
/// configuration's default backend.
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
    /// Git repository URL (`https://`, `http://`, `ssh://`, `git://`, `file://` or
    /// `git@host:org/repo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    /// Branch, tag or commit; default `master`.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// Chart folder inside the git repository; default the repository's root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Secret with git credentials (Flux's keys): `username`/`password` (HTTPS), or
    /// `identity` (an SSH private key) with `known_hosts` (SSH host keys are checked
    /// against it); `ca.crt` to trust for HTTPS. For a Helm repository, used when
    /// `chartPullSecret` is not set.
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
    /// Helm repository URL, `https://` or `http://` (where `index.yaml` lives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Chart name in the Helm repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Chart version or SemVer range in the Helm repository; empty: the latest stable
    /// version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Secret with Helm repository credentials: `username`/`password` (basic auth), and
    /// `ca.crt` to trust for HTTPS.
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
    /// Object namespace; default the HelmRelease's (another only with the configuration's
    /// `allowCrossNamespaceRefs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}
