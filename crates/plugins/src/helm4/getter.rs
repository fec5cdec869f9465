//! A Helm 4 `getter/v1` plugin served as Capstan source kinds: each protocol the plugin
//! declares becomes a kind of that name whose spec is `{url: "<protocol>://host/path"}`,
//! and whose credentials Secret may hold `username` / `password` (handed to the plugin as
//! Helm hands `--username` / `--password`).
//!
//! A getter only downloads, so `resolve` downloads and names the content by its sha256;
//! the bytes are kept until the `fetch` that follows, which then costs no second call.
//! Like Helm, each resolve downloads the whole archive: a getter has no cheaper question.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::metadata::Metadata;
use crate::bindings::types::{ChartArtifact, ChartMetadata, Error as PluginError};
use crate::kinds::{DeclaredKind, KindCapabilities};

/// Secret keys a getter kind may read: Helm's `--username` and `--password`.
pub const SECRET_KEYS: [&str; 2] = ["username", "password"];

/// How long downloaded bytes wait for the `fetch` after their `resolve`.
const KEEP_FOR_FETCH: Duration = Duration::from_secs(600);

/// Largest `Chart.yaml` read from an archive.
const MAX_CHART_YAML: u64 = 1 << 20;
/// Most inflated bytes read while looking for `Chart.yaml`.
const MAX_INFLATED_SCAN: u64 = 256 << 20;

/// Helm's getter options (Go field names: Helm marshals the struct without JSON tags).
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct GetterOptions<'a> {
    #[serde(rename = "URL")]
    url: &'a str,
    cert_file: &'a str,
    key_file: &'a str,
    #[serde(rename = "CAFile")]
    ca_file: &'a str,
    #[serde(rename = "UNTar")]
    untar: bool,
    #[serde(rename = "InsecureSkipVerifyTLS")]
    insecure_skip_verify_tls: bool,
    #[serde(rename = "PlainHTTP")]
    plain_http: bool,
    accept_header: &'a str,
    username: &'a str,
    password: &'a str,
    pass_credentials_all: bool,
    user_agent: &'a str,
    version: &'a str,
    /// Go `time.Duration`: nanoseconds.
    timeout: i64,
}

/// What Helm sends a `getter/v1` plugin.
#[derive(Serialize)]
struct GetterInput<'a> {
    href: &'a str,
    protocol: &'a str,
    options: GetterOptions<'a>,
}

/// Go decodes a `[]byte` from standard base64 or from an array of numbers.
#[derive(Deserialize)]
#[serde(untagged)]
enum GoBytes {
    Base64(String),
    Numbers(Vec<u8>),
}

#[derive(Deserialize)]
struct GetterOutput {
    data: Option<GoBytes>,
}

/// Credentials for one download.
#[derive(Default)]
pub struct GetterCredentials {
    /// `username`.
    pub username: String,
    /// `password`.
    pub password: String,
}

/// The JSON input of one `getter/v1` call for `href`, exactly as Helm 4 builds it.
pub fn input_json(href: &str, credentials: &GetterCredentials) -> Result<Vec<u8>, String> {
    let protocol = href
        .split_once("://")
        .map(|(scheme, _)| scheme)
        .ok_or_else(|| format!("`{href}` has no scheme"))?;
    let user_agent = concat!("Capstan/", env!("CARGO_PKG_VERSION"));
    let input = GetterInput {
        href,
        protocol,
        options: GetterOptions {
            url: href,
            cert_file: "",
            key_file: "",
            ca_file: "",
            untar: false,
            insecure_skip_verify_tls: false,
            plain_http: false,
            accept_header: "application/gzip,application/octet-stream",
            username: &credentials.username,
            password: &credentials.password,
            pass_credentials_all: false,
            user_agent,
            version: "",
            timeout: 0,
        },
    };
    serde_json::to_vec(&input).map_err(|e| e.to_string())
}

/// The file bytes in a getter's output.
pub fn output_bytes(output: &[u8]) -> Result<Vec<u8>, String> {
    let parsed: GetterOutput = serde_json::from_slice(output).map_err(|e| {
        format!(
            "the output is not getter/v1 JSON ({{\"data\": base64}}): {e} (output starts {:?})",
            String::from_utf8_lossy(&output[..output.len().min(80)])
        )
    })?;
    match parsed.data {
        Some(GoBytes::Base64(text)) => base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| format!("output field `data` is not standard base64: {e}")),
        Some(GoBytes::Numbers(bytes)) => Ok(bytes),
        None => Ok(Vec::new()),
    }
}

/// Escape `text` for use inside a regular expression.
fn regex_literal(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = !c.is_ascii_alphanumeric();
            escape.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}

/// The source kinds a getter serves: one per protocol.
pub fn declared_kinds(plugin: &str, metadata: &Metadata) -> Vec<DeclaredKind> {
    metadata
        .protocols
        .iter()
        .map(|protocol| DeclaredKind {
            name: protocol.clone(),
            summary: format!(
                "{protocol}:// URLs, through Helm 4 getter plugin `{}` {} (`{plugin}`)",
                metadata.name, metadata.version
            ),
            schema: serde_json::json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["url"],
                "properties": {
                    "url": {
                        "type": "string",
                        "description": format!("The chart archive's {protocol}:// URL, as given to `helm pull`."),
                        "pattern": format!("^{}://[^/?#]+/[^?#]+$", regex_literal(protocol)),
                    }
                }
            }),
            capabilities: KindCapabilities {
                git_url_field: None,
                http: Vec::new(),
                secret_keys: SECRET_KEYS.iter().map(|k| (*k).to_owned()).collect(),
            },
        })
        .collect()
}

/// `sha256:<hex>` of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChartYaml {
    name: Option<serde_yaml_ng::Value>,
    version: Option<serde_yaml_ng::Value>,
    app_version: Option<serde_yaml_ng::Value>,
}

fn yaml_text(value: Option<serde_yaml_ng::Value>) -> Option<String> {
    match value? {
        serde_yaml_ng::Value::String(s) => Some(s),
        serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
        serde_yaml_ng::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Name, version and appVersion from the top-level `Chart.yaml` of a chart archive
/// (`.tgz`), reading no further than needed and never more than a bounded amount.
pub fn chart_metadata(archive: &[u8]) -> Result<ChartMetadata, String> {
    use std::io::Read;
    if !archive.starts_with(&[0x1f, 0x8b]) {
        return Err(format!(
            "not a gzip chart archive ({} bytes, starting {:02x?})",
            archive.len(),
            &archive[..archive.len().min(4)]
        ));
    }
    let inflated = flate2::read::GzDecoder::new(archive).take(MAX_INFLATED_SCAN);
    let mut tar = tar::Archive::new(inflated);
    let entries = tar
        .entries()
        .map_err(|e| format!("not a tar archive: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("unreadable archive entry: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("archive entry with a bad path: {e}"))?
            .into_owned();
        let parts: Vec<_> = path.components().collect();
        if parts.len() != 2 || parts[1].as_os_str() != "Chart.yaml" {
            continue;
        }
        let mut text = String::new();
        entry
            .take(MAX_CHART_YAML)
            .read_to_string(&mut text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let chart: ChartYaml =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = yaml_text(chart.name)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("{}: `name` is missing", path.display()))?;
        let version = yaml_text(chart.version)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{}: `version` is missing", path.display()))?;
        return Ok(ChartMetadata {
            name,
            version,
            app_version: yaml_text(chart.app_version),
        });
    }
    Err("the archive holds no <chart>/Chart.yaml".into())
}

/// Downloads kept from `resolve` for the `fetch` that follows, by URL.
#[derive(Default)]
pub struct Downloads {
    by_url: Mutex<HashMap<String, (Instant, Arc<ChartArtifact>)>>,
}

impl Downloads {
    /// Keep `artifact` for `url` (replacing an older download), dropping stale entries.
    pub fn keep(&self, url: &str, artifact: Arc<ChartArtifact>) {
        let now = Instant::now();
        if let Ok(mut map) = self.by_url.lock() {
            map.retain(|_, (at, _)| now.duration_since(*at) < KEEP_FOR_FETCH);
            map.insert(url.to_owned(), (now, artifact));
        }
    }

    /// Take the download of `url` if its digest is `digest`.
    pub fn take(&self, url: &str, digest: &str) -> Option<Arc<ChartArtifact>> {
        let mut map = self.by_url.lock().ok()?;
        match map.get(url) {
            Some((_, artifact)) if artifact.digest == digest => {
                map.remove(url).map(|(_, artifact)| artifact)
            }
            _ => None,
        }
    }
}

/// An error value for a getter's failure.
pub fn getter_error(message: String) -> PluginError {
    PluginError {
        code: crate::bindings::types::ErrorCode::Unavailable,
        message,
        retryable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_matches_helms_getter_message() {
        let json = input_json(
            "demo://charts/web-1.0.0.tgz",
            &GetterCredentials {
                username: "u".into(),
                password: "p".into(),
            },
        )
        .unwrap();
        let text = String::from_utf8(json).unwrap();
        assert!(
            text.starts_with(
                r#"{"href":"demo://charts/web-1.0.0.tgz","protocol":"demo","options":{"URL":"demo://charts/web-1.0.0.tgz","CertFile":"","KeyFile":"","CAFile":"","UNTar":false,"InsecureSkipVerifyTLS":false,"PlainHTTP":false,"AcceptHeader":"application/gzip,application/octet-stream","Username":"u","Password":"p","PassCredentialsAll":false,"UserAgent":"Capstan/"#
            ),
            "{text}"
        );
        assert!(text.ends_with(r#","Version":"","Timeout":0}}"#), "{text}");
    }

    #[test]
    fn output_decodes_like_go_byte_slices() {
        assert_eq!(output_bytes(br#"{"data":"aGVsbG8="}"#).unwrap(), b"hello");
        assert_eq!(output_bytes(br#"{"data":[104,105]}"#).unwrap(), b"hi");
        assert!(
            output_bytes(br#"{"data":"***"}"#)
                .unwrap_err()
                .contains("base64")
        );
        assert!(
            output_bytes(b"nope")
                .unwrap_err()
                .contains("getter/v1 JSON")
        );
    }

    #[test]
    fn kinds_take_the_protocol_names_and_pin_the_scheme() {
        let metadata = super::super::metadata::parse(
            "apiVersion: v1\ntype: getter/v1\nname: g\nversion: 1.0.0\nruntime: extism/v1\nconfig: {protocols: [mirror, s3+x]}\n",
        )
        .unwrap();
        let kinds = declared_kinds("g", &metadata);
        assert_eq!(kinds[0].name, "mirror");
        assert_eq!(
            kinds[1].schema["properties"]["url"]["pattern"],
            r"^s3\+x://[^/?#]+/[^?#]+$"
        );
        assert_eq!(kinds[0].capabilities.secret_keys, ["username", "password"]);
    }

    fn archive(files: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (path, text) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder
                .append_data(&mut header, path, text.as_bytes())
                .unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn chart_metadata_comes_from_the_top_level_chart_yaml() {
        let bytes = archive(&[
            ("web/charts/dep/Chart.yaml", "name: dep\nversion: 9.9.9\n"),
            (
                "web/Chart.yaml",
                "apiVersion: v2\nname: web\nversion: 1.2.3\nappVersion: 4.5\n",
            ),
        ]);
        let meta = chart_metadata(&bytes).unwrap();
        assert_eq!(
            (meta.name.as_str(), meta.version.as_str()),
            ("web", "1.2.3")
        );
        assert_eq!(meta.app_version.as_deref(), Some("4.5"));
        let missing = archive(&[("web/values.yaml", "a: 1\n")]);
        assert!(chart_metadata(&missing).unwrap_err().contains("Chart.yaml"));
        assert!(
            chart_metadata(b"<html>")
                .unwrap_err()
                .contains("not a gzip")
        );
        let no_version = archive(&[("web/Chart.yaml", "name: web\n")]);
        assert!(
            chart_metadata(&no_version)
                .unwrap_err()
                .contains("`version`")
        );
    }
}
