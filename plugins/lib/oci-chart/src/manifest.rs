//! Helm chart artifacts in OCI registries: the manifest (one config blob, Chart.yaml as
//! JSON, and one chart layer, the packaged chart) and content digests.

use serde::Deserialize;
use sha2::{Digest as _, Sha256, Sha512};

/// Manifest media type asked for and expected.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of the config blob of a Helm chart.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Media type of the chart layer.
pub const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
/// Chart layer media type of charts pushed by Helm before 3.7; Helm still reads it.
pub const LEGACY_CHART_LAYER_MEDIA_TYPE: &str = "application/tar+gzip";

/// A content descriptor.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Descriptor {
    /// Media type of the content.
    #[serde(rename = "mediaType", default)]
    pub media_type: String,
    /// `algorithm:hex` digest of the content.
    pub digest: String,
    /// Size in bytes.
    pub size: u64,
}

#[derive(Deserialize)]
struct RawManifest {
    #[serde(rename = "schemaVersion")]
    schema_version: Option<u32>,
    #[serde(rename = "mediaType")]
    media_type: Option<String>,
    config: Option<Descriptor>,
    #[serde(default)]
    layers: Vec<Descriptor>,
    manifests: Option<serde_json::Value>,
}

/// The two blobs of a Helm chart artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartManifest {
    /// The config blob (Chart.yaml as JSON).
    pub config: Descriptor,
    /// The packaged chart.
    pub chart: Descriptor,
    /// The chart layer has the pre-Helm-3.7 media type.
    pub legacy_layer: bool,
}

/// Reads an OCI image manifest as a Helm chart artifact; the error says what was found
/// instead (without naming the artifact, which the caller adds).
pub fn chart_manifest(bytes: &[u8]) -> Result<ChartManifest, String> {
    let raw: RawManifest = serde_json::from_slice(bytes)
        .map_err(|e| format!("the manifest is not valid JSON: {e}"))?;
    if raw.manifests.is_some() {
        return Err(format!(
            "this is an image index ({}), not a Helm chart manifest",
            raw.media_type.as_deref().unwrap_or("no mediaType")
        ));
    }
    if raw.schema_version != Some(2) {
        return Err(format!(
            "unsupported manifest schemaVersion {} (expected 2)",
            raw.schema_version
                .map_or("(none)".to_owned(), |v| v.to_string())
        ));
    }
    if let Some(media_type) = &raw.media_type
        && media_type != MANIFEST_MEDIA_TYPE
    {
        return Err(format!(
            "manifest media type is {media_type}, expected {MANIFEST_MEDIA_TYPE}"
        ));
    }
    let config = raw
        .config
        .ok_or_else(|| "the manifest has no config".to_owned())?;
    let found = || {
        let layers: Vec<&str> = raw.layers.iter().map(|l| l.media_type.as_str()).collect();
        format!(
            "config {}, layers [{}]",
            config.media_type,
            layers.join(", ")
        )
    };
    if config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "not a Helm chart: expected config media type {CONFIG_MEDIA_TYPE}; found {}",
            found()
        ));
    }
    let layer = raw
        .layers
        .iter()
        .find(|l| l.media_type == CHART_LAYER_MEDIA_TYPE)
        .or_else(|| {
            raw.layers
                .iter()
                .find(|l| l.media_type == LEGACY_CHART_LAYER_MEDIA_TYPE)
        })
        .cloned()
        .ok_or_else(|| {
            format!(
                "not a Helm chart: no layer of media type {CHART_LAYER_MEDIA_TYPE}; found {}",
                found()
            )
        })?;
    for descriptor in [&config, &layer] {
        parse_digest(&descriptor.digest).map_err(|e| format!("{}: {e}", descriptor.media_type))?;
    }
    Ok(ChartManifest {
        legacy_layer: layer.media_type == LEGACY_CHART_LAYER_MEDIA_TYPE,
        config,
        chart: layer,
    })
}

/// Name and versions from a chart's config blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartConfig {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
    /// `appVersion`, when set and not empty.
    pub app_version: Option<String>,
}

fn scalar(value: Option<&serde_json::Value>) -> Option<String> {
    match value? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads the config blob (Chart.yaml as JSON).
pub fn chart_config(bytes: &[u8]) -> Result<ChartConfig, String> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("the chart config blob is not valid JSON: {e}"))?;
    if !value.is_object() {
        return Err("the chart config blob is not a JSON object".to_owned());
    }
    let name = scalar(value.get("name")).unwrap_or_default();
    let version = scalar(value.get("version")).unwrap_or_default();
    if name.is_empty() || version.is_empty() {
        return Err("the chart config blob has no name or no version".to_owned());
    }
    Ok(ChartConfig {
        name,
        version,
        app_version: scalar(value.get("appVersion")).filter(|v| !v.is_empty()),
    })
}

/// A digest's algorithm and lowercase hex value, for the algorithms OCI registers.
pub fn parse_digest(digest: &str) -> Result<(&str, &str), String> {
    let (algorithm, hex) = digest
        .split_once(':')
        .ok_or_else(|| format!("`{digest}` is not a digest (algorithm:hex)"))?;
    let length = match algorithm {
        "sha256" => 64,
        "sha512" => 128,
        other => return Err(format!("digest algorithm `{other}` is not supported")),
    };
    if hex.len() != length
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "`{digest}` is not a valid {algorithm} digest ({length} lowercase hex digits)"
        ));
    }
    Ok((algorithm, hex))
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The digest of `bytes` with the algorithm of `expected`, compared with `expected`.
/// `Ok` when equal; otherwise the actual digest (or why it cannot be computed).
pub fn verify(expected: &str, bytes: &[u8]) -> Result<(), String> {
    let (algorithm, _) = parse_digest(expected)?;
    let actual = match algorithm {
        "sha256" => sha256_digest(bytes),
        _ => format!("sha512:{}", hex::encode(Sha512::digest(bytes))),
    };
    if actual == expected {
        Ok(())
    } else {
        Err(format!("content digest is {actual}, expected {expected}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest `helm push` (v3.21.4) wrote for deploy/examples/charts/hello.
    const HELM_MANIFEST: &str = r#"{"schemaVersion":2,"config":{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:22546e7f6d550bb333905158d52b62aabfe0c9b2e4aa123a7002f61d823a8147","size":176},"layers":[{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"sha256:a6ba96a7026514c21153e80c760d306b13492a6edb3504e87dd3a22070e7ddaa","size":1097}],"annotations":{"org.opencontainers.image.created":"2026-12-04T04:10:14Z","org.opencontainers.image.description":"A small web service, used by Capstan's demo and end-to-end tests.","org.opencontainers.image.title":"hello","org.opencontainers.image.version":"0.1.0"}}"#;
    /// Its config blob.
    const HELM_CONFIG: &str = r#"{"name":"hello","version":"0.1.0","description":"A small web service, used by Capstan's demo and end-to-end tests.","apiVersion":"v2","appVersion":"1.0.0","type":"application"}"#;

    #[test]
    fn reads_what_helm_pushes() {
        let m = chart_manifest(HELM_MANIFEST.as_bytes()).unwrap();
        assert_eq!(m.config.media_type, CONFIG_MEDIA_TYPE);
        assert_eq!(m.config.size, 176);
        assert_eq!(
            m.chart.digest,
            "sha256:a6ba96a7026514c21153e80c760d306b13492a6edb3504e87dd3a22070e7ddaa"
        );
        assert!(!m.legacy_layer);
        assert_eq!(
            sha256_digest(HELM_MANIFEST.as_bytes()),
            "sha256:a6f5fb3b9282139fd6124748b6543738d210ba8fa8abe74a3efa84468e83a7cc",
            "the digest the registry reported for this manifest"
        );
        assert_eq!(
            sha256_digest(HELM_CONFIG.as_bytes()),
            m.config.digest,
            "the config digest"
        );
        assert_eq!(
            chart_config(HELM_CONFIG.as_bytes()).unwrap(),
            ChartConfig {
                name: "hello".into(),
                version: "0.1.0".into(),
                app_version: Some("1.0.0".into()),
            }
        );
    }

    #[test]
    fn names_what_was_found_in_other_artifacts() {
        let image = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1}]}"#;
        let err = chart_manifest(image.as_bytes()).unwrap_err();
        assert!(
            err.contains("application/vnd.oci.image.config.v1+json"),
            "{err}"
        );
        assert!(
            err.contains("application/vnd.oci.image.layer.v1.tar+gzip"),
            "{err}"
        );
        assert!(err.contains(CONFIG_MEDIA_TYPE), "{err}");

        let no_layer = HELM_MANIFEST.replace(CHART_LAYER_MEDIA_TYPE, "application/x-other");
        let err = chart_manifest(no_layer.as_bytes()).unwrap_err();
        assert!(
            err.contains("application/x-other") && err.contains(CHART_LAYER_MEDIA_TYPE),
            "{err}"
        );

        let legacy = HELM_MANIFEST.replace(CHART_LAYER_MEDIA_TYPE, LEGACY_CHART_LAYER_MEDIA_TYPE);
        assert!(chart_manifest(legacy.as_bytes()).unwrap().legacy_layer);

        let index = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}"#;
        assert!(
            chart_manifest(index.as_bytes())
                .unwrap_err()
                .contains("image index")
        );
        let docker = HELM_MANIFEST.replacen(
            "{\"schemaVersion\":2,",
            "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\",",
            1,
        );
        assert!(
            chart_manifest(docker.as_bytes())
                .unwrap_err()
                .contains("docker")
        );
        assert!(
            chart_manifest(b"{\"schemaVersion\":1}")
                .unwrap_err()
                .contains("schemaVersion 1")
        );
        assert!(
            chart_manifest(b"not json")
                .unwrap_err()
                .contains("not valid JSON")
        );
        let bad_digest = HELM_MANIFEST.replace("sha256:a6ba96", "md5:a6ba96");
        assert!(
            chart_manifest(bad_digest.as_bytes())
                .unwrap_err()
                .contains("md5")
        );
    }

    #[test]
    fn config_needs_name_and_version() {
        assert!(chart_config(b"{\"name\":\"x\"}").is_err());
        assert!(chart_config(b"[]").is_err());
        let c =
            chart_config(b"{\"name\":\"x\",\"version\":\"1.0.0\",\"appVersion\":\"\"}").unwrap();
        assert_eq!(c.app_version, None);
        let c = chart_config(b"{\"name\":\"x\",\"version\":\"1.0.0\",\"appVersion\":1.5}").unwrap();
        assert_eq!(c.app_version.as_deref(), Some("1.5"));
    }

    #[test]
    fn verifies_digests() {
        let d = sha256_digest(b"abc");
        assert_eq!(
            d,
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(verify(&d, b"abc").is_ok());
        assert!(
            verify(&d, b"abd")
                .unwrap_err()
                .contains("expected sha256:ba78")
        );
        let d512 = format!("sha512:{}", hex::encode(Sha512::digest(b"abc")));
        assert!(verify(&d512, b"abc").is_ok());
        assert!(verify("sha256:ABC", b"abc").is_err());
        assert!(verify(&d.to_uppercase(), b"abc").is_err());
        assert!(parse_digest("sha256").is_err());
        assert!(parse_digest("md5:00").is_err());
    }
}
