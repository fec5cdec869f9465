//! The operator's configuration file: which plugin components to load, their limits and
//! grants, and which backend serves which Helm version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use capstan_plugins::config::{PluginConfig, PluginLimits, PluginWorld, WasiGrants};

/// Errors reading or validating a configuration file. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {cause}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The file is not valid YAML or does not have the expected shape.
    #[error("invalid config file {path}: {cause}")]
    Parse {
        /// The config file.
        path: PathBuf,
        /// The parse error, with line and column.
        cause: serde_yaml_ng::Error,
    },
    /// The file parsed but says something inconsistent.
    #[error("invalid config file {path}: {message}")]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// Which backend serves which release.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackendSelection {
    /// Backend for releases that name none.
    pub default: Option<String>,
    /// Backend for `helmVersion: v2`.
    pub v2: Option<String>,
    /// Backend for `helmVersion: v3`.
    pub v3: Option<String>,
}

/// Limits and grants of HTTP for source plugins (`sources.http`; `sources.helmRepository`
/// is read as the same thing, its name before source kinds were open).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpConfig {
    /// Hosts (`name` or `name:port`) source plugins may reach besides the origins of the
    /// spec they handle (e.g. a CDN serving chart archives). Never sent credentials.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Largest shared document (e.g. a repository's `index.yaml`) accepted, in MiB.
    #[serde(default = "HttpConfig::default_max_index_mib")]
    pub max_index_mib: u64,
    /// Largest other response (e.g. a chart archive) accepted, in MiB.
    #[serde(default = "HttpConfig::default_max_chart_mib")]
    pub max_chart_mib: u64,
    /// Timeout of each HTTP request (connect, first byte, between bytes), in milliseconds.
    #[serde(default = "HttpConfig::default_timeout_ms")]
    pub timeout_ms: u64,
}

impl HttpConfig {
    fn default_max_index_mib() -> u64 {
        32
    }
    fn default_max_chart_mib() -> u64 {
        100
    }
    fn default_timeout_ms() -> u64 {
        60_000
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allow_hosts: Vec::new(),
            max_index_mib: Self::default_max_index_mib(),
            max_chart_mib: Self::default_max_chart_mib(),
            timeout_ms: Self::default_timeout_ms(),
        }
    }
}

/// Settings of chart sources (`sources`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourcesConfig {
    /// HTTP limits and extra hosts of source plugins.
    #[serde(default, alias = "helmRepository")]
    pub http: HttpConfig,
    /// Which plugin serves a source kind that more than one loaded plugin declares
    /// (kind → plugin name).
    #[serde(default)]
    pub kinds: BTreeMap<String, String>,
    /// What source URLs may reach besides public addresses.
    #[serde(default)]
    pub egress: EgressConfig,
}

/// The egress guard's exceptions (`sources.egress`; see [`crate::capabilities::egress`]).
/// By default sources reach public addresses only and no local path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EgressConfig {
    /// Networks (CIDR, or one address) sources may reach although they are loopback,
    /// link-local, private or otherwise not public, e.g. `10.20.0.0/16` for an in-house
    /// chart repository.
    #[serde(default)]
    pub allow_networks: Vec<String>,
    /// Let git sources read repositories on the operator's own disk (`file://` URLs).
    #[serde(default)]
    pub allow_local_paths: bool,
}

impl EgressConfig {
    /// The policy this configures; `Err` names the entry that is not a network.
    pub fn policy(&self) -> Result<crate::capabilities::egress::EgressPolicy, String> {
        use crate::capabilities::egress::{EgressPolicy, Network};
        let networks = self
            .allow_networks
            .iter()
            .enumerate()
            .map(|(index, text)| {
                Network::parse(text)
                    .map_err(|e| format!("sources.egress.allowNetworks[{index}]: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EgressPolicy::allowing(networks, self.allow_local_paths))
    }
}

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Where compiled components are cached; defaults to `$XDG_CACHE_HOME/capstan/components`.
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// Components to load.
    #[serde(default)]
    pub plugins: Vec<PluginConfig>,
    /// Backend selection.
    #[serde(default)]
    pub backends: BackendSelection,
    /// Chart source settings.
    #[serde(default)]
    pub sources: SourcesConfig,
    /// Let a HelmRelease point at Secrets and ConfigMaps in other namespaces (chart
    /// credentials, `valuesFrom`). Off by default: in a cluster shared by tenants, a
    /// release may only read what its own namespace holds.
    #[serde(default)]
    pub allow_cross_namespace_refs: bool,
    /// Service account (in each release's namespace) a HelmRelease naming none in
    /// `spec.serviceAccountName` acts as (lock-down mode); unset: the operator's identity.
    #[serde(default)]
    pub default_service_account: Option<String>,
    /// Linear memory all plugin calls in flight may hold together, in MiB: the guests'
    /// memory lives in the operator process. A call whose growth would pass it fails
    /// (and is retried later). Default 2048.
    #[serde(default = "Config::default_plugin_memory_budget_mib")]
    pub plugin_memory_budget_mib: usize,
}

impl Config {
    fn default_plugin_memory_budget_mib() -> usize {
        crate::plugins::DEFAULT_MEMORY_BUDGET_MIB
    }

    /// Read, parse and validate a config file; relative plugin paths are resolved against
    /// the file's folder.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
            path: path.to_owned(),
            cause,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, path, base)
    }

    /// Parse and validate config text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path, base: &Path) -> Result<Config, ConfigError> {
        let mut config: Config =
            serde_yaml_ng::from_str(text).map_err(|cause| ConfigError::Parse {
                path: origin.to_owned(),
                cause,
            })?;
        for plugin in &mut config.plugins {
            if plugin.path.is_relative() {
                plugin.path = base.join(&plugin.path);
            }
            if let Some(compat) = plugin.compat_helm.as_mut()
                && compat.is_relative()
            {
                *compat = base.join(&*compat);
            }
        }
        if let Some(dir) = &config.cache_dir
            && dir.is_relative()
        {
            config.cache_dir = Some(base.join(dir));
        }
        config.validate().map_err(|message| ConfigError::Invalid {
            path: origin.to_owned(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        self.sources.egress.policy()?;
        if self.plugin_memory_budget_mib == 0 {
            return Err("pluginMemoryBudgetMib must be greater than zero".into());
        }
        let mut names = BTreeSet::new();
        for (index, plugin) in self.plugins.iter().enumerate() {
            if plugin.name.is_empty() {
                return Err(format!("plugins[{index}].name is empty"));
            }
            if !names.insert(plugin.name.as_str()) {
                return Err(format!(
                    "plugins[{index}].name `{}` is used by another plugin",
                    plugin.name
                ));
            }
            if plugin.limits.memory_mib == 0 || plugin.limits.timeout_ms == 0 {
                return Err(format!(
                    "plugins[{index}].limits of `{}` must be greater than zero",
                    plugin.name
                ));
            }
            if !plugin.storage_namespaces.is_empty() && plugin.world != PluginWorld::Backend {
                return Err(format!(
                    "plugins[{index}].storageNamespaces of `{}`: only backends keep release records",
                    plugin.name
                ));
            }
            if let Some(bad) = plugin.storage_namespaces.iter().find(|n| {
                n.is_empty()
                    || !n
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            }) {
                return Err(format!(
                    "plugins[{index}].storageNamespaces of `{}`: `{bad}` is not a namespace name",
                    plugin.name
                ));
            }
        }
        let http = &self.sources.http;
        if http.max_index_mib == 0 || http.max_chart_mib == 0 || http.timeout_ms == 0 {
            return Err(
                "sources.http: maxIndexMib, maxChartMib and timeoutMs must be greater than zero"
                    .into(),
            );
        }
        for host in &http.allow_hosts {
            crate::capabilities::http::HostPattern::parse(host)
                .map_err(|e| format!("sources.http.allowHosts: {e}"))?;
        }
        for (kind, plugin) in &self.sources.kinds {
            match self.plugins.iter().find(|p| &p.name == plugin) {
                None => {
                    return Err(format!(
                        "sources.kinds.{kind} names `{plugin}`, which is not a configured plugin"
                    ));
                }
                Some(p) if p.world != PluginWorld::Source => {
                    return Err(format!(
                        "sources.kinds.{kind} names `{plugin}`, which is a {} plugin, not a source",
                        p.world
                    ));
                }
                Some(_) => {}
            }
        }
        let selections = [
            ("backends.default", &self.backends.default),
            ("backends.v2", &self.backends.v2),
            ("backends.v3", &self.backends.v3),
        ];
        for (field, selected) in selections {
            let Some(name) = selected else { continue };
            match self.plugins.iter().find(|p| &p.name == name) {
                None => {
                    return Err(format!(
                        "{field} names `{name}`, which is not a configured plugin"
                    ));
                }
                Some(p) if p.world != PluginWorld::Backend => {
                    return Err(format!(
                        "{field} names `{name}`, which is a {} plugin, not a backend",
                        p.world
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("capstan.yaml"), Path::new("/etc/capstan"))
    }

    #[test]
    fn resolves_relative_paths_and_fills_defaults() {
        let config = parse(
            "plugins:\n- name: helm3\n  world: backend\n  path: plugins/helm3.wasm\nbackends:\n  default: helm3\n",
        )
        .unwrap();
        assert_eq!(
            config.plugins[0].path,
            Path::new("/etc/capstan/plugins/helm3.wasm")
        );
        assert_eq!(config.plugins[0].limits, PluginLimits::default());
        assert_eq!(config.backends.default.as_deref(), Some("helm3"));
    }

    #[test]
    fn parse_error_names_file_and_line() {
        let error = parse("plugins:\n- name: a\n  world: sideways\n  path: a.wasm\n").unwrap_err();
        let text = error.to_string();
        assert!(text.contains("capstan.yaml"), "{text}");
        assert!(text.contains("line 3"), "{text}");
        assert!(text.contains("sideways"), "{text}");
    }

    #[test]
    fn unknown_field_is_refused() {
        let error = parse("plugins:\n- name: a\n  world: source\n  path: a.wasm\n  memory: 3\n")
            .unwrap_err();
        assert!(
            error.to_string().contains("unknown field `memory`"),
            "{error}"
        );
    }

    #[test]
    fn storage_namespaces_are_for_backends_and_must_be_namespace_names() {
        let ok = parse(
            "plugins:\n- {name: helm2, world: backend, path: b.wasm, storageNamespaces: [kube-system]}\n",
        )
        .unwrap();
        assert_eq!(ok.plugins[0].storage_namespaces, ["kube-system"]);
        let on_source = parse(
            "plugins:\n- {name: git, world: source, path: a.wasm, storageNamespaces: [kube-system]}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            on_source.contains("plugins[0].storageNamespaces of `git`: only backends"),
            "{on_source}"
        );
        let bad_name = parse(
            "plugins:\n- {name: helm2, world: backend, path: b.wasm, storageNamespaces: [Kube_System]}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad_name.contains("`Kube_System` is not a namespace name"),
            "{bad_name}"
        );
    }

    #[test]
    fn duplicate_names_and_bad_backend_selection_are_refused() {
        let duplicate = parse(
            "plugins:\n- {name: a, world: source, path: a.wasm}\n- {name: a, world: backend, path: b.wasm}\n",
        )
        .unwrap_err();
        assert!(
            duplicate.to_string().contains("plugins[1].name `a`"),
            "{duplicate}"
        );
        let not_backend =
            parse("plugins:\n- {name: git, world: source, path: a.wasm}\nbackends: {v3: git}\n")
                .unwrap_err();
        assert!(
            not_backend
                .to_string()
                .contains("backends.v3 names `git`, which is a source-plugin plugin"),
            "{not_backend}"
        );
        let missing = parse("backends: {default: nope}\n").unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("backends.default names `nope`"),
            "{missing}"
        );
    }

    /// The configuration shipped in `deploy/` (manifests and chart) is valid, points into
    /// the image, and names the plugins `capstan run` looks for by default.
    #[test]
    fn deploy_configs_are_valid() {
        let manifest: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(include_str!("../../deploy/manifests/30-config.yaml")).unwrap();
        let text = manifest["data"]["capstan.yaml"].as_str().unwrap();
        let values: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(include_str!("../../deploy/chart/capstan/values.yaml"))
                .unwrap();
        let chart_text = serde_yaml_ng::to_string(&values["config"]).unwrap();
        for (origin, text) in [("manifest", text), ("chart", chart_text.as_str())] {
            let config = Config::parse(text, Path::new(origin), Path::new("/etc/capstan"))
                .unwrap_or_else(|e| panic!("{origin}: {e}"));
            assert_eq!(
                config.cache_dir.as_deref(),
                Some(Path::new("/var/cache/capstan")),
                "{origin}"
            );
            for plugin in &config.plugins {
                assert!(
                    plugin.path.starts_with("/usr/lib/capstan/plugins/"),
                    "{origin}: {}",
                    plugin.path.display()
                );
            }
            let names: Vec<_> = config.plugins.iter().map(|p| p.name.as_str()).collect();
            for default in ["git", "helm-repo"] {
                assert!(names.contains(&default), "{origin}: {names:?}");
            }
        }
        assert_eq!(
            Config::parse(text, Path::new("m"), Path::new("/")).unwrap(),
            Config::parse(&chart_text, Path::new("m"), Path::new("/")).unwrap(),
            "deploy/manifests/30-config.yaml and the chart's values.yaml config differ"
        );
    }
}

#[cfg(test)]
mod source_kind_routes {
    use super::*;

    #[test]
    fn kind_routes_must_name_a_configured_source_plugin() {
        let parse = |text: &str| {
            Config::parse(text, Path::new("capstan.yaml"), Path::new("/etc/capstan"))
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let plugins = "plugins:\n- {name: oci, world: source, path: a.wasm}\n- {name: helm3, world: backend, path: b.wasm}\n";
        let unknown = parse(&format!("{plugins}sources:\n  kinds: {{oci: nobody}}\n"));
        assert!(
            unknown.contains("sources.kinds.oci names `nobody`, which is not a configured plugin"),
            "{unknown}"
        );
        let backend = parse(&format!("{plugins}sources:\n  kinds: {{oci: helm3}}\n"));
        assert!(
            backend.contains("names `helm3`, which is a backend-plugin plugin, not a source"),
            "{backend}"
        );
    }
}
