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
            "test" => notes.push(format!(
                "{name}: spec.test dropped (Capstan does not run Helm tests)"
            )),
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
        assert_eq!(converted[0].notes.len(), 1, "{:?}", converted[0].notes);
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
