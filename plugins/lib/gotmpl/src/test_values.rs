//! Short value constructors the unit tests share.

use std::rc::Rc;

use crate::value::{Map, Value};

/// A string.
pub(crate) fn s(x: &str) -> Value {
    Value::from(x)
}

/// A byte slice holding `x`.
pub(crate) fn by(x: &str) -> Value {
    Value::Bytes(Rc::from(x.as_bytes()))
}

/// A list.
pub(crate) fn l(items: Vec<Value>) -> Value {
    Value::from(items)
}

/// A map from `(key, value)` pairs.
pub(crate) fn m(entries: Vec<(&str, Value)>) -> Value {
    Value::from(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map>(),
    )
}
