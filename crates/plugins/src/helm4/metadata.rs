//! `plugin.yaml` of a Helm 4 plugin (`apiVersion: v1`, HIP-0026), read with Helm's rules:
//! unknown top-level keys and unknown `config` keys are errors, `runtimeConfig` is read
//! leniently. Only `getter/v1` and `postrenderer/v1` plugins on the `extism/v1` runtime are
//! loadable here; every other shape is refused with the field that makes it so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The plugin type Capstan serves as a chart source.
pub const GETTER_V1: &str = "getter/v1";
/// The plugin type Capstan runs as a release's post-renderer.
pub const POSTRENDERER_V1: &str = "postrenderer/v1";
/// The runtime Capstan runs.
pub const EXTISM_V1: &str = "extism/v1";
/// Entry function called when `runtimeConfig.entryFuncName` is empty (as in Helm).
pub const DEFAULT_ENTRY: &str = "helm_plugin_main";

/// A readable, loadable `plugin.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `name`.
    pub name: String,
    /// `version` (SemVer).
    pub version: String,
    /// `type`: [`GETTER_V1`] or [`POSTRENDERER_V1`].
    pub plugin_type: &'static str,
    /// `config.protocols`: the URL schemes a getter serves (none for a post-renderer).
    pub protocols: Vec<String>,
    /// `runtimeConfig`.
    pub runtime: RuntimeConfig,
}

/// `runtimeConfig` of an `extism/v1` plugin, with Helm's meaning of each zero.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeConfig {
    /// `memory`.
    pub memory: MemoryConfig,
    /// `config`: what the guest reads with `config_get`.
    pub config: BTreeMap<String, String>,
    /// `allowedHosts`: host-name globs the guest may reach over HTTP (none: no HTTP).
    pub allowed_hosts: Vec<String>,
    /// `fileSystem`.
    pub file_system: FileSystemConfig,
    /// `timeout`, milliseconds; 0 is none.
    pub timeout: u64,
    /// `hostFunctions`: Helm registers none, so any entry fails (here: at load).
    pub host_functions: Vec<String>,
    /// `entryFuncName`; empty means [`DEFAULT_ENTRY`].
    pub entry_func_name: String,
}

/// `runtimeConfig.memory`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemoryConfig {
    /// Largest linear memory, in 64 KiB pages; 0 is no limit of the plugin's own.
    pub max_pages: u64,
    /// Largest HTTP response body; 0 (Helm's default) allows only empty bodies.
    pub max_http_response_bytes: u64,
    /// Largest total of `var_set` values; 0 (Helm's default) disables vars.
    pub max_var_bytes: u64,
}

/// `runtimeConfig.fileSystem`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FileSystemConfig {
    /// A fresh temporary folder at `/tmp` for each call.
    pub create_temp_dir: bool,
}

impl RuntimeConfig {
    /// The function the host calls.
    pub fn entry(&self) -> &str {
        if self.entry_func_name.is_empty() {
            DEFAULT_ENTRY
        } else {
            &self.entry_func_name
        }
    }
}

/// Why a `plugin.yaml` cannot be loaded. Each names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct MetadataError {
    /// The `plugin.yaml`.
    pub path: PathBuf,
    /// What is wrong (with line and column when the YAML parser gives them).
    pub message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawMetadata {
    api_version: Option<String>,
    name: Option<String>,
    #[serde(rename = "type")]
    plugin_type: Option<String>,
    runtime: Option<String>,
    version: Option<String>,
    #[serde(rename = "sourceURL")]
    #[allow(dead_code)]
    source_url: Option<String>,
    config: Option<serde_yaml_ng::Value>,
    runtime_config: Option<serde_yaml_ng::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetterConfig {
    #[serde(default)]
    protocols: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PostRendererConfig {}

/// Strict SemVer 2: `MAJOR.MINOR.PATCH`, optional `-pre` and `+build`.
fn is_semver(text: &str) -> bool {
    let (core, _build) = text.split_once('+').unwrap_or((text, ""));
    let (core, pre) = core
        .split_once('-')
        .map_or((core, None), |(c, p)| (c, Some(p)));
    let numbers: Vec<&str> = core.split('.').collect();
    let number_ok = |n: &&str| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    let ident_ok =
        |i: &str| !i.is_empty() && i.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    numbers.len() == 3
        && numbers.iter().all(number_ok)
        && pre.is_none_or(|p| p.split('.').all(ident_ok))
        && text
            .split_once('+')
            .is_none_or(|(_, b)| b.split('.').all(ident_ok))
}

/// Read and check `path` (a `plugin.yaml`).
pub fn read(path: &Path) -> Result<Metadata, MetadataError> {
    let fail = |message: String| MetadataError {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    parse(&text).map_err(fail)
}

/// Check the text of a `plugin.yaml`.
pub fn parse(text: &str) -> Result<Metadata, String> {
    let raw: RawMetadata = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    match raw.api_version.as_deref() {
        Some("v1") => {}
        None => {
            return Err(
                "apiVersion is missing: this is a legacy Helm plugin (a subprocess); only `apiVersion: v1` plugins with `runtime: extism/v1` can be sandboxed".into(),
            );
        }
        Some(other) => return Err(format!("apiVersion `{other}` is not `v1`")),
    }
    let name = raw.name.unwrap_or_default();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "name `{name}` must be letters, digits, `_` or `-` (and not empty)"
        ));
    }
    let version = raw.version.unwrap_or_default();
    if !is_semver(&version) {
        return Err(format!("version `{version}` is not a SemVer version"));
    }
    let runtime = raw.runtime.unwrap_or_default();
    if runtime != EXTISM_V1 {
        return Err(format!(
            "runtime `{runtime}` cannot be sandboxed: Capstan runs only `{EXTISM_V1}` plugins (subprocess plugins run host programs)"
        ));
    }
    let plugin_type = match raw.plugin_type.unwrap_or_default().as_str() {
        GETTER_V1 => GETTER_V1,
        POSTRENDERER_V1 => POSTRENDERER_V1,
        other => {
            return Err(format!(
                "type `{other}` is not served: Capstan loads `{GETTER_V1}` plugins (as chart sources) and `{POSTRENDERER_V1}` plugins (as post-renderers)"
            ));
        }
    };
    let protocols = if plugin_type == GETTER_V1 {
        let config: GetterConfig = match raw.config {
            Some(value) => serde_yaml_ng::from_value(value).map_err(|e| format!("config: {e}"))?,
            None => GetterConfig {
                protocols: Vec::new(),
            },
        };
        if config.protocols.is_empty() || config.protocols.iter().any(String::is_empty) {
            return Err("config.protocols must list at least one URL scheme, none empty".into());
        }
        config.protocols
    } else {
        // Helm's `postrenderer/v1` config has no fields, and unknown ones are errors.
        if let Some(value) = raw.config {
            let _: PostRendererConfig =
                serde_yaml_ng::from_value(value).map_err(|e| format!("config: {e}"))?;
        }
        Vec::new()
    };
    let runtime: RuntimeConfig = match raw.runtime_config {
        Some(value) => {
            serde_yaml_ng::from_value(value).map_err(|e| format!("runtimeConfig: {e}"))?
        }
        None => RuntimeConfig::default(),
    };
    if let Some(function) = runtime.host_functions.first() {
        return Err(format!(
            "runtimeConfig.hostFunctions: host function `{function}` is not provided (Helm provides none either)"
        ));
    }
    Ok(Metadata {
        name,
        version,
        plugin_type,
        protocols,
        runtime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GETTER: &str = "apiVersion: v1\ntype: getter/v1\nname: demo\nversion: 0.1.0\nruntime: extism/v1\nconfig:\n  protocols: [demo]\n";

    #[test]
    fn a_getter_reads_with_helms_defaults() {
        let meta = parse(GETTER).unwrap();
        assert_eq!(meta.protocols, ["demo"]);
        assert_eq!(meta.runtime.entry(), "helm_plugin_main");
        assert_eq!(meta.runtime.memory.max_http_response_bytes, 0);
        let full = format!(
            "{GETTER}runtimeConfig:\n  memory: {{maxPages: 8, maxHttpResponseBytes: 100}}\n  allowedHosts: ['*.example.com']\n  config: {{a: b}}\n  timeout: 500\n  unknownKey: ignored\n"
        );
        let meta = parse(&full).unwrap();
        assert_eq!(meta.runtime.memory.max_pages, 8);
        assert_eq!(meta.runtime.allowed_hosts, ["*.example.com"]);
        assert_eq!(meta.runtime.config["a"], "b");
        assert_eq!(meta.runtime.timeout, 500);
    }

    #[test]
    fn what_cannot_be_served_is_refused_naming_the_field() {
        let cases = [
            (GETTER.replace("apiVersion: v1\n", ""), "legacy Helm plugin"),
            (
                GETTER.replace("extism/v1", "subprocess"),
                "runtime `subprocess`",
            ),
            (GETTER.replace("getter/v1", "cli/v1"), "type `cli/v1`"),
            (
                GETTER.replace("getter/v1", "postrenderer/v1"),
                "config: unknown field `protocols`",
            ),
            (GETTER.replace("0.1.0", "1.0"), "version `1.0`"),
            (GETTER.replace("name: demo", "name: de mo"), "name `de mo`"),
            (GETTER.replace("[demo]", "[]"), "config.protocols"),
            (format!("{GETTER}extra: 1\n"), "unknown field `extra`"),
            (
                GETTER.replace("protocols: [demo]", "protocols: [demo]\n  other: 1"),
                "config: unknown field `other`",
            ),
            (
                format!("{GETTER}runtimeConfig:\n  hostFunctions: [kv_get]\n"),
                "host function `kv_get`",
            ),
        ];
        for (text, expected) in cases {
            let error = parse(&text).unwrap_err();
            assert!(error.contains(expected), "{expected:?} not in {error:?}");
        }
    }

    #[test]
    fn semver_is_strict() {
        for good in ["0.1.0", "1.2.3-rc.1", "1.2.3+build.5", "10.20.30-alpha-1+x"] {
            assert!(is_semver(good), "{good}");
        }
        for bad in ["1.2", "01.2.3", "1.2.3-", "v1.2.3", "1.2.3-a..b", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}
