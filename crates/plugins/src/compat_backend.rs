//! Backend components of the previous contract, `capstan:plugin@0.1.x` (N−1), served
//! through an adapter.
//!
//! A 0.1 backend imports the 0.1 `log`, `kube` and `crypto` interfaces, which the host links
//! beside the current ones and serves with the same code (the shapes did not change). Its
//! exports differ from 0.2 in two ways the host cannot bridge alone, since it no longer
//! knows any values or chart format:
//!
//! - `sync`, `plan` and `template` take the user's values merged into one JSON object,
//!   where 0.2 passes ordered value layers;
//! - there is no `package`.
//!
//! Both are done by the `compat-helm` component (`plugins/compat-helm`), run in the sandbox
//! under the backend's limits, before the 0.1 call: it merges the layers by Helm's rules into
//! the typed JSON the 0.1 host used to send, and packages chart folders. Every other type
//! maps field for field.

use std::path::{Path, PathBuf};

use crate::bindings::backend::exports::capstan::plugin::backend as current;
use crate::bindings::types::{ChartArtifact, ChartMetadata, Error};
use capstan_capabilities::state::CallState;

/// Bindings of the 0.1.1 `backend-plugin` world (WIT kept in `crates/capabilities/compat-wit/0.1.1`).
pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../capabilities/compat-wit/0.1.1",
        world: "backend-plugin",
        imports: { default: async },
        exports: { default: async },
        with: {
            "capstan:plugin/types@0.1.1": capstan_capabilities::bindings::types,
            "capstan:plugin/log@0.1.1": capstan_capabilities::v0_1::log,
            "capstan:plugin/kube@0.1.1": capstan_capabilities::v0_1::kube,
            "capstan:plugin/crypto@0.1.1": capstan_capabilities::v0_1::crypto,
        },
    });
}

/// Bindings of the `compat-helm` component's world.
pub mod helm_services {
    wasmtime::component::bindgen!({
        path: "../../plugins/compat-helm/wit",
        world: "helm-services-provider",
        exports: { default: async },
    });
}

use helm_services::exports::capstan::compat::helm_services as services;
use v0_1::exports::capstan::plugin::backend as old;

/// File name of the `compat-helm` component among installed plugins.
pub const HELM_SERVICES_FILE: &str = "compat-helm.wasm";

/// Where the `compat-helm` component of a 0.1 backend at `backend_path` is: the configured
/// file, else `compat-helm.wasm` beside the backend, else in the first of `installed`
/// folders holding one. `Err` lists every place looked at.
pub fn helm_services_path(
    configured: Option<&Path>,
    backend_path: &Path,
    installed: &[PathBuf],
) -> Result<PathBuf, Vec<PathBuf>> {
    if let Some(path) = configured {
        return Ok(path.to_owned());
    }
    let mut searched = Vec::new();
    let beside = backend_path
        .parent()
        .map(|dir| dir.join(HELM_SERVICES_FILE));
    for candidate in beside
        .into_iter()
        .chain(installed.iter().map(|dir| dir.join(HELM_SERVICES_FILE)))
    {
        if candidate.is_file() {
            return Ok(candidate);
        }
        if !searched.contains(&candidate) {
            searched.push(candidate);
        }
    }
    Err(searched)
}

/// A 0.1 backend ready to instantiate, with the component doing its Helm work.
#[derive(Clone)]
pub struct V0_1Backend {
    /// The 0.1 backend.
    pub backend: v0_1::BackendPluginPre<CallState>,
    /// The `compat-helm` component.
    pub services: helm_services::HelmServicesProviderPre<CallState>,
}

/// A value layer in `compat-helm`'s shape (the same variant, generated twice).
pub fn layer(layer: &current::ValueLayer) -> services::ValueLayer {
    match layer {
        current::ValueLayer::Document(d) => {
            services::ValueLayer::Document(services::ValuesDocument {
                origin: d.origin.clone(),
                content: d.content.clone(),
                optional: d.optional,
            })
        }
        current::ValueLayer::Set(e) => services::ValueLayer::Set(e.clone()),
        current::ValueLayer::SetString(e) => services::ValueLayer::SetString(e.clone()),
        current::ValueLayer::SetJson(e) => services::ValueLayer::SetJson(e.clone()),
        current::ValueLayer::SetLiteral(e) => services::ValueLayer::SetLiteral(e.clone()),
        current::ValueLayer::SetFile(f) => services::ValueLayer::SetFile(services::FileValue {
            path: f.path.clone(),
            content: f.content.clone(),
        }),
    }
}

/// A chart input in `compat-helm`'s shape.
pub fn chart_input(chart: &current::ChartInput) -> services::ChartInput {
    match chart {
        current::ChartInput::Folder(files) => services::ChartInput::Folder(
            files
                .iter()
                .map(|f| services::ChartFile {
                    path: f.path.clone(),
                    contents: f.contents.clone(),
                })
                .collect(),
        ),
        current::ChartInput::Archive(bytes) => services::ChartInput::Archive(bytes.clone()),
    }
}

/// `compat-helm`'s packaged chart as the current artifact.
pub fn artifact(packaged: services::PackagedChart) -> ChartArtifact {
    ChartArtifact {
        archive: packaged.archive,
        digest: packaged.digest,
        metadata: ChartMetadata {
            name: packaged.name,
            version: packaged.version,
            app_version: packaged.app_version,
        },
    }
}

/// `compat-helm` reports failures as text: they are always about the input.
pub fn services_error(message: String) -> Error {
    Error {
        code: crate::bindings::types::ErrorCode::InvalidInput,
        message,
        retryable: false,
    }
}

fn crd_policy(policy: current::CrdPolicy) -> old::CrdPolicy {
    match policy {
        current::CrdPolicy::Skip => old::CrdPolicy::Skip,
        current::CrdPolicy::Create => old::CrdPolicy::Create,
        current::CrdPolicy::CreateReplace => old::CrdPolicy::CreateReplace,
    }
}

/// Sync options in 0.1's shape (identical fields).
pub fn sync_options(options: &current::SyncOptions) -> old::SyncOptions {
    old::SyncOptions {
        wait: options.wait,
        timeout_seconds: options.timeout_seconds,
        atomic: options.atomic,
        rollback_on_failure: options.rollback_on_failure,
        max_history: options.max_history,
        force: options.force,
        install_crds: crd_policy(options.install_crds),
        upgrade_crds: crd_policy(options.upgrade_crds),
        disable_hooks: options.disable_hooks,
        description: options.description.clone(),
        upgrade_unchanged: options.upgrade_unchanged,
    }
}

/// A sync request in 0.1's shape, with `values` the merged JSON.
pub fn sync_request(request: &current::SyncRequest, values: String) -> old::SyncRequest {
    old::SyncRequest {
        release: request.release.clone(),
        chart: request.chart.clone(),
        values,
        options: sync_options(&request.options),
    }
}

/// 0.1's sync outcome in the current shape.
pub fn sync_outcome(outcome: old::SyncOutcome) -> current::SyncOutcome {
    current::SyncOutcome {
        action: match outcome.action {
            old::SyncAction::Installed => current::SyncAction::Installed,
            old::SyncAction::Upgraded => current::SyncAction::Upgraded,
            old::SyncAction::Unchanged => current::SyncAction::Unchanged,
        },
        release: outcome.release,
    }
}

/// 0.1's plan in the current shape.
pub fn sync_plan(plan: old::SyncPlan) -> current::SyncPlan {
    current::SyncPlan {
        changes: plan.changes,
        reason: plan.reason,
    }
}

/// Uninstall options in 0.1's shape.
pub fn uninstall_options(options: &current::UninstallOptions) -> old::UninstallOptions {
    old::UninstallOptions {
        keep_history: options.keep_history,
        wait: options.wait,
        timeout_seconds: options.timeout_seconds,
        disable_hooks: options.disable_hooks,
    }
}

/// Template options in 0.1's shape.
pub fn template_options(options: &current::TemplateOptions) -> old::TemplateOptions {
    old::TemplateOptions {
        kube_version: options.kube_version.clone(),
        api_versions: options.api_versions.clone(),
        is_upgrade: options.is_upgrade,
    }
}

/// 0.1's rendering in the current shape.
pub fn rendered(rendered: old::Rendered) -> current::Rendered {
    current::Rendered {
        manifest: rendered.manifest,
        hooks: rendered.hooks,
        notes: rendered.notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_services_component_is_found_beside_the_backend_then_installed() {
        let dir = tempfile::tempdir().unwrap();
        let backend = dir.path().join("old/backend.wasm");
        let installed = dir.path().join("installed");
        std::fs::create_dir_all(&installed).unwrap();
        std::fs::create_dir_all(backend.parent().unwrap()).unwrap();
        let searched =
            helm_services_path(None, &backend, std::slice::from_ref(&installed)).unwrap_err();
        assert_eq!(
            searched,
            vec![
                dir.path().join("old").join(HELM_SERVICES_FILE),
                installed.join(HELM_SERVICES_FILE)
            ]
        );
        std::fs::write(installed.join(HELM_SERVICES_FILE), b"").unwrap();
        assert_eq!(
            helm_services_path(None, &backend, std::slice::from_ref(&installed)).unwrap(),
            installed.join(HELM_SERVICES_FILE)
        );
        std::fs::write(dir.path().join("old").join(HELM_SERVICES_FILE), b"").unwrap();
        assert_eq!(
            helm_services_path(None, &backend, std::slice::from_ref(&installed)).unwrap(),
            dir.path().join("old").join(HELM_SERVICES_FILE)
        );
        let configured = dir.path().join("elsewhere.wasm");
        assert_eq!(
            helm_services_path(Some(&configured), &backend, &[]).unwrap(),
            configured
        );
    }
}
