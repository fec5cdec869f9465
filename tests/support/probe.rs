//! Calling the `test-host-probe` component: its `template` export takes the probe's
//! instructions as its first value layer and answers with a JSON report of what each host import returned.

use capstan::capabilities::Grants;
use capstan::plugins::PluginRuntime;
use capstan::plugins::bindings::backend::exports::capstan::plugin::backend::{
    TemplateOptions, ValueLayer, ValuesDocument,
};
use capstan::plugins::bindings::types::{ChartArtifact, ChartMetadata, ReleaseId};
use serde_json::Value;

/// Run the backend loaded as `probe` in `runtime` with `instructions` and `grants`; the
/// report it returns.
pub async fn probe(runtime: &PluginRuntime, instructions: Value, grants: Grants) -> Value {
    let backend = runtime.backend("probe").unwrap();
    let release = ReleaseId {
        name: "probe".into(),
        namespace: "default".into(),
    };
    let chart = ChartArtifact {
        archive: vec![],
        digest: String::new(),
        metadata: ChartMetadata {
            name: "none".into(),
            version: "0.0.0".into(),
            app_version: None,
        },
    };
    let options = TemplateOptions {
        kube_version: None,
        api_versions: vec![],
        is_upgrade: false,
    };
    let rendered = backend
        .template(
            &release,
            &chart,
            &[ValueLayer::Document(ValuesDocument {
                origin: "probe instructions".into(),
                content: instructions.to_string(),
                optional: false,
            })],
            &options,
            grants,
        )
        .await
        .unwrap();
    serde_json::from_str(&rendered.manifest).unwrap()
}
