//! sigs.k8s.io/yaml's `Marshal` front half: `json.Marshal(v)` and then go-yaml v2's
//! `Unmarshal` of that JSON, done directly on values. Numbers go through their Go JSON text
//! and YAML 1.1 resolution (so a float64 holding an integer comes back as an int, `1e21`
//! stays a float, `-0` becomes `0`), byte slices become base64 strings, objects become what
//! they marshal to, and JSON's errors (NaN/Inf, cycles) are reproduced.

use std::rc::Rc;

use capstan_gotmpl::value::Value;

use crate::decode::GoVal;
use crate::format::json_float;
use crate::resolve::{self, Scalar};

/// Conversion failures, worded as `encoding/json` words them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonStepError {
    /// A Go `encoding/json` error (`json: unsupported value: NaN`, cycles).
    Json(String),
    /// Nesting beyond the limit.
    TooDeep(usize),
}

/// Converts a template value to the tree go-yaml would decode from its JSON.
pub fn to_yaml_tree(v: &Value, max_depth: usize) -> Result<GoVal, JsonStepError> {
    let mut path: Vec<*const ()> = Vec::new();
    convert(v, 0, max_depth, &mut path)
}

fn number_from_json_text(text: &str) -> GoVal {
    match resolve::resolve("", text) {
        Ok((_, Scalar::Int(i))) => GoVal::Int(i),
        Ok((_, Scalar::Uint(u))) => GoVal::Uint(u),
        Ok((_, Scalar::Float(f))) => GoVal::Float(f),
        // JSON number text always resolves to a number; keep the text otherwise.
        _ => GoVal::Str(text.to_string()),
    }
}

fn convert(
    v: &Value,
    depth: usize,
    max_depth: usize,
    path: &mut Vec<*const ()>,
) -> Result<GoVal, JsonStepError> {
    if depth > max_depth {
        return Err(JsonStepError::TooDeep(max_depth));
    }
    Ok(match v {
        Value::Nil => GoVal::Nil,
        Value::Bool(b) => GoVal::Bool(*b),
        Value::Int(i) | Value::Int64(i) => GoVal::Int(*i),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(JsonStepError::Json(format!(
                    "json: unsupported value: {}",
                    capstan_gotmpl::value::format_float_g(*f)
                )));
            }
            number_from_json_text(&json_float(*f))
        }
        Value::String(s) => GoVal::Str(s.to_string()),
        Value::Bytes(b) => GoVal::Str(encode_base64(b)),
        Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(convert(item, depth + 1, max_depth, path)?);
            }
            GoVal::Seq(out)
        }
        Value::Map(m) => {
            let ptr = Rc::as_ptr(m) as *const ();
            if path.contains(&ptr) {
                return Err(JsonStepError::Json(
                    "json: unsupported value: encountered a cycle via map[string]interface {}"
                        .into(),
                ));
            }
            path.push(ptr);
            let mut out = Vec::new();
            let result = (|| {
                for (k, val) in m.borrow().iter() {
                    out.push((
                        GoVal::Str(k.clone()),
                        convert(val, depth + 1, max_depth, path)?,
                    ));
                }
                Ok(())
            })();
            path.pop();
            result?;
            GoVal::Map(out)
        }
        Value::Object(o) => {
            let data = o.to_data();
            if matches!(data, Value::Object(_)) {
                // An object that marshals to another object: stop rather than loop.
                return Err(JsonStepError::TooDeep(max_depth));
            }
            convert(&data, depth + 1, max_depth, path)?
        }
    })
}

/// Converts a template value to the tree go-yaml v3's encoder sees when handed the value
/// itself (no JSON step): float64 stays float64 (`1e+06`), `[]byte` is a list of numbers,
/// NaN and infinities are allowed (`.nan`, `.inf`).
pub fn to_native_tree(v: &Value, max_depth: usize) -> Result<GoVal, JsonStepError> {
    let mut path: Vec<*const ()> = Vec::new();
    native(v, 0, max_depth, &mut path)
}

fn native(
    v: &Value,
    depth: usize,
    max_depth: usize,
    path: &mut Vec<*const ()>,
) -> Result<GoVal, JsonStepError> {
    if depth > max_depth {
        return Err(JsonStepError::TooDeep(max_depth));
    }
    Ok(match v {
        Value::Nil => GoVal::Nil,
        Value::Bool(b) => GoVal::Bool(*b),
        Value::Int(i) | Value::Int64(i) => GoVal::Int(*i),
        Value::Float(f) => GoVal::Float(*f),
        Value::String(s) => GoVal::Str(s.to_string()),
        Value::Bytes(b) => GoVal::Seq(b.iter().map(|&x| GoVal::Int(x as i64)).collect()),
        Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(native(item, depth + 1, max_depth, path)?);
            }
            GoVal::Seq(out)
        }
        Value::Map(m) => {
            let ptr = Rc::as_ptr(m) as *const ();
            if path.contains(&ptr) {
                return Err(JsonStepError::TooDeep(max_depth));
            }
            path.push(ptr);
            let mut out = Vec::new();
            let result = (|| {
                for (k, val) in m.borrow().iter() {
                    out.push((
                        GoVal::Str(k.clone()),
                        native(val, depth + 1, max_depth, path)?,
                    ));
                }
                Ok(())
            })();
            path.pop();
            result?;
            GoVal::Map(out)
        }
        Value::Object(o) => {
            let data = o.to_data();
            if matches!(data, Value::Object(_)) {
                return Err(JsonStepError::TooDeep(max_depth));
            }
            native(&data, depth + 1, max_depth, path)?
        }
    })
}

/// Standard padded base64 (what `encoding/json` does with `[]byte`).
pub fn encode_base64(b: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (chunk.get(1).copied().unwrap_or(0) as u32) << 8
            | chunk.get(2).copied().unwrap_or(0) as u32;
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            ALPHABET[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            ALPHABET[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64() {
        assert_eq!(encode_base64(b"hello"), "aGVsbG8=");
        assert_eq!(encode_base64(b""), "");
        assert_eq!(encode_base64(b"\x80\x81\x82"), "gIGC");
    }
}
