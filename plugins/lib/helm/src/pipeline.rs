//! The whole of `helm template` for a loaded chart: the chart's `kubeVersion` checked,
//! library charts and missing dependencies refused, dependencies enabled/aliased/imported
//! against the user's values, values coalesced and checked against `values.schema.json`,
//! templates rendered, and the output split into manifests, hooks and notes.

use capstan_gotmpl::value::Value;

use crate::chart::Chart;
use crate::engine::{RenderError, RenderOptions, render, render_values};
use crate::output::{Assembled, OutputError, assemble};

/// Why a chart could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelmError {
    /// The chart's `kubeVersion` excludes the target cluster.
    #[error(
        "chart requires kubeVersion: {required} which is incompatible with Kubernetes {actual}"
    )]
    KubeVersion {
        /// The chart's constraint.
        required: String,
        /// The cluster version.
        actual: String,
    },
    /// Dependency processing failed.
    #[error("{0}")]
    Dependencies(String),
    /// Values could not be coalesced or failed the schema.
    #[error("{0}")]
    Values(String),
    /// A template failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A rendered document is not valid.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Render `chart` with the user's values (already merged from `-f`/`--set`), as
/// `helm install --dry-run` / `helm template` would.
pub fn render_chart(
    mut chart: Chart,
    user_values: &Value,
    options: &RenderOptions,
    subchart_notes: bool,
) -> Result<Assembled, HelmError> {
    let required = chart.metadata.kube_version.clone();
    let actual = options.capabilities.kube_version.clone();
    if !required.is_empty() && !crate::semver::is_compatible_range(&required, &actual) {
        return Err(HelmError::KubeVersion { required, actual });
    }
    crate::dependencies::check_installable(&chart)
        .map_err(|e| HelmError::Dependencies(e.to_string()))?;
    crate::dependencies::process_dependencies(&mut chart, user_values)
        .map_err(|e| HelmError::Dependencies(e.to_string()))?;
    let values = crate::values::coalesce_values(&chart, user_values)
        .map_err(|e| HelmError::Values(e.to_string()))?;
    crate::schema::validate_against_schema(&chart, &values)
        .map_err(|e| HelmError::Values(e.to_string()))?;
    let top = render_values(&chart, &values, options);
    let files = render(&chart, &top, options)?;
    // Helm 2 rendering (a Tiller version) keeps Helm 2's own hooks.
    let helm2 = options.capabilities.tiller_version.is_some();
    Ok(assemble(chart.name(), files, subchart_notes, helm2)?)
}
