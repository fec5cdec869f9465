//! JSON as Go's `encoding/json` writes and reads it for template values.
//!
//! PLACEHOLDER BODIES: the signatures are the contract; the Go-exact implementation is
//! being written.

use crate::value::Value;

/// A JSON encoding or decoding error, worded like Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub String);

/// `json.Marshal`: compact, map keys sorted, `<`, `>`, `&` escaped as `\u003c` etc., floats
/// in Go's JSON float format.
pub fn to_json(value: &Value) -> Result<String, JsonError> {
    let _ = value;
    Err(JsonError("not implemented".into()))
}

/// `json.MarshalIndent(v, "", indent)`.
pub fn to_json_pretty(value: &Value, indent: &str) -> Result<String, JsonError> {
    let _ = (value, indent);
    Err(JsonError("not implemented".into()))
}

/// `json.Marshal` with HTML escaping turned off (Sprig's `toRawJson`).
pub fn to_json_raw(value: &Value) -> Result<String, JsonError> {
    let _ = value;
    Err(JsonError("not implemented".into()))
}

/// `json.Unmarshal` into `interface{}`: objects become maps, every number `float64`.
pub fn from_json(text: &str) -> Result<Value, JsonError> {
    let _ = text;
    Err(JsonError("not implemented".into()))
}
