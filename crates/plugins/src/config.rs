//! How a plugin is configured ([`PluginConfig`]): its world, file, limits and grants, as the
//! operator's configuration file lists plugins.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// Which plugin world a component must export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginWorld {
    /// `source-plugin`: exports `capstan:plugin/source`.
    Source,
    /// `backend-plugin`: exports `capstan:plugin/backend`.
    Backend,
    /// A Helm 4 `postrenderer/v1` plugin (a folder with `plugin.yaml` and `plugin.wasm`),
    /// named by HelmReleases in `postRenderers[].plugin`.
    #[serde(rename = "postrenderer")]
    PostRenderer,
}

impl PluginWorld {
    /// The WIT world name.
    pub fn world_name(self) -> &'static str {
        match self {
            PluginWorld::Source => "source-plugin",
            PluginWorld::Backend => "backend-plugin",
            PluginWorld::PostRenderer => "postrenderer",
        }
    }

    /// The interface this world exports, without package version.
    pub fn export_interface(self) -> &'static str {
        match self {
            PluginWorld::Source => "capstan:plugin/source",
            PluginWorld::Backend => "capstan:plugin/backend",
            PluginWorld::PostRenderer => "helm_plugin_main (Helm 4 postrenderer/v1)",
        }
    }
}

impl std::fmt::Display for PluginWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.world_name())
    }
}

/// Resource limits of every call into one plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginLimits {
    /// Maximum linear memory of one call's instance, in MiB.
    #[serde(default = "PluginLimits::default_memory_mib")]
    pub memory_mib: u32,
    /// Wall-clock budget of one call, in milliseconds.
    #[serde(default = "PluginLimits::default_timeout_ms")]
    pub timeout_ms: u64,
}

impl PluginLimits {
    fn default_memory_mib() -> u32 {
        256
    }
    fn default_timeout_ms() -> u64 {
        300_000
    }
    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.memory_mib as usize) << 20
    }
}

impl Default for PluginLimits {
    fn default() -> Self {
        PluginLimits {
            memory_mib: Self::default_memory_mib(),
            timeout_ms: Self::default_timeout_ms(),
        }
    }
}

/// What WASI gives a plugin beyond nothing. Everything is denied by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WasiGrants {
    /// Environment variables the plugin sees (explicit values, never inherited).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Let the plugin write to the operator's stderr (for debugging plugins).
    #[serde(default)]
    pub stderr: bool,
}

/// One component to load.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginConfig {
    /// Name used in the rest of the configuration, in logs and metrics.
    pub name: String,
    /// World the component must export.
    pub world: PluginWorld,
    /// Path of the `.wasm` component, or of a Helm 4 plugin's folder (or its `plugin.yaml`);
    /// relative paths are relative to the config file.
    pub path: PathBuf,
    /// Memory and time limits of each call.
    #[serde(default)]
    pub limits: PluginLimits,
    /// WASI grants.
    #[serde(default)]
    pub wasi: WasiGrants,
    /// Source kinds a `capstan:plugin@0.1` source component serves (`git` or
    /// `helm-repository`); 0.1 components cannot declare them themselves. Current
    /// components declare their kinds through `describe`, and this must stay empty.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// For a Helm 4 getter plugin (`path` is its folder or `plugin.yaml`): the host-name
    /// globs its HTTP may reach, replacing the `runtimeConfig.allowedHosts` it ships with.
    #[serde(default)]
    pub allowed_hosts: Option<Vec<String>>,
    /// For a backend: namespaces where it keeps release records besides each release's own
    /// (Helm 2's Tiller namespace, e.g. `kube-system`); every call of the backend may reach
    /// them.
    #[serde(default)]
    pub storage_namespaces: Vec<String>,
    /// For a `capstan:plugin@0.1` backend: the `compat-helm` component that merges values
    /// and packages charts for it, as the 0.1 host did. Default: `compat-helm.wasm` beside
    /// the backend, then in the installed plugin folders.
    #[serde(default)]
    pub compat_helm: Option<PathBuf>,
}
