//! The HelmRelease custom resource and its spec: release options, values sources,
//! install, upgrade, test, rollback and uninstall settings.

use kube::CustomResource;
use std::collections::BTreeMap;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::chart::{ChartSource, HelmVersion, NamespacedRef};
use crate::post_render::{PatchTarget, PostRenderStrategy, PostRenderer};
use crate::remediation::RemediationStrategy;
use crate::schema::free_form_object;
use crate::status::HelmReleaseStatus;

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
    /// Where the chart comes from: a git repository (`git`), a Helm HTTP repository
    /// (`repository`), or a kind a source plugin serves (`source`).
    pub chart: ChartSource,
    /// Service account (in this namespace) the release's cluster calls (objects, hooks,
    /// waits, records, `lookup`, `createNamespace`) run as, through impersonation; default
    /// the configuration's `defaultServiceAccount`, else the operator's own identity.
    /// `valuesFrom` and chart credentials are read as the operator.
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
    /// Helm 3 backends only (Helm 2 keeps every record in Tiller's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub storage_namespace: Option<String>,
    /// Helm version whose backend serves this release (`backends.v2`/`backends.v3` in the
    /// operator configuration); ignored when `backend` is set; unset: the configuration's
    /// default backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm_version: Option<HelmVersion>,
    /// Backend plugin by its configured name; default by `helmVersion`, then the
    /// configuration's default backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Wait for the release's resources to become ready; default: `rollback.enable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Budget of each install, upgrade and uninstall (hooks and waits included), in seconds;
    /// default 300. Also the default of `rollback.timeout`, `test.timeout` and
    /// `uninstall.timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout: Option<i64>,
    /// Revisions kept (older ones are deleted on upgrade and rollback); default 10; 0 keeps
    /// all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_history: Option<i64>,
    /// On upgrade, replace (delete and create again) objects that cannot be changed in
    /// place (`helm upgrade --force`); the same as `upgrade.force`.
    #[serde(default)]
    pub force_upgrade: bool,
    /// Do not install the CRDs of the chart's `crds/` folder (`install.crds` wins when set).
    #[serde(default, rename = "skipCRDs")]
    pub skip_crds: bool,
    /// Accepted for compatibility: Capstan always computes values from this spec alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_values: Option<bool>,
    /// Rolling back a failed upgrade (the Helm Operator's `rollback`).
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
    /// Values from ConfigMaps, Secrets, URLs and chart files, merged in order under
    /// `values`.
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
    /// Which documents the post-renderers and `commonMetadata` see: `combined` (hooks and
    /// templates in one stream, Helm 4's default), `separate` (two streams) or `nohooks`
    /// (Helm 3: hooks are left alone). Default `combined`.
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

/// Rolling back failed upgrades (Flux Helm Operator's `rollback`).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rollback {
    /// Roll back a failed upgrade (one that left a `failed` revision, or whose tests
    /// failed) to the last deployed revision; `upgrade.remediation.strategy` wins when set.
    #[serde(default)]
    pub enable: bool,
    /// Retry the upgrade after a rollback; without it a rolled-back release stays
    /// `Stalled` until the spec changes.
    #[serde(default)]
    pub retry: bool,
    /// Upgrade retries after rollbacks; default 5; 0 is unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_retries: Option<i64>,
    /// Replace (delete and create again) objects that cannot be changed in place during the
    /// rollback.
    #[serde(default)]
    pub force: bool,
    /// Accepted for compatibility and ignored (`helm rollback --recreate-pods`, removed in
    /// Helm 4).
    #[serde(default)]
    pub recreate: bool,
    /// Do not run the `pre-rollback` and `post-rollback` hooks.
    #[serde(default)]
    pub disable_hooks: bool,
    /// Budget of the rollback, in seconds; default `spec.timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<i64>,
    /// Wait for the rolled-back resources to become ready; default false.
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
    /// What to do when an install fails: how often it is retried (`retries`; `strategy`
    /// applies to upgrades only). A failed install is removed (atomic install).
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
    /// Accepted for Flux v2 manifests; no effect: installs are atomic (a failed install is
    /// removed), and an atomic install waits for its objects, as `helm install --atomic`.
    #[serde(default)]
    pub disable_wait: bool,
}

/// What to do with the CRDs of a chart's `crds/` folder (Flux v2's `crds` policies):
/// `Skip`, `Create` (missing ones only) or `CreateReplace`. Default on install `Create`
/// (`Skip` with `skipCRDs`), on upgrade `Skip`.
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

/// How the release's objects' dependents are deleted on uninstall (Kubernetes' deletion
/// propagation, `helm uninstall --cascade`): `background` (default), `foreground` or
/// `orphan`.
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
    /// What to do when an upgrade fails: `retries` and `strategy`.
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

/// Retries of a failed action. A failed install is removed (atomic install); a failed
/// upgrade is remediated as `strategy` says (default: rolled back when `rollback.enable` is
/// set).
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Remediation {
    /// Attempts after the first failure before the release is `Stalled`: default 0 (Flux
    /// v2's meaning); -1 retries forever. Without a `remediation` block, failures are
    /// retried forever with backoff (the Flux Helm Operator's meaning). An upgrade rolled
    /// back under `rollback.enable` follows `rollback.retry` and `maxRetries` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = -1))]
    pub retries: Option<i64>,
    /// Upgrades only (Flux v2): what a failed upgrade is remediated with before it is
    /// retried: `rollback` to the last deployed revision, or `uninstall` the release (the
    /// next attempt installs it afresh); default: as `rollback.enable` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<RemediationStrategy>,
}

/// One source of values: exactly one of `configMapKeyRef`, `secretKeyRef`,
/// `externalSourceRef` and `chartFileRef`, and optionally `targetPath`.
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
    /// Object namespace; default the HelmRelease's (another only with the configuration's
    /// `allowCrossNamespaceRefs`).
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
