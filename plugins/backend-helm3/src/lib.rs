//! `backend-helm3`: the Helm v3 release backend component (world `backend-plugin`).
//!
//! `template` renders a chart exactly as `helm template` does (through `capstan-helm`).
//! `sync` (install/upgrade), `uninstall`, `status` and `history` keep Helm v3 release records
//! (Secrets `sh.helm.release.v1.<name>.v<N>`) that the real `helm` CLI reads, and apply
//! objects through the host's `kube` capability (server-side apply, field manager
//! `capstan`). See `sync` and `uninstall` for what is not implemented yet (hooks, wait,
//! CRDs, no-op detection); `rollback` and `plan` return `unsupported`.

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ErrorCode, Json, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions,
};

mod hooks;
mod objects;
mod render;
mod store;
mod sync;
mod uninstall;
mod wait;

const NAME: &str = "backend-helm3";

fn unsupported(operation: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("{NAME}: `{operation}` is not implemented in this build"),
    )
}

struct Helm3;

impl Guest for Helm3 {
    fn sync(request: SyncRequest) -> Result<SyncOutcome, Error> {
        sync::sync(request)
    }
    fn uninstall(
        release: ReleaseId,
        options: UninstallOptions,
    ) -> Result<Option<ReleaseInfo>, Error> {
        uninstall::uninstall(&release, &options)
    }
    fn status(release: ReleaseId) -> Result<Option<ReleaseInfo>, Error> {
        Ok(store::history(&release)?.last().map(store::info))
    }
    fn history(release: ReleaseId, max: u32) -> Result<Vec<ReleaseInfo>, Error> {
        let records = store::history(&release)?;
        let limit = if max == 0 {
            records.len()
        } else {
            max as usize
        };
        Ok(records.iter().rev().take(limit).map(store::info).collect())
    }
    fn rollback(
        _release: ReleaseId,
        _revision: Option<u32>,
        _options: SyncOptions,
    ) -> Result<ReleaseInfo, Error> {
        Err(unsupported("rollback"))
    }
    fn plan(_request: SyncRequest) -> Result<SyncPlan, Error> {
        Err(unsupported("plan"))
    }
    fn template(
        release: ReleaseId,
        chart: ChartArtifact,
        values: Json,
        options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        render::template(release, chart, values, options)
    }
}

capstan_plugin_sdk::backend::export_backend_plugin!(Helm3);
