//! YAML the way Helm reads and writes it: parsing with go-yaml v2's YAML 1.1 scalar
//! resolution into [`capstan_gotmpl::value::Value`], and an emitter whose output is
//! byte-identical to go-yaml v2's `Marshal` (what `toYaml` prints).
//!
//! PLACEHOLDER BODIES: the signatures are the contract; the implementation is being
//! written.

use capstan_gotmpl::value::Value;

/// A YAML error, worded like go-yaml's (`yaml: line 3: mapping values are not allowed in
/// this context`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// What `sigs.k8s.io/yaml.Unmarshal` into `interface{}` gives for one document: go-yaml v2
/// (YAML 1.1) resolution, then JSON semantics — every number `float64`, keys stringified,
/// an empty document `nil`.
pub fn from_yaml(text: &str) -> Result<Value, YamlError> {
    let _ = text;
    Err(YamlError("not implemented".into()))
}

/// Every document of a multi-document stream, each as [`from_yaml`] would give it.
pub fn from_yaml_documents(text: &str) -> Result<Vec<Value>, YamlError> {
    let _ = text;
    Err(YamlError("not implemented".into()))
}

/// What `sigs.k8s.io/yaml.Marshal` gives (JSON marshal, then go-yaml v2 marshal), with its
/// trailing newline; Helm's `toYaml` trims that newline itself.
pub fn to_yaml(value: &Value) -> Result<String, YamlError> {
    let _ = value;
    Err(YamlError("not implemented".into()))
}
