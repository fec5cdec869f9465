//! `compat-helm`: the Helm work a `capstan:plugin@0.1` backend expected from its host,
//! done in the sandbox so that the host stays free of any chart or values format.
//!
//! 0.1 backends took the user's values already merged (one JSON object) and had no
//! `package`; the 0.1 host did both with the Helm libraries. Since 0.2 the host hands
//! backends ordered value layers and asks them to package. To keep serving 0.1 backends
//! (N−1), the host runs this component before a 0.1 call: `merge-values` merges the layers
//! exactly as a 0.2 backend does (`capstan_release::values`) and encodes them as the 0.1
//! host did (`capstan_helm::values_json`, Go's number kinds kept); `package` packages a
//! chart folder as `helm package` does (`capstan_release::package`).

wit_bindgen::generate!({ world: "helm-services-provider", path: "wit" });

use capstan_plugin_sdk::backend::exports::capstan::plugin::backend as contract;
use exports::capstan::compat::helm_services::{
    ChartInput, Guest, PackagedChart, ValueLayer, ValuesDocument,
};

capstan_plugin_sdk::use_size_class_allocator!();
capstan_plugin_sdk::use_word_memcmp!();

struct HelmServices;

/// A layer in the 0.2 contract's shape (the same variant, generated twice).
fn contract_layer(layer: ValueLayer) -> contract::ValueLayer {
    match layer {
        ValueLayer::Document(ValuesDocument {
            origin,
            content,
            optional,
        }) => contract::ValueLayer::Document(contract::ValuesDocument {
            origin,
            content,
            optional,
        }),
        ValueLayer::Set(e) => contract::ValueLayer::Set(e),
        ValueLayer::SetString(e) => contract::ValueLayer::SetString(e),
        ValueLayer::SetJson(e) => contract::ValueLayer::SetJson(e),
        ValueLayer::SetLiteral(e) => contract::ValueLayer::SetLiteral(e),
        ValueLayer::SetFile(file) => contract::ValueLayer::SetFile(contract::FileValue {
            path: file.path,
            content: file.content,
        }),
    }
}

/// A chart input in the 0.2 contract's shape.
fn contract_chart(chart: ChartInput) -> contract::ChartInput {
    match chart {
        ChartInput::Folder(files) => contract::ChartInput::Folder(
            files
                .into_iter()
                .map(|f| contract::ChartFile {
                    path: f.path,
                    contents: f.contents,
                })
                .collect(),
        ),
        ChartInput::Archive(bytes) => contract::ChartInput::Archive(bytes),
    }
}

impl Guest for HelmServices {
    fn merge_values(layers: Vec<ValueLayer>) -> Result<String, String> {
        let layers: Vec<contract::ValueLayer> = layers.into_iter().map(contract_layer).collect();
        let merged = capstan_release::values::merge(&layers).map_err(|e| e.message)?;
        capstan_helm::values_json::to_typed_json(&merged)
    }

    fn package(chart: ChartInput) -> Result<PackagedChart, String> {
        let artifact =
            capstan_release::package::package(contract_chart(chart)).map_err(|e| e.message)?;
        Ok(PackagedChart {
            archive: artifact.archive,
            digest: artifact.digest,
            name: artifact.metadata.name,
            version: artifact.metadata.version,
            app_version: artifact.metadata.app_version,
        })
    }
}

export!(HelmServices);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_merge_in_order_with_go_number_kinds() {
        let layers = vec![
            ValueLayer::Document(ValuesDocument {
                origin: "spec.values".into(),
                content: "replicas: 2\nratio: 1.0\nimage: {tag: v1, pull: Always}\n".into(),
                optional: false,
            }),
            ValueLayer::Set("image.tag=v2,replicas=3".into()),
        ];
        let merged: serde_json::Value =
            serde_json::from_str(&HelmServices::merge_values(layers).unwrap()).unwrap();
        assert_eq!(merged["replicas"], 3);
        assert_eq!(merged["image"]["tag"], "v2");
        assert_eq!(merged["image"]["pull"], "Always");
        // A YAML float stays a float across the boundary.
        let text = HelmServices::merge_values(vec![ValueLayer::Document(ValuesDocument {
            origin: "f".into(),
            content: "ratio: 1.0\n".into(),
            optional: false,
        })])
        .unwrap();
        assert_eq!(text, r#"{"ratio":1.0}"#);
    }

    #[test]
    fn a_bad_layer_is_named() {
        let error = HelmServices::merge_values(vec![ValueLayer::Document(ValuesDocument {
            origin: "valuesFrom[1] (Secret ns/s, key values.yaml)".into(),
            content: "a: [".into(),
            optional: false,
        })])
        .unwrap_err();
        assert!(
            error.contains("valuesFrom[1] (Secret ns/s, key values.yaml)"),
            "{error}"
        );
        let error = HelmServices::merge_values(vec![ValueLayer::Set("a[=1".into())]).unwrap_err();
        assert!(error.contains("--set"), "{error}");
    }

    #[test]
    fn a_folder_is_packaged_with_its_metadata() {
        let chart = ChartInput::Folder(vec![
            exports::capstan::compat::helm_services::ChartFile {
                path: "Chart.yaml".into(),
                contents: b"apiVersion: v2\nname: web\nversion: 1.2.3\nappVersion: \"4\"\n"
                    .to_vec(),
            },
            exports::capstan::compat::helm_services::ChartFile {
                path: "templates/cm.yaml".into(),
                contents: b"kind: ConfigMap\n".to_vec(),
            },
        ]);
        let packaged = HelmServices::package(chart).unwrap();
        assert_eq!(packaged.name, "web");
        assert_eq!(packaged.version, "1.2.3");
        assert_eq!(packaged.app_version.as_deref(), Some("4"));
        assert!(packaged.digest.starts_with("sha256:"));
        let error = HelmServices::package(ChartInput::Archive(b"not gzip".to_vec())).unwrap_err();
        assert!(error.contains("not a chart archive"), "{error}");
    }
}
