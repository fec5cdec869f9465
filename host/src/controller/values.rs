//! A HelmRelease's values: every `valuesFrom` entry in order, then `spec.values`, merged as
//! Helm merges `-f` files (maps recursively, anything else replaced), with numbers read as
//! Helm reads values files (float64). The result crosses to the backend as typed JSON.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};

use crate::api::{HelmRelease, KeyRef, ValuesFromSource};

/// Why a HelmRelease's values cannot be composed. Names the object and key at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// A referenced object or key is missing (and not optional).
    #[error("valuesFrom[{index}]: {kind} {namespace}/{name}: {message}")]
    Reference {
        /// Position in `spec.valuesFrom`.
        index: usize,
        /// `ConfigMap` or `Secret`.
        kind: &'static str,
        /// Object namespace.
        namespace: String,
        /// Object name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// `spec.values` cannot be used.
    #[error("spec.values: {0}")]
    Inline(String),
    /// A `valuesFrom` entry names neither a ConfigMap nor a Secret.
    #[error("valuesFrom[{0}]: set configMapKeyRef or secretKeyRef")]
    Empty(usize),
}

/// What one `valuesFrom` entry read: the YAML text, or nothing (optional and missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The key's text.
    Text(String),
    /// Missing, and the entry is optional.
    Skipped,
}

/// The object kind and key a `valuesFrom` entry names, if any.
fn entry_ref(entry: &ValuesFromSource) -> Option<(&'static str, &KeyRef)> {
    match (&entry.config_map_key_ref, &entry.secret_key_ref) {
        (Some(r), _) => Some(("ConfigMap", r)),
        (None, Some(r)) => Some(("Secret", r)),
        (None, None) => None,
    }
}

/// Objects `valuesFrom` refers to: `(kind, namespace, name)`.
pub fn referenced_objects(hr: &HelmRelease) -> Vec<(&'static str, String, String)> {
    let namespace = hr.namespace_or_default();
    hr.spec
        .values_from
        .iter()
        .filter_map(|entry| {
            let (kind, key_ref) = entry_ref(entry)?;
            Some((
                kind,
                key_ref
                    .namespace
                    .clone()
                    .unwrap_or_else(|| namespace.clone()),
                key_ref.name.clone(),
            ))
        })
        .collect()
}

async fn read_key(
    client: &Client,
    kind: &'static str,
    namespace: &str,
    key_ref: &KeyRef,
) -> Result<String, String> {
    let key = key_ref.key_or_default();
    let data: Option<BTreeMap<String, String>> = if kind == "ConfigMap" {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        match api
            .get_opt(&key_ref.name)
            .await
            .map_err(|e| e.to_string())?
        {
            None => None,
            Some(cm) => Some(cm.data.unwrap_or_default()),
        }
    } else {
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        match api
            .get_opt(&key_ref.name)
            .await
            .map_err(|e| e.to_string())?
        {
            None => None,
            Some(secret) => Some(
                secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                    .collect(),
            ),
        }
    };
    let Some(data) = data else {
        return Err("not found".to_owned());
    };
    data.get(key)
        .cloned()
        .ok_or_else(|| format!("has no key `{key}`"))
}

/// Read every `valuesFrom` entry from the cluster, in order.
pub async fn fetch_values_from(
    client: &Client,
    hr: &HelmRelease,
) -> Result<Vec<(usize, &'static str, String, String, Fetched)>, ValuesError> {
    let namespace = hr.namespace_or_default();
    let mut fetched = Vec::new();
    for (index, entry) in hr.spec.values_from.iter().enumerate() {
        let (kind, key_ref) = entry_ref(entry).ok_or(ValuesError::Empty(index))?;
        let object_namespace = key_ref
            .namespace
            .clone()
            .unwrap_or_else(|| namespace.clone());
        let text = match read_key(client, kind, &object_namespace, key_ref).await {
            Ok(text) => Fetched::Text(text),
            Err(_) if key_ref.optional => Fetched::Skipped,
            Err(message) => {
                return Err(ValuesError::Reference {
                    index,
                    kind,
                    namespace: object_namespace,
                    name: key_ref.name.clone(),
                    message,
                });
            }
        };
        fetched.push((index, kind, object_namespace, key_ref.name.clone(), text));
    }
    Ok(fetched)
}

/// Merge what `valuesFrom` gave and `spec.values` into the typed JSON the backend takes.
pub fn compose(
    hr: &HelmRelease,
    fetched: &[(usize, &'static str, String, String, Fetched)],
) -> Result<String, ValuesError> {
    use capstan_helm::values::merge_maps;
    let mut values = capstan_gotmpl::value::Value::new_map();
    for (index, kind, namespace, name, text) in fetched {
        let Fetched::Text(text) = text else { continue };
        let optional = hr
            .spec
            .values_from
            .get(*index)
            .and_then(entry_ref)
            .is_some_and(|(_, r)| r.optional);
        match capstan_helm::load::load_values(text.as_bytes()) {
            Ok(parsed) => values = merge_maps(&values, &parsed),
            Err(_) if optional => {}
            Err(message) => {
                return Err(ValuesError::Reference {
                    index: *index,
                    kind,
                    namespace: namespace.clone(),
                    name: name.clone(),
                    message: format!("key does not hold YAML values: {message}"),
                });
            }
        }
    }
    if let Some(inline) = &hr.spec.values {
        let text = serde_json::to_string(inline).map_err(|e| ValuesError::Inline(e.to_string()))?;
        let parsed =
            capstan_helm::load::load_values(text.as_bytes()).map_err(ValuesError::Inline)?;
        values = merge_maps(&values, &parsed);
    }
    capstan_helm::values_json::to_typed_json(&values).map_err(ValuesError::Inline)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::HelmReleaseSpec;

    fn release(values: serde_json::Value, optional: bool) -> HelmRelease {
        let mut hr = HelmRelease::new("a", HelmReleaseSpec::default());
        hr.spec.values = values.as_object().cloned();
        hr.spec.values_from = vec![ValuesFromSource {
            config_map_key_ref: Some(KeyRef {
                name: "cm".into(),
                optional,
                ..KeyRef::default()
            }),
            secret_key_ref: None,
        }];
        hr
    }

    fn from(text: &str) -> Vec<(usize, &'static str, String, String, Fetched)> {
        vec![(
            0,
            "ConfigMap",
            "n".into(),
            "cm".into(),
            Fetched::Text(text.into()),
        )]
    }

    #[test]
    fn inline_values_win_and_maps_merge_like_helm_values_files() {
        let hr = release(
            serde_json::json!({"image": {"tag": "v2"}, "replicas": 3}),
            false,
        );
        let json = compose(
            &hr,
            &from("image:\n  repository: web\n  tag: v1\nport: 80\n"),
        )
        .unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["image"]["repository"], "web");
        assert_eq!(parsed["image"]["tag"], "v2");
        // Numbers are float64, as Helm reads values files: the typed JSON keeps a fraction.
        assert!(json.contains("\"replicas\":3.0"), "{json}");
        assert!(json.contains("\"port\":80.0"), "{json}");
    }

    #[test]
    fn a_broken_values_key_names_the_object_unless_optional() {
        let hr = release(serde_json::json!({}), false);
        let error = compose(&hr, &from("a: [\n")).unwrap_err().to_string();
        assert!(
            error.starts_with("valuesFrom[0]: ConfigMap n/cm: key does not hold YAML values"),
            "{error}"
        );
        let optional = release(serde_json::json!({"b": 1}), true);
        assert!(compose(&optional, &from("a: [\n")).is_ok());
    }
}
