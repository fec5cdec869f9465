//! `source-oci`: the chart source component for Helm charts in OCI registries (world
//! `source-plugin`), as `helm push`/`helm pull oci://…` store and read them.
//!
//! It serves the source kind `oci` (spec: `url` = `oci://REGISTRY/REPOSITORY/CHART`,
//! `version`, `digest`, `insecure`) and asks the host for HTTP access to the registry's
//! origin (plain `http` only with `insecure: true`) and for the credentials Secret keys
//! `username`, `password` and `token`, which it sends itself when a challenge asks for them
//! (see [`registry`]).
//!
//! - `resolve` picks the tag as Helm does (see [`constraint`](capstan_oci_chart::constraint)): an exact version is looked
//!   up directly (`HEAD` of its tag, `+` written `_`); otherwise, or when that tag does not
//!   exist, the tag list is read (following `Link` pagination) and the highest version
//!   satisfying the constraint wins (empty: the highest stable version). The revision id is
//!   `VERSION@sha256:…` and the content id the manifest digest. With only `digest` set, the
//!   manifest is read by digest and the version taken from its config blob; with both, the
//!   tag must point at that digest.
//! - `fetch` reads the manifest by digest (checked), requires the Helm config media type
//!   and a chart layer (naming the media types found otherwise), downloads the config and
//!   the chart layer (both checked against their digests and sizes) and returns the archive
//!   with the name and versions of the config blob (Chart.yaml as JSON).

use capstan_plugin_sdk::source::capstan::plugin::credentials;
use capstan_plugin_sdk::source::capstan::plugin::types::{
    ChartArtifact, ChartMetadata, Error, ErrorCode,
};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, HttpAccess, PluginInfo, Revision, SourceKind, SourceRequest,
};

use capstan_oci_chart::manifest;
use capstan_oci_chart::pull::{chart_at, pull_chart, resolve_version};
use capstan_oci_chart::reference::{self, Reference};
use capstan_oci_chart::registry::{Client, Secrets};
use capstan_oci_chart::{constraint, http};

/// Name of the source kind.
pub const KIND: &str = "oci";

/// The JSON Schema of an `oci` spec.
pub const OCI_SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "pattern": "^oci://[^/]+/.+", "description": "Chart repository: oci://REGISTRY/REPOSITORY/CHART, e.g. oci://registry.example.com/charts/podinfo (the last path segment is the chart name, as helm push writes it)"},
    "version": {"type": "string", "description": "Exact chart version or SemVer constraint (e.g. >=1.0.0 <2); empty: the highest stable version"},
    "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "description": "Manifest digest to pin; with version, the version's tag must point at it"},
    "insecure": {"type": "boolean", "description": "Talk plain HTTP to the registry (no TLS)"}
  },
  "additionalProperties": false
}"#;

/// An `oci` spec.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OciSpec {
    url: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    digest: Option<String>,
    #[serde(default)]
    insecure: bool,
}

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

/// A spec, checked.
struct Source {
    reference: Reference,
    version: String,
    digest: Option<String>,
    insecure: bool,
}

fn source(request: &SourceRequest) -> Result<Source, Error> {
    let spec: OciSpec = request.spec_as()?;
    let reference =
        reference::parse(&spec.url).map_err(|m| Error::new(ErrorCode::InvalidInput, m))?;
    let digest = match spec.digest.map(|d| d.trim().to_owned()) {
        Some(d) if d.is_empty() => None,
        Some(d) => {
            if !d.starts_with("sha256:") {
                return Err(Error::new(
                    ErrorCode::InvalidInput,
                    format!("{reference}: `digest` must be sha256:<64 hex digits>, got `{d}`"),
                ));
            }
            manifest::parse_digest(&d)
                .map_err(|e| Error::new(ErrorCode::InvalidInput, format!("{reference}: {e}")))?;
            Some(d)
        }
        None => None,
    };
    Ok(Source {
        reference,
        version: spec.version.trim().to_owned(),
        digest,
        insecure: spec.insecure,
    })
}

/// The credentials Secret through the `credentials` import.
struct HostSecrets;

impl Secrets for HostSecrets {
    fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        credentials::get(key)
    }
}

type HostClient = Client<http::WasiHttp, HostSecrets>;

fn client(source: &Source) -> Result<HostClient, Error> {
    Client::new(
        http::WasiHttp,
        HostSecrets,
        source.reference.clone(),
        source.insecure,
    )
}

struct OciSource;

impl Guest for OciSource {
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![
            SourceKind::new(
                KIND,
                "a Helm chart in an OCI registry (helm push), by exact version, SemVer constraint or digest",
                OCI_SCHEMA,
            )
            .with_http(HttpAccess {
                insecure_field: Some("/insecure".into()),
                ..HttpAccess::to("/url")
            })
            .with_secret_keys(&["username", "password", "token"]),
        ])
    }

    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        let source = source(&request)?;
        let mut client = client(&source)?;
        if source.version.is_empty()
            && let Some(digest) = &source.digest
        {
            let (_, config) = chart_at(&mut client, digest)?;
            return Ok(Revision {
                id: format!("{}@{digest}", config.version),
                content_id: digest.clone(),
            });
        }
        let (version, digest) = resolve_version(&mut client, &source.reference, &source.version)?;
        if let Some(pinned) = &source.digest
            && *pinned != digest
        {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "{}: version {version} (tag {}) points at {digest}, not at the pinned digest {pinned}",
                    source.reference,
                    constraint::tag_for_version(&version)
                ),
            ));
        }
        Ok(Revision {
            id: format!("{version}@{digest}"),
            content_id: digest,
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let source = source(&request)?;
        let digest = at.content_id.trim();
        if let Some(pinned) = &source.digest
            && pinned != digest
        {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "{}: revision {} is not the pinned digest {pinned}",
                    source.reference, at.id
                ),
            ));
        }
        let mut client = client(&source)?;
        let wanted_version = at.id.split_once('@').map_or(at.id.as_str(), |(v, _)| v);
        let pulled = pull_chart(&mut client, &source.reference, digest, wanted_version)?;
        Ok(ChartArtifact {
            digest: manifest::sha256_digest(&pulled.archive),
            archive: pulled.archive,
            metadata: ChartMetadata {
                name: pulled.config.name,
                version: pulled.config.version,
                app_version: pulled.config.app_version,
            },
        })
    }
}

capstan_plugin_sdk::source::export_source_plugin!(OciSource);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_json_with_the_documented_fields() {
        let schema: serde_json::Value = serde_json::from_str(OCI_SCHEMA).unwrap();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], serde_json::json!(["url"]));
        let properties = schema["properties"].as_object().unwrap();
        let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["digest", "insecure", "url", "version"]);
        assert_eq!(schema["properties"]["insecure"]["type"], "boolean");
    }

    #[test]
    fn describe_declares_the_kind() {
        let info = OciSource::describe();
        assert_eq!(info.kinds.len(), 1);
        let kind = &info.kinds[0];
        assert_eq!(kind.name, "oci");
        assert_eq!(kind.capabilities.git_url_field, None);
        assert_eq!(
            kind.capabilities.secret_keys,
            ["username", "password", "token"]
        );
        let http = &kind.capabilities.http;
        assert_eq!(http.len(), 1);
        assert_eq!(http[0].url_field, "/url");
        assert_eq!(http[0].insecure_field.as_deref(), Some("/insecure"));
        assert!(!http[0].send_credentials);
        assert_eq!(http[0].shared_document, None);
    }

    fn request(spec: &str) -> SourceRequest {
        SourceRequest {
            kind: KIND.into(),
            spec: spec.into(),
        }
    }

    #[test]
    fn reads_specs() {
        let s = source(&request(
            r#"{"url":"oci://127.0.0.1:5000/charts/hello","version":" >=1 ","insecure":true}"#,
        ))
        .unwrap();
        assert_eq!(s.reference.repository, "charts/hello");
        assert_eq!(s.version, ">=1");
        assert!(s.insecure);
        assert_eq!(s.digest, None);
        let d = format!("sha256:{}", "a".repeat(64));
        let s = source(&request(&format!(
            r#"{{"url":"oci://r.example/c","digest":"{d}"}}"#
        )))
        .unwrap();
        assert_eq!(s.digest.as_deref(), Some(d.as_str()));
        assert!(!s.insecure);
        for bad in [
            r#"{"url":"https://r.example/c"}"#,
            r#"{"url":"oci://r.example/c","digest":"sha512:00"}"#,
            r#"{"url":"oci://r.example/c","digest":"sha256:ABC"}"#,
            r#"{"url":"oci://r.example/c","extra":1}"#,
            r#"{"version":"1.0.0"}"#,
        ] {
            let err = source(&request(bad))
                .err()
                .unwrap_or_else(|| panic!("{bad}"));
            assert_eq!(err.code, ErrorCode::InvalidInput, "{bad}: {}", err.message);
        }
    }

    #[test]
    fn selection_errors_say_what_was_listed() {
        let s = source(&request(
            r#"{"url":"oci://r.example/charts/hello","version":">=2"}"#,
        ))
        .unwrap();
        let e = capstan_oci_chart::pull::select_error(
            &s.reference,
            &s.version,
            capstan_oci_chart::constraint::SelectError::NoMatch {
                available: vec!["1.0.0".into(), "0.1.0".into()],
            },
        );
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(
            e.message,
            "oci://r.example/charts/hello: no version satisfying `>=2` (highest versions listed: 1.0.0, 0.1.0)"
        );
    }
}
