//! YAML the way Helm reads and writes it: parsing with go-yaml v2's YAML 1.1 scanner,
//! parser and scalar resolution into [`capstan_gotmpl::value::Value`] (through
//! sigs.k8s.io/yaml's JSON round trip, or with go-yaml's own types), and an emitter whose
//! output is byte-identical to sigs.k8s.io/yaml's `Marshal` (what `toYaml` prints).
//!
//! Modules: [`scanner`] and [`parser`] (libyaml ports), [`compose`] (node trees),
//! [`decode`] (go-yaml's decoder and the JSON conversion), [`resolve`] (YAML 1.1 implicit
//! types), [`jsonstep`] (the `json.Marshal` half of `toYaml`), [`emit`] and [`sort`] (the
//! go-yaml v2 encoder/emitter and its key order), [`toml`] (BurntSushi/toml's encoder, for
//! `toToml`), [`mod@format`] (Go formatting helpers).
//!
//! Checked against real Go (go.yaml.in/yaml/v2 v2.4.4, v3 v3.0.4, sigs.k8s.io/yaml v1.6.0,
//! BurntSushi/toml v1.6.0): `tests/oracle.rs` holds 1100+ documents with Go's results.
//! Known differences from Go:
//! - Map keys whose go-yaml order is not transitive (some mixes of digit runs and letters,
//!   e.g. `3A0-9/`, `9`, `31`): Go's order then depends on random map iteration; ours is
//!   deterministic.
//! - Collections nested deeper than [`compose::MAX_NESTING`] (512) and alias expansion
//!   deeper than [`decode::MAX_DECODE_DEPTH`] are refused (go-yaml allows 10000), to keep
//!   the native stack safe; `to_yaml` refuses data nested deeper than
//!   [`DEFAULT_MAX_DEPTH`] and output over [`DEFAULT_OUTPUT_LIMIT`].
//! - [`from_yaml_typed`]: Go's `uint64` (integers above `i64::MAX`) becomes a float, a
//!   `!!binary` value that is not UTF-8 becomes `Value::Bytes`, and non-string keys are
//!   stringified (Go keeps `map[interface{}]interface{}`).
//! - Non-ASCII letters/digits in key ordering use Rust's `char::is_alphabetic` and ASCII
//!   digits (Go: `unicode.IsLetter`/`unicode.IsDigit`).
//! - [`to_toml`] of nil is an error here; Go's encoder panics (the template fails).
//! - [`to_yaml_pretty`] prints host objects as their JSON data (go-yaml v3 would use Go
//!   field names).

pub mod compose;
pub mod decode;
pub mod emit;
pub mod format;
pub mod jsonstep;
pub mod parser;
pub mod resolve;
pub mod scanner;
pub mod sort;
pub mod toml;

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

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Map(_) => "object",
        Value::List(_) => "array",
        Value::String(_) | Value::Bytes(_) => "string",
        Value::Bool(_) => "bool",
        _ => "number",
    }
}

/// `sigs.k8s.io/yaml.Unmarshal(text, &m)` with `m map[string]interface{}` (Helm's
/// `fromYaml`): a `Value::Map`, or `Value::Nil` when the document is empty or `null` (JSON
/// null sets the map to nil). Another kind of document fails with Go's text:
/// `error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value
/// of type map[string]interface {}`.
pub fn from_yaml_map(text: &str) -> Result<Value, YamlError> {
    let v = from_yaml(text)?;
    match v {
        Value::Map(_) | Value::Nil => Ok(v),
        other => Err(YamlError(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&other)
        ))),
    }
}

/// `sigs.k8s.io/yaml.Unmarshal(text, &a)` with `a []interface{}` (Helm's `fromYamlArray`):
/// a `Value::List`, or `Value::Nil` for an empty or `null` document; other kinds fail with
/// Go's `json: cannot unmarshal object into Go value of type []interface {}` text.
pub fn from_yaml_array(text: &str) -> Result<Value, YamlError> {
    let v = from_yaml(text)?;
    match v {
        Value::List(_) | Value::Nil => Ok(v),
        other => Err(YamlError(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
            json_kind(&other)
        ))),
    }
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

/// What sigs.k8s.io/yaml stores in a Go `string` field (e.g. `Chart.yaml`'s `version`,
/// `appVersion`, `keywords` items) for a value of [`from_yaml_typed`]: ints in decimal,
/// floats as `strconv.FormatFloat(f, 'g', -1, 32)` (`1.10` → `"1.1"`, `1e7` → `"1e+07"`,
/// `.inf` → `"+Inf"`), bools as `true`/`false`, strings as they are; `None` for nil (the
/// field keeps its zero value) and for lists and maps (a JSON type error in Go).
/// (Integers above `int64`, which go-yaml gives as `uint64`, reach this as floats.)
pub fn go_string_field(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) | Value::Int64(i) => Some(i.to_string()),
        Value::Float(f) => Some(format_float32_g(*f)),
        _ => None,
    }
}

/// Default output limit of [`to_yaml`] (bytes).
pub const DEFAULT_OUTPUT_LIMIT: usize = 64 << 20;
/// Default nesting limit of [`to_yaml`].
pub const DEFAULT_MAX_DEPTH: usize = 512;

/// What `sigs.k8s.io/yaml.Marshal` gives (JSON marshal, then go-yaml v2 marshal), with its
/// trailing newline; Helm's `toYaml` trims that newline itself. Errors are worded as
/// sigs.k8s.io/yaml words them (`error marshaling into JSON: json: unsupported value: NaN`).
/// Output is limited to [`DEFAULT_OUTPUT_LIMIT`] bytes and nesting to [`DEFAULT_MAX_DEPTH`].
pub fn to_yaml(value: &Value) -> Result<String, YamlError> {
    to_yaml_limited(value, DEFAULT_OUTPUT_LIMIT, DEFAULT_MAX_DEPTH)
}

/// [`to_yaml`] with explicit limits: an error instead of output longer than `max_bytes` or
/// data nested deeper than `max_depth`.
pub fn to_yaml_limited(
    value: &Value,
    max_bytes: usize,
    max_depth: usize,
) -> Result<String, YamlError> {
    let mut tree = jsonstep::to_yaml_tree(value, max_depth).map_err(|e| match e {
        jsonstep::JsonStepError::Json(msg) => {
            YamlError(format!("error marshaling into JSON: {msg}"))
        }
        jsonstep::JsonStepError::TooDeep(n) => YamlError(format!(
            "error marshaling into JSON: value nested deeper than {n} levels"
        )),
        jsonstep::JsonStepError::Yaml(msg) => YamlError(format!("yaml: {msg}")),
    })?;
    emit::sort_keys(&mut tree, emit::Flavor::V2);
    emit::marshal(&tree, emit::Flavor::V2, max_bytes, max_depth + 1).map_err(emit_error)
}

fn emit_error(e: emit::EmitError) -> YamlError {
    match e {
        emit::EmitError::TooLarge(n) => YamlError(format!("yaml: output larger than {n} bytes")),
        emit::EmitError::TooDeep(n) => {
            YamlError(format!("yaml: value nested deeper than {n} levels"))
        }
    }
}

/// What Helm's `toYamlPretty` encodes with: go-yaml v3's `Encoder` with `SetIndent(2)` on
/// the value itself (no JSON step, so a float64 prints as `1e+06`), with the trailing
/// newline (Helm trims it). Sequences are indented under their key; no line folding.
/// Host objects are printed as their JSON data (go-yaml v3 would use Go field names).
pub fn to_yaml_pretty(value: &Value) -> Result<String, YamlError> {
    to_yaml_v3(value, 2)
}

/// go-yaml v3's `Encoder` with `SetIndent(indent)` on the value itself (see
/// [`to_yaml_pretty`]).
pub fn to_yaml_v3(value: &Value, indent: i64) -> Result<String, YamlError> {
    let mut tree = jsonstep::to_native_tree(value, DEFAULT_MAX_DEPTH).map_err(|_| {
        YamlError(format!(
            "yaml: value nested deeper than {DEFAULT_MAX_DEPTH} levels (or cyclic)"
        ))
    })?;
    let flavor = emit::Flavor::V3(indent);
    emit::sort_keys(&mut tree, flavor);
    emit::marshal(&tree, flavor, DEFAULT_OUTPUT_LIMIT, DEFAULT_MAX_DEPTH + 1).map_err(emit_error)
}

/// What Helm's `toToml` prints: BurntSushi/toml's encoder on the value. Helm puts the
/// error text itself in the output when encoding fails (`toml: cannot encode array with nil
/// element`).
pub fn to_toml(value: &Value) -> Result<String, YamlError> {
    toml::to_toml(value).map_err(YamlError)
}

#[cfg(test)]
mod tests;

/// Where the Helm parity corpus is (the tests over its charts): the one definition, shared
/// with capstan-helm (which depends on this crate).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../helm/src/corpus.rs"]
mod parity_corpus;
