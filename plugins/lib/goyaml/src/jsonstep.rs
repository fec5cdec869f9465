//! sigs.k8s.io/yaml's `Marshal` front half: `json.Marshal(v)` (Go's exact JSON text) and
//! then go-yaml v2's `Unmarshal` of that text with this crate's parser. So numbers go
//! through their Go JSON text and YAML 1.1 resolution (a float64 holding an integer comes
//! back as an int, `1e21` stays a float, `-0` becomes `0`), byte slices become base64
//! strings, objects become what they marshal to, JSON's errors (NaN/Inf, cycles) are
//! reproduced, and so are go-yaml's reactions to raw JSON text (a DEL character is refused,
//! a raw NEL folds to a space, a key longer than 1024 characters is no simple key).
//! Also the tree go-yaml v3 sees for `toYamlPretty` (no JSON step).

use std::rc::Rc;

use capstan_gotmpl::value::Value;

use crate::decode::GoVal;
use crate::format::json_float;

/// Conversion failures, worded as `encoding/json` words them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonStepError {
    /// A Go `encoding/json` error (`json: unsupported value: NaN`, cycles).
    Json(String),
    /// Nesting beyond the limit.
    TooDeep(usize),
    /// go-yaml's error reading the JSON text back (without `yaml: `).
    Yaml(String),
}

/// Go's `encoding/json` text for the value (`json.Marshal`: map keys sorted, HTML-safe
/// string escapes, `[]byte` as base64, floats in Go's JSON form), or its error.
pub fn to_json_text(v: &Value, max_depth: usize) -> Result<String, JsonStepError> {
    let mut out = String::new();
    let mut path: Vec<*const ()> = Vec::new();
    write_json(v, 0, max_depth, &mut path, &mut out)?;
    Ok(out)
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_json(
    v: &Value,
    depth: usize,
    max_depth: usize,
    path: &mut Vec<*const ()>,
    out: &mut String,
) -> Result<(), JsonStepError> {
    if depth > max_depth {
        return Err(JsonStepError::TooDeep(max_depth));
    }
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(JsonStepError::Json(format!(
                    "json: unsupported value: {}",
                    capstan_gotmpl::value::format_float_g(*f)
                )));
            }
            out.push_str(&json_float(*f));
        }
        Value::String(s) => write_json_string(s, out),
        Value::Bytes(b) => {
            out.push('"');
            out.push_str(&encode_base64(b));
            out.push('"');
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, depth + 1, max_depth, path, out)?;
            }
            out.push(']');
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
            out.push('{');
            let result = (|| {
                for (i, (k, val)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(k, out);
                    out.push(':');
                    write_json(val, depth + 1, max_depth, path, out)?;
                }
                Ok(())
            })();
            path.pop();
            result?;
            out.push('}');
        }
        Value::Object(o) => {
            let data = o.to_data();
            if matches!(data, Value::Object(_)) {
                return Err(JsonStepError::TooDeep(max_depth));
            }
            write_json(&data, depth + 1, max_depth, path, out)?;
        }
    }
    Ok(())
}

/// sigs.k8s.io/yaml's `JSONToYAML` front half: go-yaml v2 reads the JSON text back (errors
/// as go-yaml words them, without `yaml: `).
pub fn to_yaml_tree(v: &Value, max_depth: usize) -> Result<GoVal, JsonStepError> {
    let text = to_json_text(v, max_depth)?;
    let mut composer = crate::compose::Composer::new(&text);
    match composer.next_document().map_err(JsonStepError::Yaml)? {
        None => Ok(GoVal::Nil),
        Some(doc) => crate::decode::decode_document(&doc).map_err(JsonStepError::Yaml),
    }
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
pub use capstan_gotmpl::json::base64_std as encode_base64;

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
