//! The dynamic values templates work on, modelled on what Helm charts see through Go's
//! reflection: nil, bools, Go `int` and `int64` kept apart from `float64`, strings, byte
//! slices, lists (`[]interface{}`), maps (`map[string]interface{}`, shared and mutable like
//! Go maps, so Sprig's `set` is seen by every holder) and host objects with fields and
//! methods (Helm's `.Files`, `.Capabilities`, `.Chart`). Also Go's `%v` formatting and
//! truthiness.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// A Go map as templates see it: string keys, iterated in sorted order.
pub type Map = BTreeMap<String, Value>;

/// A shared, mutable map (Go maps are references).
pub type MapRef = Rc<RefCell<Map>>;

/// A template value.
#[derive(Clone, Default)]
pub enum Value {
    /// Go's nil (an absent map entry, an explicit YAML `null`, a nil interface).
    #[default]
    Nil,
    /// `bool`.
    Bool(bool),
    /// Go `int` (template integer constants, `len`, Sprig's `int`).
    Int(i64),
    /// Go `int64` (`--set` numbers, most Sprig math).
    Int64(i64),
    /// Go `float64` (every number read from YAML or JSON).
    Float(f64),
    /// `string`.
    String(Rc<str>),
    /// `[]byte`.
    Bytes(Rc<[u8]>),
    /// `[]interface{}`.
    List(Rc<Vec<Value>>),
    /// `map[string]interface{}`.
    Map(MapRef),
    /// A host object with Go-named fields and methods.
    Object(Rc<dyn Object>),
}

/// A host-provided value with fields and methods, like a Go struct pointer.
pub trait Object {
    /// Go type name, used in errors and by `typeOf` (e.g. `*chart.Metadata`).
    fn type_name(&self) -> String;
    /// A field by Go name; `None` when the type has no such field.
    fn field(&self, name: &str) -> Option<Value>;
    /// Whether the type has a method of that name.
    fn has_method(&self, _name: &str) -> bool {
        false
    }
    /// Call a method (only asked when [`Object::has_method`] said yes).
    fn call_method(&self, name: &str, _args: &[Value]) -> Result<Value, String> {
        Err(format!("can't call method {name}"))
    }
    /// `%v` formatting.
    fn format(&self) -> String;
    /// Go's `reflect.Kind` name (`kindOf`); host objects are struct pointers.
    fn kind_name(&self) -> &'static str {
        "ptr"
    }
    /// The value `encoding/json` would marshal (for `toYaml`/`toJson`), as plain data.
    fn to_data(&self) -> Value {
        Value::Nil
    }
    /// Key/value pairs in key order when the type is a Go map (so `range` and `len` work on
    /// it, as on Helm's `.Files`); `None` for struct-like objects.
    fn entries(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    /// Whether Go would consider it empty/false (a nil pointer); objects are normally true.
    fn is_truthy(&self) -> bool {
        true
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => write!(f, "Nil"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Int(i) => write!(f, "Int({i})"),
            Value::Int64(i) => write!(f, "Int64({i})"),
            Value::Float(x) => write!(f, "Float({x:?})"),
            Value::String(s) => write!(f, "String({s:?})"),
            Value::Bytes(b) => write!(f, "Bytes({b:?})"),
            Value::List(l) => f.debug_list().entries(l.iter()).finish(),
            Value::Map(m) => f.debug_map().entries(m.borrow().iter()).finish(),
            Value::Object(o) => write!(f, "Object({})", o.type_name()),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(Rc::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(Rc::from(s))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Float(x)
    }
}

impl From<Vec<Value>> for Value {
    fn from(l: Vec<Value>) -> Self {
        Value::List(Rc::new(l))
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Map(Rc::new(RefCell::new(m)))
    }
}

impl Value {
    /// A new empty map value.
    pub fn new_map() -> Value {
        Value::from(Map::new())
    }

    /// Go's type name as `%T` prints it.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Float(_) => "float64".into(),
            Value::String(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(_) => "[]interface {}".into(),
            Value::Map(_) => "map[string]interface {}".into(),
            Value::Object(o) => o.type_name(),
        }
    }

    /// Go's `reflect.Kind` name (Sprig's `kindOf`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Float(_) => "float64",
            Value::String(_) => "string",
            Value::Bytes(_) | Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(o) => o.kind_name(),
        }
    }

    /// Whether this is nil.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when this is `int` or `int64`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) | Value::Int64(i) => Some(*i),
            _ => None,
        }
    }

    /// Go's template truth (`if`, `with`, `and`, `or`, `not`): false for the zero value of
    /// any type and for empty collections.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Float(x) => *x != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            Value::Object(o) => o.is_truthy(),
        }
    }

    /// Go's `fmt.Sprint` of the value (`%v`): nil is `<nil>`, floats in `%g` shortest form,
    /// maps as `map[k:v]` in key order, lists as `[a b]`.
    pub fn to_go_string(&self) -> String {
        let mut out = String::new();
        self.write_go(&mut out, 0);
        out
    }

    fn write_go(&self, out: &mut String, depth: usize) {
        if depth > 100 {
            out.push_str("...");
            return;
        }
        match self {
            Value::Nil => out.push_str("<nil>"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
            Value::Float(x) => out.push_str(&format_float_g(*x)),
            Value::String(s) => out.push_str(s),
            Value::Bytes(b) => write_go_bytes(out, b),
            Value::List(l) => {
                out.push('[');
                for (i, item) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    item.write_go(out, depth + 1);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push_str("map[");
                for (i, (k, v)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(k);
                    out.push(':');
                    v.write_go(out, depth + 1);
                }
                out.push(']');
            }
            Value::Object(o) => out.push_str(&o.format()),
        }
    }

    /// A deep copy: maps and lists are duplicated, so mutating the copy leaves the original.
    pub fn deep_copy(&self) -> Value {
        match self {
            Value::List(l) => Value::from(l.iter().map(Value::deep_copy).collect::<Vec<_>>()),
            Value::Map(m) => {
                // Cloning the tree keeps its shape (collecting pairs would sort and rebuild
                // it); then only nested maps and lists need copies of their own.
                let mut copy = m.borrow().clone();
                for value in copy.values_mut() {
                    if matches!(value, Value::Map(_) | Value::List(_)) {
                        *value = value.deep_copy();
                    }
                }
                Value::from(copy)
            }
            other => other.clone(),
        }
    }

    /// Structural equality (Sprig's `deepEqual`, `has`, `uniq`): numbers of different Go
    /// types are different, as `reflect.DeepEqual` has it.
    pub fn deep_equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) | (Value::Int64(a), Value::Int64(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.deep_equal(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                if Rc::ptr_eq(a, b) {
                    return true;
                }
                let (a, b) = (a.borrow(), b.borrow());
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va.deep_equal(vb))
            }
            (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Plain data for serialisers: objects replaced by what they marshal to.
    pub fn to_data(&self) -> Value {
        match self {
            Value::Object(o) => o.to_data(),
            other => other.clone(),
        }
    }
}

/// Go's `strconv.FormatFloat(x, 'g', -1, 64)`, which `%v` uses: the shortest digits that
/// round-trip, in exponent form (`1e+06`, `1.5e-05`) when the decimal exponent is below -4
/// or at least 6 (the precision `%g` uses for that decision in shortest mode).
pub fn format_float_g(x: f64) -> String {
    if let Some(special) = format_float_special(x) {
        return special;
    }
    let (negative, digits, exp) = shortest_digits(x);
    format_g_digits(negative, &digits, exp)
}

/// Go's text for the floats that have no digits to format: `NaN`, `+Inf`, `-Inf`, `0` and
/// `-0`; `None` for any other value.
pub fn format_float_special(x: f64) -> Option<String> {
    if x.is_nan() {
        return Some("NaN".into());
    }
    if x.is_infinite() {
        return Some(if x > 0.0 { "+Inf" } else { "-Inf" }.into());
    }
    if x == 0.0 {
        return Some(if x.is_sign_negative() { "-0" } else { "0" }.into());
    }
    None
}

/// Go's `'g'` layout (shortest mode) of `d.ddd × 10^exp`: exponent form when `exp` is
/// below -4 or at least 6, positional otherwise.
pub fn format_g_digits(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&exponent_suffix(exp));
        return out;
    }
    out.push_str(&plain_decimal(digits, exp));
    out
}

/// Go's exponent suffix: `e`, a sign, and at least two digits.
pub fn exponent_suffix(exp: i32) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("e{sign}{:02}", exp.unsigned_abs())
}

/// Digits in positional notation for `d.ddd × 10^exp`.
pub fn plain_decimal(digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// The shortest round-tripping decimal digits of a finite non-zero float, with its sign and
/// the decimal exponent of the first digit.
pub fn shortest_digits(x: f64) -> (bool, String, i32) {
    // Rust's `{:e}` prints the shortest round-trip digits, like Go's shortest formatting.
    let (digits, exp) = split_exp(&format!("{:e}", x.abs()));
    // When two candidates of that length round-trip, Go takes the one closest to the exact
    // value (ties to even); Rust may take the other (1094206311311328.25: Rust `…28.3`, Go
    // `…28.2`). The correctly rounded candidate of the same length is the closest one, so
    // it wins whenever it round-trips.
    if digits.len() > 1 {
        let closest = format!("{:.*e}", digits.len() - 1, x.abs());
        if closest.parse::<f64>() == Ok(x.abs()) {
            let (closest_digits, closest_exp) = split_exp(&closest);
            return (x.is_sign_negative(), closest_digits, closest_exp);
        }
    }
    (x.is_sign_negative(), digits, exp)
}

/// Digits and decimal exponent of Rust's `{:e}` output (`1.25e3` gives `125`, 3).
pub fn split_exp(formatted: &str) -> (String, i32) {
    let (mantissa, exp) = formatted.split_once('e').unwrap_or((formatted, "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `%v` of a `[]byte` (`[104 105]`), written straight into `out`: a template that
/// prints `.Files` formats every byte of every file this way, so no byte may allocate
/// (one `String` per byte made Bitnami's envoy-gateway spend 71 % of its render here).
fn write_go_bytes(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 4 + 2);
    out.push('[');
    for (i, &byte) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if byte >= 100 {
            out.push(char::from(b'0' + byte / 100));
        }
        if byte >= 10 {
            out.push(char::from(b'0' + byte / 10 % 10));
        }
        out.push(char::from(b'0' + byte % 10));
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_like_go_percent_v() {
        // Go's fmt.Sprint([]byte{...}): decimal bytes, space-separated, in brackets.
        let all: Vec<u8> = (0..=255).collect();
        let expected = format!(
            "[{}]",
            all.iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        assert_eq!(Value::Bytes(all.into()).to_go_string(), expected);
        assert_eq!(Value::Bytes(Vec::new().into()).to_go_string(), "[]");
        let mut map = Map::new();
        map.insert("a.txt".into(), Value::Bytes(b"hi".to_vec().into()));
        assert_eq!(Value::from(map).to_go_string(), "map[a.txt:[104 105]]");
    }

    #[test]
    fn floats_print_like_go_percent_v() {
        // Expected strings are Go's fmt.Sprint outputs.
        for (x, go) in [
            (1_000_000.0, "1e+06"),
            (123_456.0, "123456"),
            (1_234_567.0, "1.234567e+06"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (-3.0, "-3"),
            (42.0, "42"),
            (0.0, "0"),
            (100_000.0, "100000"),
            (2.71, "2.71"),
            (1.0 / 3.0, "0.3333333333333333"),
        ] {
            assert_eq!(format_float_g(x), go, "{x}");
        }
    }

    #[test]
    fn collections_print_like_go() {
        let mut m = Map::new();
        m.insert("b".into(), Value::Float(2.0));
        m.insert("a".into(), Value::Float(1.0));
        m.insert("n".into(), Value::Nil);
        assert_eq!(Value::from(m).to_go_string(), "map[a:1 b:2 n:<nil>]");
        let l = Value::from(vec![Value::from("b"), Value::Int(3), Value::Bool(true)]);
        assert_eq!(l.to_go_string(), "[b 3 true]");
        assert_eq!(
            Value::Bytes(Rc::from(&b"hi"[..])).to_go_string(),
            "[104 105]"
        );
    }

    #[test]
    fn maps_are_shared_like_go_maps() {
        let m = Value::new_map();
        let alias = m.clone();
        if let Value::Map(inner) = &alias {
            inner.borrow_mut().insert("k".into(), Value::from("v"));
        }
        assert_eq!(m.to_go_string(), "map[k:v]");
        let copy = m.deep_copy();
        if let Value::Map(inner) = &copy {
            inner.borrow_mut().insert("x".into(), Value::Nil);
        }
        assert_eq!(m.to_go_string(), "map[k:v]");
    }

    #[test]
    fn deep_copies_share_no_nested_map_or_list() {
        let inner = Value::new_map();
        let listed = Value::new_map();
        let original = Value::new_map();
        if let (Value::Map(o), Value::Map(i)) = (&original, &inner) {
            i.borrow_mut().insert("k".into(), Value::from("v"));
            o.borrow_mut().insert("inner".into(), inner.clone());
            o.borrow_mut().insert(
                "list".into(),
                Value::from(vec![listed.clone(), Value::Int(1)]),
            );
            o.borrow_mut().insert("s".into(), Value::from("x"));
        }
        let copy = original.deep_copy();
        assert_eq!(copy.to_go_string(), original.to_go_string());
        let Value::Map(c) = &copy else {
            panic!("not a map")
        };
        if let Some(Value::Map(ci)) = c.borrow().get("inner") {
            ci.borrow_mut().insert("added".into(), Value::Nil);
        }
        if let Some(Value::List(cl)) = c.borrow().get("list")
            && let Some(Value::Map(cm)) = cl.first()
        {
            cm.borrow_mut().insert("added".into(), Value::Nil);
        }
        assert_eq!(inner.to_go_string(), "map[k:v]");
        assert_eq!(listed.to_go_string(), "map[]");
        assert_eq!(
            original.to_go_string(),
            "map[inner:map[k:v] list:[map[] 1] s:x]"
        );
    }

    #[test]
    fn truthiness_follows_go() {
        assert!(!Value::Float(0.0).is_true());
        assert!(!Value::from("").is_true());
        assert!(!Value::new_map().is_true());
        assert!(Value::Int64(-1).is_true());
        assert!(!Value::Nil.is_true());
    }
}
