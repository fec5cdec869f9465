//! Test component: `resolve` allocates without bound unless the source URL is `ok`.
//! Used to prove the host's memory limit stops a greedy guest.

use capstan_plugin_sdk::source::capstan::plugin::types::{ChartArtifact, Error, ErrorCode};
use capstan_plugin_sdk::source::exports::capstan::plugin::source::{
    Guest, PluginInfo, Revision, SourceKind, SourceRequest,
};

fn url(request: &SourceRequest) -> String {
    request.spec_field("/url").unwrap_or_default()
}

struct Hoard;

impl Guest for Hoard {
    fn describe() -> PluginInfo {
        PluginInfo::serving(vec![SourceKind::new(
            "test-allocate-forever",
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
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(std::hint::black_box(vec![0x5a; 1 << 20]));
        }
    }
    fn fetch(_request: SourceRequest, _at: Revision) -> Result<ChartArtifact, Error> {
        Err(Error::new(
            ErrorCode::Unsupported,
            "allocate-forever packages nothing",
        ))
    }
}

capstan_plugin_sdk::source::export_source_plugin!(Hoard);
