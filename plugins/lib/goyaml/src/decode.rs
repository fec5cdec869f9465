//! go-yaml v2's decoder into `interface{}` (`decode.go`): node trees to Go values
//! (`map[interface{}]interface{}`, `[]interface{}`, int, uint64, float64, bool, string, nil)
//! with merge keys, alias expansion limits and its error texts; then the conversions callers
//! need: sigs.k8s.io/yaml's JSON round trip (keys stringified, every number float64) or the
//! typed values as they are.

use std::collections::BTreeMap;

use foldhash::{HashSet, HashSetExt};

use capstan_gotmpl::value::{Value, format_float_g};

use crate::compose::{Document, NodeKind};
use crate::format::{format_float32_g, go_quote, go_string_from_bytes};
use crate::resolve::{self, BINARY_TAG, MERGE_TAG, Scalar};

/// A Go value as go-yaml v2 decodes it into `interface{}`.
#[derive(Debug, Clone)]
pub enum GoVal {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    /// A `!!binary` string whose bytes are not UTF-8.
    Bin(Vec<u8>),
    Seq(Vec<GoVal>),
    Map(Vec<(GoVal, GoVal)>),
}

impl GoVal {
    /// Go's `==` on interface values of comparable types.
    fn go_eq(&self, other: &GoVal) -> bool {
        match (self, other) {
            (GoVal::Nil, GoVal::Nil) => true,
            (GoVal::Bool(a), GoVal::Bool(b)) => a == b,
            (GoVal::Int(a), GoVal::Int(b)) => a == b,
            (GoVal::Uint(a), GoVal::Uint(b)) => a == b,
            (GoVal::Float(a), GoVal::Float(b)) => a == b,
            (GoVal::Str(a), GoVal::Str(b)) => a == b,
            (GoVal::Bin(a), GoVal::Bin(b)) => a == b,
            _ => false,
        }
    }

    /// `%#v`, as go-yaml and sigs.k8s.io/yaml print values in errors.
    pub fn sharp_v(&self, nested: bool) -> String {
        match self {
            GoVal::Nil => {
                if nested {
                    "interface {}(nil)".into()
                } else {
                    "<nil>".into()
                }
            }
            GoVal::Bool(b) => b.to_string(),
            GoVal::Int(i) => i.to_string(),
            GoVal::Uint(u) => format!("0x{u:x}"),
            GoVal::Float(f) => format_float_g(*f),
            GoVal::Str(s) => go_quote(s),
            GoVal::Bin(b) => go_quote(&go_string_from_bytes(b)),
            GoVal::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|v| v.sharp_v(true)).collect();
                format!("[]interface {{}}{{{}}}", parts.join(", "))
            }
            GoVal::Map(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}:{}", k.sharp_v(true), v.sharp_v(true)))
                    .collect();
                format!("map[interface {{}}]interface {{}}{{{}}}", parts.join(", "))
            }
        }
    }

    fn go_type(&self) -> &'static str {
        match self {
            GoVal::Nil => "%!s(<nil>)",
            GoVal::Bool(_) => "bool",
            GoVal::Int(_) => "int",
            GoVal::Uint(_) => "uint64",
            GoVal::Float(_) => "float64",
            GoVal::Str(_) | GoVal::Bin(_) => "string",
            GoVal::Seq(_) => "[]interface {}",
            GoVal::Map(_) => "map[interface {}]interface {}",
        }
    }
}

const ALIAS_RATIO_RANGE_LOW: usize = 400_000;
const ALIAS_RATIO_RANGE_HIGH: usize = 4_000_000;

fn allowed_alias_ratio(decode_count: usize) -> f64 {
    if decode_count <= ALIAS_RATIO_RANGE_LOW {
        0.99
    } else if decode_count >= ALIAS_RATIO_RANGE_HIGH {
        0.10
    } else {
        let range = (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW) as f64;
        0.99 - 0.89 * ((decode_count - ALIAS_RATIO_RANGE_LOW) as f64 / range)
    }
}

/// Decoding depth (nesting plus alias expansion) beyond which a document is refused, to
/// protect the native stack.
pub const MAX_DECODE_DEPTH: usize = 1024;

struct Decoder<'a> {
    doc: &'a Document,
    depth: usize,
    active_aliases: HashSet<usize>,
    decode_count: usize,
    alias_count: usize,
    alias_depth: usize,
}

/// Decodes a document as go-yaml v2 does into `interface{}`; errors without `yaml: `.
pub fn decode_document(doc: &Document) -> Result<GoVal, String> {
    let Some(root) = doc.root else {
        return Ok(GoVal::Nil);
    };
    let mut d = Decoder {
        doc,
        depth: 0,
        active_aliases: HashSet::new(),
        decode_count: 0,
        alias_count: 0,
        alias_depth: 0,
    };
    d.unmarshal(root)
}

fn want_map() -> String {
    "map merge requires map or sequence of maps as the value".into()
}

impl Decoder<'_> {
    fn count(&mut self) -> Result<(), String> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err("document contains excessive aliasing".into());
        }
        Ok(())
    }

    fn unmarshal(&mut self, id: usize) -> Result<GoVal, String> {
        self.depth += 1;
        let r = self.unmarshal_inner(id);
        self.depth -= 1;
        r
    }

    fn unmarshal_inner(&mut self, id: usize) -> Result<GoVal, String> {
        if self.depth > MAX_DECODE_DEPTH {
            return Err(format!("exceeded max depth of {MAX_DECODE_DEPTH}"));
        }
        self.count()?;
        let node = &self.doc.nodes[id];
        match &node.kind {
            NodeKind::Alias { name, target } => {
                let target = *target;
                self.enter_alias(id, name)?;
                let v = self.unmarshal(target);
                self.leave_alias(id);
                v
            }
            NodeKind::Scalar {
                value,
                tag,
                implicit,
            } => scalar(value, tag, *implicit),
            NodeKind::Sequence(children) => {
                let mut out = Vec::with_capacity(children.len());
                for &c in children {
                    out.push(self.unmarshal(c)?);
                }
                Ok(GoVal::Seq(out))
            }
            NodeKind::Mapping(_) => {
                let mut out = Vec::new();
                self.mapping_into(id, &mut out)?;
                Ok(GoVal::Map(out))
            }
        }
    }

    fn enter_alias(&mut self, id: usize, name: &str) -> Result<(), String> {
        if !self.active_aliases.insert(id) {
            return Err(format!("anchor '{name}' value contains itself"));
        }
        self.alias_depth += 1;
        Ok(())
    }

    fn leave_alias(&mut self, id: usize) {
        self.alias_depth -= 1;
        self.active_aliases.remove(&id);
    }

    /// `d.unmarshal(n, out)` where `out` is an existing map (merging).
    fn unmarshal_into_map(
        &mut self,
        id: usize,
        out: &mut Vec<(GoVal, GoVal)>,
    ) -> Result<(), String> {
        self.count()?;
        match &self.doc.nodes[id].kind {
            NodeKind::Alias { name, target } => {
                let target = *target;
                self.enter_alias(id, name)?;
                let r = self.unmarshal_into_map(target, out);
                self.leave_alias(id);
                r
            }
            NodeKind::Mapping(_) => self.mapping_into(id, out),
            _ => Err(want_map()),
        }
    }

    fn mapping_into(&mut self, id: usize, out: &mut Vec<(GoVal, GoVal)>) -> Result<(), String> {
        let NodeKind::Mapping(children) = &self.doc.nodes[id].kind else {
            return Err(want_map());
        };
        for pair in children.chunks(2) {
            let (k, v) = (pair[0], pair.get(1).copied().unwrap_or(pair[0]));
            if self.is_merge(k) {
                self.merge(v, out)?;
                continue;
            }
            let key = self.unmarshal(k)?;
            if matches!(key, GoVal::Seq(_) | GoVal::Map(_)) {
                return Err(format!("invalid map key: {}", key.sharp_v(false)));
            }
            let value = self.unmarshal(v)?;
            set_map_index(out, key, value);
        }
        Ok(())
    }

    fn is_merge(&self, id: usize) -> bool {
        matches!(&self.doc.nodes[id].kind,
            NodeKind::Scalar { value, tag, implicit } if value == "<<" && (*implicit || tag == MERGE_TAG))
    }

    fn alias_target_is_mapping(&self, id: usize) -> bool {
        match &self.doc.nodes[id].kind {
            NodeKind::Alias { target, .. } => {
                matches!(self.doc.nodes[*target].kind, NodeKind::Mapping(_))
            }
            _ => false,
        }
    }

    fn merge(&mut self, id: usize, out: &mut Vec<(GoVal, GoVal)>) -> Result<(), String> {
        match &self.doc.nodes[id].kind {
            NodeKind::Mapping(_) => self.unmarshal_into_map(id, out),
            NodeKind::Alias { .. } => {
                if !self.alias_target_is_mapping(id) {
                    return Err(want_map());
                }
                self.unmarshal_into_map(id, out)
            }
            NodeKind::Sequence(children) => {
                let children = children.clone();
                for &c in children.iter().rev() {
                    match &self.doc.nodes[c].kind {
                        NodeKind::Alias { .. } => {
                            if !self.alias_target_is_mapping(c) {
                                return Err(want_map());
                            }
                        }
                        NodeKind::Mapping(_) => {}
                        _ => return Err(want_map()),
                    }
                    self.unmarshal_into_map(c, out)?;
                }
                Ok(())
            }
            NodeKind::Scalar { .. } => Err(want_map()),
        }
    }
}

fn set_map_index(out: &mut Vec<(GoVal, GoVal)>, key: GoVal, value: GoVal) {
    if let Some(slot) = out.iter_mut().find(|(k, _)| k.go_eq(&key)) {
        slot.1 = value;
    } else {
        out.push((key, value));
    }
}

fn scalar(value: &str, tag: &str, implicit: bool) -> Result<GoVal, String> {
    if tag.is_empty() && !implicit {
        return Ok(GoVal::Str(value.to_string()));
    }
    let (rtag, resolved) = resolve::resolve(tag, value)?;
    if rtag == BINARY_TAG {
        let data = decode_base64(value)
            .ok_or_else(|| "!!binary value contains invalid base64 data".to_string())?;
        return Ok(match String::from_utf8(data) {
            Ok(s) => GoVal::Str(s),
            Err(e) => GoVal::Bin(e.into_bytes()),
        });
    }
    Ok(match resolved {
        Scalar::Null => GoVal::Nil,
        Scalar::Bool(b) => GoVal::Bool(b),
        Scalar::Int(i) => GoVal::Int(i),
        Scalar::Uint(u) => GoVal::Uint(u),
        Scalar::Float(f) => GoVal::Float(f),
        // Timestamps stay strings (the original text) in `interface{}`.
        Scalar::Str(_) => GoVal::Str(value.to_string()),
        Scalar::Merge => GoVal::Str(value.to_string()),
    })
}

/// Go's `base64.StdEncoding.DecodeString`: padded standard alphabet; `\r` and `\n` ignored.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut vals = Vec::with_capacity(s.len());
    let mut padding = 0;
    for c in s.bytes() {
        match c {
            b'\r' | b'\n' => continue,
            b'=' => {
                padding += 1;
                vals.push(255u8);
            }
            _ => {
                if padding > 0 {
                    return None;
                }
                let v = match c {
                    b'A'..=b'Z' => c - b'A',
                    b'a'..=b'z' => c - b'a' + 26,
                    b'0'..=b'9' => c - b'0' + 52,
                    b'+' => 62,
                    b'/' => 63,
                    _ => return None,
                };
                vals.push(v);
            }
        }
    }
    if vals.len() % 4 != 0 || padding > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(vals.len() / 4 * 3);
    for (i, chunk) in vals.chunks(4).enumerate() {
        let last = i == vals.len() / 4 - 1;
        let pads = chunk.iter().filter(|&&v| v == 255).count();
        if pads > 0 && !last {
            return None;
        }
        if pads > 0 && chunk[..4 - pads].contains(&255) {
            return None;
        }
        let v = |k: usize| {
            if chunk[k] == 255 {
                0u32
            } else {
                chunk[k] as u32
            }
        };
        let n = (v(0) << 18) | (v(1) << 12) | (v(2) << 6) | v(3);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        match pads {
            0 => out.extend_from_slice(&bytes),
            1 => {
                if n & 0xFF != 0 {
                    return None;
                }
                out.extend_from_slice(&bytes[..2]);
            }
            2 => {
                if n & 0xFFFF != 0 {
                    return None;
                }
                out.push(bytes[0]);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// sigs.k8s.io/yaml's key stringification (`convertToJSONableObject`); the typed view
/// (`json` false) has no such step in Go and keeps every key (nil as `<nil>`, uint64 in
/// decimal).
fn json_key(key: &GoVal, value: &GoVal, json: bool) -> Result<String, String> {
    if !json {
        match key {
            GoVal::Nil => return Ok("<nil>".into()),
            GoVal::Uint(u) => return Ok(u.to_string()),
            _ => {}
        }
    }
    Ok(match key {
        GoVal::Str(s) => s.clone(),
        GoVal::Bin(b) => go_string_from_bytes(b),
        GoVal::Int(i) => i.to_string(),
        GoVal::Float(f) => {
            if f.is_nan() {
                ".nan".into()
            } else if f.is_infinite() {
                if *f > 0.0 {
                    ".inf".into()
                } else {
                    "-.inf".into()
                }
            } else {
                format_float32_g(*f)
            }
        }
        GoVal::Bool(b) => b.to_string(),
        _ => {
            return Err(format!(
                "unsupported map key of type: {}, key: {}, value: {}",
                key.go_type(),
                key.sharp_v(false),
                value.sharp_v(false)
            ));
        }
    })
}

/// What `sigs.k8s.io/yaml.Unmarshal` into `interface{}` gives for a decoded value: the
/// JSON round trip (numbers float64, keys strings, invalid UTF-8 replaced). Errors without
/// the `error converting YAML to JSON: ` prefix.
pub fn to_json_value(v: &GoVal) -> Result<Value, String> {
    let out = convert(v, true)?;
    check_json_floats(&out)?;
    Ok(out)
}

/// go-yaml's own types (ints stay `Value::Int`), keys stringified as sigs.k8s.io/yaml does.
pub fn to_typed_value(v: &GoVal) -> Result<Value, String> {
    convert(v, false)
}

fn convert(v: &GoVal, json: bool) -> Result<Value, String> {
    Ok(match v {
        GoVal::Nil => Value::Nil,
        GoVal::Bool(b) => Value::Bool(*b),
        GoVal::Int(i) => {
            if json {
                Value::Float(*i as f64)
            } else {
                Value::Int(*i)
            }
        }
        GoVal::Uint(u) => Value::Float(*u as f64),
        GoVal::Float(f) => Value::Float(*f),
        GoVal::Str(s) => Value::from(s.as_str()),
        GoVal::Bin(b) => {
            if json {
                Value::from(go_string_from_bytes(b))
            } else {
                Value::Bytes(b.clone().into())
            }
        }
        GoVal::Seq(items) => Value::from(
            items
                .iter()
                .map(|x| convert(x, json))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        GoVal::Map(entries) => {
            let mut m = BTreeMap::new();
            for (k, val) in entries {
                let key = json_key(k, val, json)?;
                m.insert(key, convert(val, json)?);
            }
            Value::from(m)
        }
    })
}

fn check_json_floats(v: &Value) -> Result<(), String> {
    match v {
        Value::Float(f) if !f.is_finite() => {
            Err(format!("json: unsupported value: {}", format_float_g(*f)))
        }
        Value::List(items) => items.iter().try_for_each(check_json_floats),
        Value::Map(m) => m.borrow().values().try_for_each(check_json_floats),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVs\nbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("==").as_deref(), None);
        assert_eq!(decode_base64("aGVsbG8").as_deref(), None);
        assert_eq!(decode_base64("").as_deref(), Some(&b""[..]));
    }
}
