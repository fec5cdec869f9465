//! Value helpers shared by the function families: Sprig's `strval` and `empty`, the
//! reflection checks its list functions make ("any slice or array"), and arguments that Go's
//! template call would accept as a nil map or slice.

use capstan_gotmpl::funcs::{FuncError, wrong_type};
use capstan_gotmpl::value::{MapRef, Value};

/// Sprig's `strval`: strings and byte slices as text, `fmt.Stringer`s through `String()`,
/// everything else with `%v`.
pub fn strval(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_go_string(),
    }
}

/// Sprig's `empty`: nil, `false`, zero numbers and empty strings or collections are empty;
/// objects (Go struct pointers) are empty only when nil.
pub fn is_empty(value: &Value) -> bool {
    match value {
        Value::Nil => true,
        Value::Bool(b) => !b,
        Value::Int(i) | Value::Int64(i) => *i == 0,
        Value::Float(x) => *x == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.borrow().is_empty(),
        Value::Object(o) => !o.is_truthy(),
    }
}

/// The Go panic for `reflect.TypeOf(nil).Kind()`, which Sprig's list functions hit when
/// handed nil.
pub fn nil_dereference() -> FuncError {
    FuncError::new("runtime error: invalid memory address or nil pointer dereference")
}

/// The elements of a Go slice or array value, or `None` when the value is some other kind.
pub fn slice_elements(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::List(items) => Some(items.as_ref().clone()),
        Value::Bytes(bytes) => Some(bytes.iter().map(|b| Value::Int(i64::from(*b))).collect()),
        _ => None,
    }
}

/// The elements of a slice argument, or Sprig's error (`Cannot find first on type string`,
/// built by `message` from the value's kind) for other kinds, and Go's nil-pointer panic
/// for nil.
pub fn require_slice(
    value: &Value,
    message: impl Fn(&str) -> String,
) -> Result<Vec<Value>, FuncError> {
    if value.is_nil() {
        return Err(nil_dereference());
    }
    slice_elements(value).ok_or_else(|| FuncError::new(message(value.kind_name())))
}

/// A `map[string]interface{}` parameter where nil is a nil map (`None`), as Go's template
/// call passes it.
pub fn map_or_nil(args: &[Value], i: usize) -> Result<Option<MapRef>, FuncError> {
    match args.get(i) {
        Some(Value::Map(m)) => Ok(Some(m.clone())),
        Some(Value::Nil) | None => Ok(None),
        Some(other) => Err(wrong_type("map[string]interface {}", other)),
    }
}

/// A list of strings as a template value (Go `[]string`).
pub fn string_list(items: impl IntoIterator<Item = String>) -> Value {
    Value::from(items.into_iter().map(Value::from).collect::<Vec<_>>())
}

/// A `...string` variadic tail starting at `from`.
pub fn variadic_strings(args: &[Value], from: usize) -> Result<Vec<String>, FuncError> {
    (from..args.len())
        .map(|i| capstan_gotmpl::funcs::arg_str(args, i).map(str::to_owned))
        .collect()
}

/// Go's `unicode.IsSpace`.
pub fn is_go_space(c: char) -> bool {
    c.is_whitespace()
}

/// Go's `unicode.ToUpper` (simple case mapping: a rune that would expand stays as it is).
pub fn upper_rune(c: char) -> char {
    single(c.to_uppercase()).unwrap_or(c)
}

/// Go's `unicode.ToLower`.
pub fn lower_rune(c: char) -> char {
    single(c.to_lowercase()).unwrap_or(c)
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let first = it.next()?;
    if it.next().is_some() {
        None
    } else {
        Some(first)
    }
}

/// Go's `unicode.IsUpper`.
pub fn is_upper(c: char) -> bool {
    c.is_uppercase() && !is_title_case(c)
}

/// Go's `unicode.IsLower`.
pub fn is_lower(c: char) -> bool {
    c.is_lowercase()
}

/// Title-case letters (category Lt), e.g. `ǅ`.
pub fn is_title_case(c: char) -> bool {
    matches!(
        c,
        '\u{01C5}' | '\u{01C8}' | '\u{01CB}' | '\u{01F2}' | '\u{1F88}'..='\u{1F8F}'
            | '\u{1F98}'..='\u{1F9F}' | '\u{1FA8}'..='\u{1FAF}' | '\u{1FBC}' | '\u{1FCC}'
            | '\u{1FFC}'
    )
}

/// Bytes read one by one as runes (Latin-1), as Go code that does `rune(str[i])` sees them.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(*b)).collect()
}
