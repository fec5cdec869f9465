//! `source-helm-repo`: the chart source component for Helm HTTP repositories (world
//! `source-plugin`).
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
    Guest, HelmRepositorySource, Revision, SourceRequest, SourceSpec,
};
use sha2::{Digest, Sha256};
use url::Url;

use index::{ChartVersion, IndexError};

struct HelmRepoSource;

fn repository_source(request: &SourceRequest) -> Result<&HelmRepositorySource, Error> {
    match &request.spec {
        SourceSpec::HelmRepository(repo) => Ok(repo),
        SourceSpec::Git(git) => Err(Error::new(
            ErrorCode::InvalidInput,
            format!("source-helm-repo cannot serve git repository {}", git.url),
        )),
    }
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
    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        let source = repository_source(&request)?;
        let (_, versions) = read_index(source)?;
        let entry =
            index::select(&source.chart, &versions, &source.version).map_err(index_error)?;
        Ok(Revision {
            id: entry.version.clone(),
            content_id: content_id(entry),
        })
    }

    fn fetch(request: SourceRequest, at: Revision) -> Result<ChartArtifact, Error> {
        let source = repository_source(&request)?;
        let (repository, versions) = read_index(source)?;
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
