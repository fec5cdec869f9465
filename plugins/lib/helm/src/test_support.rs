//! Helpers the unit tests share: building maps and walking values by dotted path.

use capstan_gotmpl::value::{Map, Value};

/// A map value from `(key, value)` pairs.
pub(crate) fn map(entries: &[(&str, Value)]) -> Value {
    Value::from(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<Map>(),
    )
}

/// The value at a dotted path (`a.b.c`), `Nil` where a step is missing or not a map.
pub(crate) fn lookup(values: &Value, path: &str) -> Value {
    let mut current = values.clone();
    for step in path.split('.') {
        current = match &current {
            Value::Map(m) => m.borrow().get(step).cloned().unwrap_or(Value::Nil),
            _ => Value::Nil,
        };
    }
    current
}
