//! `source-helm-repo`: the chart source component for Helm HTTP repositories (world
//! `source-plugin`).
//!
//! It serves the source kind `helm-repository` (spec: `url`, `chart`, `version`) and asks
//! the host for HTTP access to the repository's origin, with the release's credentials, and
//! for `index.yaml` as a shared document (one conditional request per interval for every
//! release on the repository).
//!
//! - `resolve` reads the repository's `index.yaml` and picks the chart version as Helm
//!   does (see [`index`](capstan_chart_repo::index)); the revision id is the chart version and the content id the
//!   digest the index records for that entry, so the host downloads again only when the
//!   index points at different bytes.
//! - `fetch` downloads the archive the index lists for that version (relative URLs
//!   resolved against the repository, see [`urls`](capstan_chart_repo::urls)), checks its sha256 against the index
//!   and reads its Chart.yaml (a corrupt archive is refused here, not at install time).
//!
//! Reading the index and downloading go through [`capstan_chart_repo`] (`wasi:http`); the
//! host decides which hosts a call may reach, adds credentials and caps response sizes.

use capstan_chart_repo::index::{self, ChartVersion};
use capstan_chart_repo::{download, index_error, read_index};
use capstan_plugin_sdk::source::capstan::plugin::types::{
    ChartArtifact, ChartMetadata, Error, ErrorCode,
};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, HttpAccess, PluginInfo, Revision, SourceKind, SourceRequest,
};

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

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
        let (_, versions) = read_index(&source.url, &source.chart)?;
        let entry =
            index::select(&source.chart, &versions, &source.version).map_err(index_error)?;
        Ok(Revision {
            id: entry.version.clone(),
            content_id: content_id(entry),
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let source = repository_source(&request)?;
        let (repository, versions) = read_index(&source.url, &source.chart)?;
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
        let downloaded = download(&repository, entry)?;
        let metadata = downloaded.metadata;
        Ok(ChartArtifact {
            archive: downloaded.archive,
            digest: format!("sha256:{}", downloaded.sha256),
            metadata: ChartMetadata {
                name: metadata.name,
                version: metadata.version,
                app_version: (!metadata.app_version.is_empty()).then_some(metadata.app_version),
            },
        })
    }
}

capstan_plugin_sdk::source::export_source_plugin!(HelmRepoSource);
