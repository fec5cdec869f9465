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
    let mut path: Vec<*const ()> = Vec::new();
    if let Some(tree) = direct_tree(v, 0, max_depth, &mut path) {
        return Ok(tree);
    }
    to_yaml_tree_through_text(v, max_depth)
}

/// [`to_yaml_tree`] the way sigs.k8s.io/yaml does it: the JSON text, then go-yaml reading it.
/// Taken for everything [`direct_tree`] leaves alone, so errors and go-yaml's reactions to
/// unusual characters stay exact.
pub fn to_yaml_tree_through_text(v: &Value, max_depth: usize) -> Result<GoVal, JsonStepError> {
    let text = to_json_text(v, max_depth)?;
    let mut composer = crate::compose::Composer::new(&text);
    match composer.next_document().map_err(JsonStepError::Yaml)? {
        None => Ok(GoVal::Nil),
        Some(doc) => crate::decode::decode_document(&doc).map_err(JsonStepError::Yaml),
    }
}

/// The tree go-yaml v2 reads back from the value's JSON text, built from the value itself:
/// reading the text again was most of `toYaml`'s time. Strings and keys come back as they
/// went in (JSON escapes every character the double-quoted scanner would change, except
/// those [`reads_back_unchanged`] refuses), numbers as go-yaml resolves their Go JSON text,
/// byte slices as base64 strings. `None` for anything the text path must decide: errors
/// (non-finite floats, cycles, nesting), keys long enough to meet go-yaml's simple-key
/// limit, and characters it refuses or folds.
fn direct_tree(
    v: &Value,
    depth: usize,
    max_depth: usize,
    path: &mut Vec<*const ()>,
) -> Option<GoVal> {
    if depth > max_depth {
        return None;
    }
    Some(match v {
        Value::Nil => GoVal::Nil,
        Value::Bool(b) => GoVal::Bool(*b),
        Value::Int(i) | Value::Int64(i) => GoVal::Int(*i),
        Value::Float(f) => {
            if !f.is_finite() {
                return None;
            }
            match crate::resolve::resolve("", &json_float(*f)).ok()?.1 {
                crate::resolve::Scalar::Int(i) => GoVal::Int(i),
                crate::resolve::Scalar::Uint(u) => GoVal::Uint(u),
                crate::resolve::Scalar::Float(f) => GoVal::Float(f),
                _ => return None,
            }
        }
        Value::String(s) => {
            if !reads_back_unchanged(s) {
                return None;
            }
            GoVal::Str(s.to_string())
        }
        Value::Bytes(b) => GoVal::Str(encode_base64(b)),
        Value::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(direct_tree(item, depth + 1, max_depth, path)?);
            }
            GoVal::Seq(out)
        }
        Value::Map(m) => {
            let ptr = Rc::as_ptr(m) as *const ();
            if path.contains(&ptr) {
                return None;
            }
            path.push(ptr);
            let entries = (|| {
                let map = m.borrow();
                let mut out = Vec::with_capacity(map.len());
                for (k, val) in map.iter() {
                    // go-yaml reads a key as a simple key only within 1024 characters of
                    // JSON text; escapes make a character up to 6 of them.
                    if k.len() > 160 || !reads_back_unchanged(k) {
                        return None;
                    }
                    out.push((
                        GoVal::Str(k.clone()),
                        direct_tree(val, depth + 1, max_depth, path)?,
                    ));
                }
                Some(out)
            })();
            path.pop();
            GoVal::Map(entries?)
        }
        Value::Object(o) => {
            let data = o.to_data();
            if matches!(data, Value::Object(_)) {
                return None;
            }
            direct_tree(&data, depth + 1, max_depth, path)?
        }
    })
}

/// Whether go-yaml's double-quoted scanner gives back `s` unchanged from its JSON text:
/// every character JSON leaves raw is one go-yaml reads as itself (not DEL, the C1
/// controls, NEL which it folds, a byte-order mark, or U+FFFE/U+FFFF, which it refuses).
fn reads_back_unchanged(s: &str) -> bool {
    s.chars().all(|c| {
        let c = c as u32;
        c < 0x7F
            || (0xA0..=0xD7FF).contains(&c)
            || ((0xE000..=0xFFFD).contains(&c) && c != 0xFEFF)
            || c >= 0x10000
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

    /// What `toYaml` prints for a tree (sorted as `to_yaml` sorts it).
    fn printed(tree: Result<GoVal, JsonStepError>) -> Result<String, String> {
        let mut tree = tree.map_err(|e| format!("{e:?}"))?;
        crate::emit::sort_keys(&mut tree, crate::emit::Flavor::V2);
        crate::emit::marshal(&tree, crate::emit::Flavor::V2, 1 << 20, 600)
            .map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn the_tree_built_from_the_value_prints_as_the_tree_read_from_its_json_text() {
        let floats = [
            0.0,
            -0.0,
            1.0,
            3.0,
            -7.0,
            0.5,
            1.5e-7,
            1e-6,
            123456.789,
            1e19,
            1.8446744073709552e19,
            1e20,
            1e21,
            1.2345e300,
            -1e21,
            9007199254740993.0,
            f64::MIN_POSITIVE,
        ];
        let strings = [
            "",
            "plain",
            "with space",
            "yes",
            "no",
            "~",
            "null",
            "0x1F",
            "1e3",
            "012",
            ".5",
            "-",
            "- item",
            ": colon",
            "#hash",
            "quote\"s",
            "back\\slash",
            "line\nbreak",
            "tab\tand\rcr",
            "<html>&amp;",
            "\u{2028}\u{2029}",
            "é ü ß",
            "日本語",
            "emoji 🎉",
            "\u{1}\u{1f}",
            "trailing ",
            " leading",
            "2001-12-14",
            "=",
            "<<",
        ];
        let mut items: Vec<Value> = Vec::new();
        items.extend(floats.iter().map(|f| Value::Float(*f)));
        items.extend(strings.iter().map(|s| Value::from(*s)));
        items.extend([
            Value::Nil,
            Value::Bool(true),
            Value::Int(-5),
            Value::Int64(i64::MAX),
        ]);
        items.push(Value::Bytes(b"\x00\xffbytes".to_vec().into()));
        let mut map = capstan_gotmpl::value::Map::new();
        for (i, s) in strings.iter().enumerate() {
            map.insert((*s).to_owned(), items[i % items.len()].clone());
        }
        map.insert("list".into(), Value::from(items.clone()));
        map.insert("nested".into(), Value::from(map.clone()));
        map.insert("k".repeat(160), Value::Int(1));
        let whole = Value::from(map);
        let mut cases: Vec<Value> = items;
        cases.push(whole);
        for value in &cases {
            assert!(
                direct_tree(value, 0, 500, &mut Vec::new()).is_some(),
                "expected the direct path for {value:?}"
            );
            assert_eq!(
                printed(to_yaml_tree(value, 500)),
                printed(to_yaml_tree_through_text(value, 500)),
                "{value:?}"
            );
        }
        // Left to the text path, with its outcome: refused or folded characters, long keys,
        // errors.
        let mut long_key = capstan_gotmpl::value::Map::new();
        long_key.insert("k".repeat(1100), Value::Int(1));
        let left = [
            Value::from("del \u{7f}"),
            Value::from("nel \u{85} folds"),
            Value::from("bom \u{feff}"),
            Value::from("c1 \u{9b}"),
            Value::from("\u{fffe}"),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::from(long_key),
        ];
        for value in &left {
            assert!(
                direct_tree(value, 0, 500, &mut Vec::new()).is_none(),
                "{value:?}"
            );
            assert_eq!(
                printed(to_yaml_tree(value, 500)),
                printed(to_yaml_tree_through_text(value, 500))
            );
        }
        let deep = (0..20).fold(Value::Int(1), |inner, _| Value::from(vec![inner]));
        assert!(direct_tree(&deep, 0, 10, &mut Vec::new()).is_none());
        assert_eq!(
            printed(to_yaml_tree(&deep, 10)),
            printed(to_yaml_tree_through_text(&deep, 10))
        );
    }
}
