//! `source-helm-repo`: the chart source component for Helm HTTP repositories (world `source-plugin`).
//!
//! Status: the component loads and answers every call, but resolving chart versions from `index.yaml` and downloading
//! charts are not implemented yet (the sources issue, #5); each call returns an
//! `unsupported` error that says so.

use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, Revision, SourceRequest,
};

const NAME: &str = "source-helm-repo";

struct HelmRepoSource;

impl Guest for HelmRepoSource {
    fn resolve(_request: SourceRequest) -> Result<Revision, Error> {
        Err(Error::new(
            ErrorCode::Unsupported,
            format!("{NAME}: `resolve` is not implemented in this build"),
        ))
    }
    fn fetch(_request: SourceRequest, _at: Revision) -> Result<ChartArtifact, Error> {
        Err(Error::new(
            ErrorCode::Unsupported,
            format!("{NAME}: `fetch` is not implemented in this build"),
        ))
    }
}

capstan_plugin_sdk::source::export_source_plugin!(HelmRepoSource);
