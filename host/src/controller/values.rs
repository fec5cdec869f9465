//! A HelmRelease's values: every `valuesFrom` entry in order, then `spec.values`, handed to
//! the backend as ordered value layers. The host reads the objects and keys; it does not
//! parse or merge values (that is the backend's engine's business, e.g. Helm's coalescing
//! of `-f` files), so an optional entry whose text is not a values document is marked
//! `optional` for the backend to skip.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};

use crate::api::{ChartFileRef, ExternalSourceRef, HelmRelease, KeyRef, ValuesFromSource};
use crate::capabilities::egress::EgressPolicy;
use crate::capabilities::http::{fetch_text, redacted_url};
use crate::plugins::bindings::backend::exports::capstan::plugin::backend::{
    ValueLayer, ValuesDocument,
};

/// Why a HelmRelease's values cannot be composed. Names the object and key at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// A referenced object, key, URL or chart file cannot be read (and is not optional).
    #[error("valuesFrom[{index}]: {what}: {message}")]
    Reference {
        /// Position in `spec.valuesFrom`.
        index: usize,
        /// What was read, e.g. `ConfigMap ns/name` or `URL https://host/values.yaml`.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// `spec.values` cannot be used.
    #[error("spec.values: {0}")]
    Inline(String),
    /// A `valuesFrom` entry names nothing to read.
    #[error(
        "valuesFrom[{0}]: set configMapKeyRef, secretKeyRef, externalSourceRef or chartFileRef"
    )]
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

/// What a `valuesFrom` entry names.
enum Entry<'a> {
    /// A key of a ConfigMap or Secret.
    Object(&'static str, &'a KeyRef),
    /// A values file at a URL.
    Url(&'a ExternalSourceRef),
    /// A values file inside the chart.
    ChartFile(&'a ChartFileRef),
}

fn entry_of(entry: &ValuesFromSource) -> Option<Entry<'_>> {
    if let Some((kind, key_ref)) = entry_ref(entry) {
        return Some(Entry::Object(kind, key_ref));
    }
    match (&entry.external_source_ref, &entry.chart_file_ref) {
        (Some(url), _) => Some(Entry::Url(url)),
        (None, Some(file)) => Some(Entry::ChartFile(file)),
        (None, None) => None,
    }
}

/// One `valuesFrom` entry as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedEntry {
    /// Position in `spec.valuesFrom`.
    pub index: usize,
    /// Where the text came from, for the backend's messages.
    pub origin: String,
    /// Whether a text that is not a values document is skipped.
    pub optional: bool,
    /// The text, or nothing.
    pub text: Fetched,
}

/// What `valuesFrom` may read besides the cluster.
pub struct ValuesInputs<'a> {
    /// The release's chart archive (`chartFileRef`).
    pub chart_archive: Option<&'a [u8]>,
    /// What a URL may reach (`externalSourceRef`).
    pub egress: &'a EgressPolicy,
}

/// Longest wait for a values URL, per step.
const URL_TIMEOUT: Duration = Duration::from_secs(20);
/// Largest values file read from a URL or the chart.
const MAX_VALUES_FILE: u64 = 4 << 20;

/// The file at `path` (from the chart's root) in a chart archive.
fn chart_file(archive: &[u8], path: &str) -> Result<String, String> {
    let wanted = path.trim_start_matches("./");
    let mut entries = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    for entry in entries
        .entries()
        .map_err(|e| format!("reading the chart: {e}"))?
    {
        let mut entry = entry.map_err(|e| format!("reading the chart: {e}"))?;
        let name = entry
            .path()
            .map_err(|e| format!("reading the chart: {e}"))?
            .to_string_lossy()
            .into_owned();
        // Archives hold `<chart>/<path>`.
        if name.split_once('/').is_some_and(|(_, rest)| rest == wanted) {
            if entry.size() > MAX_VALUES_FILE {
                return Err(format!("larger than {MAX_VALUES_FILE} bytes"));
            }
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text)
                .map_err(|_| "not UTF-8 text".to_owned())?;
            return Ok(text);
        }
    }
    Err("no such file in the chart".to_owned())
}

/// Read every `valuesFrom` entry, in order: keys from the cluster, files from URLs and
/// from the chart.
pub async fn fetch_values_from(
    client: &Client,
    hr: &HelmRelease,
    inputs: &ValuesInputs<'_>,
) -> Result<Vec<FetchedEntry>, ValuesError> {
    let namespace = hr.namespace_or_default();
    let mut fetched = Vec::new();
    for (index, entry) in hr.spec.values_from.iter().enumerate() {
        let (what, origin, optional, read) =
            match entry_of(entry).ok_or(ValuesError::Empty(index))? {
                Entry::Object(kind, key_ref) => {
                    let object_namespace = key_ref
                        .namespace
                        .clone()
                        .unwrap_or_else(|| namespace.clone());
                    let what = format!("{kind} {object_namespace}/{}", key_ref.name);
                    let origin = format!("{what}, key {}", key_ref.key_or_default());
                    let read = read_key(client, kind, &object_namespace, key_ref).await;
                    (what, origin, key_ref.optional, read)
                }
                Entry::Url(source) => {
                    let what = format!("URL {}", redacted_url(&source.url));
                    let read =
                        fetch_text(&source.url, inputs.egress, URL_TIMEOUT, MAX_VALUES_FILE).await;
                    (what.clone(), what, source.optional, read)
                }
                Entry::ChartFile(file) => {
                    let what = format!("chart file {}", file.path);
                    let read = match inputs.chart_archive {
                        Some(archive) => chart_file(archive, &file.path),
                        None => Err("the chart archive is not available".to_owned()),
                    };
                    (what.clone(), what, file.optional, read)
                }
            };
        let text = match read {
            Ok(text) => Fetched::Text(text),
            Err(_) if optional => Fetched::Skipped,
            Err(message) => {
                return Err(ValuesError::Reference {
                    index,
                    what,
                    message,
                });
            }
        };
        fetched.push(FetchedEntry {
            index,
            origin: format!("valuesFrom[{index}] ({origin})"),
            optional,
            text,
        });
    }
    Ok(fetched)
}

/// The value layers of a HelmRelease: each `valuesFrom` text read, in order, then
/// `spec.values` (as JSON, which every YAML parser reads).
pub fn compose(hr: &HelmRelease, fetched: &[FetchedEntry]) -> Result<Vec<ValueLayer>, ValuesError> {
    let mut layers = Vec::new();
    for entry in fetched {
        let Fetched::Text(text) = &entry.text else {
            continue;
        };
        let target_path = hr
            .spec
            .values_from
            .get(entry.index)
            .and_then(|entry| entry.target_path.as_deref())
            .filter(|path| !path.is_empty());
        if let Some(path) = target_path {
            // One flat value at `path`, as `--set path=value` reads it (as Flux does, with
            // the value's commas escaped so that it stays one value).
            let value = text.trim_end_matches('\n').replace(',', "\\,");
            layers.push(ValueLayer::Set(format!("{path}={value}")));
            continue;
        }
        layers.push(ValueLayer::Document(ValuesDocument {
            origin: entry.origin.clone(),
            content: text.clone(),
            optional: entry.optional,
        }));
    }
    if let Some(inline) = &hr.spec.values {
        let text = serde_json::to_string(inline).map_err(|e| ValuesError::Inline(e.to_string()))?;
        layers.push(ValueLayer::Document(ValuesDocument {
            origin: "spec.values".into(),
            content: text,
            optional: false,
        }));
    }
    Ok(layers)
}

/// A stable text of `layers` for digests: equal layers, equal text.
pub fn layers_text(layers: &[ValueLayer]) -> String {
    let mut text = String::new();
    for layer in layers {
        let (tag, body) = match layer {
            ValueLayer::Document(d) => (
                if d.optional { "document?" } else { "document" },
                d.content.clone(),
            ),
            ValueLayer::Set(e) => ("set", e.clone()),
            ValueLayer::SetString(e) => ("set-string", e.clone()),
            ValueLayer::SetJson(e) => ("set-json", e.clone()),
            ValueLayer::SetLiteral(e) => ("set-literal", e.clone()),
            ValueLayer::SetFile(f) => ("set-file", format!("{}={}", f.path, f.content)),
        };
        text.push_str(&format!("{tag}:{}:{body}\n", body.len()));
    }
    text
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
            target_path: None,
            external_source_ref: None,
            chart_file_ref: None,
        }];
        hr
    }

    fn from(text: &str) -> Vec<FetchedEntry> {
        vec![FetchedEntry {
            index: 0,
            origin: "valuesFrom[0] (ConfigMap n/cm, key values.yaml)".into(),
            optional: true,
            text: Fetched::Text(text.into()),
        }]
    }

    #[test]
    fn layers_keep_the_order_and_name_their_origin() {
        let hr = release(serde_json::json!({"image": {"tag": "v2"}}), true);
        let layers = compose(&hr, &from("image:\n  tag: v1\n")).unwrap();
        assert_eq!(layers.len(), 2);
        let ValueLayer::Document(first) = &layers[0] else {
            panic!("not a document")
        };
        assert_eq!(
            first.origin,
            "valuesFrom[0] (ConfigMap n/cm, key values.yaml)"
        );
        assert!(first.optional);
        assert_eq!(first.content, "image:\n  tag: v1\n");
        let ValueLayer::Document(second) = &layers[1] else {
            panic!("not a document")
        };
        assert_eq!(second.origin, "spec.values");
        assert_eq!(second.content, r#"{"image":{"tag":"v2"}}"#);
        assert!(!second.optional);
    }

    #[test]
    fn a_target_path_sets_one_value_there() {
        let mut hr = release(serde_json::json!({}), false);
        hr.spec.values = None;
        hr.spec.values_from[0].target_path = Some("db.password".into());
        let layers = compose(&hr, &from("s3cr,et\n")).unwrap();
        assert_eq!(layers.len(), 1);
        let ValueLayer::Set(expression) = &layers[0] else {
            panic!("not a --set layer: {:?}", layers[0])
        };
        assert_eq!(expression, "db.password=s3cr\\,et");
    }

    #[test]
    fn the_digest_text_changes_with_any_layer() {
        let hr = release(serde_json::json!({"a": 1}), false);
        let one = layers_text(&compose(&hr, &from("b: 1\n")).unwrap());
        let same = layers_text(&compose(&hr, &from("b: 1\n")).unwrap());
        let other = layers_text(&compose(&hr, &from("b: 2\n")).unwrap());
        assert_eq!(one, same);
        assert_ne!(one, other);
    }
}
