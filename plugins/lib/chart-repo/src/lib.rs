//! Helm HTTP chart repositories, for source plugins (`wasm32-wasip2`): read a repository's
//! `index.yaml`, choose a chart version as Helm does, and download the archive the index
//! lists, checked against the index's digest and read as a chart before anyone uses it.
//!
//! The `helm-repository` source serves whole charts from it; the `git` source fetches the
//! dependencies of a chart in git from it, as `helm dependency build` does. All network
//! access goes through `wasi:http` ([`http`]): the host decides which hosts a call may
//! reach, adds credentials and caps response sizes.

pub mod http;
pub mod index;
pub mod urls;

use capstan_plugin_sdk::source::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};
use sha2::{Digest, Sha256};
use url::Url;

use index::{ChartVersion, IndexError};

/// An index error as a plugin error: a broken index or constraint is bad input, a chart
/// or version that is not there is not found.
pub fn index_error(error: IndexError) -> Error {
    let code = match error {
        IndexError::Parse(_) | IndexError::BadConstraint(..) => ErrorCode::InvalidInput,
        IndexError::NoChart(_) | IndexError::NoVersion { .. } => ErrorCode::NotFound,
    };
    Error::new(code, error.to_string())
}

/// The repository at `repository_url` (http or https) and the versions of `chart` its
/// index lists.
pub fn read_index(repository_url: &str, chart: &str) -> Result<(Url, Vec<ChartVersion>), Error> {
    let repository =
        urls::repository(repository_url).map_err(|m| Error::new(ErrorCode::InvalidInput, m))?;
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
    let versions = index::chart_versions(&document, chart).map_err(index_error)?;
    Ok((repository, versions))
}

/// A chart archive downloaded from a repository and checked.
pub struct Downloaded {
    /// The archive's bytes.
    pub archive: Vec<u8>,
    /// Hex sha256 of the archive.
    pub sha256: String,
    /// The chart it holds, as its `Chart.yaml` says.
    pub metadata: capstan_helm::chart::Metadata,
}

/// Download the archive `entry` of `repository`'s index lists (its first URL, resolved
/// against the repository), refuse it when its sha256 differs from the index's digest or
/// it is not a valid chart archive.
pub fn download(repository: &Url, entry: &ChartVersion) -> Result<Downloaded, Error> {
    let first = entry.urls.first().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidInput,
            format!(
                "the index lists no URL for chart `{}` version {}",
                entry.name, entry.version
            ),
        )
    })?;
    let url = urls::chart(repository, first).map_err(|m| Error::new(ErrorCode::InvalidInput, m))?;
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
    Ok(Downloaded {
        archive,
        sha256: actual,
        metadata: chart.metadata,
    })
}
