//! Test component: `resolve` traps (a Rust panic, which aborts) unless the source URL is `ok`.
//! Used to prove a trap is reported as a failed call naming the plugin and function.

use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, PluginInfo, Revision, SourceKind, SourceRequest,
};

fn url(request: &SourceRequest) -> String {
    request.spec_field("/url").unwrap_or_default()
}

struct Trap;

impl Guest for Trap {
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![SourceKind::new(
            "test-trap",
            "test source: anything but url `ok` misbehaves",
            r#"{"type": "object", "properties": {"url": {"type": "string"}}}"#,
        )])
    }
    fn resolve(request: SourceRequest) -> Result<Revision, Error> {
        if url(&request) == "ok" {
            return Ok(Revision {
                id: "ok".into(),
                content_id: String::new(),
            });
        }
        panic!("trap plugin was asked to trap")
    }
    fn fetch(_request: SourceRequest, _at: Revision) -> Result<ChartArtifact, Error> {
        Err(Error::new(ErrorCode::Unsupported, "trap packages nothing"))
    }
}

capstan_plugin_sdk::source::export_source_plugin!(Trap);
