//! `backend-helm2`: the Helm v2 release backend (Tiller ConfigMap storage) component (world `backend-plugin`).
//!
//! Status: the component loads and answers every call, but releases, rendering and storage
//! are not implemented yet; each operation returns an `unsupported` error that says so.
//! Rendering comes with the rendering issue (#3), releases with the Helm v2 backend issue.

use capstan_plugin_sdk::backend::capstan::plugin::types::{
    ChartArtifact, Error, ErrorCode, ReleaseId, ReleaseInfo,
};
use capstan_plugin_sdk::backend::exports::capstan::plugin::backend::{
    ChartInput, Guest, Rendered, SyncOptions, SyncOutcome, SyncPlan, SyncRequest, TemplateOptions,
    UninstallOptions, ValueLayer,
};

const NAME: &str = "backend-helm2";

fn unsupported(operation: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("{NAME}: `{operation}` is not implemented in this build"),
    )
}

struct Helm2;

impl Guest for Helm2 {
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
    fn package(_chart: ChartInput) -> Result<ChartArtifact, Error> {
        Err(unsupported("package"))
    }
    fn template(
        _release: ReleaseId,
        _chart: ChartArtifact,
        _values: Vec<ValueLayer>,
        _options: TemplateOptions,
    ) -> Result<Rendered, Error> {
        Err(unsupported("template"))
    }
}

capstan_plugin_sdk::backend::export_backend_plugin!(Helm2);
