//! `source-helm-repo`: the chart source component for Helm HTTP repositories (world
//! `source-plugin`).
//!
//! It serves the source kind `helm-repository` (spec: `url`, `chart`, `version`) and asks
//! the host for HTTP access to the repository's origin, with the release's credentials, and
//! for `index.yaml` as a shared document (one conditional request per interval for every
//! release on the repository).
//!
//! - `resolve` reads the repository's `index.yaml` and picks the chart version as Helm
//!   does (see [`index`]); the revision id is the chart version and the content id the
//!   digest the index records for that entry, so the host downloads again only when the
//!   index points at different bytes.
//! - `fetch` downloads the archive the index lists for that version (relative URLs
//!   resolved against the repository, see [`urls`]), checks its sha256 against the index
//!   and reads its Chart.yaml (a corrupt archive is refused here, not at install time).
//!
//! All network access goes through `wasi:http` ([`http`]); the host decides which hosts a
//! call may reach, adds credentials and caps response sizes.

pub mod http;
pub mod index;
pub mod urls;

use capstan_plugin_sdk::source::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::source::capstan::plugin::types::{
    ChartArtifact, ChartMetadata, Error, ErrorCode,
};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, HttpAccess, PluginInfo, Revision, SourceKind, SourceRequest,
};
use sha2::{Digest, Sha256};
use url::Url;

use index::{ChartVersion, IndexError};

struct HelmRepoSource;

/// The JSON Schema of a `helm-repository` spec.
const HELM_REPOSITORY_SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["url", "chart"],
  "properties": {
    "url": {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://", "description": "Repository URL, where index.yaml lives"},
    "chart": {"type": "string", "minLength": 1, "description": "Chart name in the index"},
    "version": {"type": "string", "description": "Exact version or SemVer constraint; empty: the latest stable version"},
    "insecure": {"type": "boolean", "description": "Allow the credentials Secret's username and password to be sent over plain http:// (refused otherwise)"}
  },
  "additionalProperties": false
}"#;

/// A `helm-repository` spec.
#[derive(serde::Deserialize)]
struct HelmRepositorySource {
    url: String,
    chart: String,
    #[serde(default)]
    version: String,
}

fn repository_source(request: &SourceRequest) -> Result<HelmRepositorySource, Error> {
    let mut source: HelmRepositorySource = request.spec_as()?;
    source.url = source.url.trim().to_owned();
    source.version = source.version.trim().to_owned();
    Ok(source)
}

fn index_error(error: IndexError) -> Error {
    let code = match error {
        IndexError::Parse(_) | IndexError::BadConstraint(..) => ErrorCode::InvalidInput,
        IndexError::NoChart(_) | IndexError::NoVersion { .. } => ErrorCode::NotFound,
    };
    Error::new(code, error.to_string())
}

/// The repository URL and the versions of the chart its index lists.
fn read_index(source: &HelmRepositorySource) -> Result<(Url, Vec<ChartVersion>), Error> {
    let repository =
        urls::repository(&source.url).map_err(|m| Error::new(ErrorCode::InvalidInput, m))?;
    let index_url = urls::index(&repository);
    let document = http::get(&index_url)?;
    log(
        Level::Debug,
        &format!(
            "read {} ({} bytes)",
            http::shown(&index_url),
            document.len()
        ),
    );
    let versions = index::chart_versions(&document, &source.chart).map_err(index_error)?;
    Ok((repository, versions))
}

fn content_id(entry: &ChartVersion) -> String {
    if entry.digest.is_empty() {
        // No digest in the index: the first URL and the version stand for the content.
        format!(
            "undigested:{}@{}",
            entry.urls.first().map_or("", String::as_str),
            entry.version
        )
    } else {
        format!("sha256:{}", entry.digest.to_ascii_lowercase())
    }
}

impl Guest for HelmRepoSource {
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![
            SourceKind::new(
                "helm-repository",
                "a chart version in a Helm HTTP repository (index.yaml), exact or by SemVer constraint",
                HELM_REPOSITORY_SCHEMA,
            )
            .with_http(HttpAccess {
                send_credentials: true,
                shared_document: Some("index.yaml".into()),
                insecure_field: Some("/insecure".into()),
                ..HttpAccess::to("/url")
            }),
        ])
    }

    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        let source = repository_source(&request)?;
        let (_, versions) = read_index(&source)?;
        let entry =
            index::select(&source.chart, &versions, &source.version).map_err(index_error)?;
        Ok(Revision {
            id: entry.version.clone(),
            content_id: content_id(entry),
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let source = repository_source(&request)?;
        let (repository, versions) = read_index(&source)?;
        let entry = versions
            .iter()
            .find(|v| v.version == at.id)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "chart `{}` version {} is no longer in the repository index",
                        source.chart, at.id
                    ),
                )
            })?;
        let first = entry.urls.first().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "the index lists no URL for chart `{}` version {}",
                    source.chart, at.id
                ),
            )
        })?;
        let url =
            urls::chart(&repository, first).map_err(|m| Error::new(ErrorCode::InvalidInput, m))?;
        let archive = http::get(&url)?;
        let actual = hex::encode(Sha256::digest(&archive));
        if !entry.digest.is_empty() && !entry.digest.eq_ignore_ascii_case(&actual) {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "digest mismatch for {}: the index says sha256:{}, the downloaded archive is sha256:{actual}",
                    http::shown(&url),
                    entry.digest.to_ascii_lowercase()
                ),
            ));
        }
        let chart = capstan_helm::load::load_archive(&archive).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("{} is not a valid chart archive: {e}", http::shown(&url)),
            )
        })?;
        log(
            Level::Debug,
            &format!("downloaded {} ({} bytes)", http::shown(&url), archive.len()),
        );
        let metadata = chart.metadata;
        Ok(ChartArtifact {
            archive,
            digest: format!("sha256:{actual}"),
            metadata: ChartMetadata {
                name: metadata.name,
                version: metadata.version,
                app_version: (!metadata.app_version.is_empty()).then_some(metadata.app_version),
            },
        })
    }
}

capstan_plugin_sdk::source::export_source_plugin!(HelmRepoSource);
