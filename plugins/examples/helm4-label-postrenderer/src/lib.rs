//! A Helm 4 post-renderer (`postrenderer/v1` on the `extism/v1` runtime): every object of
//! the rendered stream gets the labels given as `--post-renderer-args KEY=VALUE`.
//!
//! Input `{"manifests": "<YAML stream>", "extraArgs": ["k=v", …]}`, output
//! `{"manifests": "<YAML stream>"}`. A `manifests` that is not a string is refused by name:
//! Helm 4.3 marshals its `*bytes.Buffer` as `{}`, so the plugin says so instead of
//! returning an empty stream.

use extism_pdk::{Error, FnResult, Json, WithReturnCode, plugin_fn};
use serde::{Deserialize, Serialize};
use serde_yaml_ng::Value;

#[derive(Deserialize)]
struct Input {
    manifests: serde_json::Value,
    #[serde(rename = "extraArgs", default)]
    extra_args: Option<Vec<String>>,
}

#[derive(Serialize)]
struct Output {
    manifests: String,
}

fn failure(message: String) -> WithReturnCode<Error> {
    WithReturnCode::new(Error::msg(message), 1)
}

/// The labels asked for, or which argument is not `KEY=VALUE`.
fn labels(args: &[String]) -> Result<Vec<(String, String)>, String> {
    args.iter()
        .map(|arg| {
            arg.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| format!("argument {arg:?} is not KEY=VALUE"))
        })
        .collect()
}

/// Label every object of `stream`.
fn relabel(stream: &str, labels: &[(String, String)]) -> Result<String, String> {
    let mut out = String::new();
    for document in serde_yaml_ng::Deserializer::from_str(stream) {
        let mut value =
            Value::deserialize(document).map_err(|e| format!("the input is not YAML: {e}"))?;
        if value.is_null() {
            continue;
        }
        let metadata = value
            .as_mapping_mut()
            .ok_or("a document is not an object")?
            .entry("metadata".into())
            .or_insert_with(|| Value::Mapping(Default::default()));
        let target = metadata
            .as_mapping_mut()
            .ok_or("metadata is not an object")?
            .entry("labels".into())
            .or_insert_with(|| Value::Mapping(Default::default()));
        let target = target
            .as_mapping_mut()
            .ok_or("metadata.labels is not an object")?;
        for (k, v) in labels {
            target.insert(k.as_str().into(), v.as_str().into());
        }
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&value).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

#[plugin_fn]
pub fn helm_plugin_main(Json(input): Json<Input>) -> FnResult<Json<Output>> {
    let serde_json::Value::String(manifests) = input.manifests else {
        return Err(failure(format!(
            "`manifests` must be the YAML stream as a string; the host sent {}",
            input.manifests
        )));
    };
    let labels = labels(input.extra_args.as_deref().unwrap_or_default()).map_err(failure)?;
    let manifests = relabel(&manifests, &labels).map_err(failure)?;
    Ok(Json(Output { manifests }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_object_gets_the_labels_and_bad_arguments_are_named() {
        let labels = labels(&["team=web".into(), "tier=".into()]).unwrap();
        let out = relabel(
            "---\n{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n---\nkind: Secret\nmetadata:\n  name: b\n  labels: {x: y}\n",
            &labels,
        )
        .unwrap();
        let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&out)
            .map(|d| Value::deserialize(d).unwrap())
            .collect();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0]["metadata"]["labels"]["team"], "web");
        assert_eq!(docs[1]["metadata"]["labels"]["x"], "y");
        assert_eq!(docs[1]["metadata"]["labels"]["tier"], "");
        assert_eq!(
            super::labels(&["=x".into()]).unwrap_err(),
            "argument \"=x\" is not KEY=VALUE"
        );
    }
}
