//! `template`: render a chart archive with the user's values as `helm template` does, with
//! the errors Helm would give.

use capstan_helm::engine::{ReleaseInfo, RenderOptions};
use capstan_helm::objects::Capabilities;
use capstan_helm::output::{Hook, manifest_text};
use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ErrorCode, Json, ReleaseId,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{Rendered, TemplateOptions};

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

fn hooks_text(hooks: &[Hook]) -> String {
    let mut out = String::new();
    for hook in hooks {
        out.push_str("---\n# Source: ");
        out.push_str(&hook.path);
        out.push('\n');
        out.push_str(&hook.manifest);
        out.push('\n');
    }
    out
}

/// Render `chart` for `release` with `values` (typed JSON, see `capstan_helm::values_json`).
pub fn template(
    release: ReleaseId,
    chart: ChartArtifact,
    values: Json,
    options: TemplateOptions,
) -> Result<Rendered, Error> {
    let loaded = capstan_helm::load::load_archive(&chart.archive)
        .map_err(|e| invalid(format!("chart {}: {e}", chart.metadata.name)))?;
    let user_values = capstan_helm::values_json::from_typed_json(&values).map_err(invalid)?;
    let mut capabilities = Capabilities::default();
    if let Some(version) = &options.kube_version {
        capabilities = capabilities.with_kube_version(version).map_err(invalid)?;
    }
    capabilities
        .api_versions
        .extend(options.api_versions.iter().cloned());
    let render_options = RenderOptions {
        release: ReleaseInfo {
            name: release.name,
            namespace: release.namespace,
            revision: 1,
            is_install: !options.is_upgrade,
            is_upgrade: options.is_upgrade,
        },
        capabilities,
        ..RenderOptions::default()
    };
    let assembled =
        capstan_helm::pipeline::render_chart(loaded, &user_values, &render_options, false)
            .map_err(|e| invalid(e.to_string()))?;
    Ok(Rendered {
        manifest: manifest_text(&assembled.manifests),
        hooks: hooks_text(&assembled.hooks),
        notes: (!assembled.notes.is_empty()).then_some(assembled.notes),
    })
}
