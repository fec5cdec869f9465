//! Pulling one chart: the version a constraint selects and its manifest digest, the
//! manifest and config blob read and checked, and the chart layer downloaded and checked —
//! the steps `helm pull oci://…` takes, each failure naming the chart reference.

use capstan_plugin_sdk::source::capstan::plugin::log::{Level, log};
use capstan_plugin_sdk::source::capstan::plugin::types::{Error, ErrorCode};

use crate::constraint::{self, SelectError};
use crate::manifest::{self, ChartConfig, ChartManifest};
use crate::reference::Reference;
use crate::registry::{Client, Secrets, Transport};

/// No credentials: anonymous pulls (a challenge asking for credentials fails naming it).
pub struct Anonymous;

impl Secrets for Anonymous {
    fn get(&mut self, _key: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(None)
    }
}

/// Reads and checks the manifest `digest`, then its config blob.
pub fn chart_at<T: Transport, S: Secrets>(
    client: &mut Client<T, S>,
    digest: &str,
) -> Result<(ChartManifest, ChartConfig), Error> {
    let subject = client.subject();
    let bytes = client.manifest(digest)?;
    let chart = manifest::chart_manifest(&bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidInput, format!("{subject}@{digest}: {e}")))?;
    let config_bytes = client.blob(&chart.config)?;
    let config = manifest::chart_config(&config_bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidInput, format!("{subject}@{digest}: {e}")))?;
    Ok((chart, config))
}

/// The message for a failed tag selection of `wanted` in `subject`.
pub fn select_error(subject: &Reference, wanted: &str, error: SelectError) -> Error {
    match error {
        SelectError::BadConstraint(e) => Error::new(
            ErrorCode::InvalidInput,
            format!(
                "{subject}: `{wanted}` is neither a listed version nor a valid constraint: {e}"
            ),
        ),
        SelectError::NoMatch { available } => {
            let wanted = if wanted.is_empty() {
                "no stable version".to_owned()
            } else {
                format!("no version satisfying `{wanted}`")
            };
            let listed = if available.is_empty() {
                "the repository has no SemVer tags".to_owned()
            } else {
                format!("highest versions listed: {}", available.join(", "))
            };
            Error::new(
                ErrorCode::NotFound,
                format!("{subject}: {wanted} ({listed})"),
            )
        }
    }
}

/// The version `wanted` (an exact version or a constraint; empty: the highest stable
/// version) selects in `subject`, and the manifest digest of its tag.
pub fn resolve_version<T: Transport, S: Secrets>(
    client: &mut Client<T, S>,
    subject: &Reference,
    wanted: &str,
) -> Result<(String, String), Error> {
    // An exact version: its tag directly (what Helm's exact match finds), when it exists.
    if let Ok(version) = semver::Version::parse(wanted) {
        let tag = constraint::tag_for_version(wanted);
        if let Some(digest) = client.resolve_tag(&tag)? {
            return Ok((version.to_string(), digest));
        }
    }
    let tags = client.tags()?;
    let selected =
        constraint::select(&tags, wanted).map_err(|e| select_error(subject, wanted, e))?;
    let digest = client.resolve_tag(&selected.tag)?.ok_or_else(|| {
        Error::new(
            ErrorCode::NotFound,
            format!(
                "{subject}: tag {} is listed but its manifest is not found",
                selected.tag
            ),
        )
    })?;
    log(
        Level::Debug,
        &format!(
            "{subject}: `{wanted}` selects {} (tag {}) of {} tags",
            selected.version,
            selected.tag,
            tags.len()
        ),
    );
    Ok((selected.version.to_string(), digest))
}

/// A chart pulled by manifest digest.
pub struct Pulled {
    /// The chart archive (the chart layer).
    pub archive: Vec<u8>,
    /// The chart's config blob (its Chart.yaml as JSON).
    pub config: ChartConfig,
}

/// Pull the chart whose manifest is `digest` (`sha256:…`) from `subject`: manifest and
/// config checked, the chart layer downloaded against its digest and size and required to
/// be a gzip archive. `wanted_version` (may be empty) and the URL's chart name are only
/// compared with the config, with a warning when they differ, as Helm does.
pub fn pull_chart<T: Transport, S: Secrets>(
    client: &mut Client<T, S>,
    subject: &Reference,
    digest: &str,
    wanted_version: &str,
) -> Result<Pulled, Error> {
    if !digest.starts_with("sha256:") || manifest::parse_digest(digest).is_err() {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!("{subject}: `{digest}` is not a manifest digest (sha256:…)"),
        ));
    }
    let (chart, config) = chart_at(client, digest)?;
    if chart.legacy_layer {
        log(
            Level::Warn,
            &format!(
                "{subject}@{digest}: chart media type {} is deprecated (pushed by Helm before 3.7)",
                manifest::LEGACY_CHART_LAYER_MEDIA_TYPE
            ),
        );
    }
    let archive = client.blob(&chart.chart)?;
    if !archive.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!("{subject}@{digest}: the chart layer is not a gzip archive"),
        ));
    }
    if !wanted_version.is_empty() && wanted_version != config.version {
        log(
            Level::Warn,
            &format!(
                "{subject}@{digest}: the chart says version {}, the revision {wanted_version}",
                config.version
            ),
        );
    }
    if config.name != subject.chart() {
        log(
            Level::Warn,
            &format!(
                "{subject}@{digest}: the chart is named `{}`, not `{}` as the URL's last segment",
                config.name,
                subject.chart()
            ),
        );
    }
    log(
        Level::Debug,
        &format!(
            "fetched {subject}@{digest}: {} {} ({} bytes)",
            config.name,
            config.version,
            archive.len()
        ),
    );
    Ok(Pulled { archive, config })
}
