//! Values across a process or component boundary as JSON that keeps Go's number kinds:
//! integers are `int64` (as `--set` gives them), numbers written with a fraction or an
//! exponent are `float64` (as YAML files give them). Plain JSON would lose the difference,
//! and templates print and compare the two kinds differently (`1e+06` vs `1000000`).

use capstan_gotmpl::value::{Map, Value};

/// Encode values; floats always carry a fraction or exponent (`1.0`, `1e21`).
pub fn to_typed_json(value: &Value) -> Result<String, String> {
    serde_json::to_string(&to_json_value(value)?).map_err(|e| e.to_string())
}

fn to_json_value(value: &Value) -> Result<serde_json::Value, String> {
    Ok(match value.to_data() {
        Value::Nil => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Int(i) | Value::Int64(i) => serde_json::Value::from(i),
        Value::Float(f) => serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .ok_or_else(|| format!("value {f} cannot be encoded as JSON"))?,
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::Bytes(b) => serde_json::Value::String(String::from_utf8_lossy(&b).into_owned()),
        Value::List(items) => {
            serde_json::Value::Array(items.iter().map(to_json_value).collect::<Result<_, _>>()?)
        }
        Value::Map(map) => serde_json::Value::Object(
            map.borrow()
                .iter()
                .map(|(k, v)| Ok((k.clone(), to_json_value(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Object(_) => serde_json::Value::Null,
    })
}

/// Decode what [`to_typed_json`] wrote.
pub fn from_typed_json(text: &str) -> Result<Value, String> {
    let parsed: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("values are not valid JSON: {e}"))?;
    Ok(from_json_value(&parsed))
}

fn from_json_value(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int64(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(from_json_value).collect::<Vec<_>>())
        }
        serde_json::Value::Object(map) => Value::from(
            map.iter()
                .map(|(k, v)| (k.clone(), from_json_value(v)))
                .collect::<Map>(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_kinds_survive_the_round_trip() {
        let mut map = Map::new();
        map.insert("set".into(), Value::Int64(1_000_000));
        map.insert("file".into(), Value::Float(1_000_000.0));
        map.insert("half".into(), Value::Float(0.5));
        let text = to_typed_json(&Value::from(map)).unwrap();
        assert_eq!(text, r#"{"file":1000000.0,"half":0.5,"set":1000000}"#);
        let back = from_typed_json(&text).unwrap();
        // As templates print them: int64 in full, float64 in %v form.
        let Value::Map(m) = back else { panic!() };
        assert_eq!(m.borrow()["set"].to_go_string(), "1000000");
        assert_eq!(m.borrow()["file"].to_go_string(), "1e+06");
    }
}
