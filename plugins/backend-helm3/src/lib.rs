//! `backend-helm3`: the Helm v3 release backend component (world `backend-plugin`).
//!
//! `template` renders a chart exactly as `helm template` does (through `capstan-helm`).
//! Release operations (sync, uninstall, status, history, rollback, plan) come with the Helm
//! v3 issue (#4); until then they return an `unsupported` error that says so.

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ErrorCode, Json, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions,
};

mod render;

const NAME: &str = "backend-helm3";

fn unsupported(operation: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("{NAME}: `{operation}` is not implemented in this build"),
    )
}

struct Helm3;

impl Guest for Helm3 {
    fn sync(_request: SyncRequest) -> Result<SyncOutcome, Error> {
        Err(unsupported("sync"))
    }
    fn uninstall(
        _release: ReleaseId,
        _options: UninstallOptions,
    ) -> Result<Option<ReleaseInfo>, Error> {
        Err(unsupported("uninstall"))
    }
    fn status(_release: ReleaseId) -> Result<Option<ReleaseInfo>, Error> {
        Err(unsupported("status"))
    }
    fn history(_release: ReleaseId, _max: u32) -> Result<Vec<ReleaseInfo>, Error> {
        Err(unsupported("history"))
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
