//! `plan`: whether `sync` would change anything, decided from digests and the release
//! records only — no rendering and no cluster writes. The digest of a revision covers
//! what Helm records of its input: the chart (metadata, templates, default values, schema,
//! files, lock, after dependency processing) and the user's values, serialised exactly as
//! the release record stores them; the request's digest is computed the same way and
//! compared with the latest revision's, which must be `deployed`.

use capstan_helm::release::{self, Release, Status};
use capstan_plugin_sdk::backend::capstan::plugin::types::{Error, ErrorCode, ReleaseId};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{SyncPlan, SyncRequest};
use sha2::{Digest, Sha256};

use crate::render;
use crate::store::{self, describe};

/// What `sync` would do, and the latest revision when it would do nothing.
pub struct Decision {
    /// The answer.
    pub plan: SyncPlan,
    /// The latest (deployed) revision, when nothing would change.
    pub unchanged: Option<Release>,
}

fn digest(
    chart: Option<capstan_helm::release::ChartRecord>,
    config: &capstan_gotmpl::value::Value,
) -> Result<String, Error> {
    if crate::flavor::current() == crate::flavor::Flavor::Helm2 {
        // Helm 2 records hold another shape of the same input; compare in that shape, so a
        // record Tiller wrote and one we wrote for the same input match.
        let bytes = capstan_helm::tiller::input_fingerprint(chart.as_ref(), config);
        return Ok(hex::encode(Sha256::digest(&bytes)));
    }
    let input = Release {
        chart,
        config: config.clone(),
        ..Release::default()
    };
    let json = release::to_json(&input)
        .map_err(|e| Error::new(ErrorCode::Internal, format!("digest: {e}")))?;
    let hash = Sha256::digest(json.as_bytes());
    Ok(hash.iter().map(|b| format!("{b:02x}")).collect())
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// Decide whether `request` would change the release.
pub fn decide(request: &SyncRequest) -> Result<Decision, Error> {
    let id: &ReleaseId = &request.release;
    let history = store::history(id)?;
    let changes = |reason: String| Decision {
        plan: SyncPlan {
            changes: true,
            reason,
        },
        unchanged: None,
    };
    let Some(last) = history.last() else {
        return Ok(changes(format!(
            "release {} is not installed",
            describe(id)
        )));
    };
    if last.status() != Status::Deployed {
        return Ok(changes(format!(
            "the latest revision {} of {} is {}, not deployed",
            last.version,
            describe(id),
            last.status().as_str()
        )));
    }
    let input = render::prepare(&request.chart, &request.values)?;
    let wanted = digest(
        input.chart.as_ref().map(release::ChartRecord::from_chart),
        &input.user_values,
    )?;
    let deployed = digest(last.chart.clone(), &last.config)?;
    // A revision converted from Helm 2 holds its input in Helm 2's shape: compare in that
    // shape, so the first sync after a move makes no revision when nothing changed.
    let same_as_migrated = last.labels.contains_key(crate::migrate::MIGRATED_LABEL)
        && input.chart.as_ref().is_some_and(|chart| {
            capstan_helm::tiller::converted_input_fingerprint(
                Some(&release::ChartRecord::from_chart(chart)),
                &input.user_values,
            ) == capstan_helm::tiller::converted_input_fingerprint(
                last.chart.as_ref(),
                &last.config,
            )
        });
    if wanted != deployed && !same_as_migrated {
        return Ok(changes(format!(
            "chart and values digest {} differs from revision {} ({})",
            short(&wanted),
            last.version,
            short(&deployed)
        )));
    }
    let reason = if wanted == deployed {
        format!(
            "chart and values digest {} matches deployed revision {}",
            short(&wanted),
            last.version
        )
    } else {
        format!(
            "chart and values match deployed revision {} (converted from Helm 2)",
            last.version
        )
    };
    Ok(Decision {
        plan: SyncPlan {
            changes: false,
            reason,
        },
        unchanged: Some(last.clone()),
    })
}
