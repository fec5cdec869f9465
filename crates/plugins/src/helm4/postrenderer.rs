//! Helm 4 `postrenderer/v1` plugins as a release's post-renderer: the documents go to the
//! plugin as one YAML stream, each carrying the template file it came from in Helm's
//! `postrenderer.helm.sh/postrender-filename` annotation, and come back split by it (the
//! annotation removed; a document without one is `generated-by-postrender-N.yaml`), as
//! Helm's `annotateAndMerge`/`splitAndDeannotate` do.
//!
//! The message is `{"manifests": "<stream>", "extraArgs": [...]}` in and
//! `{"manifests": "<stream>"}` out. Helm 4.3 declares `manifests` as a Go `*bytes.Buffer`,
//! which `encoding/json` writes as `{}` (no exported fields) and cannot read a string into,
//! so no Wasm post-renderer can receive or return manifests through it; Capstan sends and
//! takes the stream as a JSON string, the shape Helm's own pending fix gives the field.
//! Documents are sent as JSON (valid YAML), so the plugin reads no scalar differently from
//! what the chart's YAML meant.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use capstan_postrender::Document;

/// Helm's annotation carrying a document's template file through a post-renderer.
pub const FILENAME_ANNOTATION: &str = "postrenderer.helm.sh/postrender-filename";

#[derive(Serialize)]
struct Input<'a> {
    manifests: String,
    #[serde(rename = "extraArgs")]
    extra_args: &'a [String],
}

#[derive(Deserialize)]
struct Output {
    manifests: Value,
}

/// The plugin's input for `documents` and `args`.
pub fn input_json(documents: &[Document], args: &[String]) -> Result<Vec<u8>, String> {
    let mut stream = String::new();
    for document in documents {
        let mut object = document.object.clone();
        if let Some(map) = object.as_object_mut() {
            let metadata = map
                .entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(metadata) = metadata.as_object_mut() {
                let annotations = metadata
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Some(annotations) = annotations.as_object_mut() {
                    annotations.insert(
                        FILENAME_ANNOTATION.into(),
                        Value::String(document.source.clone()),
                    );
                }
            }
        }
        stream.push_str("---\n");
        stream.push_str(&object.to_string());
        stream.push('\n');
    }
    serde_json::to_vec(&Input {
        manifests: stream,
        extra_args: args,
    })
    .map_err(|e| format!("cannot write the plugin's input: {e}"))
}

/// The documents of the plugin's output.
pub fn output_documents(output: &[u8]) -> Result<Vec<Document>, String> {
    let parsed: Output = serde_json::from_slice(output).map_err(|e| {
        format!(
            "the output is not postrenderer/v1 JSON ({{\"manifests\": \"<YAML stream>\"}}): {e} (output starts {:?})",
            String::from_utf8_lossy(&output[..output.len().min(80)])
        )
    })?;
    let Value::String(stream) = parsed.manifests else {
        return Err(format!(
            "output field `manifests` must be the YAML stream as a string, not {}",
            parsed.manifests
        ));
    };
    if stream.trim().is_empty() {
        return Err("the post-renderer produced empty output".into());
    }
    let mut documents = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(&stream).enumerate() {
        let mut object = Value::deserialize(document)
            .map_err(|e| format!("the output's document {index} is not YAML: {e}"))?;
        if object.is_null() {
            continue;
        }
        if !object.is_object() {
            return Err(format!("the output's document {index} is not an object"));
        }
        let source = take_filename(&mut object)
            .unwrap_or_else(|| format!("generated-by-postrender-{index}.yaml"));
        documents.push(Document {
            source,
            hook: object
                .pointer("/metadata/annotations/helm.sh~1hook")
                .is_some(),
            object,
        });
    }
    Ok(documents)
}

/// Remove the filename annotation (and an `annotations` map it leaves empty).
fn take_filename(object: &mut Value) -> Option<String> {
    let metadata = object.get_mut("metadata")?.as_object_mut()?;
    let annotations = metadata.get_mut("annotations")?.as_object_mut()?;
    let source = annotations.remove(FILENAME_ANNOTATION)?;
    if annotations.is_empty() {
        metadata.remove("annotations");
    }
    source.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_travel_with_their_file_and_come_back_without_the_annotation() {
        let documents = vec![
            Document {
                source: "c/templates/cm.yaml".into(),
                hook: false,
                object: json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"on": "yes"}}),
            },
            Document {
                source: "c/templates/job.yaml".into(),
                hook: true,
                object: json!({"kind": "Job", "metadata": {"name": "j", "annotations": {"helm.sh/hook": "pre-install"}}}),
            },
        ];
        let input: Value =
            serde_json::from_slice(&input_json(&documents, &["a=b".into()]).unwrap()).unwrap();
        assert_eq!(input["extraArgs"], json!(["a=b"]));
        let stream = input["manifests"].as_str().unwrap();
        assert!(
            stream.contains(r#""postrenderer.helm.sh/postrender-filename":"c/templates/cm.yaml""#),
            "{stream}"
        );
        // The plugin answers in YAML, adding a document of its own.
        let answer =
            json!({"manifests": format!("{stream}---\nkind: Secret\nmetadata:\n  name: extra\n")});
        let back = output_documents(answer.to_string().as_bytes()).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0], documents[0]);
        assert_eq!(back[1], documents[1]);
        assert_eq!(back[2].source, "generated-by-postrender-2.yaml");
    }

    #[test]
    fn unusable_output_is_refused_by_name() {
        let refused = |text: &str| output_documents(text.as_bytes()).unwrap_err();
        assert!(
            refused("{\"manifests\": {}}").contains("must be the YAML stream as a string, not {}")
        );
        assert!(refused("{\"manifests\": \" \"}").contains("empty output"));
        assert!(refused("nope").contains("not postrenderer/v1 JSON"));
        assert!(refused("{\"manifests\": \"- 1\\n\"}").contains("document 0 is not an object"));
    }
}
