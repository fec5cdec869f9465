//! Test component: `resolve` spins forever unless the source URL is `ok`.
//! Used to prove the host's call deadline stops a runaway guest.

use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, PluginInfo, Revision, SourceKind, SourceRequest,
};

fn url(request: &SourceRequest) -> String {
    request.spec_field("/url").unwrap_or_default()
}

struct Spin;

impl Guest for Spin {
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![SourceKind::new(
            "test-spin-forever",
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
        let mut counter: u64 = 0;
        loop {
            counter = std::hint::black_box(counter.wrapping_add(1));
        }
    }
    fn fetch(_request: SourceRequest, _at: Revision) -> Result<ChartArtifact, Error> {
        Err(Error::new(
            ErrorCode::Unsupported,
            "spin-forever packages nothing",
        ))
    }
}

capstan_plugin_sdk::source::export_source_plugin!(Spin);
