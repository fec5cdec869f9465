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
    /// The post-renderer failed, or a document could not be sent to it.
    #[error(transparent)]
    PostRender(#[from] crate::postrender::PostRenderError),
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
    let mut files = render(&chart, &top, options)?;
    if let Some(post_render) = &options.post_render {
        files = crate::postrender::post_render_files(files, post_render)?;
    }
    // Helm 2 rendering (a Tiller version) keeps Helm 2's own hooks.
    let helm2 = options.capabilities.tiller_version.is_some();
    let assembled = assemble(chart.name(), files, subchart_notes, helm2)?;
    if options.skip_teardown {
        std::mem::forget(top);
        std::mem::forget(values);
        std::mem::forget(chart);
    }
    Ok(assembled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::File;

    fn chart(files: &[(&str, &str)]) -> Chart {
        crate::load::load_files(
            files
                .iter()
                .map(|(name, text)| File {
                    name: (*name).to_owned(),
                    data: std::sync::Arc::new(text.as_bytes().to_vec()),
                })
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn helm_2_rendering_sees_tiller_and_keeps_crd_install_hooks() {
        let files = [
            ("Chart.yaml", "apiVersion: v1\nname: old\nversion: 1.0.0\n"),
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  service: {{ .Release.Service }}\n  tiller: {{ .Capabilities.TillerVersion.SemVer }}\n  recent: {{ gt .Release.Time.Seconds 1700000000 }}\n",
            ),
            (
                "templates/crd.yaml",
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b\n  annotations:\n    helm.sh/hook: crd-install\n",
            ),
        ];
        let mut options = RenderOptions::default();
        options.capabilities.tiller_version = Some("v2.17.0".into());
        let helm2 = render_chart(chart(&files), &Value::new_map(), &options, false).unwrap();
        let text = &helm2.manifests[0].content;
        assert!(text.contains("service: Tiller"), "{text}");
        assert!(text.contains("tiller: v2.17.0"), "{text}");
        assert!(text.contains("recent: true"), "{text}");
        assert_eq!(helm2.hooks.len(), 1);
        assert_eq!(helm2.hooks[0].events, ["crd-install"]);

        // Helm 3 rendering of the same chart: no Tiller, and the crd-install document
        // is dropped as Helm 3 drops it.
        let helm3 = render_chart(
            chart(&files[..1]),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        )
        .unwrap();
        assert!(helm3.manifests.is_empty());
        let dropped = render_chart(
            chart(&[files[0], files[2]]),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        )
        .unwrap();
        assert!(dropped.hooks.is_empty() && dropped.manifests.is_empty());
        let tiller_in_helm3 = render_chart(
            chart(&files),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        );
        assert!(
            tiller_in_helm3
                .unwrap_err()
                .to_string()
                .contains("can't evaluate field TillerVersion"),
        );
    }
}
