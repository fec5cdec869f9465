//! `capstan convert`: turn Flux Helm Operator `helm.fluxcd.io/v1` HelmReleases into
//! `helm.capstan.dev/v1alpha1` ones. The spec fields keep their names; what Capstan does
//! not do is refused or dropped with a note naming the document and the field, never
//! silently.

use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value};

use crate::api::HelmRelease;

/// Why a document cannot be converted; names the document and the field.
#[derive(Debug, thiserror::Error)]
#[error("document {index} ({name}): {field}: {message}")]
pub struct ConvertError {
    /// Position of the document in the input (from 1).
    pub index: usize,
    /// `namespace/name` of the HelmRelease, when known.
    pub name: String,
    /// The field at fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// A converted document and the notes about what was dropped.
#[derive(Debug)]
pub struct Converted {
    /// The Capstan HelmRelease.
    pub release: HelmRelease,
    /// What was dropped or changed, one sentence each.
    pub notes: Vec<String>,
}

/// Spec fields of `helm.fluxcd.io/v1` that Capstan keeps as they are.
const KEPT: [&str; 15] = [
    "chart",
    "releaseName",
    "targetNamespace",
    "helmVersion",
    "wait",
    "timeout",
    "maxHistory",
    "forceUpgrade",
    "skipCRDs",
    "resetValues",
    "rollback",
    "values",
    "valuesFrom",
    "valueFileSecrets",
    "disableOpenAPIValidation",
];

/// Convert every document of a YAML stream.
pub fn convert(text: &str) -> Result<Vec<Converted>, ConvertError> {
    let mut out = Vec::new();
    for (position, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let index = position + 1;
        let value = Value::deserialize(document).map_err(|e| ConvertError {
            index,
            name: "?".into(),
            field: "document".into(),
            message: e.to_string(),
        })?;
        if value.is_null() {
            continue;
        }
        out.push(convert_one(index, &value)?);
    }
    Ok(out)
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn convert_one(index: usize, value: &Value) -> Result<Converted, ConvertError> {
    let metadata = value.get("metadata").cloned().unwrap_or(Value::Null);
    let name = format!(
        "{}/{}",
        text(&metadata, "namespace").unwrap_or("default"),
        text(&metadata, "name").unwrap_or("?")
    );
    let error = |field: &str, message: String| ConvertError {
        index,
        name: name.clone(),
        field: field.into(),
        message,
    };
    let api_version = text(value, "apiVersion").unwrap_or_default();
    let kind = text(value, "kind").unwrap_or_default();
    if api_version != "helm.fluxcd.io/v1" || kind != "HelmRelease" {
        return Err(error(
            "apiVersion/kind",
            format!("expected helm.fluxcd.io/v1 HelmRelease, found {api_version} {kind}"),
        ));
    }
    let mut notes = Vec::new();
    let mut spec = Mapping::new();
    let Some(source) = value.get("spec").and_then(Value::as_mapping) else {
        return Err(error("spec", "missing".into()));
    };
    for (key, field) in source {
        let key_text = key.as_str().unwrap_or_default();
        match key_text {
            "test" => {
                let mut test = field.as_mapping().cloned().unwrap_or_default();
                if test.remove("cleanup").is_some() {
                    notes.push(format!(
                        "{name}: spec.test.cleanup dropped (test hooks follow their helm.sh/hook-delete-policy, as in Helm 3)"
                    ));
                }
                spec.insert(key.clone(), Value::Mapping(test));
            }
            "disableOpenAPIValidation" => notes.push(format!(
                "{name}: spec.disableOpenAPIValidation dropped (server-side apply validates)"
            )),
            "valueFileSecrets" | "valuesFrom" => {}
            _ if KEPT.contains(&key_text) => {
                spec.insert(key.clone(), field.clone());
            }
            other => return Err(error(&format!("spec.{other}"), "unknown field".into())),
        }
    }
    // Deprecated valueFileSecrets become secretKeyRef entries placed before valuesFrom, as
    // the Flux Helm Operator merged them.
    let mut values_from = Vec::new();
    if let Some(secrets) = source.get("valueFileSecrets").and_then(Value::as_sequence) {
        for secret in secrets {
            let Some(secret_name) = text(secret, "name") else {
                return Err(error("spec.valueFileSecrets[].name", "missing".into()));
            };
            let mut reference = Mapping::new();
            reference.insert("name".into(), secret_name.into());
            let mut entry = Mapping::new();
            entry.insert("secretKeyRef".into(), Value::Mapping(reference));
            values_from.push(Value::Mapping(entry));
        }
    }
    if let Some(entries) = source.get("valuesFrom").and_then(Value::as_sequence) {
        for entry in entries {
            if entry.get("externalSourceRef").is_some() {
                notes.push(format!(
                    "{name}: valuesFrom externalSourceRef kept; its URL must be allowed by the configuration's sources.egress"
                ));
            }
            values_from.push(entry.clone());
        }
    }
    if !values_from.is_empty() {
        spec.insert("valuesFrom".into(), Value::Sequence(values_from));
    }
    spec.remove("disableOpenAPIValidation");
    // Flux v1's image automation read these annotations; Capstan does not automate images.
    if let Some(annotations) = metadata.get("annotations").and_then(Value::as_mapping) {
        for key in annotations.keys().filter_map(Value::as_str) {
            let domain = key.split_once('/').map_or("", |(domain, _)| domain);
            if domain == "fluxcd.io" || domain.ends_with(".fluxcd.io") {
                notes.push(format!(
                    "{name}: metadata.annotations.{key} kept but has no effect (Flux v1 image automation; Capstan does not update images)"
                ));
            }
        }
    }
    let mut kept_metadata = Mapping::new();
    for key in ["name", "namespace", "labels", "annotations"] {
        if let Some(field) = metadata.get(key) {
            kept_metadata.insert(key.into(), field.clone());
        }
    }
    let mut document = Mapping::new();
    document.insert("apiVersion".into(), "helm.capstan.dev/v1alpha1".into());
    document.insert("kind".into(), "HelmRelease".into());
    document.insert("metadata".into(), Value::Mapping(kept_metadata));
    document.insert("spec".into(), Value::Mapping(spec));
    let release: HelmRelease = serde_yaml_ng::from_value(Value::Mapping(document))
        .map_err(|e| error("spec", e.to_string()))?;
    Ok(Converted { release, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_a_flux_helm_operator_release() {
        let converted = convert(
            "apiVersion: helm.fluxcd.io/v1\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: apps\n  resourceVersion: \"7\"\n\
             spec:\n  releaseName: web\n  helmVersion: v3\n  chart:\n    repository: https://charts.example.com/\n    name: web\n    version: 1.2.3\n\
             \x20 valueFileSecrets:\n  - name: old\n  valuesFrom:\n  - configMapKeyRef: {name: cm, key: extra.yaml}\n\
             \x20 values: {replicas: 2}\n  test: {enable: true}\n  rollback: {enable: true, retry: true}\n",
        )
        .unwrap();
        let release = &converted[0].release;
        assert_eq!(release.metadata.name.as_deref(), Some("web"));
        assert!(release.metadata.resource_version.is_none());
        assert_eq!(release.spec.chart.version.as_deref(), Some("1.2.3"));
        assert_eq!(release.spec.values_from.len(), 2);
        assert_eq!(
            release.spec.values_from[0]
                .secret_key_ref
                .as_ref()
                .unwrap()
                .name,
            "old"
        );
        assert_eq!(
            release.spec.values_from[1]
                .config_map_key_ref
                .as_ref()
                .unwrap()
                .key_or_default(),
            "extra.yaml"
        );
        assert!(release.spec.rollback.as_ref().unwrap().retry);
        assert!(release.spec.test.as_ref().unwrap().enable);
        assert!(converted[0].notes.is_empty(), "{:?}", converted[0].notes);
    }

    /// Every field of `helm.fluxcd.io/v1` (its Go types), `[]` for list items.
    const V1_FIELDS: [&str; 40] = [
        "/helmVersion",
        "/releaseName",
        "/targetNamespace",
        "/timeout",
        "/maxHistory",
        "/resetValues",
        "/skipCRDs",
        "/wait",
        "/forceUpgrade",
        "/disableOpenAPIValidation",
        "/values",
        "/chart/git",
        "/chart/ref",
        "/chart/path",
        "/chart/secretRef/name",
        "/chart/skipDepUpdate",
        "/chart/repository",
        "/chart/name",
        "/chart/version",
        "/chart/chartPullSecret/name",
        "/rollback/enable",
        "/rollback/retry",
        "/rollback/maxRetries",
        "/rollback/force",
        "/rollback/recreate",
        "/rollback/disableHooks",
        "/rollback/timeout",
        "/rollback/wait",
        "/test/enable",
        "/test/ignoreFailures",
        "/test/timeout",
        "/test/cleanup",
        "/valueFileSecrets/[]/name",
        "/valuesFrom/[]/configMapKeyRef/name",
        "/valuesFrom/[]/configMapKeyRef/namespace",
        "/valuesFrom/[]/configMapKeyRef/key",
        "/valuesFrom/[]/configMapKeyRef/optional",
        "/valuesFrom/[]/secretKeyRef/name",
        "/valuesFrom/[]/externalSourceRef/url",
        "/valuesFrom/[]/chartFileRef/path",
    ];

    /// `(JSON pointer, value)` of every leaf under `value`.
    fn leaves(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
        match value {
            serde_json::Value::Object(map) if !map.is_empty() => {
                for (key, item) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    leaves(&format!("{prefix}/{key}"), item, out);
                }
            }
            serde_json::Value::Array(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    leaves(&format!("{prefix}/{i}"), item, out);
                }
            }
            leaf => out.push((prefix.to_owned(), leaf.clone())),
        }
    }

    /// The corpus of `tests/fixtures/helm-operator-v1`: every field of every document is
    /// either in the converted spec with the same value (list indices shifted where
    /// `valueFileSecrets` became the first `valuesFrom` entries) or named in a note; and
    /// the corpus uses every v1 field.
    #[test]
    fn the_helm_operator_corpus_converts_field_by_field() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/helm-operator-v1");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 20, "{} files", files.len());
        let mut used = std::collections::BTreeSet::new();
        let mut documents = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let inputs: Vec<serde_json::Value> = serde_yaml_ng::Deserializer::from_str(&text)
                .map(|d| serde_json::to_value(Value::deserialize(d).unwrap()).unwrap())
                .collect();
            let converted = convert(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert_eq!(converted.len(), inputs.len(), "{}", file.display());
            for (input, out) in inputs.iter().zip(&converted) {
                documents += 1;
                let spec = &input["spec"];
                let result = serde_json::to_value(&out.release.spec).unwrap();
                let notes = out.notes.join("\n");
                let shift = spec["valueFileSecrets"].as_array().map_or(0, Vec::len);
                let mut found = Vec::new();
                leaves("", spec, &mut found);
                for (path, value) in found {
                    let parts: Vec<&str> = path.split('/').skip(1).collect();
                    let general: Vec<String> = parts
                        .iter()
                        .map(|p| {
                            if p.parse::<usize>().is_ok() {
                                "[]".into()
                            } else {
                                p.to_string()
                            }
                        })
                        .collect();
                    let general = format!("/{}", general.join("/"));
                    used.insert(if general.starts_with("/values/") {
                        "/values".into()
                    } else {
                        general
                    });
                    let target = match parts.as_slice() {
                        ["valueFileSecrets", i, "name"] => {
                            format!("/valuesFrom/{i}/secretKeyRef/name")
                        }
                        ["valuesFrom", i, rest @ ..] => format!(
                            "/valuesFrom/{}/{}",
                            i.parse::<usize>().unwrap() + shift,
                            rest.join("/")
                        ),
                        _ => path.clone(),
                    };
                    let kept = result.pointer(&target) == Some(&value);
                    let named = notes.contains(&format!("spec.{}", parts[0]));
                    assert!(
                        kept || named,
                        "{}: {path} = {value} is neither kept (at {target}) nor named in a note; notes: {notes}",
                        file.display()
                    );
                }
            }
        }
        assert!(documents >= 20);
        let missing: Vec<_> = V1_FIELDS.iter().filter(|f| !used.contains(**f)).collect();
        assert!(missing.is_empty(), "the corpus does not use {missing:?}");
    }

    #[test]
    fn keeps_values_urls_and_chart_files_and_refuses_unknown_fields_by_name() {
        let converted = convert(
            "apiVersion: helm.fluxcd.io/v1\nkind: HelmRelease\nmetadata: {name: a}\n\
             spec:\n  chart: {git: g, path: p}\n  valuesFrom:\n  - externalSourceRef: {url: 'http://x', optional: true}\n  - chartFileRef: {path: values-prod.yaml}\n",
        )
        .unwrap();
        let values_from = &converted[0].release.spec.values_from;
        assert_eq!(
            values_from[0]
                .external_source_ref
                .as_ref()
                .map(|r| (r.url.as_str(), r.optional)),
            Some(("http://x", true))
        );
        assert_eq!(
            values_from[1]
                .chart_file_ref
                .as_ref()
                .map(|r| r.path.as_str()),
            Some("values-prod.yaml")
        );
        let error = convert(
            "apiVersion: helm.fluxcd.io/v1\nkind: HelmRelease\nmetadata: {name: a}\n\
             spec:\n  chart: {git: g, path: p}\n  bogus: 1\n",
        )
        .unwrap_err();
        assert_eq!(error.field, "spec.bogus");
        assert!(
            error.to_string().starts_with("document 1 (default/a): "),
            "{error}"
        );
        let wrong = convert("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n").unwrap_err();
        assert_eq!(wrong.field, "apiVersion/kind");
    }
}
